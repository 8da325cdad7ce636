import { Callout, HTMLTable } from '@blueprintjs/core';
import {
  confirmStudyAccessText,
  hasAny,
  mayChangeAccount,
  removeStudyAccessText,
  USER_MESSAGES,
  type StudyAccessRow,
  type UserListRow,
} from '@lamina/domain';
import { useState } from 'react';
import { ListStates } from '../../components/ListStates';
import { useUserInfo } from '../../api/users';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { useStudyList } from '../../api/studies';
import { usePermissionRoles } from '../../api/users';
import { useStudyAccess } from '../studyAccess/api';
import { ACCESS_CHOICES, StudyAccessAddForm } from '../studyAccess/StudyAccessAddForm';
import { RemoveAccessCell, RemoveAccessHeader } from '../studyAccess/RemoveAccessColumn';
import { useStudyAccessConfirmations } from '../studyAccess/StudyAccessConfirmDialogs';
import { assignableRoles } from '../studyAccess/assignableRoles';

/**
 * The Study Access tab (doc 1 §2.8): grant a study in a role, list the grants, remove one. A system
 * admin's access is changed only by a system admin (issue 26): others see it read-only.
 */
export function StudyAccessTab({ user }: { user: UserListRow }) {
  const userId = user.id;
  const me = useUserInfo().data;
  const actions = me?.actions ?? [];
  const managesAccess = hasAny(actions, ['UM_GrantStudyAccess', 'UM_RevokeStudyAccess']);
  const mayChange = mayChangeAccount(user, me);
  const mayGrant = mayChange && hasAny(actions, ['UM_GrantStudyAccess']);
  const mayRevoke = mayChange && hasAny(actions, ['UM_RevokeStudyAccess']);
  const access = useStudyAccess(userId);
  const roles = usePermissionRoles();
  const [studySearch, setStudySearch] = useState('');
  const name = useDebouncedValue(studySearch.trim());
  const studies = useStudyList({ name, pageIndex: 0, pageSize: ACCESS_CHOICES, sort: 'name' }, mayGrant);
  const [studyId, setStudyId] = useState<number | null>(null);
  const [roleId, setRoleId] = useState<number | null>(null);
  const { confirmAdd, confirmRemove, dialogs } = useStudyAccessConfirmations(() => {
    setStudyId(null);
    setRoleId(null);
  });

  const roleChoices = assignableRoles(roles.data ?? [], me);
  const study = studies.data?.studies.find((s) => s.id === studyId);
  const role = roleChoices.find((r) => r.id === roleId);

  function handleAddClick() {
    if (study && role) {
      confirmAdd({
        change: { studyId: study.id, userId, roleId: role.id },
        text: confirmStudyAccessText(role.displayName, study.name),
      });
    }
  }

  function handleRemoveClick(row: StudyAccessRow) {
    confirmRemove({
      change: { studyId: row.studyId, userId, roleId: row.roleId },
      text: removeStudyAccessText(row.studyName),
    });
  }

  return (
    <div className="lamina-study-access">
      {managesAccess && !mayChange && <Callout intent="primary">{USER_MESSAGES.systemAdminAccount}</Callout>}
      {mayGrant && (
        <StudyAccessAddForm
          subject="Study"
          searchLabel="Find study"
          searchPlaceholder="Search by name"
          search={studySearch}
          onSearchChange={setStudySearch}
          choices={(studies.data?.studies ?? []).map((s) => ({ value: s.id, label: s.name }))}
          choicesTotal={studies.data?.total}
          choicesError={studies.error}
          chosen={studyId}
          onChoose={setStudyId}
          roles={roleChoices}
          rolesError={roles.error}
          roleId={roleId}
          onRoleChange={setRoleId}
          onAdd={handleAddClick}
          isHeld={(study, role) => (access.data ?? []).some((a) => a.studyId === study && a.roleId === role)}
        />
      )}

      <ListStates list={access} loadingLabel="Loading study access" empty={{ icon: 'key', title: 'No study access' }}>
        {(rows) => (
          <HTMLTable className="lamina-table" aria-label="Study access">
            <thead>
              <tr>
                <th scope="col">Study Name</th>
                <th scope="col">Role</th>
                {mayRevoke && <RemoveAccessHeader />}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={`${row.studyId}-${row.roleId}`}>
                  <td>{row.studyName}</td>
                  <td>{roleChoices.find((r) => r.id === row.roleId)?.displayName ?? row.roleName}</td>
                  {mayRevoke && (
                    <RemoveAccessCell
                      label={`Remove Access to ${row.studyName} as ${row.roleName}`}
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
    </div>
  );
}
