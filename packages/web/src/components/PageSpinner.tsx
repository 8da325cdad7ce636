import { Spinner, SpinnerSize } from '@blueprintjs/core';

export function PageSpinner({ label = 'Loading' }: { label?: string }) {
  return (
    <div className="lamina-page-spinner" role="status" aria-live="polite">
      <Spinner size={SpinnerSize.STANDARD} aria-label={label} />
    </div>
  );
}
