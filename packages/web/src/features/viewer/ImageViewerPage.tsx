import { useParams } from 'react-router';
import { PlaceholderPage } from '../../components/PlaceholderPage';

/** /studies/:studyId/images/:id */
export function ImageViewerPage() {
  const { studyId = '', id = '' } = useParams();
  return (
    <PlaceholderPage
      title={`Image ${id}`}
      icon="zoom-in"
      description={`The slide viewer for image ${id} of study ${studyId}: pan, zoom, annotate and score.`}
    />
  );
}
