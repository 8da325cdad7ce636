import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import { QUERY_RESOLUTIONS, type QueryResolution } from './images.js';
import type { Permission } from './permissions.js';
import { ROLES, type RoleName } from './roles.js';
import { readsAssignedCasesOnly } from './cases.js';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';

/**
 * Queries (issue 15; spec doc 3 §2–§9, doc 1 route /queries, doc 2 §2.5): the lifecycle as data,
 * who may do what (the situation → actions table of doc 3 §6 with the Q_* permissions), the
 * dynamic status, the wizard's rules, the messages and every request/response shape. The server
 * enforces exactly these functions; the web shows what they allow. docs/QUERIES.md explains them.
 */

// ---------------------------------------------------------------------------------------------
// Enumerations and constants (doc 3 §3, §4, §5, §9)
// ---------------------------------------------------------------------------------------------

export const QUERY_OBJECT_TYPES = ['CASE', 'IMAGE'] as const;
export type QueryObjectType = (typeof QUERY_OBJECT_TYPES)[number];

export const QUERY_STATUSES = ['OPEN', 'CLOSED'] as const;
export type QueryStatus = (typeof QUERY_STATUSES)[number];

/** Doc 3 §4: computed, never stored (see queryDynamicStatus). */
export const QUERY_DYNAMIC_STATUSES = ['ANSWERED', 'FOLLOWUPREQUIRED', 'FOLLOWEDUP', 'UPCOMINGDUEDATE'] as const;
export type QueryDynamicStatus = (typeof QUERY_DYNAMIC_STATUSES)[number];

export const QUERY_DYNAMIC_STATUS_LABELS: Record<QueryDynamicStatus, string> = {
  ANSWERED: 'Answered',
  FOLLOWUPREQUIRED: 'Follow-up required',
  FOLLOWEDUP: 'Followed up',
  UPCOMINGDUEDATE: 'Due soon',
};

/** Doc 3 §5: the categories. The wizard always sends OTHER (doc 3 §5, §9). */
export const QUERY_CATEGORIES = [
  'BLURRY',
  'INCOMPLETE',
  'BAD_FILENAME',
  'OTHER',
  'INTERNAL_WITH_DM',
  'INTERNAL_WITH_PM',
  'INTERNAL_WITH_CR',
  'INTERNAL_WITH_OTHER',
] as const;
export type QueryCategory = (typeof QUERY_CATEGORIES)[number];

/**
 * Image queries use only blurry, incomplete, bad file name and the three internal-with variants
 * (doc 3 §5) — and OTHER, which the wizard always sends (doc 3 §5 "The category sent is always
 * Other"), so refusing it would refuse every image query the product itself makes.
 */
export const IMAGE_QUERY_CATEGORIES: readonly QueryCategory[] = [
  'BLURRY',
  'INCOMPLETE',
  'BAD_FILENAME',
  'INTERNAL_WITH_DM',
  'INTERNAL_WITH_PM',
  'INTERNAL_WITH_CR',
  'OTHER',
];

export function categoryAllowed(objectType: QueryObjectType, category: QueryCategory): boolean {
  return objectType === 'CASE' || IMAGE_QUERY_CATEGORIES.includes(category);
}

/** Doc 3 §9: the wizard's default follow-up, its steps, the list's reason truncation. */
export const QUERY_FOLLOW_UP_DEFAULT_DAYS = 14;
/** The furthest follow-up a query may be given (Lamina's bound: a year). */
export const QUERY_FOLLOW_UP_MAX_DAYS = 365;
/** An open query whose follow-up date is this many days away or fewer is UPCOMINGDUEDATE (Lamina's). */
export const QUERY_UPCOMING_DAYS = 3;
export const QUERY_WIZARD_STEPS = 4;
export const QUERY_REASON_LIST_MAX = 34;
/** Comments, resolution details, close text, unresolvable reasons. */
export const QUERY_TEXT_MAX = 2000;
/** A reason option's text. */
export const QUERY_REASON_TEXT_MAX = 120;
/** The reserved reason that sorts last in the wizard (doc 3 §5). */
export const QUERY_OTHER_REASON = 'Other';

/**
 * Mark as Resolved asks the target to choose an option (doc 2 §5, doc 3 §5: required; details
 * optional). The spec does not list them; these are Lamina's, per object type.
 */
export const QUERY_RESOLUTION_OPTIONS: Record<QueryObjectType, readonly string[]> = {
  IMAGE: ['Image replaced', 'Image data corrected', 'Confirmed as correct', 'Other'],
  CASE: ['Case data corrected', 'Images added or corrected', 'Confirmed as correct', 'Other'],
};

// ---------------------------------------------------------------------------------------------
// Messages (doc 3 §5, §6, §8) and Lamina's reasons after them
// ---------------------------------------------------------------------------------------------

export const QUERY_MESSAGES = {
  unableToFetchMetadata: 'Unable to fetch query metadata',
  unableToFetchForCase: (id: number) => `Unable to fetch queries for caseId ${id}`,
  unableToFetchForImage: (id: number) => `Unable to fetch queries for imageId ${id}`,
  unableToCreate: (type: QueryObjectType, id: number) =>
    `Unable to create query for object type ${type} object id ${id}`,
  unableToComment: (id: number) => `Unable to add comment to query for queryId ${id}`,
  unableToResolve: (id: number) => `Unable to mark the query as resolved for queryId ${id}`,
  unableToClose: (id: number) => `Unable to close query for queryId ${id}`,
  unableToRemind: (id: number) => `Unable to create query reminder for queryId ${id}`,
  unableToMarkUnresolvable: (id: number) => `Unable to mark query unresolvable for queryId ${id}`,
  unableToFetchQueries: 'Unable to fetch queries',
  unableToFetchStats: 'Unable to fetch query stats for user',
  commentsMandatory: 'Comments are mandatory.',
  disclaimer: 'This will NOT progress the query to the next step.',
  cancelled: 'Cancelled',
  // Lamina's: success messages and the reasons behind the spec's refusals.
  queryNotFound: 'Query not found',
  created: 'The query was created',
  commented: 'Comment added',
  resolved: 'The query was marked as resolved',
  closed: 'The query was closed',
  cancelledQuery: 'The query was cancelled',
  markedUnresolvable: 'The query was marked as unresolvable',
  followUpSet: 'The follow-up date was changed',
  notAllowed: 'you may not do this with this query',
  alreadyClosed: 'the query is closed',
  notAnswered: 'the query has not been answered yet',
  alreadyAnswered: 'the query has already been answered',
  notLastReminder: 'the follow-up was changed meanwhile: reload the query',
  roleNotQueryable: 'you may not send a query to this role',
  readerRequired: 'choose the reader of the case the query is for',
  readerNotAssigned: 'the reader is not assigned to the case',
  readerOnlyForReadingRoles: 'a reader is chosen only for queries to a reading role',
  reasonRequired: 'choose a reason',
  reasonNotFound: 'the reason is not offered for this role and object type',
  childReasonRequired: 'choose a sub-reason',
  childReasonNotFound: 'the sub-reason does not belong to the reason',
  categoryNotAllowed: 'the category is not used for image queries',
  objectNotFound: 'the case or image was not found in the study',
  caseMismatch: 'the case does not hold the image',
  resolutionOptionRequired: 'choose a resolution option',
  resolutionOptionUnknown: 'the resolution option is not offered for this query',
  unresolvableReasonRequired: 'give the reason it cannot be resolved',
  bodyIdMismatch: 'the query id in the body does not match the path',
  followUpDays: `The follow-up must be between 0 and ${QUERY_FOLLOW_UP_MAX_DAYS} days from today`,
  // Reason catalogue administration (issue 15)
  reasonTextRequired: 'Reason text is required',
  reasonTextTooLong: `Reason text must be less than ${QUERY_REASON_TEXT_MAX} characters`,
  reasonDuplicate: 'A reason with this text already exists here',
  reasonNestOneLevel: 'Reasons nest one level only: choose a top-level reason as the parent',
  reasonParentMismatch: 'The parent must be a reason of the same role and object type',
  reasonHasChildren: 'A reason with sub-reasons cannot itself become a sub-reason',
  reasonNotFoundAdmin: 'Reason not found',
  reasonSaved: 'The reason was saved',
  reasonCreated: 'The reason was added',
  roleNotQueryTarget: 'This role cannot be queried',
  nothingToChange: 'Nothing to change',
} as const;

/** The refusal of an action: the spec's message for it, then why (Lamina's). */
export function queryRefusal(specMessage: string, why: string): string {
  return `${specMessage}: ${why}`;
}

// ---------------------------------------------------------------------------------------------
// Which roles may be queried (doc 3 §6: QP_{Role}AssignedtostudytheImageCaseQuery)
// ---------------------------------------------------------------------------------------------

/** The QP_* permission that lets a role be chosen as the "query with" target. */
export const QUERY_TARGET_PERMISSIONS: Partial<Record<RoleName, Permission>> = {
  StudyAdmin: 'QP_StudyAdminAssignedtostudytheImageCaseQuery',
  ISC: 'QP_ISCAssignedtostudytheImageCaseQuery',
  DM: 'QP_DMAssignedtostudytheImageCaseQuery',
  PM: 'QP_PMAssignedtostudytheImageCaseQuery',
  SPONSOR: 'QP_SponsorAssignedtostudytheImageCaseQuery',
  LabTech: 'QP_LabTechAssignedtostudytheImageCaseQuery',
  UPLOADER: 'QP_UploaderAssignedtostudytheImageCaseQuery',
  CR: 'QP_CRAssignedtostudytheImageCaseQuery',
  Site: 'QP_SiteAssignedtostudytheImageCaseQuery',
};

/** Roles that can ever be a query's target (those with a QP_* permission). */
export const QUERY_TARGET_ROLES = ROLES.filter((r) => QUERY_TARGET_PERMISSIONS[r.name] !== undefined);

/** The roles a user holding `actions` may send a query to, in role order. */
export function queryableRoles(actions: ReadonlySet<string>): typeof QUERY_TARGET_ROLES {
  return QUERY_TARGET_ROLES.filter((r) => {
    const p = QUERY_TARGET_PERMISSIONS[r.name];
    return p !== undefined && actions.has(p);
  });
}

/** Opening a query of each object type (doc 3 §6). */
export const QUERY_ISSUE_PERMISSION: Record<QueryObjectType, Permission> = {
  CASE: 'Q_IssueCaseQuery',
  IMAGE: 'Q_IssueImageQueryStudy',
};

/** The queries list tabs (doc 1 route /queries). */
export const QUERY_LIST_PERMISSION: Record<QueryObjectType, Permission> = {
  CASE: 'Q_ViewQueriesCases',
  IMAGE: 'Q_ViewQueriesImages',
};

/** The viewer's Queries tab and the per-object query calls. */
export const VIEW_QUERIES_TAB_PERMISSION: Permission = 'AP_CaseViewer_ViewQueries';

/**
 * Which queries a user sees (lists, stats, the viewer's tab), beside the study scope:
 * - `all`: every query of the studies they see (Q_ViewAllQueries, Q_ViewAllQueriesunderAssignedStudies);
 * - `role`: queries sent to the role they work as, or opened by it (Q_ViewQueriesAssignedtoUserRoleOnly);
 * - `person`: a blinded reader (working as CR or NOTO) holding any of those: only the queries they
 *   opened themselves or that were sent to them personally (issue 26: independent reads — one reader
 *   never learns another's observations through a query), and only of cases assigned to them;
 * - `none`: none.
 */
export type QueryVisibility = 'all' | 'role' | 'person' | 'none';

export function queryVisibility(
  actions: ReadonlySet<string>,
  workAsRole: { name: string } | null = null,
): QueryVisibility {
  const held =
    actions.has('Q_ViewAllQueries') || actions.has('Q_ViewAllQueriesunderAssignedStudies')
      ? 'all'
      : actions.has('Q_ViewQueriesAssignedtoUserRoleOnly')
        ? 'role'
        : 'none';
  if (held !== 'none' && readsAssignedCasesOnly(workAsRole)) return 'person';
  return held;
}

/**
 * Whether queries sent to `role` go to one person: a reading role's queries are addressed to one
 * reader of the case (withUserId), never to every reader (issue 26).
 */
export function queriesGoToPerson(role: { name: string } | null): boolean {
  return readsAssignedCasesOnly(role);
}

// ---------------------------------------------------------------------------------------------
// The lifecycle (doc 3 §4) and who may act (doc 3 §6)
// ---------------------------------------------------------------------------------------------

/** Grouping of doc 3 §4: open (not resolved), answered (open and resolved), closed. */
export type QueryGroup = 'open' | 'answered' | 'closed';

export function queryGroup(q: { queryStatus: QueryStatus; resolution: QueryResolution | null }): QueryGroup {
  if (q.queryStatus === 'CLOSED') return 'closed';
  return q.resolution === 'RESOLVED' ? 'answered' : 'open';
}

/** A query closed without an answer was cancelled by its opener (doc 3 §4: shown as 'Cancelled'). */
export function isCancelled(q: { queryStatus: QueryStatus; resolution: QueryResolution | null }): boolean {
  return q.queryStatus === 'CLOSED' && q.resolution === null;
}

/** Whole days from the UTC date of `from` to the UTC date `to` (YYYY-MM-DD or ISO). */
export function daysBetween(from: Date, to: string): number {
  const a = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate());
  const d = new Date(to.length === 10 ? `${to}T00:00:00Z` : to);
  const b = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Math.round((b - a) / 86_400_000);
}

/** The follow-up date (YYYY-MM-DD, UTC) `days` after the UTC date of `now`. */
export function followUpDate(now: Date, days: number): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days));
  return d.toISOString().slice(0, 10);
}

/** Overdue (doc 3 §9: shown red): open, unanswered, and its follow-up date has passed. */
export function isOverdue(
  q: { queryStatus: QueryStatus; resolution: QueryResolution | null; latestFollowUpOnDt: string | null },
  now: Date,
): boolean {
  return queryGroup(q) === 'open' && q.latestFollowUpOnDt !== null && daysBetween(now, q.latestFollowUpOnDt) < 0;
}

/**
 * The dynamic status (doc 3 §4), computed from the follow-up date:
 * - ANSWERED: open and resolved;
 * - FOLLOWUPREQUIRED: open, unanswered, follow-up date passed (overdue; red in the list);
 * - UPCOMINGDUEDATE: open, unanswered, follow-up within QUERY_UPCOMING_DAYS days (today included);
 * - FOLLOWEDUP: open, unanswered, its follow-up date has been changed at least once;
 * - null: a closed query, or an open one with nothing of the above.
 */
export function queryDynamicStatus(
  q: {
    queryStatus: QueryStatus;
    resolution: QueryResolution | null;
    latestFollowUpOnDt: string | null;
    followUps: number;
  },
  now: Date,
): QueryDynamicStatus | null {
  const group = queryGroup(q);
  if (group === 'closed') return null;
  if (group === 'answered') return 'ANSWERED';
  if (q.latestFollowUpOnDt !== null) {
    const days = daysBetween(now, q.latestFollowUpOnDt);
    if (days < 0) return 'FOLLOWUPREQUIRED';
    if (days <= QUERY_UPCOMING_DAYS) return 'UPCOMINGDUEDATE';
  }
  return q.followUps > 0 ? 'FOLLOWEDUP' : null;
}

/** What a user may do with a query (doc 3 §4, §6). */
export const QUERY_ACTIONS = [
  'resolve',
  'unresolvable',
  'cancel',
  'close',
  'followUp',
  'comment',
  'replaceImage',
] as const;
export type QueryAction = (typeof QUERY_ACTIONS)[number];

/** The situation of doc 3 §6's table. */
export type QuerySituation = 'unanswered' | 'answered' | 'closed';
/**
 * The user's relation to a query: by the role they work as (queries go role to role); for a blinded
 * reader by person — the reader who opened it, the reader it was sent to (issue 26).
 */
export type QueryRelation = 'openerAndTarget' | 'opener' | 'target' | 'other';

/** Who opened a query and whom it is with: the facts the relation is decided on. */
export interface QueryParties {
  openedBy: number | null;
  openedByRoleId: number | null;
  withRoleId: number | null;
  withUserId: number | null;
}

/** The user a rule is decided for: who they are and the role they work as. */
export interface QueryPerson {
  id: number;
  workAsRole: { id: number; name: string } | null;
}

export function querySituation(q: { queryStatus: QueryStatus; resolution: QueryResolution | null }): QuerySituation {
  const group = queryGroup(q);
  return group === 'open' ? 'unanswered' : group;
}

export function queryRelation(q: QueryParties, person: QueryPerson): QueryRelation {
  const role = person.workAsRole;
  if (role === null) return 'other';
  const personal = readsAssignedCasesOnly(role);
  const opener = q.openedByRoleId === role.id && (!personal || q.openedBy === person.id);
  const target = q.withRoleId === role.id && (!personal || q.withUserId === person.id);
  if (opener && target) return 'openerAndTarget';
  if (opener) return 'opener';
  if (target) return 'target';
  return 'other';
}

/**
 * Doc 3 §6's situation → actions table, as data. Lamina's additions, written down in
 * docs/QUERIES.md: 'unresolvable' stands beside 'resolve' (the target answers either way); an
 * answered query still takes comments from everyone who sees it; a closed query takes nothing.
 * 'replaceImage' is further limited to image queries and to the four roles of REPLACE_IMAGE_ROLES.
 */
export const QUERY_SITUATION_ACTIONS: Record<QuerySituation, Record<QueryRelation, readonly QueryAction[]>> = {
  unanswered: {
    openerAndTarget: ['resolve', 'unresolvable', 'cancel', 'followUp', 'comment', 'replaceImage'],
    opener: ['followUp', 'cancel', 'comment'],
    target: ['resolve', 'unresolvable', 'comment', 'replaceImage'],
    other: ['comment'],
  },
  answered: {
    openerAndTarget: ['close', 'comment'],
    opener: ['close', 'comment'],
    target: ['comment'],
    other: ['comment'],
  },
  closed: { openerAndTarget: [], opener: [], target: [], other: [] },
};

/** The permissions each action needs besides the situation (any of them). */
export const QUERY_ACTION_PERMISSIONS: Record<QueryAction, readonly Permission[]> = {
  resolve: ['Q_MarkQueryasResolved'],
  unresolvable: ['Q_MarkQueryasUnresolvable'],
  cancel: ['Q_Close_CancelQueryunderUserRoleOnly', 'Q_Close_CancelQueryunderassignedstudies'],
  close: ['Q_Close_CancelQueryunderUserRoleOnly', 'Q_Close_CancelQueryunderassignedstudies'],
  followUp: ['Q_Flagforfollowup'],
  comment: ['Q_Commentonassignedqueries'],
  replaceImage: ['S_ImageListTab_UploadImage'],
};

/** Doc 3 §6: replace image is shown for StudyAdmin, ISC, LabTech and Uploader. */
export const REPLACE_IMAGE_ROLES: readonly RoleName[] = ['StudyAdmin', 'ISC', 'LabTech', 'UPLOADER'];

/**
 * Holders of Q_Close_CancelQueryunderassignedstudies may close or cancel any query of their
 * studies, as its opener could (doc 3 §6 "… and under assigned studies").
 */
const CLOSE_ANY_PERMISSION: Permission = 'Q_Close_CancelQueryunderassignedstudies';

export interface QueryActor extends QueryPerson {
  actions: ReadonlySet<string>;
}

/** What `actor` may do with `q`: the one rule the server enforces and the panel shows. */
export function queryActionsFor(
  q: QueryParties & { objectType: QueryObjectType; queryStatus: QueryStatus; resolution: QueryResolution | null },
  actor: QueryActor,
): QueryAction[] {
  const situation = querySituation(q);
  const relation = queryRelation(q, actor);
  const allowed = new Set<QueryAction>(QUERY_SITUATION_ACTIONS[situation][relation]);
  // A blinded reader acts only as opener or target, never on another reader's query.
  if (actor.actions.has(CLOSE_ANY_PERMISSION) && !readsAssignedCasesOnly(actor.workAsRole)) {
    if (situation === 'unanswered') allowed.add('cancel');
    if (situation === 'answered') allowed.add('close');
  }
  return QUERY_ACTIONS.filter((action) => {
    if (!allowed.has(action)) return false;
    if (!QUERY_ACTION_PERMISSIONS[action].some((p) => actor.actions.has(p))) return false;
    if (action === 'replaceImage')
      return (
        q.objectType === 'IMAGE' &&
        actor.workAsRole !== null &&
        (REPLACE_IMAGE_ROLES as readonly string[]).includes(actor.workAsRole.name)
      );
    return true;
  });
}

/** Doc 3 §6: the disclaimer shows to non-issuers of an open, unresolved query (beside Add Comment). */
export function showsDisclaimer(
  q: QueryParties & { queryStatus: QueryStatus; resolution: QueryResolution | null },
  person: QueryPerson,
): boolean {
  const relation = queryRelation(q, person);
  return querySituation(q) === 'unanswered' && relation !== 'opener' && relation !== 'openerAndTarget';
}

// ---------------------------------------------------------------------------------------------
// The wizard (doc 3 §4, §5)
// ---------------------------------------------------------------------------------------------

export interface QueryReasonChild {
  id: number;
  reasonText: string;
}
export interface QueryReasonValue {
  reasonOptionId: number;
  reasonText: string;
  reasonOptionIsActive: boolean;
  children: QueryReasonChild[];
}

/** Only active options, alphabetically with 'Other' last (doc 3 §5). */
export function wizardReasonOptions<T extends QueryReasonValue>(values: readonly T[]): T[] {
  return values
    .filter((v) => v.reasonOptionIsActive)
    .sort((a, b) => {
      const ao = a.reasonText === QUERY_OTHER_REASON;
      const bo = b.reasonText === QUERY_OTHER_REASON;
      if (ao !== bo) return ao ? 1 : -1;
      return a.reasonText.localeCompare(b.reasonText, 'en', { sensitivity: 'base' });
    });
}

/** Step 2's rule: comments are mandatory (doc 3 §5). Null when fine. */
export function queryCommentError(comment: string | null | undefined): string | null {
  return (comment ?? '').trim() === '' ? QUERY_MESSAGES.commentsMandatory : null;
}

/** The wizard's follow-up: 14 days by default; a past date becomes today (doc 3 §5). */
export function wizardFollowUpDays(chosen: string | null, today: Date): number {
  if (chosen === null) return QUERY_FOLLOW_UP_DEFAULT_DAYS;
  return Math.min(QUERY_FOLLOW_UP_MAX_DAYS, Math.max(0, daysBetween(today, chosen)));
}

/** The list's reason column: 34 characters and '...' (doc 3 §9). */
export function truncateReason(text: string | null): string {
  if (text === null) return '';
  return text.length > QUERY_REASON_LIST_MAX ? `${text.slice(0, QUERY_REASON_LIST_MAX)}...` : text;
}

/** The reason as one line: the reason and its sub-reason. */
export function queryReasonText(q: { reasonText: string | null; childReasonText: string | null }): string | null {
  if (q.reasonText === null) return null;
  return q.childReasonText ? `${q.reasonText} – ${q.childReasonText}` : q.reasonText;
}

// ---------------------------------------------------------------------------------------------
// Shapes (doc 3 §3, §7)
// ---------------------------------------------------------------------------------------------

const id = z.number().int().positive();
const text = (max: number) => z.string().max(max);
const followUpInDays = z
  .number()
  .int()
  .min(0, { message: QUERY_MESSAGES.followUpDays })
  .max(QUERY_FOLLOW_UP_MAX_DAYS, { message: QUERY_MESSAGES.followUpDays });

export const queryCommentSchema = z.object({
  id: z.number().int(),
  queryId: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  commentText: z.string(),
  commentBy: z.number().int(),
  createdAt: z.string(),
});
export type QueryComment = z.infer<typeof queryCommentSchema>;

export const queryReminderSchema = z.object({
  id: z.number().int(),
  queryId: z.number().int(),
  /** YYYY-MM-DD */
  followUpOnDt: z.string(),
  /** When the reminder e-mail went out; null until the date came. */
  remindedOnDt: z.string().nullable(),
  /** Who set this follow-up date. */
  remindedBy: z.string().nullable(),
  createdAt: z.string(),
});
export type QueryReminder = z.infer<typeof queryReminderSchema>;

/** A query as the viewer's Queries tab shows it (doc 3 §3), with what the caller may do. */
export const queryViewSchema = z.object({
  id: z.number().int(),
  objectType: z.enum(QUERY_OBJECT_TYPES),
  objectId: z.number().int(),
  studyId: z.number().int(),
  caseId: z.number().int().nullable(),
  organizationId: z.number().int().nullable(),
  assessmentType: z.enum(['PRE', 'POST']).nullable(),
  queryStatus: z.enum(QUERY_STATUSES),
  dynamicStatus: z.enum(QUERY_DYNAMIC_STATUSES).nullable(),
  group: z.enum(['open', 'answered', 'closed']),
  resolution: z.enum(QUERY_RESOLUTIONS).nullable(),
  cancelled: z.boolean(),
  overdue: z.boolean(),
  category: z.enum(QUERY_CATEGORIES),
  categoryOtherText: z.string().nullable(),
  reasonText: z.string().nullable(),
  childReasonText: z.string().nullable(),
  reasonOptionId: z.number().int().nullable(),
  childReasonOptionId: z.number().int().nullable(),
  closeText: z.string().nullable(),
  resolutionText: z.string().nullable(),
  resolutionOption: z.string().nullable(),
  firstQueryReminderId: z.number().int().nullable(),
  lastQueryReminderId: z.number().int().nullable(),
  latestFollowUpOnDt: z.string().nullable(),
  openedAt: z.string(),
  openedByRoleId: z.number().int().nullable(),
  openedByRoleName: z.string().nullable(),
  openedBy: z.number().int().nullable(),
  /** The opener's username (doc 3 §3 createdBy). */
  createdBy: z.string().nullable(),
  updatedAt: z.string(),
  closedAt: z.string().nullable(),
  closedBy: z.string().nullable(),
  resolvedBy: z.string().nullable(),
  resolvedAt: z.string().nullable(),
  withRoleId: z.number().int().nullable(),
  withRoleName: z.string().nullable(),
  /** The reader a query to a reading role is sent to (issue 26), and their display name. */
  withUserId: z.number().int().nullable(),
  withUserName: z.string().nullable(),
  /** The image's name as the caller may see it (image queries). */
  imageName: z.string().nullable(),
  comments: z.array(queryCommentSchema),
  reminders: z.array(queryReminderSchema),
  /** What the caller may do now (queryActionsFor), and whether the disclaimer shows. */
  actions: z.array(z.enum(QUERY_ACTIONS)),
  showDisclaimer: z.boolean(),
});
export type QueryView = z.infer<typeof queryViewSchema>;

export const queriesOfObjectResponseSchema = z.object({ success: z.literal(true), queries: z.array(queryViewSchema) });
export type QueriesOfObjectResponse = z.infer<typeof queriesOfObjectResponseSchema>;

export const queryActionResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  query: queryViewSchema,
});
export type QueryActionResponse = z.infer<typeof queryActionResponseSchema>;

/** GET /api/queries/metadata?studyId (doc 3 §3 Query metadata). */
export const queryMetadataQuerySchema = z.object({ studyId: id });
const reasonValueSchema = z.object({
  reasonOptionId: z.number().int(),
  reasonText: z.string(),
  reasonOptionIsActive: z.boolean(),
  children: z.array(z.object({ id: z.number().int(), reasonText: z.string() })),
});
const reasonsPerRoleSchema = z.array(z.object({ withRoleId: z.number().int(), values: z.array(reasonValueSchema) }));
export const queryMetadataResponseSchema = z.object({
  success: z.literal(true),
  roles: z.array(z.object({ id: z.number().int(), name: z.string(), displayName: z.string() })),
  caseReasons: reasonsPerRoleSchema,
  imageReasons: reasonsPerRoleSchema,
  resolutionOptions: z.object({ CASE: z.array(z.string()), IMAGE: z.array(z.string()) }),
});
export type QueryMetadata = z.infer<typeof queryMetadataResponseSchema>;

/** POST /api/queries/new (doc 3 §7). */
export const createQueryRequestSchema = z.object({
  queryObjectType: z.enum(QUERY_OBJECT_TYPES),
  objectId: id,
  studyId: id,
  caseId: id.nullable().optional(),
  organizationId: id.nullable().optional(),
  category: z.enum(QUERY_CATEGORIES).default('OTHER'),
  categoryOtherText: text(QUERY_TEXT_MAX).nullable().optional(),
  followUpInDays: followUpInDays.default(QUERY_FOLLOW_UP_DEFAULT_DAYS),
  withRoleId: id,
  /** The reader of the case a query to a reading role (CR, NOTO) is for; required when it has several. */
  withUserId: id.nullable().optional(),
  responseOptionId: id,
  childResponseOptionId: id.nullable().optional(),
  commentText: text(QUERY_TEXT_MAX).nullable().optional(),
});
export type CreateQueryRequest = z.infer<typeof createQueryRequestSchema>;

const queryIdInBody = id.optional();

/** POST /api/queries/{id}/comment. */
export const queryCommentRequestSchema = z.object({ queryId: queryIdInBody, commentText: text(QUERY_TEXT_MAX) });
/** PATCH|PUT /api/queries/{id}/resolve. */
export const resolveQueryRequestSchema = z.object({
  queryId: queryIdInBody,
  resolutionOption: text(200),
  commentText: text(QUERY_TEXT_MAX).nullable().optional(),
});
/** PATCH /api/queries/{id}/close: both names of the close text are accepted (doc 3 §7). */
export const closeQueryRequestSchema = z
  .object({
    queryId: queryIdInBody,
    detailedResolutionText: text(QUERY_TEXT_MAX).nullable().optional(),
    detailedReasonText: text(QUERY_TEXT_MAX).nullable().optional(),
  })
  .nullish();
/** PATCH /api/queries/{id}/unresolvable. */
export const unresolvableQueryRequestSchema = z.object({
  queryId: queryIdInBody,
  unresolvableReasonText: text(QUERY_TEXT_MAX),
});
/** POST /api/queries/{id}/reminder: follow up from the last reminder (doc 3 §5). */
export const queryReminderRequestSchema = z.object({
  queryId: queryIdInBody,
  queryReminderId: id,
  followUpInDays,
});

/** The list's status filter: the stats' groups. */
export const QUERY_LIST_STATUSES = ['open', 'answered', 'overdue', 'closed'] as const;
export type QueryListStatus = (typeof QUERY_LIST_STATUSES)[number];

export const QUERY_LIST_SORT_KEYS = [
  'openedAt',
  'studyName',
  'caseName',
  'histoProcedureId',
  'imageName',
  'queryWith',
  'reason',
  'openedBy',
  'followUp',
  'status',
  'updatedAt',
] as const;
export type QueryListSortKey = (typeof QUERY_LIST_SORT_KEYS)[number];

/** POST /api/queries: the queries list (doc 3 §7 query filter), paged and sorted on the server. */
export const queryListRequestSchema = z.object({
  objectType: z.enum(QUERY_OBJECT_TYPES).default('CASE'),
  searchText: text(TEXT_LIMITS.search).optional(),
  studyFilter: z.array(id).max(500).optional(),
  caseFilter: id.nullable().optional(),
  statusFilter: z.array(z.enum(QUERY_LIST_STATUSES)).max(4).optional(),
  roleFilter: z.array(id).max(20).optional(),
  includeClosedQueries: z.boolean().default(false),
  page: pageSchema.default(1),
  pageSize: pageSizeSchema.default(20),
  sort: z.enum(sortValues(QUERY_LIST_SORT_KEYS)).default('-openedAt'),
});
export type QueryListRequest = z.input<typeof queryListRequestSchema>;

/** A row of the queries list (doc 3 §3: the list row's fields). */
export const queryListRowSchema = z.object({
  id: z.number().int(),
  objectType: z.enum(QUERY_OBJECT_TYPES),
  objectId: z.number().int(),
  studyId: z.number().int(),
  studyName: z.string(),
  caseId: z.number().int().nullable(),
  /** The case's Endo Procedure ID. */
  caseName: z.string().nullable(),
  histoProcedureId: z.string().nullable(),
  imageName: z.string().nullable(),
  queryStatus: z.enum(QUERY_STATUSES),
  resolution: z.enum(QUERY_RESOLUTIONS).nullable(),
  dynamicStatus: z.enum(QUERY_DYNAMIC_STATUSES).nullable(),
  group: z.enum(['open', 'answered', 'closed']),
  cancelled: z.boolean(),
  overdue: z.boolean(),
  reasonText: z.string().nullable(),
  childReasonText: z.string().nullable(),
  queryReasonText: z.string().nullable(),
  withRoleId: z.number().int().nullable(),
  queryWith: z.string().nullable(),
  /** The reader a query to a reading role is sent to (issue 26). */
  queryWithUser: z.string().nullable(),
  openedAt: z.string(),
  openedByUsername: z.string().nullable(),
  latestFollowUpOnDt: z.string().nullable(),
  updatedAt: z.string(),
  closedAt: z.string().nullable(),
});
export type QueryListRow = z.infer<typeof queryListRowSchema>;

export const queryListResponseSchema = z.object({
  success: z.literal(true),
  queries: z.array(queryListRowSchema),
  total: z.number().int(),
});
export type QueryListResponse = z.infer<typeof queryListResponseSchema>;

/** GET /api/queries/stats[?objectType]: for what the caller may see. */
export const queryStatsQuerySchema = z.object({ objectType: z.enum(QUERY_OBJECT_TYPES).optional() });
export const queryStatsSchema = z.object({
  numOpen: z.number().int(),
  numAnswered: z.number().int(),
  numClosed: z.number().int(),
  numOverdue: z.number().int(),
});
export type QueryStats = z.infer<typeof queryStatsSchema>;
export const queryStatsResponseSchema = z.object({ success: z.literal(true), stats: queryStatsSchema });

// ---------------------------------------------------------------------------------------------
// The reason catalogue (issue 15: data, administered by system admins)
// ---------------------------------------------------------------------------------------------

export const queryReasonAdminRowSchema = z.object({
  id: z.number().int(),
  objectType: z.enum(QUERY_OBJECT_TYPES),
  withRoleId: z.number().int(),
  parentId: z.number().int().nullable(),
  reasonText: z.string(),
  active: z.boolean(),
  sortOrder: z.number().int(),
  /** Queries that name it (as reason or sub-reason): it stays on them whatever happens to it. */
  usedBy: z.number().int(),
  updatedAt: z.string(),
});
export type QueryReasonAdminRow = z.infer<typeof queryReasonAdminRowSchema>;
export const queryReasonsResponseSchema = z.object({
  success: z.literal(true),
  reasons: z.array(queryReasonAdminRowSchema),
});

const reasonText = z
  .string()
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1, { message: QUERY_MESSAGES.reasonTextRequired })
      .max(QUERY_REASON_TEXT_MAX, { message: QUERY_MESSAGES.reasonTextTooLong }),
  );

export const createQueryReasonRequestSchema = z.object({
  objectType: z.enum(QUERY_OBJECT_TYPES),
  withRoleId: id,
  parentId: id.nullable().optional(),
  reasonText,
});
export type CreateQueryReasonRequest = z.infer<typeof createQueryReasonRequestSchema>;

/** Rename, move (parentId; null = top level), (de)activate; a reason for change is optional. */
export const updateQueryReasonRequestSchema = z.object({
  reasonText: reasonText.optional(),
  parentId: id.nullable().optional(),
  active: z.boolean().optional(),
  reasonForChange: text(TEXT_LIMITS.reason).optional(),
});
export type UpdateQueryReasonRequest = z.infer<typeof updateQueryReasonRequestSchema>;

export const queryReasonResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  reason: queryReasonAdminRowSchema,
});

/**
 * The default catalogue, seeded once for every role that can be queried (reference data): the
 * same lists per role to start with, which system admins then tailor.
 */
export const DEFAULT_QUERY_REASONS: Record<QueryObjectType, readonly { text: string; children?: readonly string[] }[]> =
  {
    IMAGE: [
      { text: 'Blurry / out of focus', children: ['Whole slide', 'Part of the tissue'] },
      { text: 'Incomplete tissue', children: ['Tissue missing', 'Tissue folded or torn'] },
      { text: 'Incorrect file name' },
      { text: 'Wrong stain' },
      { text: 'Label does not match', children: ['Subject ID', 'Visit', 'Accession number'] },
      { text: QUERY_OTHER_REASON },
    ],
    CASE: [
      { text: 'Missing images', children: ['Fewer images than expected', 'Anatomical segment missing'] },
      { text: 'Subject ID mismatch' },
      { text: 'Visit ID mismatch' },
      { text: 'Wrong site' },
      { text: QUERY_OTHER_REASON },
    ],
  };

// ---------------------------------------------------------------------------------------------
// History (the panel's record of a query: opened, comments, reminders, resolution, close)
// ---------------------------------------------------------------------------------------------

export type QueryHistoryKind =
  'opened' | 'comment' | 'followUp' | 'reminderSent' | 'resolved' | 'unresolvable' | 'closed' | 'cancelled';
export interface QueryHistoryEntry {
  kind: QueryHistoryKind;
  at: string;
  by: string | null;
  text: string | null;
}

/** Every step of a query in time order (ties keep the lifecycle's order). */
export function queryHistory(q: QueryView): QueryHistoryEntry[] {
  const entries: QueryHistoryEntry[] = [{ kind: 'opened', at: q.openedAt, by: q.createdBy, text: queryReasonText(q) }];
  for (const c of q.comments) entries.push({ kind: 'comment', at: c.createdAt, by: c.username, text: c.commentText });
  for (const [i, r] of q.reminders.entries()) {
    if (i > 0) entries.push({ kind: 'followUp', at: r.createdAt, by: r.remindedBy, text: r.followUpOnDt });
    if (r.remindedOnDt) entries.push({ kind: 'reminderSent', at: r.remindedOnDt, by: null, text: r.followUpOnDt });
  }
  if (q.resolution === 'RESOLVED' && q.resolvedAt)
    entries.push({
      kind: 'resolved',
      at: q.resolvedAt,
      by: q.resolvedBy,
      text: [q.resolutionOption, q.resolutionText].filter(Boolean).join(': ') || null,
    });
  if (q.resolution === 'UNRESOLVABLE' && q.resolvedAt)
    entries.push({ kind: 'unresolvable', at: q.resolvedAt, by: q.resolvedBy, text: q.resolutionText });
  if (q.queryStatus === 'CLOSED' && q.closedAt && q.resolution !== 'UNRESOLVABLE')
    entries.push({ kind: q.cancelled ? 'cancelled' : 'closed', at: q.closedAt, by: q.closedBy, text: q.closeText });
  const order: QueryHistoryKind[] = [
    'opened',
    'comment',
    'followUp',
    'reminderSent',
    'resolved',
    'unresolvable',
    'closed',
    'cancelled',
  ];
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at.localeCompare(b.e.at) || order.indexOf(a.e.kind) - order.indexOf(b.e.kind) || a.i - b.i)
    .map(({ e }) => e);
}
