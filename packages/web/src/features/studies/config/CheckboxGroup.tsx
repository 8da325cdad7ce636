import { Checkbox } from '@blueprintjs/core';

export interface CheckboxOption<T extends string> {
  value: T;
  label: string;
  disabled?: boolean;
  /** A note shown beside the option. */
  hint?: string;
}

interface CheckboxGroupProps<T extends string> {
  options: readonly CheckboxOption<T>[];
  selected: readonly T[];
  onChange: (next: T[]) => void;
}

/** A multi-select as checkboxes: every choice visible, each reachable with Tab and Space. */
export function CheckboxGroup<T extends string>({ options, selected, onChange }: CheckboxGroupProps<T>) {
  function handleToggle(value: T, checked: boolean) {
    // Checking then unchecking gives back the same list, so it does not count as a change.
    onChange(checked ? [...selected.filter((v) => v !== value), value] : selected.filter((v) => v !== value));
  }
  return (
    <div className="lamina-checkbox-grid">
      {options.map((option) => (
        <div key={option.value} className="lamina-checkbox-option">
          <Checkbox
            label={option.label}
            checked={selected.includes(option.value)}
            disabled={option.disabled}
            onChange={(event) => handleToggle(option.value, event.currentTarget.checked)}
          />
          {option.hint && <span className="lamina-option-hint">{option.hint}</span>}
        </div>
      ))}
    </div>
  );
}
