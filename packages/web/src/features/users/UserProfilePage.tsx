import { Callout, H2, Tag } from '@blueprintjs/core';
import { USER_MESSAGES, type UserListRow, isWorkingAsSystemAdmin } from '@lamina/domain';
import { useParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { NotFoundPage } from '../../components/NotFoundPage';
import { PageSpinner } from '../../components/PageSpinner';
import { RouteTabs, parseTab } from '../../components/RouteTabs';
import { usePageTitle } from '../../components/usePageTitle';
import { parsePositiveId as parseId } from '../../lib/ids';
import { AccountStatusButton } from './AccountStatusButton';
import { useUser } from './api';
import { StudyAccessTab } from './StudyAccessTab';
import { UserSettingsForm } from './UserSettingsForm';
import { USER_TABS } from './userTabs';

function displayName(user: UserListRow): string {
  const name = [user.firstName, user.lastName].filter((p) => p !== null && p.trim() !== '').join(' ');
  return name === '' ? user.username : name;
}

/** /users/:id/:tab? (doc 1 §2.8): User Settings (default) and Study Access. */
export function UserProfilePage() {
  const { id: rawId, tab: rawTab } = useParams();
  const tab = parseTab(rawTab, USER_TABS, 'settings');
  const userId = parseId(rawId);
  const me = useUserInfo().data;
  const user = useUser(tab === null ? null : userId);
  usePageTitle(user.data ? displayName(user.data) : 'User');

  if (tab === null) return <NotFoundPage />;
  if (userId === null || isApiError(user.error, 404)) {
    return (
      <section className="lamina-page">
        <Callout intent="warning" title={USER_MESSAGES.userNotFound} />
      </section>
    );
  }
  if (user.isError) {
    return (
      <section className="lamina-page">
        <Callout intent="danger" title="Error" role="alert">
          {errorMessage(user.error)}
        </Callout>
      </section>
    );
  }
  if (user.isPending) return <PageSpinner />;

  const data = user.data;
  return (
    <section className="lamina-page lamina-profile-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <div className="lamina-title-with-tags">
          <H2 id="page-title">{displayName(data)}</H2>
          {!data.registered && (
            <Tag minimal intent="warning">
              Not registered
            </Tag>
          )}
          {!data.active && (
            <Tag minimal intent="danger">
              Deactivated
            </Tag>
          )}
        </div>
        {isWorkingAsSystemAdmin(me) && me?.id !== data.id && <AccountStatusButton user={data} />}
      </header>
      <RouteTabs id="user-tabs" tabs={USER_TABS} selected={tab} pathFor={(t) => `/users/${data.id}/${t}`} />
      {tab === 'settings' ? <UserSettingsForm key={data.id} user={data} /> : <StudyAccessTab user={data} />}
    </section>
  );
}
