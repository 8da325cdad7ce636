import { Button } from '@blueprintjs/core';

/** The last column of a study-access table, shown to those who may revoke access. */
export function RemoveAccessHeader() {
  return (
    <th scope="col">
      <span className="bp6-text-muted">Remove</span>
    </th>
  );
}

/** 'Remove Access' for one row; `label` says whose access, for screen readers. */
export function RemoveAccessCell({ label, onRemove }: { label: string; onRemove: () => void }) {
  return (
    <td>
      <Button variant="minimal" intent="danger" text="Remove Access" aria-label={label} onClick={onRemove} />
    </td>
  );
}
