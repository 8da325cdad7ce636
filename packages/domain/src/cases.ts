import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import type { Permission } from './permissions.js';
import type { RoleName } from './roles.js';
import { CASE_STATUSES, IMAGE_STATUSES, type CaseStatus, type ImageStatus, type Transition } from './images.js';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';
import { signaturePasswordSchema, type SignatureKind } from './signatures.js';

/**
 * Cases (issue 11): the case field rules of spec doc 2 §5 / doc 3 §5, the case workflow as data
 * (docs/WORKFLOW.md renders it), the messages of doc 2 §8 and doc 3 §8, and the wire shapes of the
 * case calls (doc 2 §7, doc 3 §7). Server and web import them; no rule is typed twice.
 */

// ---------------------------------------------------------------------------------------------
// Field rules (doc 2 §5)
// ---------------------------------------------------------------------------------------------

export const CASE_FIELDS = ['procId', 'histoProcedureId', 'subjectId', 'siteId', 'visitId'] as const;
export type CaseField = (typeof CASE_FIELDS)[number];

/** Label and maximum length of each case field (doc 2 §5 table). */
export const CASE_FIELD_RULES: Readonly<Record<CaseField, { label: string; max: number }>> = {
  procId: { label: 'Endo Procedure ID', max: 50 },
  histoProcedureId: { label: 'Histo Procedure ID', max: 50 },
  subjectId: { label: 'Subject ID', max: 30 },
  siteId: { label: 'Site ID', max: 30 },
  visitId: { label: 'Visit ID', max: 75 },
};

/** Letters, digits, whitespace and - _ . , ' " / ( ) @ # % & * (doc 2 §5). Letters of any script. */
const CASE_FIELD_CHARACTERS = /^[\p{L}\p{N}\s\-_.,'"/()@#%&*]*$/u;

/**
 * The message for a case field value, or null when it is fine: '{Field} must be less than {n}
 * characters' above the limit, '{Field} must be alphanumeric' for other characters. An empty value
 * is fine here (whether a field is required is caseRequiredError's rule).
 */
export function caseFieldError(field: CaseField, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const { label, max } = CASE_FIELD_RULES[field];
  if (Array.from(value).length > max) return `${label} must be less than ${max} characters`;
  if (!CASE_FIELD_CHARACTERS.test(value)) return `${label} must be alphanumeric`;
  return null;
}

/**
 * Case fields shown only with a view permission (doc 2 §6): central readers hold none of them, so
 * the server sends them as null (blinding on the server, issue 11).
 */
export const CASE_FIELD_VIEW_PERMISSIONS: Readonly<Partial<Record<CaseField, Permission>>> = {
  subjectId: 'AP_CaseData_ViewSubjectID',
  siteId: 'AP_CaseData_ViewSiteID',
  visitId: 'AP_CaseData_ViewVisitID',
};

/** Whether the user may see (and so search, sort by and edit) a case field. */
export function mayViewCaseField(actions: ReadonlySet<string>, field: CaseField): boolean {
  const permission = CASE_FIELD_VIEW_PERMISSIONS[field];
  return permission === undefined || actions.has(permission);
}

/** Fields a new case must have: the Endo Procedure ID names the case, the Subject ID whose it is. */
export const CASE_REQUIRED_FIELDS: readonly CaseField[] = ['procId', 'subjectId'];

export function caseRequiredError(field: CaseField, value: string | null | undefined): string | null {
  if (!CASE_REQUIRED_FIELDS.includes(field)) return null;
  return value === null || value === undefined || value.trim() === ''
    ? `${CASE_FIELD_RULES[field].label} is required`
    : null;
}

/** Case field values are stored trimmed; an empty value is stored as null. */
export function normaliseCaseField(value: string | null | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

// ---------------------------------------------------------------------------------------------
// Workflow (issue 11 "The workflow"; docs/WORKFLOW.md)
// ---------------------------------------------------------------------------------------------

/** Statuses a case works through, in order (revert targets, the stage of a held case). */
export const CASE_WORKFLOW_STAGES = ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED'] as const;
export type CaseStage = (typeof CASE_WORKFLOW_STAGES)[number];

export function isCaseStage(status: string): status is CaseStage {
  return (CASE_WORKFLOW_STAGES as readonly string[]).includes(status);
}

/** The status the live images of a case have at each stage of the case. */
export const IMAGE_STATUS_AT_STAGE: Readonly<Record<CaseStage, ImageStatus>> = {
  PENDING_LAB_QC: 'LAB_QC_PENDING',
  PENDING_QC: 'ISC_QC_PENDING',
  PROCESSED: 'READY_FOR_READING',
  COMPLETED: 'COMPLETE',
};

/** A forward step (PATCH /api/cases/{id}/status/forward): who may take it and what it does to the images. */
export interface ForwardStep {
  from: CaseStage | 'PENDING_ADJUDICATION';
  to: CaseStage;
  permission: Permission;
  /** The case's images in `from` status move to `to` status. */
  images: { from: ImageStatus; to: ImageStatus };
  /** Which of the case's QC columns records the user. */
  records: 'qc1_by' | 'qc2_by' | 'read_by';
  /** The issue that performs the step ('cases' = now). */
  since: 'cases' | 'reading';
  /** What the step signs where the study's reads are electronic signatures (issue 30). */
  signature: SignatureKind;
}

export const CASE_FORWARD_STEPS: readonly ForwardStep[] = [
  {
    from: 'PENDING_LAB_QC',
    to: 'PENDING_QC',
    permission: 'AP_ImageViewer_ViewButtonPassLabQC',
    images: { from: 'LAB_QC_PENDING', to: 'ISC_QC_PENDING' },
    records: 'qc1_by',
    since: 'cases',
    signature: 'LAB_QC',
  },
  {
    from: 'PENDING_QC',
    to: 'PROCESSED',
    permission: 'AP_CaseViewer_ViewButtonPassISCQC',
    images: { from: 'ISC_QC_PENDING', to: 'READY_FOR_READING' },
    records: 'qc2_by',
    since: 'cases',
    signature: 'ISC_QC',
  },
  {
    from: 'PROCESSED',
    to: 'COMPLETED',
    permission: 'AP_CaseViewer_MarkCaseasScored',
    images: { from: 'READY_FOR_READING', to: 'COMPLETE' },
    records: 'read_by',
    since: 'cases',
    signature: 'READ',
  },
  // Issue 30: the adjudicator's Mark as Scored completes a case that waited for adjudication.
  {
    from: 'PENDING_ADJUDICATION',
    to: 'COMPLETED',
    permission: 'AP_CaseViewer_MarkCaseasScored',
    images: { from: 'READY_FOR_READING', to: 'COMPLETE' },
    records: 'read_by',
    since: 'cases',
    signature: 'READ',
  },
];

/**
 * The forward step from a status that this code base performs now, if any. From PROCESSED it is
 * Mark as Scored: each assigned reader marks their own read, and the case completes when every
 * assigned reader has (markScoredOutcome).
 */
export function forwardStepFrom(status: CaseStatus): ForwardStep | null {
  return CASE_FORWARD_STEPS.find((s) => s.from === status && s.since === 'cases') ?? null;
}

export const MARK_SCORED_PERMISSION: Permission = 'AP_CaseViewer_MarkCaseasScored';

/**
 * Whether a case in `status` is being read: its forward step is a reader's Mark as Scored
 * (Processed for its primary readers; Pending Adjudication for its adjudicator, issue 30).
 */
export function isReadingStatus(status: CaseStatus): boolean {
  return forwardStepFrom(status)?.permission === MARK_SCORED_PERMISSION;
}

/** A case's reader: one of its primary readers, or its adjudicator (issue 30). */
export const CASE_READER_ROLES = ['PRIMARY', 'ADJUDICATOR'] as const;
export type CaseReaderRole = (typeof CASE_READER_ROLES)[number];

/**
 * Mark as Scored by one reader: whether the case completes with this read. While the case is
 * Processed its primary readers mark it, and the last one's read ends the primary reading
 * (`completes`; the server then asks the study's adjudication rule); while it is Pending
 * Adjudication only its adjudicator may, and their read completes it.
 */
export function markScoredOutcome(
  readers: readonly { userId: number; readAt: unknown; role?: CaseReaderRole }[],
  readerId: number,
  status: CaseStatus = 'PROCESSED',
) {
  const role: CaseReaderRole = status === 'PENDING_ADJUDICATION' ? 'ADJUDICATOR' : 'PRIMARY';
  const reads = readers.filter((r) => (r.role ?? 'PRIMARY') === role);
  const assigned = reads.some((r) => r.userId === readerId);
  const alreadyRead = reads.some((r) => r.userId === readerId && r.readAt !== null);
  const remaining = reads.filter((r) => r.userId !== readerId && r.readAt === null).length;
  return { assigned, alreadyRead, completes: assigned && !alreadyRead && remaining === 0 };
}

/**
 * Pass QC of one image (PATCH /api/images/{id}/pass-qc; doc 3 §4): Lab QC while its case is Pending
 * Lab QC, ISC QC while it is Pending QC, each with its permission. When every live image of the case
 * has passed, the case follows (its forward step, recorded as that user's QC).
 */
export interface ImageQcStep {
  from: ImageStatus;
  to: ImageStatus;
  permission: Permission;
  /** The case status in which the image may pass this step. */
  caseStatus: CaseStage;
  /** What passing signs where the study's QC passes are electronic signatures (issue 30). */
  signature: SignatureKind;
}

export const IMAGE_QC_STEPS: readonly ImageQcStep[] = [
  {
    from: 'LAB_QC_PENDING',
    to: 'ISC_QC_PENDING',
    permission: 'AP_ImageViewer_ViewButtonPassLabQC',
    caseStatus: 'PENDING_LAB_QC',
    signature: 'LAB_QC',
  },
  {
    from: 'ISC_QC_PENDING',
    to: 'READY_FOR_READING',
    permission: 'AP_CaseViewer_ViewButtonPassISCQC',
    caseStatus: 'PENDING_QC',
    signature: 'ISC_QC',
  },
];

export function imageQcStepFrom(status: ImageStatus): ImageQcStep | null {
  return IMAGE_QC_STEPS.find((s) => s.from === status) ?? null;
}

/** Who may toggle an image's visibility to readers (doc 3 §4: the ISC-QC permission, in a query chain). */
export const TOGGLE_VISIBILITY_PERMISSION: Permission = 'AP_CaseViewer_ViewButtonPassISCQC';
/** Who may open a case: the case viewer, the study page's Cases tab, the Image Management cases list. */
export const VIEW_CASE_PERMISSIONS: readonly Permission[] = [
  'AP_CaseViewer_ViewCaseViewer',
  'S_Main_ViewCasesTab',
  'IM_CaseListTab_ViewPage',
];
/** Who may comment on a case (PATCH /api/cases/{id}/comment): whoever may open it. */
export const CASE_COMMENT_PERMISSIONS: readonly Permission[] = VIEW_CASE_PERMISSIONS;
/** The longest case comment (PATCH /api/cases/{id}/comment; the Overview's Add comment). */
export const CASE_COMMENT_MAX = TEXT_LIMITS.reason;
export const ACCEPT_AI_PERMISSION: Permission = 'AP_ImageViewer_AcceptAIAnnotations';

/** Permissions that may call the forward route at all (each step checks its own). */
export const CASE_FORWARD_PERMISSIONS: readonly Permission[] = [
  ...new Set(CASE_FORWARD_STEPS.filter((s) => s.since === 'cases').map((s) => s.permission)),
];

/** Put On Hold is offered from these statuses; Remove Hold returns to the one it left. */
export const CASE_HOLDABLE: readonly CaseStatus[] = ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'];

/** Images may be assigned to a case only in these statuses (doc 2 §4). */
export const CASE_ASSIGNABLE: readonly CaseStatus[] = ['PENDING_LAB_QC', 'PENDING_QC', 'ON_HOLD'];

/** An image may join a case only from this status. */
export const IMAGE_ASSIGNABLE_STATUS: ImageStatus = 'CASE_ASSIGNMENT_PENDING';

/** Moving an image is blocked in these statuses (doc 2 §4, §9). */
export const IMAGE_MOVE_BLOCKED: readonly ImageStatus[] = ['READY_FOR_READING', 'COMPLETE'];

/** Case search for moving an image excludes these (doc 2 §5). */
export const CASE_MOVE_EXCLUDED: readonly CaseStatus[] = ['COMPLETED', 'PROCESSED', 'ARCHIVED', 'INVALID'];

/** The stage a case is at: its status, or for a held case the status the hold left. */
export function caseStage(status: CaseStatus, onHoldFrom: CaseStatus | null): CaseStage | null {
  if (isCaseStage(status)) return status;
  if (status === 'ON_HOLD' && onHoldFrom && isCaseStage(onHoldFrom)) return onHoldFrom;
  return null;
}

/** The status an image takes when it joins a case in `status` (null: the case takes no images). */
export function imageStatusOnAssign(status: CaseStatus, onHoldFrom: CaseStatus | null): ImageStatus | null {
  if (!CASE_ASSIGNABLE.includes(status)) return null;
  const stage = caseStage(status, onHoldFrom);
  return stage ? IMAGE_STATUS_AT_STAGE[stage] : null;
}

/** Permission to revert to any stage (Image Management); with the edit-case permission only to earlier statuses. */
export const REVERT_ANY_PERMISSION: Permission = 'IM_CaseListTab_ChangeStatus';
export const EDIT_CASE_PERMISSION: Permission = 'S_CaseListTab_EditCase';
/** The roles that may revert a case's status (PATCH …/status/back), and so reopen one reader's read (issue 29). */
export const REVERT_STATUS_PERMISSIONS: readonly Permission[] = [EDIT_CASE_PERMISSION, REVERT_ANY_PERMISSION];
/** The statuses in which a read can be reopened: the case is being read, or was read to completion. */
export const READ_REOPENABLE: readonly CaseStatus[] = ['PROCESSED', 'PENDING_ADJUDICATION', 'COMPLETED'];
export const CREATE_CASE_PERMISSION: Permission = 'S_CaseListTab_CreateCase';
export const MANUAL_READER_PERMISSION: Permission = 'AP_CaseViewer_ManualCRassignment';
/** PATCH /api/cases/{id}/adjudicator (issue 30): ISC and DM (and the administrators). */
export const ASSIGN_ADJUDICATOR_PERMISSION: Permission = 'AP_CaseViewer_AssignAdjudicator';
export const HOLD_CASE_PERMISSION: Permission = 'IM_CaseListTab_PutoHold';
export const ARCHIVE_CASE_PERMISSION: Permission = 'IM_CaseListTab_ArchiveCase';

/**
 * Where Revert Status may go: on the study page (edit-case permission) one of the case's earlier
 * workflow statuses; in Image Management (change-status permission) any stage. Never the current
 * status, INVALID, ON_HOLD (hold has its own action) or ARCHIVED; a held or archived case is not
 * reverted (remove the hold first).
 */
export function revertChoices(
  current: { status: CaseStatus; prevWorkflowStatuses: readonly string[] },
  anyStage: boolean,
): CaseStage[] {
  // A case pending adjudication may be set back like a stage (never to it: only the rule sends it there).
  if (!isCaseStage(current.status) && current.status !== 'PENDING_ADJUDICATION') return [];
  const pool = anyStage ? CASE_WORKFLOW_STAGES : current.prevWorkflowStatuses.filter(isCaseStage);
  return CASE_WORKFLOW_STAGES.filter((s) => s !== current.status && pool.includes(s));
}

/**
 * Every case transition, derived from the rules above (docs/WORKFLOW.md renders this list). INVALID
 * is a status of the data model that nothing produces yet.
 */
export const CASE_TRANSITIONS: readonly Transition<CaseStatus>[] = [
  ...CASE_FORWARD_STEPS.map((s) => ({
    from: s.from,
    to: s.to,
    trigger: s.since === 'cases' ? `status forward (${s.permission})` : 'Mark as Scored',
    since: s.since === 'cases' ? ('now' as const) : ('reading' as const),
  })),
  ...CASE_HOLDABLE.flatMap((status) => [
    { from: status, to: 'ON_HOLD' as const, trigger: 'Put On Hold with a reason', since: 'now' as const },
    {
      from: 'ON_HOLD' as const,
      to: status,
      trigger: 'Remove Hold with a reason (back to the status the hold left)',
      since: 'now' as const,
    },
  ]),
  {
    from: 'PROCESSED',
    to: 'PENDING_ADJUDICATION',
    trigger: 'the last primary reader marks the case scored and the study’s adjudication rule fires (issue 30)',
    since: 'now',
  },
  ...[...CASE_WORKFLOW_STAGES, 'PENDING_ADJUDICATION' as const].flatMap((from) =>
    CASE_WORKFLOW_STAGES.filter((to) => to !== from).map((to) => ({
      from,
      to,
      trigger: 'Revert Status with a reason (an earlier status; any stage with IM_CaseListTab_ChangeStatus)',
      since: 'now' as const,
    })),
  ),
  ...CASE_STATUSES.filter((s) => s !== 'ARCHIVED').map((from) => ({
    from,
    to: 'ARCHIVED' as const,
    trigger: 'Archive Case with a reason (archives its images)',
    since: 'now' as const,
  })),
];

export function canTransitionCase(from: CaseStatus, to: CaseStatus): boolean {
  return CASE_TRANSITIONS.some((t) => t.from === from && t.to === to);
}

/** Roles that read blinded: they see only the cases they are assigned to, and no subject/site/visit. */
export const ASSIGNED_CASES_ONLY_ROLES: readonly RoleName[] = ['CR', 'NOTO'];

export function readsAssignedCasesOnly(workAsRole: { name: string } | null): boolean {
  return workAsRole !== null && (ASSIGNED_CASES_ONLY_ROLES as readonly string[]).includes(workAsRole.name);
}

/**
 * The roles a user may hold in a study to be assigned as its reader: the blinded readers, a central
 * reader working in Lamina (CR) or inside NOTO through the embedded mode (NOTO).
 */
export const READER_ROLES: readonly RoleName[] = ASSIGNED_CASES_ONLY_ROLES;

// ---------------------------------------------------------------------------------------------
// Messages (doc 2 §8, doc 3 §8) and Lamina's own
// ---------------------------------------------------------------------------------------------

export const CASE_MESSAGES = {
  caseNotFound: 'Case not found',
  unableToFetchCase: 'Unable to fetch case',
  unableToFetchCases: 'Unable to fetch cases',
  unableToCreateCase: 'Unable to create case',
  editReasonRequired: 'Unable to edit case. Reason for change is required.',
  unableToTransition: 'Unable to transition case status.',
  archiveReasonRequired: 'Could not archive case. Must include reason for change.',
  couldNotHold: 'Could not put case on hold.',
  couldNotRemoveHold: 'Could not remove case hold.',
  held: 'The case has been put on hold successfully.',
  holdRemoved: 'The hold has been removed from the case successfully.',
  archived: 'The case has been archived successfully.',
  created: 'The case was created successfully',
  edited: 'The case was updated successfully',
  forwarded: 'The case status was advanced successfully',
  reverted: 'The case status was set back successfully',
  unableToFetchSuggestedReaders: 'Unable to fetch suggested readers',
  unableToSearchReaders: 'Unable to search study readers',
  unableToFetchCaseImages: 'Unable to fetch images for case',
  unableToAssign: 'Unable to assign images to case.',
  assigned: 'The image was assigned successfully',
  scored: 'The case was marked as scored',
  scoredComplete: 'The case was marked as scored and is complete',
  unableToComment: (id: number) => `Unable to add case comment for case ${id}`,
  commentAdded: 'Comment added',
  // Lamina's: the reasons behind the spec's generic refusals.
  notAssignedReader: 'Only a reader assigned to the case can mark it as scored',
  alreadyScored: 'You have already marked this case as scored',
  duplicateProcId: 'A case with this Endo Procedure ID already exists in the study',
  noLiveImages: 'The case has no images',
  notAssignableStatus: 'Images can only be assigned to cases in the pending QC status',
  imageNotAssignable: 'Only images in Case Assignment Pending can be assigned to a case',
  imageInOtherStudy: 'The image is not in the case’s study',
  readerNotInStudy: 'Readers must be central readers with access to the study',
  manualReadersNotAllowed: 'You may not assign readers',
  noChange: 'Nothing to change',
  revertStatusRequired: 'Choose the status to set the case back to',
  notPermittedLabQc: 'You do not have permission to pass lab QC',
  notPermittedIscQc: 'You do not have permission to pass ISC QC',
  notPermittedScore: 'You do not have permission to mark cases as scored',
  notPermittedStep: 'You do not have permission to take this step',
  // Reopening one reader's read (issue 29): PATCH /api/cases/{id}/reads/{readerId}/reopen.
  readReopened: 'The reader’s read was reopened',
  unableToReopenRead: 'Unable to reopen the read.',
  reopenReasonRequired: 'Unable to reopen the read. Must include reason for change.',
  notReaderOfCase: 'The user is not a reader of this case',
  readNotScored: 'This reader has not marked the case as scored',
  reopenNotNow: 'A read can be reopened only while the case is Processed, Pending Adjudication or Completed',
  // Adjudication (issue 30): PATCH /api/cases/{id}/adjudicator.
  adjudicatorAssigned: 'The adjudicator was assigned',
  unableToAssignAdjudicator: 'Unable to assign the adjudicator.',
  adjudicatorReasonRequired: 'Unable to assign the adjudicator. Reason for change is required.',
  notPendingAdjudication: 'The case is not pending adjudication',
  adjudicatorIsReader: 'The adjudicator cannot be one of the case’s readers',
  adjudicatorNotInStudy: 'The adjudicator must be a central reader with access to the study',
  adjudicatorUnchanged: 'This reader is already the case’s adjudicator',
  notAdjudicator: 'Only the case’s adjudicator can mark it as scored',
} as const;

/** What the case viewer tells staff and the adjudicator about adjudication (issue 30). */
export const ADJUDICATION_TEXT = {
  /** The callout while the case waits for an adjudicator to be assigned. */
  assignNeeded: 'The readers disagree by the study’s adjudication rule: assign an adjudicator.',
  /** The same, to staff who may not assign one. */
  awaitingAssignment: 'The readers disagree by the study’s adjudication rule: ISC or DM assigns an adjudicator.',
  /** The callout once one is assigned. */
  waitingFor: (name: string) => `Waiting for the adjudicator ${name}`,
  /** Reopening the adjudicator's read of a completed case. */
  reopenAdjudicatorRead: 'The case returns to Pending Adjudication.',
  /** Reopening a primary read of a case pending adjudication or adjudicated. */
  reopenPrimaryRead: 'The case returns to Processed and its adjudicator is removed.',
} as const;

/**
 * Lamina's reason after the spec's 'Unable to transition case status.' / 'Unable to transition
 * image status.' when the user lacks the permission of the step (a forward step, or an image's QC
 * step): the step's own words.
 */
export function stepNotPermitted(permission: Permission): string {
  switch (permission) {
    case 'AP_ImageViewer_ViewButtonPassLabQC':
      return CASE_MESSAGES.notPermittedLabQc;
    case 'AP_CaseViewer_ViewButtonPassISCQC':
      return CASE_MESSAGES.notPermittedIscQc;
    case 'AP_CaseViewer_MarkCaseasScored':
      return CASE_MESSAGES.notPermittedScore;
    default:
      return CASE_MESSAGES.notPermittedStep;
  }
}

/** '{Field} must ...' etc. come from caseFieldError; these are the status-specific refusals. */
export const revertRefused = (status: string): string =>
  `Unable to set status of case back to ${status}. Must set new status and include reason for change.`;

export const revertConfirmation = (procId: string, statusLabel: string): string =>
  `Are you sure you want to set the status of case '${procId}' back to '${statusLabel}'?`;

// ---------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------

const id = z.number().int().positive();
const reason = z.string().max(TEXT_LIMITS.reason);
const fieldText = z.string().max(200);

/** A changed value and its reason (doc 2 §3 "Change value"). */
const changeValue = z.object({ value: fieldText.nullable(), reasonForChange: reason.nullable().optional() });
const changeIds = z.object({ ids: z.array(id).max(500), reasonForChange: reason.nullable().optional() });

/** POST /api/cases. */
export const createCaseRequestSchema = z.object({
  studyId: id,
  procId: fieldText,
  subjectId: fieldText.nullable().optional(),
  siteId: fieldText.nullable().optional(),
  visitId: fieldText.nullable().optional(),
  readers: z.array(id).max(50).default([]),
  images: z.array(id).max(500).default([]),
});
export type CreateCaseRequest = z.input<typeof createCaseRequestSchema>;

/** PATCH /api/cases/{id}: only changed fields, each with its reason. */
export const editCaseRequestSchema = z
  .object({
    procId: changeValue,
    histoProcedureId: changeValue,
    subjectId: changeValue,
    siteId: changeValue,
    visitId: changeValue,
    readers: changeIds,
    images: changeIds,
  })
  .partial();
export type EditCaseRequest = z.infer<typeof editCaseRequestSchema>;

/** PATCH /api/cases/{id}/status/back. */
export const revertCaseRequestSchema = z.object({
  value: z.enum(CASE_STATUSES).nullable().optional(),
  reason: reason.nullable().optional(),
});
/** On hold, off hold, archive: { caseId, reasonForChange }. */
export const caseReasonRequestSchema = z.object({
  caseId: id.optional(),
  reasonForChange: reason.nullable().optional(),
});
/** PATCH /api/cases/{id}/reads/{readerId}/reopen (issue 29): the reason is required (the server's message). */
export const reopenReadRequestSchema = z.object({ reasonForChange: reason.nullable().optional() });
/** PATCH /api/cases/{id}/adjudicator (issue 30): a central reader of the study who is not one of the case's readers. */
export const assignAdjudicatorRequestSchema = z.object({
  readerId: id,
  reasonForChange: reason.nullable().optional(),
});
export type AssignAdjudicatorRequest = z.input<typeof assignAdjudicatorRequestSchema>;
/** PUT|PATCH /api/cases/{caseId}/assign. */
export const assignImageRequestSchema = z.object({ imageId: id, reasonForChange: reason.nullable().optional() });

export const caseReaderSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  displayName: z.string(),
  numReadCases: z.number().int(),
  numTotalCases: z.number().int(),
  readAt: z.string().nullable(),
});
export type CaseReader = z.infer<typeof caseReaderSchema>;
/** One of a case's readers in the Case: a primary reader, or its adjudicator (issue 30). */
export const caseAssignmentSchema = caseReaderSchema.extend({ role: z.enum(CASE_READER_ROLES) });
export type CaseAssignment = z.infer<typeof caseAssignmentSchema>;

export const caseImageSchema = z.object({
  id: z.number().int(),
  /** The file name, or the neutral label for users without the file-name permission. */
  name: z.string(),
  status: z.enum(IMAGE_STATUSES),
  accessionNumber: z.string().nullable(),
  biopsyLocation: z.string().nullable(),
  uploadedAt: z.string(),
  processed: z.boolean(),
  /** Hidden from readers (doc 3 §3 ignored): Show to reader / Hide from reader toggles it. */
  ignored: z.boolean(),
  /**
   * In a query chain (doc 3 §4): exactly the images PATCH /api/images/{id}/toggle-image-visibility
   * accepts (the server's one rule, images/queryChain.ts). Always false for blinded readers.
   */
  inQueryChain: z.boolean(),
});
export type CaseImage = z.infer<typeof caseImageSchema>;

const userRef = z.object({ id: z.number().int(), username: z.string(), displayName: z.string() }).nullable();

/**
 * The Case (doc 3 §3). subjectId, siteId and visitId are null for users without their view
 * permissions (central readers are blinded on the server); readers and the QC users only for users
 * who are not blinded readers.
 */
export const caseViewSchema = z.object({
  id: z.number().int(),
  studyId: z.number().int(),
  studyName: z.string(),
  procId: z.string().nullable(),
  histoProcedureId: z.string().nullable(),
  subjectId: z.string().nullable(),
  siteId: z.string().nullable(),
  visitId: z.string().nullable(),
  status: z.enum(CASE_STATUSES),
  onHoldFrom: z.enum(CASE_STATUSES).nullable(),
  prevWorkflowStatuses: z.array(z.enum(CASE_STATUSES)),
  caseStatusReverted: z.boolean(),
  createdAt: z.string(),
  qc1By: userRef,
  qc2By: userRef,
  readBy: userRef,
  qcCompletedAt: z.string().nullable(),
  readCompletedAt: z.string().nullable(),
  openQueries: z.number().int(),
  /** The primary readers, then the adjudicator if any (a blinded reader: only their own row). */
  readers: z.array(caseAssignmentSchema),
  images: z.array(caseImageSchema),
  /** The latest case comment (doc 3 §3 lastCaseComment). */
  lastCaseComment: z
    .object({ text: z.string(), imageId: z.number().int().nullable(), by: z.string(), createdAt: z.string() })
    .nullable(),
});
export type CaseView = z.infer<typeof caseViewSchema>;

/** PATCH /api/cases/{id}/forward from PROCESSED: Mark as Scored, with or without imported AI counts. */
export const forwardCaseRequestSchema = z
  .object({
    includeAiCounts: z.boolean().optional(),
    /** The signer's password where the study signs this step (issue 30). */
    signaturePassword: signaturePasswordSchema,
  })
  .nullish();
/** PATCH /api/images/{id}/pass-qc: the signer's password where the study signs QC passes (issue 30). */
export const imageQcRequestSchema = z.object({ signaturePassword: signaturePasswordSchema }).nullish();
/** PATCH /api/cases/{id}/comment { caseId, imageId, comment }. */
export const caseCommentRequestSchema = z.object({
  caseId: id.optional(),
  imageId: id.nullable().optional(),
  comment: z.string().max(CASE_COMMENT_MAX),
});

export const caseResponseSchema = z.object({ success: z.literal(true), message: z.string(), case: caseViewSchema });

// Study page, Cases tab (doc 2 §2.4)

export const STUDY_CASE_SORT_KEYS = [
  'createdAt',
  'procId',
  'histoProcedureId',
  'subjectId',
  'visitId',
  'status',
] as const;
export type StudyCaseSortKey = (typeof STUDY_CASE_SORT_KEYS)[number];

/** assignee: 'any' (default), 'unassigned', or a user id. */
export const studyCaseListQuerySchema = z.object({
  procId: z.string().max(TEXT_LIMITS.search).optional(),
  status: z.enum(CASE_STATUSES).optional(),
  assignee: z.union([z.enum(['any', 'unassigned']), z.string().regex(/^\d{1,10}$/)]).optional(),
  page: pageSchema.optional(),
  pageSize: pageSizeSchema.optional(),
  sort: z.enum(sortValues(STUDY_CASE_SORT_KEYS)).default('-createdAt'),
});
export type StudyCaseListQuery = z.input<typeof studyCaseListQuerySchema>;

export const studyCaseRowSchema = z.object({
  id: z.number().int(),
  studyId: z.number().int(),
  procId: z.string().nullable(),
  histoProcedureId: z.string().nullable(),
  createdAt: z.string(),
  subjectId: z.string().nullable(),
  visitId: z.string().nullable(),
  siteId: z.string().nullable(),
  status: z.enum(CASE_STATUSES).nullable(),
  prevWorkflowStatuses: z.array(z.enum(CASE_STATUSES)),
  openQueries: z.number().int().nullable(),
  qc1User: z.string().nullable(),
  assignedReaders: z.array(z.string()).nullable(),
  numberOfImages: z.number().int(),
  /** When the caller marked the case as scored (their own read, issue 29); null otherwise. Never another reader's. */
  myReadAt: z.string().nullable(),
});
export type StudyCaseRow = z.infer<typeof studyCaseRowSchema>;

export const studyCaseListResponseSchema = z.object({
  success: z.literal(true),
  cases: z.array(studyCaseRowSchema),
  total: z.number().int(),
});
export type StudyCaseListResponse = z.infer<typeof studyCaseListResponseSchema>;

/** GET /api/cases?studyId&searchText (doc 2 §7): case search of the Assign to Case and Move dialogs. */
export const caseSearchQuerySchema = z.object({
  studyId: z.number().int().positive(),
  searchText: z.string().max(TEXT_LIMITS.search).optional(),
  /** Lamina: 'assign' lists only cases that take images, 'move' excludes Completed and Processed. */
  purpose: z.enum(['assign', 'move']).optional(),
});
export const caseSearchResponseSchema = z.object({
  success: z.literal(true),
  cases: z.array(
    z.object({
      caseId: z.number().int(),
      procId: z.string().nullable(),
      subjectId: z.string().nullable(),
      visitId: z.string().nullable(),
      siteId: z.string().nullable(),
      caseStatus: z.enum(CASE_STATUSES),
    }),
  ),
});
/** One case of the search, its subject, site and visit IDs only as the user may view them. */
export type CaseSearchResult = z.infer<typeof caseSearchResponseSchema>['cases'][number];

/** GET /api/studies/{studyId}/users?name and GET /api/users/suggest-readers?studyId&subjectId. */
export const readerSearchQuerySchema = z.object({ name: z.string().max(TEXT_LIMITS.search).optional() });
export const suggestReadersQuerySchema = z.object({
  studyId: z.number().int().positive(),
  subjectId: z.string().max(200).optional(),
});
export const readersResponseSchema = z.object({ success: z.literal(true), readers: z.array(caseReaderSchema) });

/** GET /api/studies/{studyId}/cases/images?id&name&exclude: images that can join a case. */
export const caseImagesQuerySchema = z.object({
  id: z.number().int().positive().optional(),
  name: z.string().max(TEXT_LIMITS.fileName).optional(),
  exclude: z
    .string()
    .max(5000)
    .regex(/^(\d{1,10}(,\d{1,10})*)?$/)
    .optional(),
});
export const caseImagesResponseSchema = z.object({ success: z.literal(true), images: z.array(caseImageSchema) });

/** GET /api/cases/assigned: the caller's assigned cases across the studies they can see. */
export const assignedCaseSchema = z.object({
  id: z.number().int(),
  studyId: z.number().int(),
  studyName: z.string(),
  procId: z.string().nullable(),
  histoProcedureId: z.string().nullable(),
  status: z.enum(CASE_STATUSES),
  numberOfImages: z.number().int(),
  assignedAt: z.string(),
  /** When the caller marked the case as scored (issue 29); null otherwise. */
  myReadAt: z.string().nullable(),
});
export type AssignedCase = z.infer<typeof assignedCaseSchema>;
export const assignedCasesResponseSchema = z.object({ success: z.literal(true), cases: z.array(assignedCaseSchema) });

/** The name a reader shows under: first and last name, else the username. */
export function userDisplayName(user: { username: string; firstName: string | null; lastName: string | null }): string {
  const name = [user.firstName, user.lastName].filter((s) => s && s.trim() !== '').join(' ');
  return name || user.username;
}
