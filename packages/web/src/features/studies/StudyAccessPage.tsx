import { H2, HTMLTable } from '@blueprintjs/core';
import { confirmStudyAccessText, hasAny, removeStudyAccessText, roleById, type StudyUserRef } from '@lamina/domain';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useUserInfo } from '../../api/users';
import { ListStates } from '../../components/ListStates';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { usePageTitle } from '../../components/usePageTitle';
import { usePermissionRoles, useUserList } from '../../api/users';
import { ACCESS_CHOICES, StudyAccessAddForm } from '../studyAccess/StudyAccessAddForm';
import { RemoveAccessCell, RemoveAccessHeader } from '../studyAccess/RemoveAccessColumn';
import { useStudyAccessConfirmations } from '../studyAccess/StudyAccessConfirmDialogs';
import { assignableRoles } from '../studyAccess/assignableRoles';
import { useStudy, useUsersInStudy } from './api';
import { studyLoadFallback } from './StudyLoadFallback';
import { parseStudyId } from './studyTabs';

const roleLabel = (row: Pick<StudyUserRef, 'roleId' | 'roleName'>) => roleById(row.roleId)?.displayName ?? row.roleName;
const fullName = (row: Pick<StudyUserRef, 'firstName' | 'lastName'>) =>
  [row.firstName, row.lastName].filter(Boolean).join(' ') || '-';

/**
 * /studies/:id/configure/associate-users (doc 1 §2.1, §2.6, §2.8): the study access screen seen from
 * the study. Pick a user and an assignable role, '+ Add' after 'Confirm Study Access'; every user with
 * access in a table, each role with 'Remove Access' after its confirmation.
 */
export function StudyAccessPage() {
  const studyId = parseStudyId(useParams().id);
  const study = useStudy(studyId);
  usePageTitle(study.data ? `${study.data.name}: study access` : 'Study access');
  const me = useUserInfo().data;
  const actions = me?.actions ?? [];
  const mayGrant = hasAny(actions, ['UM_GrantStudyAccess']);
  const mayRevoke = hasAny(actions, ['UM_RevokeStudyAccess']);
  const members = useUsersInStudy(study.data ? study.data.id : null);
  const roles = usePermissionRoles();
  const [userSearch, setUserSearch] = useState('');
  const name = useDebouncedValue(userSearch.trim());
  const candidates = useUserList({ name, pageIndex: 0, pageSize: ACCESS_CHOICES, sort: 'username' }, mayGrant);
  const [userId, setUserId] = useState<number | null>(null);
  const [roleId, setRoleId] = useState<number | null>(null);
  const { confirmAdd, confirmRemove, dialogs } = useStudyAccessConfirmations(() => {
    setUserId(null);
    setRoleId(null);
  });

  const fallback = studyLoadFallback(studyId, study);
  if (fallback !== null || !study.data || studyId === null)
    return <section className="lamina-page">{fallback}</section>;
  const studyName = study.data.name;

  const roleChoices = assignableRoles(roles.data ?? [], me);
  const user = candidates.data?.users.find((u) => u.id === userId);
  const role = roleChoices.find((r) => r.id === roleId);

  function handleAddClick() {
    if (user && role && studyId !== null) {
      confirmAdd({
        change: { studyId, userId: user.id, roleId: role.id },
        text: `${user.username}: ${confirmStudyAccessText(role.displayName, studyName)}`,
      });
    }
  }

  function handleRemoveClick(row: StudyUserRef) {
    if (studyId === null) return;
    confirmRemove({
      change: { studyId, userId: row.id, roleId: row.roleId },
      text: `${row.username} (${roleLabel(row)}): ${removeStudyAccessText(studyName)}`,
    });
  }

  return (
    <section className="lamina-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <H2 id="page-title">{studyName}: study access</H2>
        <Link to={`/studies/${studyId}/configure/users`}>Back to the study's users</Link>
      </header>

      {mayGrant && (
        <StudyAccessAddForm
          subject="User"
          searchLabel="Find user"
          searchPlaceholder="Search by name or email"
          search={userSearch}
          onSearchChange={setUserSearch}
          choices={(candidates.data?.users ?? [])
            .filter((u) => u.active)
            .map((u) => ({ value: u.id, label: `${u.username}${fullName(u) === '-' ? '' : ` (${fullName(u)})`}` }))}
          choicesTotal={candidates.data?.total}
          choicesError={candidates.error}
          chosen={userId}
          onChoose={setUserId}
          roles={roleChoices}
          rolesError={roles.error}
          roleId={roleId}
          onRoleChange={setRoleId}
          onAdd={handleAddClick}
          isHeld={(user, role) => (members.data ?? []).some((m) => m.id === user && m.roleId === role)}
        />
      )}

      <ListStates
        list={members}
        loadingLabel="Loading the study's users"
        empty={{ icon: 'people', title: 'Nobody has access to this study yet' }}
      >
        {(rows) => (
          <HTMLTable className="lamina-table" aria-label="Users with access">
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Organization</th>
                {mayRevoke && <RemoveAccessHeader />}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={`${row.id}-${row.roleId}`}>
                  <td>
                    <Link to={`/users/${row.id}/studyAccess`}>{row.username}</Link>
                  </td>
                  <td>{fullName(row)}</td>
                  <td>{roleLabel(row)}</td>
                  <td>{row.organizationName ?? '-'}</td>
                  {mayRevoke && (
                    <RemoveAccessCell
                      label={`Remove Access of ${row.username} as ${roleLabel(row)}`}
                      onRemove={() => handleRemoveClick(row)}
                    />
                  )}
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        )}
      </ListStates>

      {dialogs}
    </section>
  );
}
