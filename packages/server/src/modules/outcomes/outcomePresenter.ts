import {
  mayViewCaseField,
  userDisplayName,
  type CaseFinalOutcome,
  type CaseStatus,
  type ReadOutcome,
  type StudyOutcomeCase,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import type { ReadOutcomeRow, StudyOutcomeCaseRow, casesReadOutcomes, casesReads } from './outcomeQueries.js';

type CaseReadRow = Awaited<ReturnType<typeof casesReads>>[number];
type StudyOutcomeValueRow = Awaited<ReturnType<typeof casesReadOutcomes>>[number];

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

/**
 * One case of the Reads tab (GET /api/studies/{id}/outcomes): its reads — the primary readers in the
 * order of their ids, then the adjudicator — each with their own frozen values (none while they
 * have not marked the case), the final values and whether adjudication is awaited, decided by the
 * caller (caseFinal.ts). Subject and visit only for a viewer who may see them.
 */
export function presentStudyOutcomeCase(
  row: StudyOutcomeCaseRow,
  reads: readonly CaseReadRow[],
  values: readonly StudyOutcomeValueRow[],
  decided: { final: CaseFinalOutcome[] | null; adjudicationPending: boolean },
  viewer: Pick<Principal, 'actions'>,
): StudyOutcomeCase {
  const ordered = [...reads].sort(
    (a, b) => Number(a.role === 'ADJUDICATOR') - Number(b.role === 'ADJUDICATOR') || a.user_id - b.user_id,
  );
  return {
    caseId: row.id,
    procId: row.proc_id,
    histoProcedureId: row.histo_procedure_id,
    subjectId: mayViewCaseField(viewer.actions, 'subjectId') ? row.subject_id : null,
    visitId: mayViewCaseField(viewer.actions, 'visitId') ? row.visit_id : null,
    status: row.status as CaseStatus,
    readers: ordered.map((read) => ({
      readerId: read.user_id,
      readerName: userDisplayName({ username: read.username, firstName: read.first_name, lastName: read.last_name }),
      readerRole: read.role,
      values: values
        .filter((v) => v.reader_id === read.user_id && v.reader_role === read.role)
        .map((v) => ({
          endpointKey: v.endpoint_key,
          value: v.value,
          positive: v.positive,
          reason: v.reason,
          scoredAt: v.scored_at.toISOString(),
        })),
    })),
    final: decided.final,
    adjudicationPending: decided.adjudicationPending,
  };
}
