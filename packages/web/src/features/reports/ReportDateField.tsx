import { Button, FormGroup, InputGroup } from '@blueprintjs/core';
import { ddMmmYyyy, parseReportDate } from '@lamina/domain';
import { useId, useRef } from 'react';

interface ReportDateFieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** Why the value cannot be used (shown under the field, red). */
  error: string | null;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** DD-MMM-YYYY → the yyyy-mm-dd of a native date input ('' when it is no date). */
function toIsoDate(text: string): string {
  const date = parseReportDate(text);
  return date ? `${date.year}-${pad(date.month)}-${pad(date.day)}` : '';
}

/**
 * A report date (doc 1 §5, §9: DD-MMM-YYYY), typed or picked: the calendar button opens the
 * browser's own date picker and writes the day back as DD-MMM-YYYY.
 */
export function ReportDateField({ label, value, onChange, error }: ReportDateFieldProps) {
  const id = useId();
  const picker = useRef<HTMLInputElement>(null);

  function openPicker() {
    const input = picker.current;
    if (!input) return;
    try {
      input.showPicker();
    } catch {
      // No picker here (an older browser, or not allowed): typing still works.
      input.focus();
    }
  }

  function handlePicked(iso: string) {
    if (iso === '') return;
    onChange(ddMmmYyyy(new Date(`${iso}T00:00:00Z`)));
  }

  return (
    <FormGroup
      label={label}
      labelFor={id}
      intent={error ? 'danger' : 'none'}
      helperText={error ?? undefined}
      className="lamina-report-filter lamina-report-date"
    >
      <InputGroup
        id={id}
        placeholder="DD-MMM-YYYY"
        value={value}
        intent={error ? 'danger' : 'none'}
        onValueChange={onChange}
        aria-invalid={error ? true : undefined}
        autoComplete="off"
        rightElement={
          <span className="lamina-report-date-picker">
            <Button variant="minimal" icon="calendar" aria-label={`Pick ${label.toLowerCase()}`} onClick={openPicker} />
            <input
              ref={picker}
              type="date"
              tabIndex={-1}
              aria-hidden
              value={toIsoDate(value)}
              onChange={(event) => handlePicked(event.currentTarget.value)}
            />
          </span>
        }
      />
    </FormGroup>
  );
}
