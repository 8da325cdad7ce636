import { z } from 'zod';
import type { Permission } from './permissions.js';
import { CASE_READER_ROLES, MARK_SCORED_PERMISSION, type CaseReaderRole } from './cases.js';
import { TEXT_LIMITS } from './constants.js';
import { CASE_STATUSES } from './images.js';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';
import type { EndpointDefinition } from './endpoints.js';

// ---------------------------------------------------------------------------------------------
// Read outcomes on the wire (issue 30; docs/OUTCOMES.md): each reader's values of the study's
// endpoints, frozen when they mark a case scored, and the case's final values. The rules that
// compute them are endpoints.ts's.
// ---------------------------------------------------------------------------------------------

/** Sees every reader's values and the final values (ISC, Study Admin, DM, Sponsor; a system admin). */
export const READ_OUTCOMES_PERMISSION: Permission = 'S_Main_ViewReadOutcomes';

/**
 * GET /api/cases/{id}/outcomes: the roles that see results, and the readers, who get their own
 * values only (the server decides which by the role the user works as, not by this list).
 */
export const CASE_OUTCOMES_PERMISSIONS: readonly Permission[] = [READ_OUTCOMES_PERMISSION, MARK_SCORED_PERMISSION];

/** Whose read a value is: one of the case's assigned readers, or its adjudicator (the case's reader roles). */
export const OUTCOME_READER_ROLES = CASE_READER_ROLES;
export type OutcomeReaderRole = CaseReaderRole;

/** One reader's frozen value of one endpoint. `value` is unrounded; null with `reason` when it could not be computed. */
export const readOutcomeSchema = z.object({
  readerId: z.number().int(),
  readerName: z.string(),
  readerRole: z.enum(OUTCOME_READER_ROLES),
  endpointKey: z.string(),
  value: z.number().nullable(),
  positive: z.boolean().nullable(),
  reason: z.string().nullable(),
  /** When the reader marked the case scored (UTC, ISO 8601). */
  scoredAt: z.string(),
});
export type ReadOutcome = z.infer<typeof readOutcomeSchema>;

/** The final value of one endpoint on a case (endpoints.ts finalOutcome). */
export const caseFinalOutcomeSchema = z.object({
  endpointKey: z.string(),
  value: z.number().nullable(),
  positive: z.boolean().nullable(),
  adjudicated: z.boolean(),
});
export type CaseFinalOutcome = z.infer<typeof caseFinalOutcomeSchema>;

/**
 * GET /api/cases/{id}/outcomes. `final` is null until every assigned reader has marked the case, and
 * always for a reader (who gets only their own rows).
 */
export const caseOutcomesResponseSchema = z.object({
  success: z.literal(true),
  outcomes: z.array(readOutcomeSchema),
  final: z.array(caseFinalOutcomeSchema).nullable(),
});
export type CaseOutcomesResponse = z.infer<typeof caseOutcomesResponseSchema>;

/**
 * One endpoint's inter-reader agreement over a study's scored cases (GET /api/studies/{id}/agreement;
 * docs/OUTCOMES.md, Agreement). Every statistic is null where it cannot be computed (too few cases,
 * no variance, no threshold for the categorical ones, more than two readers for Bland–Altman).
 */
export const endpointAgreementSchema = z.object({
  endpointKey: z.string(),
  label: z.string(),
  /** Cases with at least two primary reads of this endpoint. */
  cases: z.number().int(),
  /** Readers per case in the statistics (the commonest count among those cases). */
  readers: z.number().int(),
  /** Cases in the ICC and Bland–Altman (every reader valued them), and in the kappa (every reader read them positive or not). */
  valuedCases: z.number().int(),
  categorisedCases: z.number().int(),
  icc: z.number().nullable(),
  iccLower95: z.number().nullable(),
  iccUpper95: z.number().nullable(),
  /** Cohen's kappa for two readers, Fleiss' for more. */
  kappa: z.number().nullable(),
  kappaKind: z.enum(['COHEN', 'FLEISS']).nullable(),
  percentAgreement: z.number().nullable(),
  meanDifference: z.number().nullable(),
  loaLower: z.number().nullable(),
  loaUpper: z.number().nullable(),
});
export type EndpointAgreement = z.infer<typeof endpointAgreementSchema>;

export const studyAgreementResponseSchema = z.object({
  success: z.literal(true),
  endpoints: z.array(endpointAgreementSchema),
});
export type StudyAgreementResponse = z.infer<typeof studyAgreementResponseSchema>;

// ---------------------------------------------------------------------------------------------
// The study's Reads tab (issue 30; docs/OUTCOMES.md, The Reads tab): one page of the study's read
// cases with each reader's values and the final ones, and the primary readers' value pairs of one
// endpoint for the agreement charts.
// ---------------------------------------------------------------------------------------------

/** The Reads tab's messages. */
export const OUTCOME_MESSAGES = {
  noReads: 'No reads have been scored yet',
  noReadsMatch: 'No read cases match',
  unableToFetchOutcomes: 'Unable to fetch the read outcomes',
  unableToFetchAgreement: 'Unable to fetch the agreement',
  unableToFetchPairs: "Unable to fetch the readers' values",
  notScored: 'Not scored yet',
  noValueForEndpoint: 'No value: the endpoint was added after this read',
  finalWaitsForReaders: 'Final once every reader has marked the case',
  finalWaitsForAdjudication: 'Final once the adjudicator has marked the case',
  finalNoValue: 'No final value: a reader has no value',
  noPairs: 'No case has values from two readers yet',
} as const;

/**
 * Sort keys of GET /api/studies/{id}/outcomes. `scoredAt`: the case's latest frozen value's time
 * (the last read marked). Subject and visit sort only for users who may see them.
 */
export const STUDY_OUTCOME_SORT_KEYS = [
  'scoredAt',
  'procId',
  'histoProcedureId',
  'subjectId',
  'visitId',
  'status',
] as const;
export type StudyOutcomeSortKey = (typeof STUDY_OUTCOME_SORT_KEYS)[number];

/**
 * The adjudication filter: `yes` the cases whose adjudicator has marked them, `pending` those
 * waiting for adjudication (Pending Adjudication, or an adjudicator assigned who has not marked),
 * `no` the others.
 */
export const OUTCOME_ADJUDICATION_FILTERS = ['yes', 'pending', 'no'] as const;
export type OutcomeAdjudicationFilter = (typeof OUTCOME_ADJUDICATION_FILTERS)[number];

export const studyOutcomeListQuerySchema = z.object({
  /** Contained in the Endo or the Histo Procedure ID, as the Cases tab's search. */
  procId: z.string().max(TEXT_LIMITS.search).optional(),
  adjudicated: z.enum(OUTCOME_ADJUDICATION_FILTERS).optional(),
  page: pageSchema.optional(),
  pageSize: pageSizeSchema.optional(),
  sort: z.enum(sortValues(STUDY_OUTCOME_SORT_KEYS)).default('-scoredAt'),
});
export type StudyOutcomeListQuery = z.input<typeof studyOutcomeListQuerySchema>;

/** One frozen value of a reader in the list (readOutcomeSchema without the reader, given once). */
export const studyOutcomeValueSchema = readOutcomeSchema.pick({
  endpointKey: true,
  value: true,
  positive: true,
  reason: true,
  scoredAt: true,
});
export type StudyOutcomeValue = z.infer<typeof studyOutcomeValueSchema>;

/** One of the case's reads: its values, none while the reader has not marked the case. */
export const studyOutcomeReaderSchema = z.object({
  readerId: z.number().int(),
  readerName: z.string(),
  readerRole: z.enum(OUTCOME_READER_ROLES),
  values: z.array(studyOutcomeValueSchema),
});
export type StudyOutcomeReader = z.infer<typeof studyOutcomeReaderSchema>;

/**
 * One case of the Reads tab. `readers`: the primary readers in the order of their ids, then the
 * adjudicator. `final` as GET /api/cases/{id}/outcomes gives it (caseFinal.ts, the one rule);
 * subject and visit null for users without their view permissions.
 */
export const studyOutcomeCaseSchema = z.object({
  caseId: z.number().int(),
  procId: z.string().nullable(),
  histoProcedureId: z.string().nullable(),
  subjectId: z.string().nullable(),
  visitId: z.string().nullable(),
  status: z.enum(CASE_STATUSES),
  readers: z.array(studyOutcomeReaderSchema),
  final: z.array(caseFinalOutcomeSchema).nullable(),
  /** The case waits for its adjudicator (Pending Adjudication, or assigned and not yet marked). */
  adjudicationPending: z.boolean(),
});
export type StudyOutcomeCase = z.infer<typeof studyOutcomeCaseSchema>;

export const studyOutcomeListResponseSchema = z.object({
  success: z.literal(true),
  total: z.number().int(),
  cases: z.array(studyOutcomeCaseSchema),
});
export type StudyOutcomeListResponse = z.infer<typeof studyOutcomeListResponseSchema>;

export const outcomePairsQuerySchema = z.object({ endpointKey: z.string().min(1).max(TEXT_LIMITS.search) });

/**
 * GET /api/studies/{id}/outcomes/pairs?endpointKey: the two primary readers' values of each case
 * that enters the endpoint's Bland–Altman figures — `a` the reader with the smaller id — so the
 * charts plot exactly what the agreement panel states. Empty unless the commonest reader count is 2.
 */
export const outcomePairsResponseSchema = z.object({
  success: z.literal(true),
  pairs: z.array(z.object({ caseId: z.number().int(), a: z.number(), b: z.number() })),
});
export type OutcomePairsResponse = z.infer<typeof outcomePairsResponseSchema>;

/** Why an agreement figure is null (shown beside its '—'). */
export const AGREEMENT_GAP_MESSAGES = {
  fewValued: 'Fewer than 2 cases where every reader has a value',
  fewCategorised: 'Fewer than 2 cases where every reader has a positive/negative reading',
  noThreshold: 'The endpoint has no threshold, so no positive/negative reading',
  noVariance: 'The values do not vary between cases',
  oneCategory: 'Every reading falls in one category',
  noInterval: 'The interval cannot be computed for these values',
  notTwoReaders: 'Bland–Altman compares exactly two readers per case',
} as const;

/** Why each group of an endpoint's agreement figures is null; null where the figure is there. */
export interface AgreementGaps {
  icc: string | null;
  iccInterval: string | null;
  kappa: string | null;
  percentAgreement: string | null;
  blandAltman: string | null;
}

/**
 * The reason behind each null figure of an endpoint's agreement (endpointAgreementSchema), from the
 * counts the route gives and whether the endpoint has a threshold; the statistics' own rules
 * (agreementStatistics.ts): n < 2 → null, no variance → null, p_e = 1 → null.
 */
export function agreementGaps(
  agreement: EndpointAgreement,
  definition: Pick<EndpointDefinition, 'threshold'> | undefined,
): AgreementGaps {
  const fewValued = agreement.valuedCases < 2 ? AGREEMENT_GAP_MESSAGES.fewValued : null;
  const categorical =
    definition?.threshold === undefined
      ? AGREEMENT_GAP_MESSAGES.noThreshold
      : agreement.categorisedCases < 2
        ? AGREEMENT_GAP_MESSAGES.fewCategorised
        : null;
  return {
    icc: agreement.icc !== null ? null : (fewValued ?? AGREEMENT_GAP_MESSAGES.noVariance),
    iccInterval:
      agreement.icc === null
        ? null
        : agreement.iccLower95 !== null && agreement.iccUpper95 !== null
          ? null
          : AGREEMENT_GAP_MESSAGES.noInterval,
    kappa: agreement.kappa !== null ? null : (categorical ?? AGREEMENT_GAP_MESSAGES.oneCategory),
    percentAgreement:
      agreement.percentAgreement !== null ? null : (categorical ?? AGREEMENT_GAP_MESSAGES.fewCategorised),
    blandAltman:
      agreement.meanDifference !== null
        ? null
        : agreement.readers > 2
          ? AGREEMENT_GAP_MESSAGES.notTwoReaders
          : (fewValued ?? AGREEMENT_GAP_MESSAGES.fewValued),
  };
}
