import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  USER_MESSAGES,
  studyAccessChangeResponseSchema,
  studyAccessChangeSchema,
  usersInStudyResponseSchema,
  usersInStudySchema,
  type Permission,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, studyFromBody, studyFromParam } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { listStudyUsers, studyAccessOf } from './studyAccessQueries.js';
import { presentStudyAccess, presentStudyUser } from './studyAccessPresenter.js';
import { StudyAccessService } from './studyAccessService.js';

/**
 * Who may list the users of a study: user managers, study configurers (the Users tab), and those
 * who edit cases or assign readers (the case dialog searches readers of the study).
 */
const USERS_IN_STUDY: readonly Permission[] = [
  'UM_ViewUsersPage',
  'S_Main_EditStudy',
  'S_CaseListTab_EditCase',
  'AP_CaseViewer_ManualCRassignment',
];

const studyParams = z.object({ studyId: z.coerce.number().int().positive().max(2_147_483_647) });

/** Study access: add, remove, and the users of a study (spec doc 1 §2.6 Users tab, §2.8, §7). */
export function studyAccessRoutes(db: Db) {
  const access = new StudyAccessService(db);

  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.patch(
      '/api/users/studies/add',
      {
        config: { policy: policy.anyOf(['UM_GrantStudyAccess'], studyFromBody('studyId')) },
        schema: { body: studyAccessChangeSchema, response: { 200: studyAccessChangeResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        await access.grant(request.body, principal, actorOf(request));
        const rows = await studyAccessOf(db, request.body.userId, principal);
        return {
          success: true as const,
          message: USER_MESSAGES.studyAccessAdded,
          studyAccess: rows.map(presentStudyAccess),
        };
      },
    );

    r.put(
      '/api/users/studies/remove',
      {
        config: { policy: policy.anyOf(['UM_RevokeStudyAccess'], studyFromBody('studyId')) },
        schema: { body: studyAccessChangeSchema, response: { 200: studyAccessChangeResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        await access.revoke(request.body, principal, actorOf(request));
        const rows = await studyAccessOf(db, request.body.userId, principal);
        return {
          success: true as const,
          message: USER_MESSAGES.studyAccessRemoved,
          studyAccess: rows.map(presentStudyAccess),
        };
      },
    );

    r.post(
      '/api/users/inStudy/:studyId',
      {
        config: { policy: policy.anyOf(USERS_IN_STUDY, studyFromParam('studyId')) },
        schema: {
          params: studyParams,
          body: usersInStudySchema.nullish(),
          response: { 200: usersInStudyResponseSchema },
        },
      },
      async (request) => {
        const filter = request.body?.roleIdFilter;
        const roleIds = filter === undefined || filter === null ? undefined : Array.isArray(filter) ? filter : [filter];
        const rows = await listStudyUsers(db, request.params.studyId, roleIds);
        return { success: true as const, users: rows.map(presentStudyUser) };
      },
    );
  };
}
