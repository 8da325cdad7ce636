import { FormGroup, InputGroup } from '@blueprintjs/core';
import { MESSAGES, TEXT_LIMITS } from '@lamina/domain';
import { useId, type ReactNode } from 'react';

/** The reason-for-change input beside a changed field of an existing study (doc 1 §2.6). */
export interface ReasonProps {
  value: string;
  onChange: (value: string) => void;
  /** The change needs a reason and has none yet. */
  missing: boolean;
  placeholder?: string;
}

interface ConfigFieldProps {
  label: string;
  /** Id of the input the label names; without it the content is a labelled group. */
  labelFor?: string;
  /** Messages of the domain's rules for this field. */
  issues?: readonly string[];
  helper?: ReactNode;
  /** Shown when the field of an existing study has changed. */
  reason?: ReasonProps | null;
  children: ReactNode;
}

export function FieldMessages({ messages }: { messages: readonly string[] }) {
  if (messages.length === 0) return null;
  return (
    <div className="lamina-field-errors">
      {[...new Set(messages)].map((m) => (
        <div key={m}>{m}</div>
      ))}
    </div>
  );
}

/** One row of the settings form: the field, its messages, and its reason for change beside it. */
export function ConfigField({ label, labelFor, issues = [], helper, reason, children }: ConfigFieldProps) {
  const groupId = useId();
  const reasonId = useId();
  const invalid = issues.length > 0;
  return (
    <div className="lamina-config-row">
      <FormGroup
        className="lamina-config-field"
        label={labelFor ? label : <span id={groupId}>{label}</span>}
        labelFor={labelFor}
        intent={invalid ? 'danger' : 'none'}
        helperText={
          invalid || helper ? (
            <>
              {helper}
              <FieldMessages messages={issues} />
            </>
          ) : undefined
        }
      >
        {labelFor ? (
          children
        ) : (
          <div role="group" aria-labelledby={groupId}>
            {children}
          </div>
        )}
      </FormGroup>
      {reason && (
        <FormGroup
          className="lamina-reason-field"
          label="Reason for change"
          labelFor={reasonId}
          intent={reason.missing ? 'danger' : 'none'}
          helperText={reason.missing ? MESSAGES.reasonForChangeRequired : undefined}
        >
          <InputGroup
            id={reasonId}
            aria-label={`Reason for change: ${label}`}
            value={reason.value}
            onValueChange={reason.onChange}
            intent={reason.missing ? 'danger' : 'none'}
            placeholder={reason.placeholder}
            maxLength={TEXT_LIMITS.reason}
          />
        </FormGroup>
      )}
    </div>
  );
}
