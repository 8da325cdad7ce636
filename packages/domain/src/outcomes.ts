import { z } from 'zod';
import type { Permission } from './permissions.js';
import { MARK_SCORED_PERMISSION } from './cases.js';

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

/** Whose read a value is: one of the case's assigned readers, or its adjudicator. */
export const OUTCOME_READER_ROLES = ['PRIMARY', 'ADJUDICATOR'] as const;
export type OutcomeReaderRole = (typeof OUTCOME_READER_ROLES)[number];

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
