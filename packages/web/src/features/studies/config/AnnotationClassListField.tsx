import { TEXT_LIMITS } from '@lamina/domain';
import { Button, ControlGroup, InputGroup, Switch } from '@blueprintjs/core';
import type { AnnotationClassInput, StudyConfigIssue } from '@lamina/domain';
import { useId, useState, type KeyboardEvent } from 'react';
import { addClass, canAddClass, canDeleteClass, deleteClass, isVisible, moveClass, updateClass } from '../classListOps';
import { ColorSwatchPicker } from './ColorSwatchPicker';
import { ConfigField, FieldMessages, type ReasonProps } from './ConfigField';

interface AnnotationClassListFieldProps {
  /** e.g. 'HPF', 'Point', 'Freehand', 'Line measurement'. */
  label: string;
  value: readonly AnnotationClassInput[];
  onChange: (next: AnnotationClassInput[]) => void;
  /** Annotation counts by class id: delete is offered only at 0 or unknown. */
  counts: ReadonlyMap<number, number>;
  issues: readonly StudyConfigIssue[];
  reason: ReasonProps | null;
}

/** One of the four annotation-class lists: add, rename, recolour, reorder, disable/enable, delete. */
export function AnnotationClassListField({
  label,
  value,
  onChange,
  counts,
  issues,
  reason,
}: AnnotationClassListFieldProps) {
  const newId = useId();
  const [name, setName] = useState('');
  const canAdd = canAddClass(value, name);
  const shown = value.map((c, index) => ({ c, index })).filter(({ c }) => isVisible(c));

  function handleAdd() {
    if (!canAdd) return;
    onChange(addClass(value, name));
    setName('');
  }

  function handleKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'Enter') {
      event.preventDefault();
      handleAdd();
    }
  }

  const title = `${label} classes`;
  return (
    <ConfigField
      label={title}
      issues={issues.filter((i) => i.index === undefined).map((i) => i.message)}
      reason={reason}
    >
      {shown.length === 0 ? (
        <p className="bp6-text-muted lamina-empty-list">No classes</p>
      ) : (
        <ol className="lamina-class-list" aria-label={title}>
          {shown.map(({ c, index }, position) => {
            const rowLabel = `${label} class ${c.name.trim() === '' ? position + 1 : c.name}`;
            const rowIssues = issues.filter((i) => i.index === index).map((i) => i.message);
            return (
              <li key={c.id ?? `new-${index}`} className={c.enabled ? undefined : 'lamina-class-disabled'}>
                <div className="lamina-class-row">
                  <ColorSwatchPicker
                    value={c.color}
                    label={rowLabel}
                    onChange={(color) => onChange(updateClass(value, index, { color }))}
                  />
                  <InputGroup
                    aria-label={`${label} class ${position + 1} name`}
                    value={c.name}
                    onValueChange={(next) => onChange(updateClass(value, index, { name: next }))}
                    intent={rowIssues.length > 0 ? 'danger' : 'none'}
                    maxLength={TEXT_LIMITS.identifier}
                    className="lamina-class-name"
                  />
                  <Switch
                    label="Enabled"
                    checked={c.enabled}
                    onChange={(event) => onChange(updateClass(value, index, { enabled: event.currentTarget.checked }))}
                    aria-label={`${rowLabel} enabled`}
                    className="lamina-class-switch"
                  />
                  <Button
                    variant="minimal"
                    icon="arrow-up"
                    aria-label={`Move ${rowLabel} up`}
                    disabled={position === 0}
                    onClick={() => onChange(moveClass(value, index, -1))}
                  />
                  <Button
                    variant="minimal"
                    icon="arrow-down"
                    aria-label={`Move ${rowLabel} down`}
                    disabled={position === shown.length - 1}
                    onClick={() => onChange(moveClass(value, index, 1))}
                  />
                  {canDeleteClass(c, counts) ? (
                    <Button
                      variant="minimal"
                      intent="danger"
                      icon="trash"
                      aria-label={`Delete ${rowLabel}`}
                      onClick={() => onChange(deleteClass(value, index))}
                    />
                  ) : (
                    <span
                      className="lamina-class-count"
                      title="Classes with annotations cannot be deleted; disable them instead."
                    >
                      {c.id !== undefined ? `${counts.get(c.id) ?? 0} annotations` : ''}
                    </span>
                  )}
                </div>
                <FieldMessages messages={rowIssues} />
              </li>
            );
          })}
        </ol>
      )}
      <ControlGroup className="lamina-class-add">
        <InputGroup
          id={newId}
          aria-label={`New ${label} class name`}
          placeholder={`New ${label} class`}
          value={name}
          onValueChange={setName}
          onKeyDown={handleKeyDown}
          maxLength={TEXT_LIMITS.identifier}
        />
        <Button icon="add" text="Add" aria-label={`Add ${label} class`} disabled={!canAdd} onClick={handleAdd} />
      </ControlGroup>
    </ConfigField>
  );
}
