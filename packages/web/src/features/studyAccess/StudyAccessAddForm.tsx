import { Button, FormGroup, HTMLSelect, InputGroup } from '@blueprintjs/core';
import { USER_MESSAGES, type RoleView } from '@lamina/domain';
import { useId } from 'react';
import { errorMessage } from '../../api/ApiError';

/** How many studies or users the picker offers before asking for a narrower search. */
export const ACCESS_CHOICES = 100;

interface AccessChoice {
  value: number;
  label: string;
}

interface StudyAccessAddFormProps {
  /** What is chosen besides the role: a study (user's Study Access tab) or a user (study's access screen). */
  subject: 'Study' | 'User';
  searchLabel: string;
  searchPlaceholder: string;
  search: string;
  onSearchChange: (value: string) => void;
  choices: readonly AccessChoice[];
  /** How many match the search (more than ACCESS_CHOICES: a hint to narrow it). */
  choicesTotal: number | undefined;
  /** The load errors of the choices and the roles (a query's `error`). */
  choicesError: unknown;
  chosen: number | null;
  onChoose: (value: number | null) => void;
  roles: readonly RoleView[];
  rolesError: unknown;
  roleId: number | null;
  onRoleChange: (roleId: number | null) => void;
  /** '+ Add' (doc 1 §2.8: needs both choices; the caller asks for confirmation). */
  onAdd: () => void;
  /** Whether the access chosen (this study or user, in this role) is already held: Add waits (issue 20). */
  isHeld: (chosen: number, roleId: number) => boolean;
}

const toId = (value: string): number | null => (value === '' ? null : Number(value));

/** The '+ Add' row of study access: search, the study or user, the role (doc 1 §2.8, §5). */
export function StudyAccessAddForm(props: StudyAccessAddFormProps) {
  const ids = { search: useId(), choice: useId(), role: useId(), held: useId() };
  const { subject, choices, chosen, roles, roleId } = props;
  const held = chosen !== null && roleId !== null && props.isHeld(chosen, roleId);
  const canAdd =
    chosen !== null && choices.some((c) => c.value === chosen) && roles.some((r) => r.id === roleId) && !held;
  const choicesError = props.choicesError ? errorMessage(props.choicesError) : null;
  const rolesError = props.rolesError ? errorMessage(props.rolesError) : null;
  const choicesHint =
    (props.choicesTotal ?? 0) > ACCESS_CHOICES ? `Showing the first ${ACCESS_CHOICES}; search to narrow.` : undefined;
  return (
    <div className="lamina-access-add">
      <FormGroup label={props.searchLabel} labelFor={ids.search}>
        <InputGroup
          id={ids.search}
          type="search"
          leftIcon="search"
          placeholder={props.searchPlaceholder}
          value={props.search}
          onValueChange={props.onSearchChange}
        />
      </FormGroup>
      <FormGroup
        label={subject}
        labelFor={ids.choice}
        intent={choicesError ? 'danger' : 'none'}
        helperText={choicesError ?? choicesHint}
      >
        <HTMLSelect
          id={ids.choice}
          value={chosen ?? ''}
          onChange={(event) => props.onChoose(toId(event.currentTarget.value))}
          options={[{ value: '', label: `Choose a ${subject.toLowerCase()}` }, ...choices]}
        />
      </FormGroup>
      <FormGroup
        label="Role"
        labelFor={ids.role}
        intent={rolesError ? 'danger' : 'none'}
        helperText={rolesError ?? undefined}
      >
        <HTMLSelect
          id={ids.role}
          value={roleId ?? ''}
          onChange={(event) => props.onRoleChange(toId(event.currentTarget.value))}
          options={[
            { value: '', label: USER_MESSAGES.chooseRole },
            ...roles.map((r) => ({ value: r.id, label: r.displayName })),
          ]}
        />
      </FormGroup>
      <Button
        intent="primary"
        text="+ Add"
        disabled={!canAdd}
        onClick={props.onAdd}
        className="lamina-access-add-button"
        aria-describedby={held ? ids.held : undefined}
      />
      {held && (
        <p id={ids.held} className="lamina-access-held" role="status">
          {USER_MESSAGES.accessAlreadyHeld}
        </p>
      )}
    </div>
  );
}
