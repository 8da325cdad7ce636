import { Button, ControlGroup, InputGroup, Tag } from '@blueprintjs/core';
import { useId, useState, type KeyboardEvent } from 'react';
import { ConfigField, type ReasonProps } from './ConfigField';

interface ProtocolIdsFieldProps {
  value: readonly string[];
  onChange: (next: string[]) => void;
  issues: readonly string[];
  reason: ReasonProps | null;
}

/** Can this protocol ID be added? Not when the trimmed text is empty or already listed (doc 1 §5). */
export function canAddProtocolId(list: readonly string[], text: string): boolean {
  const id = text.trim();
  return id !== '' && !list.some((p) => p.trim() === id);
}

/** Protocol IDs: a text input with Add, and the list as removable tags. */
export function ProtocolIdsField({ value, onChange, issues, reason }: ProtocolIdsFieldProps) {
  const inputId = useId();
  const [text, setText] = useState('');
  const canAdd = canAddProtocolId(value, text);

  function handleAdd() {
    if (!canAdd) return;
    onChange([...value, text.trim()]);
    setText('');
  }

  function handleKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'Enter') {
      event.preventDefault();
      handleAdd();
    }
  }

  return (
    <ConfigField label="Protocol IDs" labelFor={inputId} issues={issues} reason={reason}>
      <ControlGroup>
        <InputGroup
          id={inputId}
          value={text}
          onValueChange={setText}
          onKeyDown={handleKeyDown}
          placeholder="Protocol ID"
        />
        <Button icon="add" text="Add" onClick={handleAdd} disabled={!canAdd} aria-label="Add protocol ID" />
      </ControlGroup>
      {value.length > 0 && (
        <ul className="lamina-chip-list" aria-label="Protocol IDs">
          {value.map((id) => (
            <li key={id}>
              <Tag minimal size="large">
                {id}
              </Tag>
              <Button
                variant="minimal"
                size="small"
                icon="cross"
                aria-label={`Remove protocol ID ${id}`}
                onClick={() => onChange(value.filter((p) => p !== id))}
              />
            </li>
          ))}
        </ul>
      )}
    </ConfigField>
  );
}
