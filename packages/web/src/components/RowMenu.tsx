import { Button, Menu, PopoverNext } from '@blueprintjs/core';
import type { MouseEvent, ReactNode } from 'react';

/**
 * The '…' menu of a table row. It lives inside a clickable row: its clicks and keys must not open
 * the row. Nothing is drawn when the user may take none of the row's actions.
 */
export function RowMenu({ label, items }: { label: string; items: readonly (ReactNode | false | null | undefined)[] }) {
  const shown = items.filter(Boolean);
  if (shown.length === 0) return null;
  const stop = (event: MouseEvent) => event.stopPropagation();
  return (
    <span onClick={stop} onKeyDown={(event) => event.stopPropagation()} role="presentation">
      <PopoverNext content={<Menu>{shown}</Menu>} placement="bottom-end">
        <Button variant="minimal" icon="more" aria-label={label} />
      </PopoverNext>
    </span>
  );
}
