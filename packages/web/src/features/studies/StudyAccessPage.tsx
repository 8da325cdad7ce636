import { useParams } from 'react-router';
import { PlaceholderPage } from '../../components/PlaceholderPage';

/** /studies/:id/configure/associate-users: the study access screen. */
export function StudyAccessPage() {
  const { id = '' } = useParams();
  return (
    <PlaceholderPage
      title={`Study ${id}: associate users`}
      icon="new-person"
      description="Give users access to this study in a role, and remove it."
    />
  );
}
