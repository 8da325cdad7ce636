import { Button, HTMLSelect, InputGroup } from '@blueprintjs/core';
import {
  COUNT_ENDPOINT_KINDS,
  canonicalEndpoint,
  ENDPOINT_KINDS,
  ENDPOINT_LABEL_MAX,
  type EndpointDefinition,
  type EndpointKind,
  type PositiveWhen,
} from '@lamina/domain';
import { useId, useState } from 'react';
import { FieldMessages } from './ConfigField';

// One endpoint of the study configuration's Read outcomes (ReadOutcomesFields), and the decimal
// input its threshold and the adjudication's value share.

const KIND_LABELS: Readonly<Record<EndpointKind, string>> = {
  PEAK_COUNT_PER_HPF: 'Peak count per HPF',
  MEAN_COUNT_PER_HPF: 'Mean count per HPF',
  TOTAL_COUNT: 'Total count',
  VH_CD_RATIO: 'Villus height : crypt depth',
  MEAN_VILLUS_HEIGHT_UM: 'Mean villus height (µm)',
  MEAN_CRYPT_DEPTH_UM: 'Mean crypt depth (µm)',
};
const POSITIVE_WHEN_OPTIONS = [
  { value: '', label: '—' },
  { value: 'GTE', label: '≥ (at least)' },
  { value: 'LT', label: '< (below)' },
];

const isCount = (kind: EndpointKind) => COUNT_ENDPOINT_KINDS.includes(kind);

/** Blank: undefined; text that is no number: NaN, which the domain's schema names. */
function parseDecimal(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return /^(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : Number.NaN;
}

interface DecimalInputProps {
  id: string;
  value: number | undefined;
  onChange: (next: number | undefined) => void;
  invalid: boolean;
}

/** A number as typed ('1.', '0.50'): the form holds the number, the input keeps the text. */
export function DecimalInput({ id, value, onChange, invalid }: DecimalInputProps) {
  const [text, setText] = useState(value === undefined ? '' : String(value));
  const [held, setHeld] = useState(value);
  if (!Object.is(held, value)) {
    // Changed elsewhere: show the new value unless the text already says it.
    setHeld(value);
    if (!Object.is(parseDecimal(text), value)) setText(value === undefined ? '' : String(value));
  }
  return (
    <InputGroup
      id={id}
      inputMode="decimal"
      value={text}
      onValueChange={(next) => {
        const parsed = parseDecimal(next);
        setText(next);
        setHeld(parsed);
        onChange(parsed);
      }}
      intent={invalid ? 'danger' : 'none'}
      className="lamina-endpoint-number"
    />
  );
}

interface EndpointRowProps {
  index: number;
  endpoint: EndpointDefinition;
  pointClassNames: readonly string[];
  messages: readonly string[];
  onChange: (next: EndpointDefinition) => void;
  onRemove: () => void;
}

export function EndpointRow({ index, endpoint, pointClassNames, messages, onChange, onRemove }: EndpointRowProps) {
  const id = useId();
  // By position (keys may repeat while being typed), with the key once there is one.
  const name = `Endpoint ${index + 1}${endpoint.key.trim() === '' ? '' : ` (${endpoint.key})`}`;
  const invalid = messages.length > 0 ? 'danger' : 'none';
  const set = (patch: Partial<EndpointDefinition>) => onChange(canonicalEndpoint({ ...endpoint, ...patch }));
  const classNames =
    endpoint.className !== undefined && !pointClassNames.includes(endpoint.className)
      ? [...pointClassNames, endpoint.className]
      : pointClassNames;

  function handleKind(kind: EndpointKind) {
    // Only the count kinds take a class: keep it, or take the first point class.
    const className = isCount(kind) ? (endpoint.className ?? pointClassNames[0]) : undefined;
    onChange(canonicalEndpoint({ ...endpoint, kind, className }));
  }

  return (
    <li>
      <div role="group" aria-label={name}>
        <div className="lamina-endpoint-row">
          <div className="lamina-endpoint-cell">
            <label htmlFor={`${id}-key`}>Key</label>
            <InputGroup
              id={`${id}-key`}
              value={endpoint.key}
              onValueChange={(key) => set({ key })}
              maxLength={32}
              intent={invalid}
              className="lamina-endpoint-key"
            />
          </div>
          <div className="lamina-endpoint-cell lamina-endpoint-grow">
            <label htmlFor={`${id}-label`}>Label</label>
            <InputGroup
              id={`${id}-label`}
              value={endpoint.label}
              onValueChange={(label) => set({ label })}
              maxLength={ENDPOINT_LABEL_MAX}
              intent={invalid}
            />
          </div>
          <div className="lamina-endpoint-cell">
            <label htmlFor={`${id}-kind`}>Kind</label>
            <HTMLSelect
              id={`${id}-kind`}
              value={endpoint.kind}
              onChange={(event) => handleKind(event.currentTarget.value as EndpointKind)}
              options={ENDPOINT_KINDS.map((kind) => ({ value: kind, label: KIND_LABELS[kind] }))}
            />
          </div>
          {isCount(endpoint.kind) && (
            <div className="lamina-endpoint-cell">
              <label htmlFor={`${id}-class`}>Point class</label>
              <HTMLSelect
                id={`${id}-class`}
                value={endpoint.className ?? ''}
                onChange={(event) => set({ className: event.currentTarget.value || undefined })}
                options={[{ value: '', label: 'Choose a class' }, ...classNames.map((c) => ({ value: c, label: c }))]}
              />
            </div>
          )}
          <div className="lamina-endpoint-cell">
            <label htmlFor={`${id}-threshold`}>Threshold</label>
            <DecimalInput
              id={`${id}-threshold`}
              value={endpoint.threshold}
              onChange={(threshold) => set({ threshold })}
              invalid={messages.length > 0}
            />
          </div>
          <div className="lamina-endpoint-cell">
            <label htmlFor={`${id}-positive`}>Positive when</label>
            <HTMLSelect
              id={`${id}-positive`}
              value={endpoint.positiveWhen ?? ''}
              onChange={(event) => set({ positiveWhen: (event.currentTarget.value || undefined) as PositiveWhen })}
              options={POSITIVE_WHEN_OPTIONS}
            />
          </div>
          <Button variant="minimal" intent="danger" icon="trash" aria-label={`Remove ${name}`} onClick={onRemove} />
        </div>
        <FieldMessages messages={messages} />
      </div>
    </li>
  );
}
