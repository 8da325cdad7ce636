import { reasonForChangeError, valuesDiffer } from '@lamina/domain';
import { BadRequestError } from '../errors.js';
import type { AuditEvent } from './audit.js';

/** One edited field: its value before and after, and the reason the client gave. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  reason?: string | null | undefined;
}

/** A reason-for-change rule: the message refusing a change, or null when it may go through. */
export type ReasonRule = (before: unknown, after: unknown, reason: string | null | undefined) => string | null;

/**
 * Enforces a reason-for-change rule of the domain package on the server (400 with the spec's
 * message, nothing changes): by default the rule of image and case edits — a changed field whose
 * previous value was not empty needs a reason (reasonForChangeError); study edits pass the study
 * rule — every changed field needs one (studyReasonForChangeError). Returns the changes that really
 * change something.
 */
export function requireReasonsForChange(
  changes: readonly FieldChange[],
  rule: ReasonRule = reasonForChangeError,
): FieldChange[] {
  for (const change of changes) {
    const message = rule(change.before, change.after, change.reason);
    if (message) throw new BadRequestError(message);
  }
  return changes.filter((c) => valuesDiffer(c.before, c.after));
}

/** Audit events for field changes: one row per field with old value, new value and reason. */
export function changeEvents(
  base: Pick<AuditEvent, 'action' | 'entityType' | 'entityId' | 'studyId'>,
  changes: readonly FieldChange[],
): AuditEvent[] {
  return changes.map((c) => ({
    ...base,
    field: c.field,
    oldValue: c.before,
    newValue: c.after,
    reason: c.reason?.trim() ? c.reason.trim() : null,
  }));
}
