import {
  followUpDate,
  queriesGoToPerson,
  QUERY_FOLLOW_UP_DEFAULT_DAYS,
  queryCommentError,
  wizardFollowUpDays,
  wizardReasonOptions,
  type CreateQueryRequest,
  type QueryMetadata,
  type QueryObjectType,
  type QueryReasonValue,
} from '@lamina/domain';

/** The create-query wizard (doc 3 §4, §5): four steps, Back/Next, reset. */
export type WizardStep = 1 | 2 | 3 | 4;

export interface WizardState {
  step: WizardStep;
  objectType: QueryObjectType;
  withRoleId: number | null;
  /** The reader a query to a reading role is for (issue 26: such queries go to one reader). */
  withUserId: number | null;
  reasonId: number | null;
  childReasonId: number | null;
  comment: string;
  /** YYYY-MM-DD */
  followUp: string;
}

/** A fresh wizard: step 1, nothing chosen, the follow-up 14 days from today. */
export function initialWizard(objectType: QueryObjectType, now: Date): WizardState {
  return {
    step: 1,
    objectType,
    withRoleId: null,
    withUserId: null,
    reasonId: null,
    childReasonId: null,
    comment: '',
    followUp: followUpDate(now, QUERY_FOLLOW_UP_DEFAULT_DAYS),
  };
}

/** The active reasons offered for the chosen role and object type, alphabetical with 'Other' last. */
export function reasonsFor(
  metadata: Pick<QueryMetadata, 'caseReasons' | 'imageReasons'> | undefined,
  objectType: QueryObjectType,
  withRoleId: number | null,
): QueryReasonValue[] {
  if (!metadata || withRoleId === null) return [];
  const perRole = objectType === 'CASE' ? metadata.caseReasons : metadata.imageReasons;
  return wizardReasonOptions(perRole.find((r) => r.withRoleId === withRoleId)?.values ?? []);
}

/** Whether the role chosen in `metadata` is a reading role, whose queries name one reader. */
export function choosesReader(metadata: Pick<QueryMetadata, 'roles'> | undefined, withRoleId: number | null): boolean {
  const role = metadata?.roles.find((r) => r.id === withRoleId) ?? null;
  return queriesGoToPerson(role);
}

/**
 * What keeps the wizard from leaving `state.step` forward (by field), or null when it may.
 * `needsReader`: the chosen role is a reading role (choosesReader).
 */
export function wizardStepErrors(
  state: WizardState,
  reasons: readonly QueryReasonValue[],
  needsReader = false,
): Partial<Record<'role' | 'reader' | 'reason' | 'childReason' | 'comment' | 'followUp', string>> | null {
  switch (state.step) {
    case 1:
      if (state.withRoleId === null) return { role: 'Choose the role to query' };
      return needsReader && state.withUserId === null ? { reader: 'Choose the reader to query' } : null;
    case 2: {
      const errors: Partial<Record<'reason' | 'childReason' | 'comment', string>> = {};
      const reason = reasons.find((r) => r.reasonOptionId === state.reasonId);
      if (!reason) errors.reason = 'Choose a reason';
      else if (reason.children.length > 0 && !reason.children.some((c) => c.id === state.childReasonId))
        errors.childReason = 'Choose a sub-reason';
      const comment = queryCommentError(state.comment);
      if (comment) errors.comment = comment;
      return Object.keys(errors).length > 0 ? errors : null;
    }
    case 3:
      return state.followUp === '' ? { followUp: 'Choose a follow-up date' } : null;
    case 4:
      return null;
  }
}

/** A date before today becomes today (doc 3 §5). */
export function clampFollowUp(chosen: string, now: Date): string {
  const today = followUpDate(now, 0);
  return chosen !== '' && chosen < today ? today : chosen;
}

export interface WizardTarget {
  studyId: number;
  /** The object queried: the case, or the image. */
  objectId: number;
  /** The case of the query (the case, or the image's case); none is sent as null (doc 3 §5). */
  caseId: number | null;
}

/** The body of POST /api/queries/new (doc 3 §7): category always OTHER with empty text (doc 3 §5). */
export function createQueryBody(state: WizardState, target: WizardTarget, now: Date): CreateQueryRequest {
  return {
    queryObjectType: state.objectType,
    objectId: target.objectId,
    studyId: target.studyId,
    caseId: target.caseId ?? null,
    organizationId: null,
    category: 'OTHER',
    categoryOtherText: '',
    followUpInDays: wizardFollowUpDays(state.followUp === '' ? null : state.followUp, now),
    withRoleId: state.withRoleId ?? 0,
    ...(state.withUserId !== null ? { withUserId: state.withUserId } : {}),
    responseOptionId: state.reasonId ?? 0,
    childResponseOptionId: state.childReasonId,
    commentText: state.comment.trim() === '' ? null : state.comment.trim(),
  };
}
