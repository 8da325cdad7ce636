import { PlaceholderPage } from '../../components/PlaceholderPage';

export function StudiesPage() {
  return (
    <PlaceholderPage
      title="Studies"
      icon="folder-close"
      description="The studies you can see: search by name, status, indications, locations, modality and counts, with Create Study for those allowed."
    />
  );
}
