import { finalOutcome, type CaseFinalOutcome, type CaseStatus, type EndpointDefinition } from '@lamina/domain';

/** One of a case's reads: a primary reader's or the adjudicator's (case_readers). */
export interface CaseRead {
  user_id: number;
  read_at: Date | null;
  role: 'PRIMARY' | 'ADJUDICATOR';
}

/** One frozen value (read_outcomes). */
export interface FrozenValue {
  reader_id: number;
  reader_role: 'PRIMARY' | 'ADJUDICATOR';
  endpoint_key: string;
  value: number | null;
  positive: boolean | null;
}

const NO_VALUE = { value: null, positive: null };

/**
 * A case's final value of each of the study's endpoints (issue 30, docs/OUTCOMES.md), or null while
 * the case's read is not decided: until every primary reader has marked it, and — where the read
 * went to adjudication (the case Pending Adjudication, or an adjudicator assigned) — until the
 * adjudicator has. Then `finalOutcome`: the adjudicator's value where there is one, else the primary
 * readers' mean and common reading. A reader without a value for an endpoint (one added after they
 * marked) counts as a null value. `values` are the case's own rows; the one rule for the case route,
 * the study's list and the read-outcomes report.
 */
export function caseFinalOutcomes(
  endpoints: readonly EndpointDefinition[],
  status: CaseStatus,
  reads: readonly CaseRead[],
  values: readonly FrozenValue[],
): CaseFinalOutcome[] | null {
  const primary = reads.filter((r) => r.role === 'PRIMARY');
  if (primary.length === 0 || primary.some((r) => r.read_at === null)) return null;
  const adjudicator = reads.find((r) => r.role === 'ADJUDICATOR') ?? null;
  if (status === 'PENDING_ADJUDICATION' || (adjudicator !== null && adjudicator.read_at === null)) return null;
  const valueOf = (readerId: number, role: FrozenValue['reader_role'], key: string) =>
    values.find((v) => v.reader_id === readerId && v.reader_role === role && v.endpoint_key === key) ?? NO_VALUE;
  return endpoints.map((definition) => ({
    endpointKey: definition.key,
    ...finalOutcome(
      definition,
      primary.map((r) => valueOf(r.user_id, 'PRIMARY', definition.key)),
      adjudicator ? valueOf(adjudicator.user_id, 'ADJUDICATOR', definition.key) : null,
    ),
  }));
}
