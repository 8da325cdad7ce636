import { Button, HTMLSelect, Switch } from '@blueprintjs/core';
import {
  ADJUDICATION_RULES,
  canonicalAdjudication,
  type Adjudication,
  type AdjudicationRule,
  type EndpointDefinition,
  type StudyConfig,
  type StudyConfigIssue,
} from '@lamina/domain';
import { useId, useRef, useState } from 'react';
import { ConfigField, type ReasonProps } from './ConfigField';
import { DecimalInput, EndpointRow } from './EndpointRow';
import './readOutcomes.css';

export type ReadOutcomesField = 'endpoints' | 'adjudication' | 'signatures';

interface ReadOutcomesFieldsProps {
  value: Pick<StudyConfig, ReadOutcomesField>;
  /** The names of the form's current point classes (not deleted): a count endpoint picks one. */
  pointClassNames: readonly string[];
  onChange: <K extends ReadOutcomesField>(field: K, value: StudyConfig[K]) => void;
  /** The domain's issues of the three fields (an endpoint's carry its index). */
  issues: readonly StudyConfigIssue[];
  reasons: Record<ReadOutcomesField, ReasonProps | null>;
}

const RULE_LABELS: Readonly<Record<AdjudicationRule, string>> = {
  CATEGORY_DISAGREES: 'Categories disagree',
  ABS_DIFF_ABOVE: 'Absolute difference above',
};

/**
 * The study's read outcomes (issue 30, docs/OUTCOMES.md): its endpoints, the adjudication rule and
 * Part 11 signatures, each with its messages (the domain's) and its reason for change.
 */
export function ReadOutcomesFields({ value, pointClassNames, onChange, issues, reasons }: ReadOutcomesFieldsProps) {
  const adjudicationId = useId();
  const { endpoints, adjudication, signatures } = value;
  // Rows keep their identity when one above is removed (the inputs hold what is typed).
  const nextRow = useRef(endpoints.length);
  const [rowIds, setRowIds] = useState(() => endpoints.map((_, i) => i));
  const rows = rowIds.length === endpoints.length ? rowIds : endpoints.map((_, i) => i);
  const messagesOf = (field: ReadOutcomesField, index?: number) =>
    issues.filter((i) => i.field === field && i.index === index).map((i) => i.message);

  function handleAdd() {
    setRowIds([...rows, nextRow.current++]);
    // A peak count of the first point class, to be named: the domain's messages say what is missing.
    const className = pointClassNames[0];
    const added: EndpointDefinition = {
      key: '',
      label: '',
      kind: 'PEAK_COUNT_PER_HPF',
      ...(className !== undefined && { className }),
    };
    onChange('endpoints', [...endpoints, added]);
  }
  function handleRemove(index: number) {
    setRowIds(rows.filter((_, i) => i !== index));
    onChange(
      'endpoints',
      endpoints.filter((_, i) => i !== index),
    );
  }
  function setAdjudication(next: Adjudication) {
    onChange('adjudication', canonicalAdjudication(next));
  }

  const keys = endpoints.map((d) => d.key).filter((k) => k.trim() !== '');
  if (adjudication && !keys.includes(adjudication.endpointKey)) keys.push(adjudication.endpointKey);

  return (
    <>
      <div data-anchor="endpoints">
        <ConfigField label="Endpoints" issues={messagesOf('endpoints')} reason={reasons.endpoints}>
          {endpoints.length === 0 ? (
            <p className="bp6-text-muted lamina-empty-list">No endpoints</p>
          ) : (
            <ol className="lamina-endpoint-list" aria-label="Endpoints">
              {endpoints.map((endpoint, index) => (
                <EndpointRow
                  key={rows[index]}
                  index={index}
                  endpoint={endpoint}
                  pointClassNames={pointClassNames}
                  messages={messagesOf('endpoints', index)}
                  onChange={(next) =>
                    onChange(
                      'endpoints',
                      endpoints.map((d, i) => (i === index ? next : d)),
                    )
                  }
                  onRemove={() => handleRemove(index)}
                />
              ))}
            </ol>
          )}
          <Button icon="add" text="Add endpoint" onClick={handleAdd} />
        </ConfigField>
      </div>
      <div data-anchor="adjudication">
        <ConfigField label="Adjudication" issues={messagesOf('adjudication')} reason={reasons.adjudication}>
          <div className="lamina-endpoint-row">
            <div className="lamina-endpoint-cell">
              <label htmlFor={`${adjudicationId}-endpoint`}>Endpoint</label>
              <HTMLSelect
                id={`${adjudicationId}-endpoint`}
                value={adjudication?.endpointKey ?? ''}
                onChange={(event) => {
                  const endpointKey = event.currentTarget.value;
                  setAdjudication(
                    endpointKey === ''
                      ? null
                      : { ...(adjudication ?? { rule: 'CATEGORY_DISAGREES' as const }), endpointKey },
                  );
                }}
                options={[{ value: '', label: 'None' }, ...keys.map((k) => ({ value: k, label: k }))]}
              />
            </div>
            {adjudication && (
              <div className="lamina-endpoint-cell">
                <label htmlFor={`${adjudicationId}-rule`}>Rule</label>
                <HTMLSelect
                  id={`${adjudicationId}-rule`}
                  value={adjudication.rule}
                  onChange={(event) =>
                    setAdjudication({
                      endpointKey: adjudication.endpointKey,
                      rule: event.currentTarget.value as AdjudicationRule,
                    })
                  }
                  options={ADJUDICATION_RULES.map((rule) => ({ value: rule, label: RULE_LABELS[rule] }))}
                />
              </div>
            )}
            {adjudication?.rule === 'ABS_DIFF_ABOVE' && (
              <div className="lamina-endpoint-cell">
                <label htmlFor={`${adjudicationId}-value`}>Difference above</label>
                <DecimalInput
                  id={`${adjudicationId}-value`}
                  value={adjudication.value}
                  onChange={(next) =>
                    setAdjudication({
                      endpointKey: adjudication.endpointKey,
                      rule: adjudication.rule,
                      ...(next !== undefined && { value: next }),
                    })
                  }
                  invalid={messagesOf('adjudication').length > 0}
                />
              </div>
            )}
          </div>
        </ConfigField>
      </div>
      <div data-anchor="signatures">
        <ConfigField
          label="Electronic signatures"
          issues={messagesOf('signatures')}
          reason={reasons.signatures}
          helper="When on, Mark as Scored, Pass Lab QC and Pass ISC QC ask for the user’s password and record their electronic signature."
        >
          <Switch
            role="switch"
            label="Electronic signatures (21 CFR Part 11)"
            checked={signatures}
            onChange={(event) => onChange('signatures', event.currentTarget.checked)}
          />
        </ConfigField>
      </div>
    </>
  );
}
