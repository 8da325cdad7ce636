import { HTMLTable } from '@blueprintjs/core';
import { confirmStudyAccessText, hasAny, removeStudyAccessText, type StudyAccessRow } from '@lamina/domain';
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

/** The Study Access tab (doc 1 §2.8): grant a study in a role, list the grants, remove one. */
export function StudyAccessTab({ userId }: { userId: number }) {
  const actions = useUserInfo().data?.actions ?? [];
  const mayGrant = hasAny(actions, ['UM_GrantStudyAccess']);
  const mayRevoke = hasAny(actions, ['UM_RevokeStudyAccess']);
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

  const roleChoices = assignableRoles(roles.data ?? []);
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
