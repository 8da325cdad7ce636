import type { Transaction } from 'kysely';
import type { z } from 'zod';
import {
  QUERY_ISSUE_PERMISSION,
  QUERY_LIST_PERMISSION,
  QUERY_MESSAGES,
  QUERY_RESOLUTION_OPTIONS,
  QUERY_TARGET_ROLES,
  categoryAllowed,
  followUpDate,
  queryActionsFor,
  queryRefusal,
  querySituation,
  queryableRoles,
  queriesGoToPerson,
  VIEW_FILE_NAME_PERMISSION,
  type QueryAction,
  type QueryListRow,
  type QueryListSortKey,
  type QueryView,
  type queryListRequestSchema,
  type CreateQueryRequest,
  type QueryCategory,
  type QueryObjectType,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { readerSeesCase, readerSeesImage } from '../../access/readerVisibility.js';
import { parseSort } from '../../platform/db/paging.js';
import { commentsOf, listQueries, queryRowById, remindersOf, type QueryRow } from './queryQueries.js';
import { presentQuery, presentQueryListRow } from './queryPresenter.js';

type Tx = Transaction<DB>;
interface LockedQuery {
  id: number;
  object_type: 'CASE' | 'IMAGE';
  object_id: number;
  study_id: number;
  query_status: 'OPEN' | 'CLOSED';
  resolution: 'RESOLVED' | 'UNRESOLVABLE' | null;
  opened_by: number | null;
  opened_by_role_id: number | null;
  with_role_id: number | null;
  with_user_id: number | null;
  last_reminder_id: number | null;
  latest_follow_up_on: string | null;
}

/** The text a body may send instead of the path's id must name the same query. */
function checkBodyId(id: number, bodyId: number | undefined, specMessage: string): void {
  if (bodyId !== undefined && bodyId !== id)
    throw new BadRequestError(queryRefusal(specMessage, QUERY_MESSAGES.bodyIdMismatch));
}

/** Trimmed text, or null when empty. */
function clean(text: string | null | undefined): string | null {
  const t = text?.trim() ?? '';
  return t === '' ? null : t;
}

/**
 * Refuses an action the caller may not take now: 409 when the query's state is the reason (closed,
 * not answered yet, already answered), 403 when it is who the caller is. Nothing changes either way.
 */
function assertAllowed(q: LockedQuery, principal: Principal, action: QueryAction, specMessage: string): void {
  const allowed = queryActionsFor(
    {
      objectType: q.object_type,
      queryStatus: q.query_status,
      resolution: q.resolution,
      openedBy: q.opened_by,
      openedByRoleId: q.opened_by_role_id,
      withRoleId: q.with_role_id,
      withUserId: q.with_user_id,
    },
    principal,
  );
  if (allowed.includes(action)) return;
  const situation = querySituation({ queryStatus: q.query_status, resolution: q.resolution });
  if (situation === 'closed') throw new ConflictError(queryRefusal(specMessage, QUERY_MESSAGES.alreadyClosed));
  if (situation === 'unanswered' && action === 'close')
    throw new ConflictError(queryRefusal(specMessage, QUERY_MESSAGES.notAnswered));
  if (situation === 'answered' && (['resolve', 'unresolvable', 'cancel', 'followUp'] as QueryAction[]).includes(action))
    throw new ConflictError(queryRefusal(specMessage, QUERY_MESSAGES.alreadyAnswered));
  throw new ForbiddenError(queryRefusal(specMessage, QUERY_MESSAGES.notAllowed));
}

/**
 * Queries (issue 15): opening, comments, resolution, close and cancel, unresolvable, follow-ups.
 * Each action locks the query row, checks the domain's rule (queryActionsFor: doc 3 §6 with the
 * Q_* permissions), changes the query and writes its audit rows in one transaction; a refusal
 * answers the spec's message for that action (doc 3 §8) with the reason, and changes nothing.
 */
export class QueryService {
  constructor(private readonly db: Db) {}

  /** The queries as `principal` may see them, with their comments and reminders. */
  async present(principal: Principal, rows: readonly QueryRow[]): Promise<QueryView[]> {
    const ids = rows.map((r) => r.id);
    const [comments, reminders] = await Promise.all([commentsOf(this.db, ids), remindersOf(this.db, ids)]);
    const now = new Date();
    return rows.map((row) => presentQuery(row, comments, reminders, principal, now));
  }

  /**
   * POST /api/queries: one page of the queries list of an object type, for holders of that type's
   * list permission (the route lets in either). Without the file-name permission, image names are
   * neither searched nor sorted by.
   */
  async list(
    principal: Principal,
    body: z.output<typeof queryListRequestSchema>,
  ): Promise<{ queries: QueryListRow[]; total: number }> {
    if (!principal.actions.has(QUERY_LIST_PERMISSION[body.objectType])) throw new ForbiddenError();
    const fileNames = principal.actions.has(VIEW_FILE_NAME_PERMISSION);
    const { key, descending } = parseSort<QueryListSortKey>(body.sort);
    const { rows, total } = await listQueries(this.db, principal, {
      objectType: body.objectType,
      searchText: body.searchText,
      searchFileNames: fileNames,
      studyIds: body.studyFilter,
      caseId: body.caseFilter,
      statuses: body.statusFilter,
      roleIds: body.roleFilter,
      includeClosed: body.includeClosedQueries,
      sort: key === 'imageName' && !fileNames ? 'openedAt' : key,
      descending,
      limit: body.pageSize,
      offset: (body.page - 1) * body.pageSize,
    });
    const now = new Date();
    return { queries: rows.map((row) => presentQueryListRow(row, principal, now)), total };
  }

  async view(principal: Principal, id: number): Promise<QueryView> {
    const row = await queryRowById(this.db, id);
    if (!row) throw new NotFoundError(QUERY_MESSAGES.queryNotFound);
    const [view] = await this.present(principal, [row]);
    if (!view) throw new NotFoundError(QUERY_MESSAGES.queryNotFound);
    return view;
  }

  /** POST /api/queries/new. Returns the new query's id. */
  async create(principal: Principal, actor: Actor, request: CreateQueryRequest): Promise<number> {
    const type: QueryObjectType = request.queryObjectType;
    const refuse = (why: string) => queryRefusal(QUERY_MESSAGES.unableToCreate(type, request.objectId), why);
    if (!principal.actions.has(QUERY_ISSUE_PERMISSION[type]))
      throw new ForbiddenError(refuse(QUERY_MESSAGES.notAllowed));
    const category: QueryCategory = request.category ?? 'OTHER';
    if (!categoryAllowed(type, category)) throw new BadRequestError(refuse(QUERY_MESSAGES.categoryNotAllowed));
    const comment = clean(request.commentText);
    if (comment === null) throw new BadRequestError(QUERY_MESSAGES.commentsMandatory);
    const roleId = principal.workAsRole?.id ?? null;
    if (roleId === null || !queryableRoles(principal.actions).some((r) => r.id === request.withRoleId))
      throw new ForbiddenError(refuse(QUERY_MESSAGES.roleNotQueryable));
    const days = request.followUpInDays ?? 14;

    return this.db.transaction().execute(async (tx) => {
      const object = await this.queriedObject(tx, principal, type, request.objectId, request.studyId);
      if (!object) throw new NotFoundError(refuse(QUERY_MESSAGES.objectNotFound));
      if (request.caseId !== undefined && request.caseId !== null && request.caseId !== object.caseId)
        throw new BadRequestError(refuse(QUERY_MESSAGES.caseMismatch));
      const reasons = await this.chosenReasons(tx, type, request.withRoleId, request, refuse);
      const withUserId = await this.addressee(tx, object.caseId, request, refuse);

      const query = await tx
        .insertInto('queries')
        .values({
          object_type: type,
          object_id: request.objectId,
          study_id: request.studyId,
          case_id: object.caseId,
          organization_id: object.organizationId,
          category,
          category_other_text: clean(request.categoryOtherText),
          reason_text: reasons.reason.reason_text,
          child_reason_text: reasons.child?.reason_text ?? null,
          reason_option_id: reasons.reason.id,
          child_reason_option_id: reasons.child?.id ?? null,
          opened_by: principal.id,
          opened_by_role_id: roleId,
          with_role_id: request.withRoleId,
          with_user_id: withUserId,
        })
        .returning(['id', 'opened_at'])
        .executeTakeFirstOrThrow();
      const due = followUpDate(query.opened_at, days);
      const reminder = await tx
        .insertInto('query_reminders')
        .values({ query_id: query.id, follow_up_on: due, reminded_by: principal.id })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx
        .updateTable('queries')
        .set({ first_reminder_id: reminder.id, last_reminder_id: reminder.id, latest_follow_up_on: due })
        .where('id', '=', query.id)
        .execute();
      const added = await tx
        .insertInto('query_comments')
        .values({ query_id: query.id, comment_text: comment, comment_by: principal.id })
        .returning('id')
        .executeTakeFirstOrThrow();
      await recordAudit(tx, actor, [
        {
          action: 'QUERY_OPENED',
          entityType: 'query',
          entityId: query.id,
          studyId: request.studyId,
          newValue: {
            objectType: type,
            objectId: request.objectId,
            caseId: object.caseId,
            withRoleId: request.withRoleId,
            ...(withUserId !== null ? { withUserId } : {}),
            reason: reasons.reason.reason_text,
            childReason: reasons.child?.reason_text ?? null,
            category,
            followUpOn: due,
          },
        },
        {
          action: 'QUERY_COMMENTED',
          entityType: 'query',
          entityId: query.id,
          studyId: request.studyId,
          field: 'comment',
          newValue: { commentId: added.id, text: comment },
        },
      ]);
      return query.id;
    });
  }

  /** POST /api/queries/{id}/comment: never progresses the query (doc 3 §4). */
  async comment(
    principal: Principal,
    actor: Actor,
    id: number,
    body: { queryId?: number | undefined; commentText: string },
  ) {
    const spec = QUERY_MESSAGES.unableToComment(id);
    checkBodyId(id, body.queryId, spec);
    const text = clean(body.commentText);
    if (text === null) throw new BadRequestError(QUERY_MESSAGES.commentsMandatory);
    await this.db.transaction().execute(async (tx) => {
      const q = await this.lock(tx, id);
      assertAllowed(q, principal, 'comment', spec);
      const added = await tx
        .insertInto('query_comments')
        .values({ query_id: id, comment_text: text, comment_by: principal.id })
        .returning('id')
        .executeTakeFirstOrThrow();
      await this.touch(tx, id);
      await recordAudit(tx, actor, [
        {
          action: 'QUERY_COMMENTED',
          entityType: 'query',
          entityId: id,
          studyId: q.study_id,
          field: 'comment',
          newValue: { commentId: added.id, text },
        },
      ]);
    });
  }

  /** PATCH|PUT /api/queries/{id}/resolve: by the role the query is with; final (doc 3 §4). */
  async resolve(
    principal: Principal,
    actor: Actor,
    id: number,
    body: { queryId?: number | undefined; resolutionOption: string; commentText?: string | null | undefined },
  ) {
    const spec = QUERY_MESSAGES.unableToResolve(id);
    checkBodyId(id, body.queryId, spec);
    const option = clean(body.resolutionOption);
    if (option === null) throw new BadRequestError(queryRefusal(spec, QUERY_MESSAGES.resolutionOptionRequired));
    const details = clean(body.commentText);
    await this.db.transaction().execute(async (tx) => {
      const q = await this.lock(tx, id);
      assertAllowed(q, principal, 'resolve', spec);
      if (!QUERY_RESOLUTION_OPTIONS[q.object_type].includes(option))
        throw new BadRequestError(queryRefusal(spec, QUERY_MESSAGES.resolutionOptionUnknown));
      const now = new Date();
      await tx
        .updateTable('queries')
        .set({
          resolution: 'RESOLVED',
          resolution_option: option,
          resolution_text: details,
          resolved_by: principal.id,
          resolved_at: now,
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'QUERY_RESOLVED',
          entityType: 'query',
          entityId: id,
          studyId: q.study_id,
          field: 'resolution',
          oldValue: null,
          newValue: { resolution: 'RESOLVED', option, details },
        },
      ]);
    });
  }

  /**
   * PATCH /api/queries/{id}/close: closes an answered query (its opener), or cancels an unanswered
   * one (its opener; doc 3 §4: the close call with an empty detail, shown as 'Cancelled').
   * Returns whether it was a cancel.
   */
  async close(
    principal: Principal,
    actor: Actor,
    id: number,
    body:
      | {
          queryId?: number | undefined;
          detailedResolutionText?: string | null | undefined;
          detailedReasonText?: string | null | undefined;
        }
      | null
      | undefined,
  ): Promise<'closed' | 'cancelled'> {
    const spec = QUERY_MESSAGES.unableToClose(id);
    checkBodyId(id, body?.queryId ?? undefined, spec);
    const text = clean(body?.detailedResolutionText ?? body?.detailedReasonText);
    return this.db.transaction().execute(async (tx) => {
      const q = await this.lock(tx, id);
      const cancel = querySituation({ queryStatus: q.query_status, resolution: q.resolution }) === 'unanswered';
      assertAllowed(q, principal, cancel ? 'cancel' : 'close', spec);
      const now = new Date();
      await tx
        .updateTable('queries')
        .set({ query_status: 'CLOSED', close_text: text, closed_at: now, closed_by: principal.id, updated_at: now })
        .where('id', '=', id)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: cancel ? 'QUERY_CANCELLED' : 'QUERY_CLOSED',
          entityType: 'query',
          entityId: id,
          studyId: q.study_id,
          field: 'queryStatus',
          oldValue: 'OPEN',
          newValue: 'CLOSED',
          reason: text,
        },
      ]);
      return cancel ? 'cancelled' : 'closed';
    });
  }

  /**
   * PATCH /api/queries/{id}/unresolvable: the target answers that it cannot be resolved, with the
   * reason. The query is closed with the resolution UNRESOLVABLE (nothing is left to do on it).
   */
  async unresolvable(
    principal: Principal,
    actor: Actor,
    id: number,
    body: { queryId?: number | undefined; unresolvableReasonText: string },
  ) {
    const spec = QUERY_MESSAGES.unableToMarkUnresolvable(id);
    checkBodyId(id, body.queryId, spec);
    const reason = clean(body.unresolvableReasonText);
    if (reason === null) throw new BadRequestError(queryRefusal(spec, QUERY_MESSAGES.unresolvableReasonRequired));
    await this.db.transaction().execute(async (tx) => {
      const q = await this.lock(tx, id);
      assertAllowed(q, principal, 'unresolvable', spec);
      const now = new Date();
      await tx
        .updateTable('queries')
        .set({
          resolution: 'UNRESOLVABLE',
          resolution_text: reason,
          resolved_by: principal.id,
          resolved_at: now,
          query_status: 'CLOSED',
          closed_at: now,
          closed_by: principal.id,
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'QUERY_UNRESOLVABLE',
          entityType: 'query',
          entityId: id,
          studyId: q.study_id,
          field: 'resolution',
          oldValue: null,
          newValue: 'UNRESOLVABLE',
          reason,
        },
      ]);
    });
  }

  /** POST /api/queries/{id}/reminder: a new follow-up date, only from the last reminder (doc 3 §5). */
  async followUp(
    principal: Principal,
    actor: Actor,
    id: number,
    body: { queryId?: number | undefined; queryReminderId: number; followUpInDays: number },
  ) {
    const spec = QUERY_MESSAGES.unableToRemind(id);
    checkBodyId(id, body.queryId, spec);
    await this.db.transaction().execute(async (tx) => {
      const q = await this.lock(tx, id);
      assertAllowed(q, principal, 'followUp', spec);
      if (q.last_reminder_id !== body.queryReminderId)
        throw new ConflictError(queryRefusal(spec, QUERY_MESSAGES.notLastReminder));
      const due = followUpDate(new Date(), body.followUpInDays);
      const reminder = await tx
        .insertInto('query_reminders')
        .values({ query_id: id, follow_up_on: due, reminded_by: principal.id })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx
        .updateTable('queries')
        .set({ last_reminder_id: reminder.id, latest_follow_up_on: due, updated_at: new Date() })
        .where('id', '=', id)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'QUERY_FOLLOW_UP',
          entityType: 'query',
          entityId: id,
          studyId: q.study_id,
          field: 'followUpOn',
          oldValue: q.latest_follow_up_on,
          newValue: due,
        },
      ]);
    });
  }

  private async lock(tx: Tx, id: number): Promise<LockedQuery> {
    const row = await tx
      .selectFrom('queries')
      .select([
        'id',
        'object_type',
        'object_id',
        'study_id',
        'query_status',
        'resolution',
        'opened_by',
        'opened_by_role_id',
        'with_role_id',
        'with_user_id',
        'last_reminder_id',
        'latest_follow_up_on',
      ])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw new NotFoundError(QUERY_MESSAGES.queryNotFound);
    return row;
  }

  private async touch(tx: Tx, id: number): Promise<void> {
    await tx.updateTable('queries').set({ updated_at: new Date() }).where('id', '=', id).execute();
  }

  /** The case or image a new query is about, if it is in the study and the caller may see it. */
  private async queriedObject(
    tx: Tx,
    principal: Principal,
    type: QueryObjectType,
    objectId: number,
    studyId: number,
  ): Promise<{ caseId: number | null; organizationId: number | null } | undefined> {
    if (type === 'CASE') {
      const row = await tx
        .selectFrom('cases')
        .select('id')
        .where('id', '=', objectId)
        .where('study_id', '=', studyId)
        .where('status', '!=', 'ARCHIVED')
        .where(readerSeesCase(principal))
        .executeTakeFirst();
      return row ? { caseId: row.id, organizationId: null } : undefined;
    }
    const row = await tx
      .selectFrom('images')
      .select(['case_id', 'organization_id'])
      .where('id', '=', objectId)
      .where('study_id', '=', studyId)
      .where('status', '!=', 'ARCHIVED')
      .where(readerSeesImage(principal))
      .executeTakeFirst();
    return row ? { caseId: row.case_id, organizationId: row.organization_id } : undefined;
  }

  /**
   * The reader a query to a reading role is sent to (issue 26): a reader of the queried case who
   * reads in the study as that role — the one chosen, or the only one. Queries to other roles name
   * nobody.
   */
  private async addressee(
    tx: Tx,
    caseId: number | null,
    request: CreateQueryRequest,
    refuse: (why: string) => string,
  ): Promise<number | null> {
    const chosen = request.withUserId ?? null;
    const role = QUERY_TARGET_ROLES.find((r) => r.id === request.withRoleId) ?? null;
    if (!queriesGoToPerson(role)) {
      if (chosen !== null) throw new BadRequestError(refuse(QUERY_MESSAGES.readerOnlyForReadingRoles));
      return null;
    }
    const readers =
      caseId === null
        ? []
        : (
            await tx
              .selectFrom('case_readers')
              .select('user_id')
              .where('case_id', '=', caseId)
              // who reads in the study as the queried role (a NOTO reader is not a CR's addressee)
              .where((eb) =>
                eb.exists(
                  eb
                    .selectFrom('study_access')
                    .select('study_access.user_id')
                    .whereRef('study_access.user_id', '=', 'case_readers.user_id')
                    .where('study_access.study_id', '=', request.studyId)
                    .where('study_access.role_id', '=', request.withRoleId),
                ),
              )
              .orderBy('user_id')
              .execute()
          ).map((r) => r.user_id);
    if (chosen !== null) {
      if (!readers.includes(chosen)) throw new BadRequestError(refuse(QUERY_MESSAGES.readerNotAssigned));
      return chosen;
    }
    if (readers.length === 1) return readers[0] ?? null;
    throw new BadRequestError(refuse(QUERY_MESSAGES.readerRequired));
  }

  /** The chosen reason and sub-reason: active, of this object type and target role (doc 3 §5). */
  private async chosenReasons(
    tx: Tx,
    type: QueryObjectType,
    withRoleId: number,
    request: CreateQueryRequest,
    refuse: (why: string) => string,
  ) {
    const reason = await tx
      .selectFrom('query_reasons')
      .select(['id', 'reason_text'])
      .where('id', '=', request.responseOptionId)
      .where('object_type', '=', type)
      .where('with_role_id', '=', withRoleId)
      .where('parent_id', 'is', null)
      .where('active', '=', true)
      .executeTakeFirst();
    if (!reason) throw new BadRequestError(refuse(QUERY_MESSAGES.reasonNotFound));
    const children = await tx
      .selectFrom('query_reasons')
      .select(['id', 'reason_text'])
      .where('parent_id', '=', reason.id)
      .where('active', '=', true)
      .execute();
    const childId = request.childResponseOptionId ?? null;
    if (children.length > 0 && childId === null) throw new BadRequestError(refuse(QUERY_MESSAGES.childReasonRequired));
    if (childId === null) return { reason, child: null };
    const child = children.find((c) => c.id === childId);
    if (!child) throw new BadRequestError(refuse(QUERY_MESSAGES.childReasonNotFound));
    return { reason, child };
  }
}

/**
 * Replace image (doc 2 §2.5, doc 3 §6): the replaced image's open queries go over to the new image,
 * in the replacement's transaction. Returns their audit rows.
 */
export async function carryQueriesOver(
  tx: Tx,
  fromImageId: number,
  toImageId: number,
  studyId: number,
): Promise<AuditEvent[]> {
  const moved = await tx
    .updateTable('queries')
    .set({ object_id: toImageId, updated_at: new Date() })
    .where('object_type', '=', 'IMAGE')
    .where('object_id', '=', fromImageId)
    .where('query_status', '=', 'OPEN')
    .returning('id')
    .execute();
  return moved.map((q) => ({
    action: 'QUERY_IMAGE_REPLACED',
    entityType: 'query',
    entityId: q.id,
    studyId,
    field: 'objectId',
    oldValue: fromImageId,
    newValue: toImageId,
    reason: `Image ${fromImageId} replaced by image ${toImageId}`,
  }));
}

/** Whether the image has an open query (Replace is offered for such images; doc 2 §2.5). */
export async function hasOpenQuery(tx: Tx | Db, imageId: number): Promise<boolean> {
  const row = await tx
    .selectFrom('queries')
    .select('id')
    .where('object_type', '=', 'IMAGE')
    .where('object_id', '=', imageId)
    .where('query_status', '=', 'OPEN')
    .executeTakeFirst();
  return row !== undefined;
}
