import { Checkbox, InputGroup, NumericInput, TextArea } from '@blueprintjs/core';
import {
  type Indication,
  INDICATION_LABELS,
  INDICATIONS,
  isIndicationDisabled,
  MAX_ANATOMICAL_SEGMENTS,
  MODALITIES,
  type Modality,
  MODALITY_LABELS,
  ON_HOLD_REASON_MAX,
  selectIndications,
  STUDY_MESSAGES,
} from '@lamina/domain';
import { useId } from 'react';
import { CheckboxGroup } from './CheckboxGroup';
import { ConfigField, type ReasonProps } from './ConfigField';

interface FieldProps<T> {
  value: T;
  onChange: (next: T) => void;
  issues: readonly string[];
  reason: ReasonProps | null;
}

export function TextField({ label, ...props }: FieldProps<string> & { label: string; maxLength?: number }) {
  const id = useId();
  return (
    <ConfigField label={label} labelFor={id} issues={props.issues} reason={props.reason}>
      <InputGroup
        id={id}
        value={props.value}
        onValueChange={props.onChange}
        maxLength={props.maxLength}
        intent={props.issues.length > 0 ? 'danger' : 'none'}
      />
    </ConfigField>
  );
}

const EXCLUSIVE: readonly Indication[] = ['NASH', 'CELIAC_DISEASE'];

/** Indications (doc 1 §5): NASH and celiac each stand alone and say so. */
export function IndicationsField({ value, onChange, issues, reason }: FieldProps<Indication[]>) {
  const options = INDICATIONS.map((indication) => ({
    value: indication,
    label: INDICATION_LABELS[indication],
    disabled: isIndicationDisabled(value, indication),
    hint: EXCLUSIVE.includes(indication) ? STUDY_MESSAGES.oneIndicationOnly : undefined,
  }));
  return (
    <ConfigField label="Indications" issues={issues} reason={reason}>
      <CheckboxGroup options={options} selected={value} onChange={(next) => onChange(selectIndications(value, next))} />
    </ConfigField>
  );
}

export function ModalityField({ value, onChange, issues, reason }: FieldProps<Modality[]>) {
  const options = MODALITIES.map((m) => ({ value: m, label: MODALITY_LABELS[m] }));
  return (
    <ConfigField label="Modality" issues={issues} reason={reason}>
      <CheckboxGroup options={options} selected={value} onChange={onChange} />
    </ConfigField>
  );
}

/** One name per segment: keep the names there are, add blanks or drop from the end. */
export function resizeSegmentNames(names: readonly string[], segments: number | null): string[] {
  if (segments === null || !Number.isInteger(segments) || segments < 1 || segments > MAX_ANATOMICAL_SEGMENTS)
    return [...names];
  return Array.from({ length: segments }, (_, i) => names[i] ?? '');
}

interface SegmentsValue {
  segments: number | null;
  anatomicalSegments: string[];
}

/** Number of Anatomical Segments (integer, min 1, step 1) with one name input per segment. */
export function SegmentsField({ value, onChange, issues, reason }: FieldProps<SegmentsValue>) {
  const id = useId();
  function handleCount(valueAsNumber: number, valueAsString: string) {
    const segments = valueAsString.trim() === '' || Number.isNaN(valueAsNumber) ? null : valueAsNumber;
    onChange({ segments, anatomicalSegments: resizeSegmentNames(value.anatomicalSegments, segments) });
  }
  function handleName(index: number, name: string) {
    onChange({ ...value, anatomicalSegments: value.anatomicalSegments.map((n, i) => (i === index ? name : n)) });
  }
  return (
    <ConfigField label="Number of Anatomical Segments" labelFor={id} issues={issues} reason={reason}>
      <NumericInput
        id={id}
        value={value.segments ?? ''}
        onValueChange={handleCount}
        min={1}
        max={MAX_ANATOMICAL_SEGMENTS}
        stepSize={1}
        minorStepSize={null}
        majorStepSize={5}
        allowNumericCharactersOnly
        intent={issues.length > 0 ? 'danger' : 'none'}
        className="lamina-segments-input"
      />
      {value.anatomicalSegments.length > 0 && (
        <ol className="lamina-segment-names">
          {value.anatomicalSegments.map((name, index) => (
            <li key={index}>
              <span className="lamina-segment-number" aria-hidden="true">
                {index + 1}.
              </span>
              <InputGroup
                aria-label={`Segment ${index + 1} name`}
                placeholder={`Segment ${index + 1} name`}
                value={name}
                onValueChange={(next) => handleName(index, next)}
              />
            </li>
          ))}
        </ol>
      )}
    </ConfigField>
  );
}

interface OnHoldValue {
  onHold: boolean;
  onHoldReason: string | null;
}

/** On Hold with its reason (required when on hold, at most 178 characters). */
export function OnHoldField({ value, onChange, issues, reason }: FieldProps<OnHoldValue>) {
  const reasonId = useId();
  const text = value.onHoldReason ?? '';
  return (
    <ConfigField label="On hold" issues={issues} reason={reason}>
      <Checkbox
        label="On Hold"
        checked={value.onHold}
        // A study taken off hold has no hold reason any more.
        onChange={(event) =>
          onChange({
            onHold: event.currentTarget.checked,
            onHoldReason: event.currentTarget.checked ? value.onHoldReason : null,
          })
        }
      />
      {value.onHold && (
        <div className="lamina-hold-reason">
          <label htmlFor={reasonId}>On Hold Reason</label>
          <TextArea
            id={reasonId}
            value={text}
            maxLength={ON_HOLD_REASON_MAX}
            onChange={(event) =>
              onChange({ ...value, onHoldReason: event.currentTarget.value === '' ? null : event.currentTarget.value })
            }
            fill
            intent={issues.length > 0 ? 'danger' : 'none'}
            aria-describedby={`${reasonId}-count`}
          />
          <div id={`${reasonId}-count`} className="lamina-char-count">
            {text.length}/{ON_HOLD_REASON_MAX}
          </div>
        </div>
      )}
    </ConfigField>
  );
}
