import {
  QUERY_CATEGORIES,
  isCancelled,
  isOverdue,
  neutralImageLabel,
  queryActionsFor,
  queryDynamicStatus,
  queryGroup,
  queryReasonText,
  showsDisclaimer,
  userDisplayName,
  VIEW_FILE_NAME_PERMISSION,
  type QueryCategory,
  type QueryListRow,
  type QueryReasonAdminRow,
  type QueryView,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import type { QueryCommentRow, QueryListDbRow, QueryReasonRow, QueryReminderRow, QueryRow } from './queryQueries.js';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function category(value: string): QueryCategory {
  return (QUERY_CATEGORIES as readonly string[]).includes(value) ? (value as QueryCategory) : 'OTHER';
}

/** The image's name as `principal` may see it (the neutral label without the file-name permission). */
function imageNameOf(row: QueryRow, principal: Principal): string | null {
  if (row.object_type !== 'IMAGE' || row.image_name === null) return null;
  return principal.actions.has(VIEW_FILE_NAME_PERMISSION)
    ? row.image_name
    : neutralImageLabel({
        id: row.object_id,
        caseProcId: row.image_case_proc_id,
        positionInCase: row.image_case_position,
      });
}

/** The reader a query to a reading role is sent to, by name (issue 26). */
function withUserName(row: QueryRow): string | null {
  if (row.with_user_id === null || row.with_user_username === null) return null;
  return userDisplayName({
    username: row.with_user_username,
    firstName: row.with_user_first_name,
    lastName: row.with_user_last_name,
  });
}

/** The lifecycle fields every presentation shares (doc 3 §4), computed by the domain's rules. */
function lifecycle(row: QueryRow, now: Date) {
  const q = {
    queryStatus: row.query_status,
    resolution: row.resolution,
    latestFollowUpOnDt: row.latest_follow_up_on,
    followUps: Math.max(0, row.follow_ups ?? 0),
  };
  return {
    queryStatus: row.query_status,
    resolution: row.resolution,
    group: queryGroup(q),
    dynamicStatus: queryDynamicStatus(q, now),
    cancelled: isCancelled(q),
    overdue: isOverdue(q, now),
  };
}

/** A query as the viewer's Queries tab shows it, with what `principal` may do with it. */
export function presentQuery(
  row: QueryRow,
  comments: readonly QueryCommentRow[],
  reminders: readonly QueryReminderRow[],
  principal: Principal,
  now = new Date(),
): QueryView {
  const facts = {
    objectType: row.object_type,
    queryStatus: row.query_status,
    resolution: row.resolution,
    openedBy: row.opened_by,
    openedByRoleId: row.opened_by_role_id,
    withRoleId: row.with_role_id,
    withUserId: row.with_user_id,
  };
  return {
    id: row.id,
    objectType: row.object_type,
    objectId: row.object_id,
    studyId: row.study_id,
    caseId: row.case_id,
    organizationId: row.organization_id,
    assessmentType: row.assessment_type === 'PRE' || row.assessment_type === 'POST' ? row.assessment_type : null,
    ...lifecycle(row, now),
    category: category(row.category),
    categoryOtherText: row.category_other_text,
    reasonText: row.reason_text,
    childReasonText: row.child_reason_text,
    reasonOptionId: row.reason_option_id,
    childReasonOptionId: row.child_reason_option_id,
    closeText: row.close_text,
    resolutionText: row.resolution_text,
    resolutionOption: row.resolution_option,
    firstQueryReminderId: row.first_reminder_id,
    lastQueryReminderId: row.last_reminder_id,
    latestFollowUpOnDt: row.latest_follow_up_on,
    openedAt: row.opened_at.toISOString(),
    openedByRoleId: row.opened_by_role_id,
    openedByRoleName: row.opener_role_name,
    openedBy: row.opened_by,
    createdBy: row.opener_username,
    updatedAt: row.updated_at.toISOString(),
    closedAt: iso(row.closed_at),
    closedBy: row.closer_username,
    resolvedBy: row.resolver_username,
    resolvedAt: iso(row.resolved_at),
    withRoleId: row.with_role_id,
    withRoleName: row.with_role_name,
    withUserId: row.with_user_id,
    withUserName: withUserName(row),
    imageName: imageNameOf(row, principal),
    comments: comments
      .filter((c) => c.query_id === row.id)
      .map((c) => ({
        id: c.id,
        queryId: c.query_id,
        username: c.username,
        firstName: c.first_name,
        lastName: c.last_name,
        commentText: c.comment_text,
        commentBy: c.comment_by,
        createdAt: c.created_at.toISOString(),
      })),
    reminders: reminders
      .filter((r) => r.query_id === row.id)
      .map((r) => ({
        id: r.id,
        queryId: r.query_id,
        followUpOnDt: r.follow_up_on,
        remindedOnDt: iso(r.reminded_on),
        remindedBy: r.reminded_by_username,
        createdAt: r.created_at.toISOString(),
      })),
    actions: queryActionsFor(facts, principal),
    showDisclaimer: showsDisclaimer(facts, principal),
  };
}

/** A row of the queries list (doc 3 §3): no subject, site or visit, for anyone. */
export function presentQueryListRow(row: QueryListDbRow, principal: Principal, now = new Date()): QueryListRow {
  return {
    id: row.id,
    objectType: row.object_type,
    objectId: row.object_id,
    studyId: row.study_id,
    studyName: row.study_name ?? '',
    caseId: row.case_id,
    caseName: row.case_proc_id,
    histoProcedureId: row.histo_procedure_id,
    imageName: imageNameOf(row, principal),
    ...lifecycle(row, now),
    reasonText: row.reason_text,
    childReasonText: row.child_reason_text,
    queryReasonText: queryReasonText({ reasonText: row.reason_text, childReasonText: row.child_reason_text }),
    withRoleId: row.with_role_id,
    queryWith: row.with_role_name,
    queryWithUser: withUserName(row),
    openedAt: row.opened_at.toISOString(),
    openedByUsername: row.opener_username,
    latestFollowUpOnDt: row.latest_follow_up_on,
    updatedAt: row.updated_at.toISOString(),
    closedAt: iso(row.closed_at),
  };
}

export function presentReason(row: QueryReasonRow): QueryReasonAdminRow {
  return {
    id: row.id,
    objectType: row.object_type,
    withRoleId: row.with_role_id,
    parentId: row.parent_id,
    reasonText: row.reason_text,
    active: row.active,
    sortOrder: row.sort_order,
    usedBy: row.used_by ?? 0,
    updatedAt: row.updated_at.toISOString(),
  };
}
