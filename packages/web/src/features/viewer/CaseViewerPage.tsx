import { useParams } from 'react-router';
import { PlaceholderPage } from '../../components/PlaceholderPage';

/** /studies/:studyId/cases/:id */
export function CaseViewerPage() {
  const { studyId = '', id = '' } = useParams();
  return (
    <PlaceholderPage
      title={`Case ${id}`}
      icon="grid-view"
      description={`The case viewer for case ${id} of study ${studyId}: its images side by side, and case scoring.`}
    />
  );
}
