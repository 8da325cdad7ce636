import {
  Button,
  Callout,
  FormGroup,
  HTMLSelect,
  HTMLTable,
  InputGroup,
  NonIdealState,
  Spinner,
} from '@blueprintjs/core';
import {
  confirmStudyAccessText,
  hasAny,
  removeStudyAccessText,
  USER_MESSAGES,
  type StudyAccessRow,
} from '@lamina/domain';
import { useId, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { useStudyList } from '../studies/api';
import { useAddStudyAccess, usePermissionRoles, useRemoveStudyAccess, useStudyAccess } from './api';
import { assignableRoles } from './userAccess';

const STUDY_CHOICES = 100;

interface Pending {
  studyId: number;
  studyName: string;
  roleId: number;
  roleName: string;
}

/** The Study Access tab (doc 1 §2.8): grant a study in a role, list the grants, remove one. */
export function StudyAccessTab({ userId }: { userId: number }) {
  const ids = { search: useId(), study: useId(), role: useId() };
  const actions = useUserInfo().data?.actions ?? [];
  const mayGrant = hasAny(actions, ['UM_GrantStudyAccess']);
  const mayRevoke = hasAny(actions, ['UM_RevokeStudyAccess']);
  const access = useStudyAccess(userId);
  const roles = usePermissionRoles();
  const [studySearch, setStudySearch] = useState('');
  const name = useDebouncedValue(studySearch.trim());
  const studies = useStudyList({ name, pageIndex: 0, pageSize: STUDY_CHOICES, sort: 'name' }, mayGrant);
  const [studyId, setStudyId] = useState<number | null>(null);
  const [roleId, setRoleId] = useState<number | null>(null);
  const [adding, setAdding] = useState<Pending | null>(null);
  const [removing, setRemoving] = useState<StudyAccessRow | null>(null);
  const add = useAddStudyAccess();
  const remove = useRemoveStudyAccess();

  const roleChoices = assignableRoles(roles.data ?? []);
  const study = studies.data?.studies.find((s) => s.id === studyId);
  const role = roleChoices.find((r) => r.id === roleId);

  function handleAddClick() {
    if (study && role)
      setAdding({ studyId: study.id, studyName: study.name, roleId: role.id, roleName: role.displayName });
  }

  function handleConfirmAdd() {
    if (!adding) return;
    add.mutate(
      { studyId: adding.studyId, userId, roleId: adding.roleId },
      {
        onSuccess: (response) => {
          setAdding(null);
          setStudyId(null);
          setRoleId(null);
          void showToast(response.message);
        },
      },
    );
  }

  function handleConfirmRemove() {
    if (!removing) return;
    remove.mutate(
      { studyId: removing.studyId, userId, roleId: removing.roleId },
      {
        onSuccess: (response) => {
          setRemoving(null);
          void showToast(response.message);
        },
      },
    );
  }

  return (
    <div className="lamina-study-access">
      {mayGrant && (
        <div className="lamina-access-add">
          <FormGroup label="Find study" labelFor={ids.search}>
            <InputGroup
              id={ids.search}
              type="search"
              leftIcon="search"
              placeholder="Search by name"
              value={studySearch}
              onValueChange={setStudySearch}
            />
          </FormGroup>
          <FormGroup
            label="Study"
            labelFor={ids.study}
            intent={studies.isError ? 'danger' : 'none'}
            helperText={
              studies.isError
                ? errorMessage(studies.error)
                : (studies.data?.total ?? 0) > STUDY_CHOICES
                  ? `Showing the first ${STUDY_CHOICES}; search to narrow.`
                  : undefined
            }
          >
            <HTMLSelect
              id={ids.study}
              value={studyId ?? ''}
              onChange={(event) =>
                setStudyId(event.currentTarget.value === '' ? null : Number(event.currentTarget.value))
              }
              options={[
                { value: '', label: 'Choose a study' },
                ...(studies.data?.studies ?? []).map((s) => ({ value: s.id, label: s.name })),
              ]}
            />
          </FormGroup>
          <FormGroup
            label="Role"
            labelFor={ids.role}
            intent={roles.isError ? 'danger' : 'none'}
            helperText={roles.isError ? errorMessage(roles.error) : undefined}
          >
            <HTMLSelect
              id={ids.role}
              value={roleId ?? ''}
              onChange={(event) =>
                setRoleId(event.currentTarget.value === '' ? null : Number(event.currentTarget.value))
              }
              options={[
                { value: '', label: 'Choose a role' },
                ...roleChoices.map((r) => ({ value: r.id, label: r.displayName })),
              ]}
            />
          </FormGroup>
          <Button
            intent="primary"
            text="+ Add"
            disabled={!study || !role}
            onClick={handleAddClick}
            className="lamina-access-add-button"
          />
        </div>
      )}

      {access.isPending ? (
        <Spinner size={30} aria-label="Loading study access" />
      ) : access.isError ? (
        <Callout intent="danger" title="Error" role="alert">
          {errorMessage(access.error)}
        </Callout>
      ) : access.data.length === 0 ? (
        <NonIdealState icon="key" title="No study access" className="lamina-table-state" />
      ) : (
        <HTMLTable className="lamina-table" aria-label="Study access">
          <thead>
            <tr>
              <th scope="col">Study Name</th>
              <th scope="col">Role</th>
              {mayRevoke && (
                <th scope="col">
                  <span className="bp6-text-muted">Remove</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {access.data.map((row) => (
              <tr key={`${row.studyId}-${row.roleId}`}>
                <td>{row.studyName}</td>
                <td>{roleChoices.find((r) => r.id === row.roleId)?.displayName ?? row.roleName}</td>
                {mayRevoke && (
                  <td>
                    <Button
                      variant="minimal"
                      intent="danger"
                      text="Remove Access"
                      aria-label={`Remove Access to ${row.studyName} as ${row.roleName}`}
                      onClick={() => setRemoving(row)}
                    />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      )}

      <ConfirmDialog
        isOpen={adding !== null}
        title={USER_MESSAGES.confirmStudyAccessTitle}
        confirmText="Confirm"
        isPending={add.isPending}
        error={add.isError ? errorMessage(add.error) : null}
        onConfirm={handleConfirmAdd}
        onClose={() => {
          setAdding(null);
          add.reset();
        }}
      >
        {adding && <p>{confirmStudyAccessText(adding.roleName, adding.studyName)}</p>}
      </ConfirmDialog>
      <ConfirmDialog
        isOpen={removing !== null}
        title={USER_MESSAGES.removeStudyAccessQuestion}
        confirmText="Remove Access"
        intent="danger"
        isPending={remove.isPending}
        error={remove.isError ? errorMessage(remove.error) : null}
        onConfirm={handleConfirmRemove}
        onClose={() => {
          setRemoving(null);
          remove.reset();
        }}
      >
        {removing && <p>{removeStudyAccessText(removing.studyName)}</p>}
      </ConfirmDialog>
    </div>
  );
}
