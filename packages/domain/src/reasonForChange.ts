import { MESSAGES } from './messages.js';

/** A value counts as empty when it is null, undefined, a blank string or an empty list. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/** Compares two values as the audit trail records them (JSON, order of keys kept). */
export function valuesDiffer(before: unknown, after: unknown): boolean {
  return JSON.stringify(before ?? null) !== JSON.stringify(after ?? null);
}

/**
 * The reason-for-change rule (spec doc 1 §5, doc 2 §5, doc 3 §5): a changed field whose previous
 * value was not empty needs a non-empty reason. Returns the spec's message, or null when fine.
 */
export function reasonForChangeError(
  before: unknown,
  after: unknown,
  reason: string | null | undefined,
): string | null {
  if (!valuesDiffer(before, after)) return null;
  if (isEmptyValue(before)) return null;
  if (reason === null || reason === undefined || reason.trim() === '') return MESSAGES.reasonForChangeRequired;
  return null;
}
