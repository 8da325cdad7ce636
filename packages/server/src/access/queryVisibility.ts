import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';
import { QUERY_MESSAGES, VIEW_ALL_STUDIES, queryVisibility, readsAssignedCasesOnly } from '@lamina/domain';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../platform/auth/principal.js';
import type { Db } from '../platform/db/database.js';
import type { DB } from '../platform/db/schema.js';
import { idParam, scope, type ResourceStudy } from '../platform/rbac/policy.js';
import { visibleStudies } from '../platform/rbac/studyScope.js';

/**
 * Which queries a user sees: the one statement of the rule (docs/QUERIES.md), applied by the
 * queries list, the stats, the per-case and per-image lists and the scope of /api/queries/{id}.
 * - the study scope: queries of the studies the user sees;
 * - Q_ViewAllQueries / Q_ViewAllQueriesunderAssignedStudies: all of them; Q_ViewQueriesAssignedtoUserRoleOnly:
 *   those sent to, or opened by, the role the user works as; neither: none;
 * - blinded readers (CR, NOTO; the domain's 'person' visibility): only the queries they opened
 *   themselves or that were sent to them personally (issue 26: a second reader of the case learns
 *   nothing of the first's), only of cases assigned to them, and of an image only while the image
 *   is theirs to read (live, not hidden from readers).
 */
export function principalSeesQuery(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'queries'>): ExpressionWrapper<DB, 'queries', SqlBool> => {
    const visibility = queryVisibility(principal.actions, principal.workAsRole);
    if (visibility === 'none') return eb.lit(false);
    const conditions: ExpressionWrapper<DB, 'queries', SqlBool>[] = [];
    if (!principal.actions.has(VIEW_ALL_STUDIES))
      conditions.push(
        eb('queries.study_id', 'in', eb.selectFrom('studies').select('studies.id').where(visibleStudies(principal))),
      );
    const roleId = principal.workAsRole?.id ?? -1;
    if (visibility === 'role')
      conditions.push(eb.or([eb('queries.with_role_id', '=', roleId), eb('queries.opened_by_role_id', '=', roleId)]));
    if (visibility === 'person')
      conditions.push(
        eb.or([
          eb.and([eb('queries.opened_by', '=', principal.id), eb('queries.opened_by_role_id', '=', roleId)]),
          eb.and([eb('queries.with_user_id', '=', principal.id), eb('queries.with_role_id', '=', roleId)]),
        ]),
      );
    if (readsAssignedCasesOnly(principal.workAsRole)) {
      conditions.push(
        eb.exists(
          eb
            .selectFrom('case_readers')
            .select('case_readers.case_id')
            .whereRef('case_readers.case_id', '=', 'queries.case_id')
            .where('case_readers.user_id', '=', principal.id),
        ),
      );
      conditions.push(
        eb.or([
          eb('queries.object_type', '=', 'CASE'),
          eb.exists(
            eb
              .selectFrom('images')
              .select('images.id')
              .whereRef('images.id', '=', 'queries.object_id')
              .where('images.ignored', '=', false)
              .where('images.status', '!=', 'ARCHIVED'),
          ),
        ]),
      );
    }
    return eb.and(conditions);
  };
}

/** The study scope of /api/queries/{id}/…: 404 'Query not found' for a query the user does not see. */
export const queryStudyOf = async (db: Db, request: FastifyRequest, principal: Principal): Promise<ResourceStudy> => {
  const id = idParam(request);
  if (id === null) return { found: false };
  const row = await db
    .selectFrom('queries')
    .select('study_id')
    .where('id', '=', id)
    .where(principalSeesQuery(principal))
    .executeTakeFirst();
  return row ? { found: true, studyId: row.study_id } : { found: false };
};

export const queryScope = scope.resource('query', QUERY_MESSAGES.queryNotFound, queryStudyOf);
