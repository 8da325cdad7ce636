import { Button, PopoverNext } from '@blueprintjs/core';
import { CLASS_COLOR_SWATCHES } from '@lamina/domain';
import { useState } from 'react';

interface ColorSwatchPickerProps {
  value: string;
  onChange: (color: string) => void;
  /** Names what is being coloured, for screen readers. */
  label: string;
}

/** A colour chosen from the study swatches (doc 1 §9), in a popover of swatch buttons. */
export function ColorSwatchPicker({ value, onChange, label }: ColorSwatchPickerProps) {
  const [isOpen, setIsOpen] = useState(false);
  return (
    <PopoverNext
      isOpen={isOpen}
      onInteraction={setIsOpen}
      // Start the keyboard on the colour in use, not on the popover's focus trap.
      onOpened={(node) =>
        node.querySelector<HTMLButtonElement>('.lamina-swatch-selected, button.lamina-swatch')?.focus()
      }
      placement="bottom-start"
      content={
        <div className="lamina-swatches" role="group" aria-label={`${label}: choose a colour`}>
          {CLASS_COLOR_SWATCHES.map((color) => (
            <button
              key={color}
              type="button"
              className={`lamina-swatch${color.toUpperCase() === value.toUpperCase() ? ' lamina-swatch-selected' : ''}`}
              style={{ background: color }}
              aria-label={color}
              aria-pressed={color.toUpperCase() === value.toUpperCase()}
              onClick={() => {
                onChange(color);
                setIsOpen(false);
              }}
            />
          ))}
        </div>
      }
    >
      <Button
        variant="minimal"
        aria-label={`${label}: colour ${value}`}
        icon={<span className="lamina-swatch lamina-swatch-current" style={{ background: value }} />}
        endIcon="caret-down"
      />
    </PopoverNext>
  );
}
