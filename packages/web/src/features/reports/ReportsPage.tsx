import { PlaceholderPage } from '../../components/PlaceholderPage';

export function ReportsPage() {
  return (
    <PlaceholderPage
      title="Reports"
      icon="document"
      description="Audit trail (PDF or CSV) and CSV reports: image details, HPF and celiac annotations, by study, user and dates."
    />
  );
}
