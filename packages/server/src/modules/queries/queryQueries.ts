import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { QueryListSortKey, QueryListStatus, QueryObjectType } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { casePosition } from '../../access/imageLabel.js';
import type { Principal } from '../../platform/auth/principal.js';
import { likeContains } from '../../platform/db/paging.js';
import { principalSeesQuery } from '../../access/queryVisibility.js';

/** Read models of queries: SQL only. */
type Q = Kysely<DB>;

/** A query with what its presentation needs (names of the users and roles, the image's labels). */
export function selectQueryRows(db: Q) {
  return db
    .selectFrom('queries')
    .leftJoin('users as opener', 'opener.id', 'queries.opened_by')
    .leftJoin('users as closer', 'closer.id', 'queries.closed_by')
    .leftJoin('users as resolver', 'resolver.id', 'queries.resolved_by')
    .leftJoin('roles as with_role', 'with_role.id', 'queries.with_role_id')
    .leftJoin('users as with_user', 'with_user.id', 'queries.with_user_id')
    .leftJoin('roles as opener_role', 'opener_role.id', 'queries.opened_by_role_id')
    .leftJoin('images', (join) =>
      join.onRef('images.id', '=', 'queries.object_id').on('queries.object_type', '=', 'IMAGE'),
    )
    .leftJoin('cases as image_case', 'image_case.id', 'images.case_id')
    .selectAll('queries')
    .select((eb) => [
      'opener.username as opener_username',
      'closer.username as closer_username',
      'resolver.username as resolver_username',
      'with_role.display_name as with_role_name',
      'with_user.username as with_user_username',
      'with_user.first_name as with_user_first_name',
      'with_user.last_name as with_user_last_name',
      'opener_role.display_name as opener_role_name',
      'images.name as image_name',
      'image_case.proc_id as image_case_proc_id',
      casePosition('images').as('image_case_position'),
      eb
        .selectFrom('query_reminders')
        .select(sql<number>`(count(*) - 1)::int`.as('n'))
        .whereRef('query_reminders.query_id', '=', 'queries.id')
        .as('follow_ups'),
    ]);
}
export type QueryRow = Awaited<ReturnType<ReturnType<typeof selectQueryRows>['executeTakeFirstOrThrow']>>;

export async function queryRowById(db: Q, id: number): Promise<QueryRow | undefined> {
  return selectQueryRows(db).where('queries.id', '=', id).executeTakeFirst();
}

/** GET /api/queries/case/{id}: the case's queries and its images' (queries.case_id), newest first. */
export async function queriesOfCase(db: Q, principal: Principal, caseId: number): Promise<QueryRow[]> {
  return selectQueryRows(db)
    .where('queries.case_id', '=', caseId)
    .where(principalSeesQuery(principal))
    .orderBy('queries.opened_at', 'desc')
    .orderBy('queries.id', 'desc')
    .execute();
}

/** GET /api/queries/image/{id}: the image's queries, newest first. */
export async function queriesOfImage(db: Q, principal: Principal, imageId: number): Promise<QueryRow[]> {
  return selectQueryRows(db)
    .where('queries.object_type', '=', 'IMAGE')
    .where('queries.object_id', '=', imageId)
    .where(principalSeesQuery(principal))
    .orderBy('queries.opened_at', 'desc')
    .orderBy('queries.id', 'desc')
    .execute();
}

export async function commentsOf(db: Q, queryIds: readonly number[]) {
  if (queryIds.length === 0) return [];
  return db
    .selectFrom('query_comments')
    .innerJoin('users', 'users.id', 'query_comments.comment_by')
    .select([
      'query_comments.id',
      'query_comments.query_id',
      'query_comments.comment_text',
      'query_comments.comment_by',
      'query_comments.created_at',
      'users.username',
      'users.first_name',
      'users.last_name',
    ])
    .where('query_comments.query_id', 'in', [...queryIds])
    .orderBy('query_comments.id')
    .execute();
}
export type QueryCommentRow = Awaited<ReturnType<typeof commentsOf>>[number];

export async function remindersOf(db: Q, queryIds: readonly number[]) {
  if (queryIds.length === 0) return [];
  return db
    .selectFrom('query_reminders')
    .leftJoin('users', 'users.id', 'query_reminders.reminded_by')
    .select([
      'query_reminders.id',
      'query_reminders.query_id',
      'query_reminders.follow_up_on',
      'query_reminders.reminded_on',
      'query_reminders.created_at',
      'users.username as reminded_by_username',
    ])
    .where('query_reminders.query_id', 'in', [...queryIds])
    .orderBy('query_reminders.id')
    .execute();
}
export type QueryReminderRow = Awaited<ReturnType<typeof remindersOf>>[number];

// ---------------------------------------------------------------------------------------------
// The queries list and its stats
// ---------------------------------------------------------------------------------------------

export interface QueryListFilter {
  objectType: QueryObjectType;
  searchText?: string | undefined;
  /** Search the image's file name too (the caller may see file names). */
  searchFileNames: boolean;
  studyIds?: readonly number[] | undefined;
  caseId?: number | null | undefined;
  statuses?: readonly QueryListStatus[] | undefined;
  roleIds?: readonly number[] | undefined;
  includeClosed: boolean;
  sort: QueryListSortKey;
  descending: boolean;
  limit: number;
  offset: number;
}

type QueriesEb = ExpressionBuilder<DB, 'queries'>;

/** One status group as SQL (the stats' definitions, domain queryGroup / isOverdue). */
function statusCondition(eb: QueriesEb, status: QueryListStatus): Expression<SqlBool> {
  switch (status) {
    case 'open':
      return eb.and([eb('queries.query_status', '=', 'OPEN'), eb('queries.resolution', 'is', null)]);
    case 'answered':
      return eb.and([eb('queries.query_status', '=', 'OPEN'), eb('queries.resolution', '=', 'RESOLVED')]);
    case 'overdue':
      return eb.and([
        eb('queries.query_status', '=', 'OPEN'),
        eb('queries.resolution', 'is', null),
        eb('queries.latest_follow_up_on', '<', sql<string>`current_date`),
      ]);
    case 'closed':
      return eb('queries.query_status', '=', 'CLOSED');
  }
}

function listConditions(principal: Principal, filter: QueryListFilter) {
  return (eb: QueriesEb): Expression<SqlBool> => {
    const and: Expression<SqlBool>[] = [
      eb('queries.object_type', '=', filter.objectType),
      principalSeesQuery(principal)(eb),
    ];
    if (filter.studyIds && filter.studyIds.length > 0) and.push(eb('queries.study_id', 'in', [...filter.studyIds]));
    if (filter.caseId) and.push(eb('queries.case_id', '=', filter.caseId));
    if (filter.roleIds && filter.roleIds.length > 0) and.push(eb('queries.with_role_id', 'in', [...filter.roleIds]));
    const statuses = filter.statuses ?? [];
    if (statuses.length > 0) and.push(eb.or(statuses.map((s) => statusCondition(eb, s))));
    if (!filter.includeClosed && !statuses.includes('closed')) and.push(eb('queries.query_status', '=', 'OPEN'));
    const text = filter.searchText?.trim();
    if (text) {
      const like = likeContains(text);
      const searched: Expression<SqlBool>[] = [
        eb('queries.reason_text', 'ilike', like),
        eb('queries.child_reason_text', 'ilike', like),
        eb.exists(
          eb
            .selectFrom('studies')
            .select('studies.id')
            .whereRef('studies.id', '=', 'queries.study_id')
            .where('studies.name', 'ilike', like),
        ),
        eb.exists(
          eb
            .selectFrom('cases')
            .select('cases.id')
            .whereRef('cases.id', '=', 'queries.case_id')
            .where((c) => c.or([c('cases.proc_id', 'ilike', like), c('cases.histo_procedure_id', 'ilike', like)])),
        ),
        eb.exists(
          eb
            .selectFrom('users')
            .select('users.id')
            .whereRef('users.id', '=', 'queries.opened_by')
            .where('users.username', 'ilike', like),
        ),
        eb.exists(
          eb
            .selectFrom('roles')
            .select('roles.id')
            .whereRef('roles.id', '=', 'queries.with_role_id')
            .where('roles.display_name', 'ilike', like),
        ),
      ];
      if (filter.searchFileNames && filter.objectType === 'IMAGE')
        searched.push(
          eb.exists(
            eb
              .selectFrom('images')
              .select('images.id')
              .whereRef('images.id', '=', 'queries.object_id')
              .where('images.name', 'ilike', like),
          ),
        );
      and.push(eb.or(searched));
    }
    return eb.and(and);
  };
}

/** The sort expression of each list key (ties broken by id). */
function sortExpression(key: QueryListSortKey) {
  switch (key) {
    case 'openedAt':
      return sql`queries.opened_at`;
    case 'updatedAt':
      return sql`queries.updated_at`;
    case 'followUp':
      return sql`queries.latest_follow_up_on`;
    case 'studyName':
      return sql`lower(studies.name)`;
    case 'caseName':
      return sql`lower(cases.proc_id)`;
    case 'histoProcedureId':
      return sql`lower(cases.histo_procedure_id)`;
    case 'imageName':
      return sql`lower(images.name)`;
    case 'queryWith':
      return sql`with_role.display_name`;
    case 'reason':
      return sql`lower(queries.reason_text)`;
    case 'openedBy':
      return sql`lower(opener.username)`;
    case 'status':
      // open, answered, closed (the groups), then overdue first within open
      return sql`(case when queries.query_status = 'CLOSED' then 2 when queries.resolution = 'RESOLVED' then 1 else 0 end)`;
  }
}

export async function listQueries(db: Q, principal: Principal, filter: QueryListFilter) {
  const where = listConditions(principal, filter);
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  const ids = db
    .selectFrom('queries')
    .leftJoin('studies', 'studies.id', 'queries.study_id')
    .leftJoin('cases', 'cases.id', 'queries.case_id')
    .leftJoin('images', (join) =>
      join.onRef('images.id', '=', 'queries.object_id').on('queries.object_type', '=', 'IMAGE'),
    )
    .leftJoin('roles as with_role', 'with_role.id', 'queries.with_role_id')
    .leftJoin('users as opener', 'opener.id', 'queries.opened_by')
    .select('queries.id')
    .where(where)
    .orderBy(sql`${sortExpression(filter.sort)} ${direction}`)
    .orderBy('queries.id', filter.descending ? 'desc' : 'asc')
    .limit(filter.limit)
    .offset(filter.offset);
  const [page, count] = await Promise.all([
    ids.execute(),
    db
      .selectFrom('queries')
      .select(sql<number>`count(*)::int`.as('n'))
      .where(where)
      .executeTakeFirstOrThrow(),
  ]);
  const order = page.map((r) => r.id);
  if (order.length === 0) return { rows: [], total: count.n };
  const rows = await selectQueryRows(db)
    .leftJoin('studies', 'studies.id', 'queries.study_id')
    .leftJoin('cases', 'cases.id', 'queries.case_id')
    .select(['studies.name as study_name', 'cases.proc_id as case_proc_id', 'cases.histo_procedure_id'])
    .where('queries.id', 'in', order)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { rows: order.map((id) => byId.get(id)).filter((r) => r !== undefined), total: count.n };
}
export type QueryListDbRow = Awaited<ReturnType<typeof listQueries>>['rows'][number];

/** GET /api/queries/stats: the groups of what the caller sees (doc 3 §3 Query statistics). */
export async function queryStats(db: Q, principal: Principal, objectType: QueryObjectType | undefined) {
  let query = db
    .selectFrom('queries')
    .select([
      sql<number>`count(*) filter (where query_status = 'OPEN' and resolution is null)::int`.as('num_open'),
      sql<number>`count(*) filter (where query_status = 'OPEN' and resolution = 'RESOLVED')::int`.as('num_answered'),
      sql<number>`count(*) filter (where query_status = 'CLOSED')::int`.as('num_closed'),
      sql<number>`count(*) filter (where query_status = 'OPEN' and resolution is null and latest_follow_up_on < current_date)::int`.as(
        'num_overdue',
      ),
    ])
    .where(principalSeesQuery(principal));
  if (objectType) query = query.where('queries.object_type', '=', objectType);
  return query.executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------
// The reason catalogue
// ---------------------------------------------------------------------------------------------

export function selectReasons(db: Q) {
  return db
    .selectFrom('query_reasons')
    .selectAll('query_reasons')
    .select((eb) => [
      eb
        .selectFrom('queries')
        .select(sql<number>`count(*)::int`.as('n'))
        .where((q) =>
          q.or([
            q('queries.reason_option_id', '=', eb.ref('query_reasons.id')),
            q('queries.child_reason_option_id', '=', eb.ref('query_reasons.id')),
          ]),
        )
        .as('used_by'),
    ])
    .orderBy('query_reasons.object_type')
    .orderBy('query_reasons.with_role_id')
    .orderBy('query_reasons.sort_order')
    .orderBy('query_reasons.id');
}
export type QueryReasonRow = Awaited<ReturnType<ReturnType<typeof selectReasons>['execute']>>[number];

/** The reasons offered to the given target roles (metadata): top-level reasons and active children. */
export async function reasonsForRoles(db: Q, roleIds: readonly number[]) {
  if (roleIds.length === 0) return [];
  return db
    .selectFrom('query_reasons')
    .select(['id', 'object_type', 'with_role_id', 'parent_id', 'reason_text', 'active', 'sort_order'])
    .where('with_role_id', 'in', [...roleIds])
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
}

/**
 * The users to remind of a query: active users holding the target role in the query's study — only
 * `onlyUserId` when the query names its addressee.
 */
export async function usersOfRoleInStudy(db: Q, roleId: number, studyId: number, onlyUserId: number | null = null) {
  let query = db
    .selectFrom('users')
    .leftJoin('organizations', 'organizations.id', 'users.organization_id')
    .select(['users.id', 'users.username', 'organizations.group_email'])
    .where('users.registered', '=', true)
    .where('users.active', '=', true)
    .where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('study_access')
            .select('study_access.user_id')
            .whereRef('study_access.user_id', '=', 'users.id')
            .where('study_access.study_id', '=', studyId)
            .where('study_access.role_id', '=', roleId),
        ),
        eb.exists(
          eb
            .selectFrom('user_roles')
            .select('user_roles.user_id')
            .whereRef('user_roles.user_id', '=', 'users.id')
            .where('user_roles.role_id', '=', roleId),
        ),
      ]),
    )
    .orderBy('users.id');
  if (onlyUserId !== null) query = query.where('users.id', '=', onlyUserId);
  return query.execute();
}
