import { z } from 'zod';
import { cannotDecode } from './messages.js';

function fieldName(path: readonly PropertyKey[] | undefined): string {
  const parts = (path ?? []).filter((p): p is string | number => typeof p !== 'symbol');
  return parts.length > 0 ? parts.join('.') : 'value';
}

/**
 * Default messages for schema issues that carry no message of their own: they name the field, and
 * unknown enumeration values read 'Cannot decode {field} from {value}' as the spec asks (doc 1 §8).
 * Messages written in a schema (the spec's exact texts) take precedence.
 */
export const laminaErrorMap: z.core.$ZodErrorMap = (issue) => {
  const field = fieldName(issue.path);
  switch (issue.code) {
    case 'invalid_value':
      return cannotDecode(field, issue.input);
    case 'invalid_type':
      return issue.input === undefined ? `${field} is required` : `${field} must be ${issue.expected}`;
    case 'too_small':
      if (issue.origin === 'string' && issue.minimum === 1) return `${field} is required`;
      if (issue.inclusive === false) return `${field} must be greater than ${String(issue.minimum)}`;
      return `${field} must be at least ${String(issue.minimum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      if (issue.inclusive === false) return `${field} must be less than ${String(issue.maximum)}`;
      return `${field} must be at most ${String(issue.maximum)}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'unrecognized_keys':
      return `Unknown field ${issue.keys.join(', ')}`;
    default:
      return undefined;
  }
};

let installed = false;
/** Installs laminaErrorMap as zod's global error map (server start, web start, tests). */
export function installZodMessages(): void {
  if (installed) return;
  z.config({ customError: laminaErrorMap });
  installed = true;
}
