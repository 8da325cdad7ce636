import { Button, FormGroup, InputGroup, Menu, MenuItem, PopoverNext, Spinner } from '@blueprintjs/core';
import { useId, useState, type KeyboardEvent, type SyntheticEvent } from 'react';
import type { Choice } from './api';

export interface ChoiceTypeaheadProps {
  label: string;
  placeholder: string;
  /** What is typed; the caller searches with it. */
  text: string;
  onTextChange: (text: string) => void;
  /** The matches of `text` (the caller's search), null while they load. */
  items: readonly Choice[] | null;
  /** A load failure of the matches. */
  error: string | null;
  /** A hint under the field, e.g. that only the first 100 matches are offered. */
  hint?: string | undefined;
  selected: Choice | null;
  onSelect: (choice: Choice | null) => void;
  /** Said when nothing matches. */
  noMatches: string;
  className?: string;
}

/**
 * A type-ahead (combobox) over a searched list: type to search, ↑/↓ to move, Enter to choose,
 * Escape to close, the ✕ to clear. Changing the text of a chosen item un-chooses it.
 */
export function ChoiceTypeahead(props: ChoiceTypeaheadProps) {
  const id = useId();
  const listId = `${id}-list`;
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const items = props.items ?? [];
  const activeItem = open ? items[Math.min(active, items.length - 1)] : undefined;
  const optionId = (item: Choice) => `${listId}-${item.id}`;

  function choose(choice: Choice) {
    props.onSelect(choice);
    props.onTextChange(choice.name);
    setOpen(false);
  }

  function handleTextChange(text: string) {
    props.onTextChange(text);
    if (props.selected && text !== props.selected.name) props.onSelect(null);
    setActive(0);
    setOpen(true);
  }

  function handleKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!open) return setOpen(true);
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((a) => (items.length === 0 ? 0 : (Math.min(a, items.length - 1) + step + items.length) % items.length));
    } else if (event.key === 'Enter' && activeItem) {
      event.preventDefault();
      choose(activeItem);
    } else if (event.key === 'Escape' && open) {
      event.preventDefault();
      event.stopPropagation();
      setOpen(false);
    }
  }

  function handleBlur() {
    setOpen(false);
    // A chosen item keeps its name in the field; half-typed text over it is put back.
    if (props.selected && props.text !== props.selected.name) props.onTextChange(props.selected.name);
  }

  function handleInteraction(next: boolean, event?: SyntheticEvent<HTMLElement>) {
    // A click in the field itself keeps the list; a click elsewhere closes it.
    if (!next && event?.target instanceof Node && document.getElementById(id)?.contains(event.target)) return;
    setOpen(next);
  }

  const content =
    props.items === null ? (
      <Menu className="lamina-typeahead-menu">
        <MenuItem roleStructure="listitem" disabled text="Loading…" icon={<Spinner size={16} />} />
      </Menu>
    ) : (
      <Menu className="lamina-typeahead-menu" role="listbox" id={listId} aria-label={props.label}>
        {items.length === 0 && <MenuItem roleStructure="listitem" disabled text={props.noMatches} />}
        {items.map((item) => (
          <MenuItem
            key={item.id}
            // The option's id, for the field's aria-activedescendant (MenuItem gives its ref the <li>).
            ref={(li: HTMLLIElement | null) => li?.setAttribute('id', optionId(item))}
            roleStructure="listoption"
            tabIndex={-1}
            text={item.name}
            htmlTitle={item.name}
            active={item === activeItem}
            selected={props.selected?.id === item.id}
            // Keep the focus in the field (its blur would close the list before the click lands).
            onMouseDown={(event) => event.preventDefault()}
            onClick={() => choose(item)}
          />
        ))}
      </Menu>
    );

  const helper = props.error ?? props.hint;
  return (
    <FormGroup
      label={props.label}
      labelFor={id}
      intent={props.error ? 'danger' : 'none'}
      helperText={helper}
      className={['lamina-report-filter', props.className].filter(Boolean).join(' ')}
    >
      <PopoverNext
        isOpen={open}
        onInteraction={handleInteraction}
        content={content}
        placement="bottom-start"
        arrow={false}
        animation="minimal"
        matchTargetWidth
        autoFocus={false}
        enforceFocus={false}
        shouldReturnFocusOnClose={false}
        fill
      >
        <InputGroup
          id={id}
          role="combobox"
          aria-expanded={open}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={activeItem ? optionId(activeItem) : undefined}
          autoComplete="off"
          title={props.selected?.name}
          leftIcon="search"
          placeholder={props.placeholder}
          value={props.text}
          onValueChange={handleTextChange}
          onKeyDown={handleKeyDown}
          onFocus={() => setOpen(true)}
          onBlur={handleBlur}
          rightElement={
            props.text === '' && !props.selected ? undefined : (
              <Button
                variant="minimal"
                icon="cross"
                aria-label={`Clear ${props.label.toLowerCase()}`}
                onClick={() => {
                  props.onSelect(null);
                  props.onTextChange('');
                }}
              />
            )
          }
        />
      </PopoverNext>
    </FormGroup>
  );
}
