import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { roleViewSchema } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope } from '../../platform/rbac/policy.js';
import { listRoles } from './userQueries.js';
import { presentRole } from './userPresenter.js';

/** GET /api/permissions/roles (spec doc 1 §7): every role, for the study access '+ Add' choice and the users list filter. */
export function roleRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    app.withTypeProvider<ZodTypeProvider>().get(
      '/api/permissions/roles',
      {
        config: {
          policy: policy.anyOf(['UM_ViewUsersPage', 'UM_GrantStudyAccess'], scope.global('roles belong to no study')),
        },
        schema: { response: { 200: z.array(roleViewSchema) } },
      },
      async () => (await listRoles(db)).map(presentRole),
    );
  };
}
