import { Tag, type Intent } from '@blueprintjs/core';
import { CASE_STATUS_LABELS, type CaseStatus } from '@lamina/domain';

/**
 * The case statuses' colours, the one map of the web (every page that shows a case's status as a
 * tag takes it from here): Completed green, Pending Adjudication (issue 30, beyond the spec) its
 * own orange, Processed blue (being read), Invalid red, the others neutral.
 */
export const CASE_STATUS_INTENT: Readonly<Record<CaseStatus, Intent>> = {
  PENDING_LAB_QC: 'none',
  PENDING_QC: 'none',
  PROCESSED: 'primary',
  PENDING_ADJUDICATION: 'warning',
  COMPLETED: 'success',
  ON_HOLD: 'none',
  INVALID: 'danger',
  ARCHIVED: 'none',
};

/** A case's status as a minimal tag in its colour, with the spec's label. */
export function CaseStatusTag({ status, testId }: { status: CaseStatus; testId?: string }) {
  return (
    <Tag minimal intent={CASE_STATUS_INTENT[status]} data-testid={testId}>
      {CASE_STATUS_LABELS[status]}
    </Tag>
  );
}
