import { Button, FormGroup, HTMLSelect, InputGroup } from '@blueprintjs/core';
import type { RoleView } from '@lamina/domain';
import { useId } from 'react';

export interface AccessChoice {
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
  /** A load error, or a hint such as 'Showing the first 100; search to narrow.'. */
  choicesError?: string | null;
  choicesHint?: string | undefined;
  chosen: number | null;
  onChoose: (value: number | null) => void;
  roles: readonly RoleView[];
  rolesError?: string | null;
  roleId: number | null;
  onRoleChange: (roleId: number | null) => void;
  /** '+ Add' (doc 1 §2.8: needs both choices; the caller asks for confirmation). */
  onAdd: () => void;
}

const toId = (value: string): number | null => (value === '' ? null : Number(value));

/** The '+ Add' row of study access: search, the study or user, the role (doc 1 §2.8, §5). */
export function StudyAccessAddForm(props: StudyAccessAddFormProps) {
  const ids = { search: useId(), choice: useId(), role: useId() };
  const { subject, choices, chosen, roles, roleId } = props;
  const canAdd = chosen !== null && choices.some((c) => c.value === chosen) && roles.some((r) => r.id === roleId);
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
        intent={props.choicesError ? 'danger' : 'none'}
        helperText={props.choicesError ?? props.choicesHint}
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
        intent={props.rolesError ? 'danger' : 'none'}
        helperText={props.rolesError ?? undefined}
      >
        <HTMLSelect
          id={ids.role}
          value={roleId ?? ''}
          onChange={(event) => props.onRoleChange(toId(event.currentTarget.value))}
          options={[
            { value: '', label: 'Choose a role' },
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
      />
    </div>
  );
}
