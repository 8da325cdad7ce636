import { sql, type Transaction } from 'kysely';
import {
  DEFAULT_QUERY_REASONS,
  QUERY_MESSAGES,
  QUERY_OBJECT_TYPES,
  QUERY_TARGET_ROLES,
  queryableRoles,
  type CreateQueryReasonRequest,
  type QueryMetadata,
  type QueryReasonAdminRow,
  type UpdateQueryReasonRequest,
  QUERY_RESOLUTION_OPTIONS,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, SYSTEM_ACTOR, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../platform/errors.js';
import { reasonsForRoles, selectReasons } from './queryQueries.js';
import { presentReason } from './queryPresenter.js';

/**
 * The query reason catalogue (issue 15): data per object type and target role, seeded once from
 * the domain's defaults, then administered by system admins — add, rename, nest one level,
 * (de)activate; never deleted, so a query keeps the reason it was opened with. Every change audited.
 */
export class QueryReasonService {
  constructor(private readonly db: Db) {}

  /** GET /api/queries/metadata: the roles the caller may query and their reasons (doc 3 §3). */
  async metadata(principal: Principal): Promise<QueryMetadata> {
    const roles = queryableRoles(principal.actions);
    const rows = await reasonsForRoles(
      this.db,
      roles.map((r) => r.id),
    );
    const perType = (type: 'CASE' | 'IMAGE') =>
      roles.map((role) => {
        const mine = rows.filter((r) => r.object_type === type && r.with_role_id === role.id);
        return {
          withRoleId: role.id,
          values: mine
            .filter((r) => r.parent_id === null)
            .map((r) => ({
              reasonOptionId: r.id,
              reasonText: r.reason_text,
              reasonOptionIsActive: r.active,
              children: mine
                .filter((c) => c.parent_id === r.id && c.active)
                .map((c) => ({ id: c.id, reasonText: c.reason_text })),
            })),
        };
      });
    return {
      success: true,
      roles: roles.map((r) => ({ id: r.id, name: r.name, displayName: r.displayName })),
      caseReasons: perType('CASE'),
      imageReasons: perType('IMAGE'),
      resolutionOptions: { CASE: [...QUERY_RESOLUTION_OPTIONS.CASE], IMAGE: [...QUERY_RESOLUTION_OPTIONS.IMAGE] },
    };
  }

  async list(): Promise<QueryReasonAdminRow[]> {
    return (await selectReasons(this.db).execute()).map(presentReason);
  }

  private async one(id: number): Promise<QueryReasonAdminRow> {
    const row = await selectReasons(this.db).where('query_reasons.id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError(QUERY_MESSAGES.reasonNotFoundAdmin);
    return presentReason(row);
  }

  /** POST /api/query-reasons. */
  async create(actor: Actor, request: CreateQueryReasonRequest): Promise<QueryReasonAdminRow> {
    const reasonText = request.reasonText.trim();
    if (!QUERY_TARGET_ROLES.some((r) => r.id === request.withRoleId))
      throw new BadRequestError(QUERY_MESSAGES.roleNotQueryTarget);
    const id = await this.db.transaction().execute(async (tx) => {
      const parentId = request.parentId ?? null;
      if (parentId !== null) {
        const parent = await tx
          .selectFrom('query_reasons')
          .select(['object_type', 'with_role_id', 'parent_id'])
          .where('id', '=', parentId)
          .forUpdate()
          .executeTakeFirst();
        if (!parent) throw new NotFoundError(QUERY_MESSAGES.reasonNotFoundAdmin);
        if (parent.parent_id !== null) throw new BadRequestError(QUERY_MESSAGES.reasonNestOneLevel);
        if (parent.object_type !== request.objectType || parent.with_role_id !== request.withRoleId)
          throw new BadRequestError(QUERY_MESSAGES.reasonParentMismatch);
      }
      await assertUniqueText(tx, request.objectType, request.withRoleId, parentId, reasonText, null);
      const next = await tx
        .selectFrom('query_reasons')
        .select(sql<number>`coalesce(max(sort_order), 0)::int + 1`.as('n'))
        .where('object_type', '=', request.objectType)
        .where('with_role_id', '=', request.withRoleId)
        .executeTakeFirstOrThrow();
      const created = await tx
        .insertInto('query_reasons')
        .values({
          object_type: request.objectType,
          with_role_id: request.withRoleId,
          parent_id: parentId,
          reason_text: reasonText,
          sort_order: next.n,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await recordAudit(tx, actor, [
        {
          action: 'QUERY_REASON_CREATED',
          entityType: 'query_reason',
          entityId: created.id,
          newValue: { objectType: request.objectType, withRoleId: request.withRoleId, parentId, reasonText },
        },
      ]);
      return created.id;
    });
    return this.one(id);
  }

  /** PATCH /api/query-reasons/{id}: rename, move, (de)activate. */
  async update(actor: Actor, id: number, request: UpdateQueryReasonRequest): Promise<QueryReasonAdminRow> {
    await this.db.transaction().execute(async (tx) => {
      const current = await tx
        .selectFrom('query_reasons')
        .selectAll()
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!current) throw new NotFoundError(QUERY_MESSAGES.reasonNotFoundAdmin);
      const events: AuditEvent[] = [];
      const reason = request.reasonForChange?.trim() || null;
      const change = (field: string, oldValue: unknown, newValue: unknown) =>
        events.push({
          action: 'QUERY_REASON_CHANGED',
          entityType: 'query_reason',
          entityId: id,
          field,
          oldValue,
          newValue,
          reason,
        });
      const set: { reason_text?: string; parent_id?: number | null; active?: boolean } = {};

      const text = request.reasonText?.trim();
      if (text !== undefined && text !== current.reason_text) {
        set.reason_text = text;
        change('reasonText', current.reason_text, text);
      }
      if (request.parentId !== undefined && request.parentId !== current.parent_id) {
        const parentId = request.parentId;
        if (parentId !== null) {
          if (parentId === id) throw new BadRequestError(QUERY_MESSAGES.reasonNestOneLevel);
          const parent = await tx
            .selectFrom('query_reasons')
            .select(['object_type', 'with_role_id', 'parent_id'])
            .where('id', '=', parentId)
            .executeTakeFirst();
          if (!parent) throw new NotFoundError(QUERY_MESSAGES.reasonNotFoundAdmin);
          if (parent.parent_id !== null) throw new BadRequestError(QUERY_MESSAGES.reasonNestOneLevel);
          if (parent.object_type !== current.object_type || parent.with_role_id !== current.with_role_id)
            throw new BadRequestError(QUERY_MESSAGES.reasonParentMismatch);
          const children = await tx
            .selectFrom('query_reasons')
            .select('id')
            .where('parent_id', '=', id)
            .executeTakeFirst();
          if (children) throw new BadRequestError(QUERY_MESSAGES.reasonHasChildren);
        }
        set.parent_id = parentId;
        change('parentId', current.parent_id, parentId);
      }
      if (request.active !== undefined && request.active !== current.active) {
        set.active = request.active;
        change('active', current.active, request.active);
      }
      if (events.length === 0) throw new BadRequestError(QUERY_MESSAGES.nothingToChange);
      if (set.reason_text !== undefined || set.parent_id !== undefined)
        await assertUniqueText(
          tx,
          current.object_type,
          current.with_role_id,
          set.parent_id !== undefined ? set.parent_id : current.parent_id,
          set.reason_text ?? current.reason_text,
          id,
        );
      await tx
        .updateTable('query_reasons')
        .set({ ...set, updated_at: new Date() })
        .where('id', '=', id)
        .execute();
      await recordAudit(tx, actor, events);
    });
    return this.one(id);
  }
}

/** One text once among the siblings of a place, case-insensitively (409 otherwise). */
async function assertUniqueText(
  tx: Transaction<DB>,
  objectType: 'CASE' | 'IMAGE',
  withRoleId: number,
  parentId: number | null,
  text: string,
  except: number | null,
): Promise<void> {
  let query = tx
    .selectFrom('query_reasons')
    .select('id')
    .where('object_type', '=', objectType)
    .where('with_role_id', '=', withRoleId)
    .where(sql<boolean>`coalesce(parent_id, 0) = ${parentId ?? 0}`)
    .where(sql<boolean>`lower(reason_text) = lower(${text})`);
  if (except !== null) query = query.where('id', '!=', except);
  if (await query.executeTakeFirst()) throw new ConflictError(QUERY_MESSAGES.reasonDuplicate);
}

/**
 * Reference data: the default catalogue (DEFAULT_QUERY_REASONS) for every role that can be
 * queried, written once, when the catalogue is empty; one audit row by `system`.
 */
export async function seedQueryReasons(db: Db): Promise<number> {
  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(727015)`.execute(tx);
    const any = await tx.selectFrom('query_reasons').select('id').limit(1).executeTakeFirst();
    if (any) return 0;
    let count = 0;
    for (const role of QUERY_TARGET_ROLES) {
      for (const type of QUERY_OBJECT_TYPES) {
        for (const [i, reason] of DEFAULT_QUERY_REASONS[type].entries()) {
          const parent = await tx
            .insertInto('query_reasons')
            .values({ object_type: type, with_role_id: role.id, reason_text: reason.text, sort_order: i + 1 })
            .returning('id')
            .executeTakeFirstOrThrow();
          count++;
          for (const [j, child] of (reason.children ?? []).entries()) {
            await tx
              .insertInto('query_reasons')
              .values({
                object_type: type,
                with_role_id: role.id,
                parent_id: parent.id,
                reason_text: child,
                sort_order: j + 1,
              })
              .execute();
            count++;
          }
        }
      }
    }
    await recordAudit(tx, SYSTEM_ACTOR, [
      { action: 'QUERY_REASONS_SEEDED', entityType: 'query_reason', newValue: { reasons: count } },
    ]);
    return count;
  });
}
