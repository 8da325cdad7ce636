import { Button, FormGroup, HTMLTable, InputGroup } from '@blueprintjs/core';
import { canAddVisitPair, type StudyConfigIssue } from '@lamina/domain';
import { useId, useState, type KeyboardEvent } from 'react';
import { ConfigField, FieldMessages, type ReasonProps } from './ConfigField';

interface VisitPairsFieldProps {
  visitIds: readonly string[];
  labVisitIds: readonly string[];
  onChange: (visitIds: string[], labVisitIds: string[]) => void;
  /** Issues of 'visitIds' and 'labVisitIds'; those with an index belong to that pair. */
  issues: readonly StudyConfigIssue[];
  reason: ReasonProps | null;
}

/** Visit IDs paired by position with Lab Visit IDs (doc 1 §2.6): visit required, lab optional. */
export function VisitPairsField({ visitIds, labVisitIds, onChange, issues, reason }: VisitPairsFieldProps) {
  const visitInputId = useId();
  const labInputId = useId();
  const [visit, setVisit] = useState('');
  const [lab, setLab] = useState('');
  const message = visit.trim() === '' ? null : canAddVisitPair(visitIds, labVisitIds, visit, lab);
  const canAdd = visit.trim() !== '' && message === null;

  function handleAdd() {
    if (!canAdd) return;
    onChange([...visitIds, visit.trim()], [...labVisitIds, lab.trim()]);
    setVisit('');
    setLab('');
  }

  function handleRemove(index: number) {
    onChange(
      visitIds.filter((_, i) => i !== index),
      labVisitIds.filter((_, i) => i !== index),
    );
  }

  function handleKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'Enter') {
      event.preventDefault();
      handleAdd();
    }
  }

  const fieldIssues = issues.filter((i) => i.index === undefined).map((i) => i.message);
  return (
    <ConfigField label="Visit IDs / Lab Visit IDs" issues={fieldIssues} reason={reason}>
      <div className="lamina-pair-inputs">
        <FormGroup label="Visit ID" labelFor={visitInputId} inline={false}>
          <InputGroup id={visitInputId} value={visit} onValueChange={setVisit} onKeyDown={handleKeyDown} />
        </FormGroup>
        <FormGroup label="Lab Visit ID (optional)" labelFor={labInputId}>
          <InputGroup id={labInputId} value={lab} onValueChange={setLab} onKeyDown={handleKeyDown} />
        </FormGroup>
        <Button
          icon="add"
          text="Add"
          onClick={handleAdd}
          disabled={!canAdd}
          aria-label="Add visit pair"
          className="lamina-pair-add"
        />
      </div>
      {message && (
        <div className="lamina-field-errors" role="alert">
          {message}
        </div>
      )}
      {visitIds.length > 0 && (
        <HTMLTable compact className="lamina-pair-table" aria-label="Visit ID pairs">
          <thead>
            <tr>
              <th scope="col">Visit ID</th>
              <th scope="col">Lab Visit ID</th>
              <th scope="col">
                <span className="bp6-text-muted">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {visitIds.map((v, index) => (
              <tr key={`${v}\u0000${labVisitIds[index] ?? ''}\u0000${index}`}>
                <td>{v}</td>
                <td>{labVisitIds[index] || '-'}</td>
                <td>
                  <Button
                    variant="minimal"
                    size="small"
                    icon="cross"
                    aria-label={`Remove visit pair ${v}${labVisitIds[index] ? ` / ${labVisitIds[index]}` : ''}`}
                    onClick={() => handleRemove(index)}
                  />
                  <FieldMessages messages={issues.filter((i) => i.index === index).map((i) => i.message)} />
                </td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      )}
    </ConfigField>
  );
}
