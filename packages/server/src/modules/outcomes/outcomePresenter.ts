import { userDisplayName, type ReadOutcome } from '@lamina/domain';
import type { ReadOutcomeRow } from './outcomeQueries.js';

/**
 * One frozen value as the domain's ReadOutcome. Which rows a principal gets is decided before
 * (outcomeService.onlyOutcomesOf: a reader's query reads their own rows only).
 */
export function presentReadOutcome(row: ReadOutcomeRow): ReadOutcome {
  return {
    readerId: row.reader_id,
    readerName: userDisplayName({ username: row.username, firstName: row.first_name, lastName: row.last_name }),
    readerRole: row.reader_role,
    endpointKey: row.endpoint_key,
    value: row.value,
    positive: row.positive,
    reason: row.reason,
    scoredAt: row.scored_at.toISOString(),
  };
}
