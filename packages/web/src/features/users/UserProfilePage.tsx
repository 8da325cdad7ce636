import { useParams } from 'react-router';
import { NotFoundPage } from '../../app/NotFoundPage';
import { PlaceholderPage } from '../../components/PlaceholderPage';
import { RouteTabs, parseTab } from '../../components/RouteTabs';
import { USER_TABS } from './userTabs';

/** /users/:id/:tab? (settings by default, studyAccess). */
export function UserProfilePage() {
  const { id = '', tab: rawTab } = useParams();
  const tab = parseTab(rawTab, USER_TABS, 'settings');
  if (tab === null) return <NotFoundPage />;
  return (
    <PlaceholderPage
      title={`User ${id}`}
      icon={tab === 'settings' ? 'person' : 'key'}
      description={
        tab === 'settings'
          ? 'First name, last name and organization; saving registers the user.'
          : 'The studies this user can access, and in which role.'
      }
    >
      <RouteTabs
        id="user-tabs"
        tabs={USER_TABS}
        selected={tab}
        pathFor={(t) => `/users/${encodeURIComponent(id)}/${t}`}
      />
    </PlaceholderPage>
  );
}
