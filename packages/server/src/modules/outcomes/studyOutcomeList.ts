import type { z } from 'zod';
import {
  endpointKeyUnknown,
  endpointsSchema,
  mayViewCaseField,
  type CaseStatus,
  type StudyOutcomeCase,
  type StudyOutcomeSortKey,
  type studyOutcomeListQuerySchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { BadRequestError } from '../../platform/errors.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import {
  casesReadOutcomes,
  casesReads,
  listStudyOutcomeCases,
  studyEndpointsJson,
  studyPrimaryReadings,
} from './outcomeQueries.js';
import { presentStudyOutcomeCase } from './outcomePresenter.js';
import { caseFinalOutcomes, type CaseRead } from './caseFinal.js';
import { agreementPairs, primaryReadingsOf } from './studyAgreement.js';

/** Rows grouped by their case id, each group in the rows' order. */
function byCase<T extends { case_id: number }>(rows: readonly T[]): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const row of rows) {
    const group = groups.get(row.case_id);
    if (group) group.push(row);
    else groups.set(row.case_id, [row]);
  }
  return groups;
}

/**
 * Whether a case waits for its adjudicator: it is Pending Adjudication, or an adjudicator is assigned
 * who has not marked it — the same two conditions under which caseFinalOutcomes holds back `final`.
 */
export function adjudicationPending(status: CaseStatus, reads: readonly CaseRead[]): boolean {
  return status === 'PENDING_ADJUDICATION' || reads.some((r) => r.role === 'ADJUDICATOR' && r.read_at === null);
}

/**
 * GET /api/studies/{id}/outcomes (issue 30, the Reads tab): one page of the study's read cases — not
 * archived, with at least one frozen value or waiting for adjudication — with every read's values and
 * the final ones (caseFinalOutcomes, the one rule). Only for the roles that see every reader's values
 * (the route's permission). Subject and visit never sort for a user who may not see them (the order
 * would tell): the list falls back to the latest read first, as the Cases tab does.
 */
export async function studyOutcomeCases(
  db: Db,
  principal: Principal,
  studyId: number,
  query: z.output<typeof studyOutcomeListQuerySchema>,
): Promise<{ total: number; cases: StudyOutcomeCase[] }> {
  const { procId, adjudicated, page, pageSize, sort } = query;
  const parsed = parseSort<StudyOutcomeSortKey>(sort);
  const sortable =
    (parsed.key !== 'subjectId' && parsed.key !== 'visitId') || mayViewCaseField(principal.actions, parsed.key);
  const { key, descending } = sortable ? parsed : parseSort<StudyOutcomeSortKey>('-scoredAt');
  const [endpointsJson, { rows, total }] = await Promise.all([
    studyEndpointsJson(db, studyId),
    listStudyOutcomeCases(db, {
      studyId,
      procId: procId?.trim() || undefined,
      adjudicated,
      sort: key,
      descending,
      ...pageWindow(page, pageSize),
    }),
  ]);
  const endpoints = endpointsSchema.parse(endpointsJson);
  const ids = rows.map((r) => r.id);
  const [reads, values] = await Promise.all([casesReads(db, ids), casesReadOutcomes(db, ids)]);
  const readsOf = byCase(reads);
  const valuesOf = byCase(values);
  const cases = rows.map((row) => {
    const status = row.status as CaseStatus;
    const caseReads = readsOf.get(row.id) ?? [];
    const caseValues = valuesOf.get(row.id) ?? [];
    const decided = {
      final: caseFinalOutcomes(endpoints, status, caseReads, caseValues),
      adjudicationPending: adjudicationPending(status, caseReads),
    };
    return presentStudyOutcomeCase(row, caseReads, caseValues, decided, principal);
  });
  return { total, cases };
}

/**
 * GET /api/studies/{id}/outcomes/pairs?endpointKey (issue 30, the Reads tab's charts): the primary
 * readers' value pairs of the cases that enter the endpoint's Bland–Altman figures (agreementPairs).
 * 400 with the domain's message for a key that is none of the study's endpoints.
 */
export async function studyOutcomePairs(db: Db, studyId: number, endpointKey: string) {
  const endpoints = endpointsSchema.parse(await studyEndpointsJson(db, studyId));
  if (!endpoints.some((d) => d.key === endpointKey)) {
    throw new BadRequestError(
      endpointKeyUnknown(
        endpointKey,
        endpoints.map((d) => d.key),
      ),
    );
  }
  const [grouped] = await studyPrimaryReadings(db, studyId, endpointKey);
  return agreementPairs(grouped ? primaryReadingsOf(grouped) : []);
}
