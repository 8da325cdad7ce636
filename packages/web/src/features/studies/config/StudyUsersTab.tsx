import { HTMLTable, Icon, Section, SectionCard } from '@blueprintjs/core';
import { hasAny, roleById, type StudyUserRef, type StudyView } from '@lamina/domain';
import { useUserInfo } from '../../../api/users';
import { Link } from 'react-router';

function UsersTable({ title, users }: { title: string; users: readonly StudyUserRef[] }) {
  return (
    <Section title={title} compact>
      <SectionCard padded={users.length === 0}>
        {users.length === 0 ? (
          <p className="bp6-text-muted">No {title.toLowerCase()}</p>
        ) : (
          <HTMLTable className="lamina-table lamina-table-plain" aria-label={title}>
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Organization</th>
                <th scope="col">
                  <span className="bp6-text-muted">Study access</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.map((user) => (
                <tr key={`${user.id}-${user.roleId}`}>
                  <td>{user.username}</td>
                  <td>{[user.firstName, user.lastName].filter(Boolean).join(' ') || '-'}</td>
                  <td>{roleById(user.roleId)?.displayName ?? user.roleName}</td>
                  <td>{user.organizationName ?? '-'}</td>
                  <td>
                    <Link to={`/users/${user.id}/studyAccess`} aria-label={`Study access of ${user.username}`}>
                      Study Access
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        )}
      </SectionCard>
    </Section>
  );
}

/** The Users tab of study configuration (doc 1 §2.6): who uploads, reads, or only looks. */
export function StudyUsersTab({ study }: { study: StudyView }) {
  const actions = useUserInfo().data?.actions ?? [];
  return (
    <div className="lamina-study-users">
      {hasAny(actions, ['UM_GrantStudyAccess', 'UM_RevokeStudyAccess']) && (
        <div className="lamina-toolbar">
          <Link to={`/studies/${study.id}/configure/associate-users`} className="bp6-button bp6-intent-primary">
            <Icon icon="new-person" />
            <span className="bp6-button-text">Add or remove study access</span>
          </Link>
        </div>
      )}
      <UsersTable title="Uploaders" users={study.uploaders} />
      <UsersTable title="Readers" users={study.readers} />
      <UsersTable title="Read-only users" users={study.readonlyUsers} />
    </div>
  );
}
