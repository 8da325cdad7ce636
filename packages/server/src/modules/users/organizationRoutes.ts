import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { organizationViewSchema } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope } from '../../platform/rbac/policy.js';
import { listOrganizations } from './userQueries.js';
import { presentOrganization } from './userPresenter.js';

/** GET /api/organizations (spec doc 1 §7): the profile form, create user, the uploader organization of images. */
export function organizationRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    app.withTypeProvider<ZodTypeProvider>().get(
      '/api/organizations',
      {
        config: {
          policy: policy.anyOf(
            ['UM_ViewUsersPage', 'UM_RegisterUser', 'AP_ImageData_EditUploaderOrganization'],
            scope.global('organizations belong to no study'),
          ),
        },
        schema: { response: { 200: z.array(organizationViewSchema) } },
      },
      async () => (await listOrganizations(db)).map(presentOrganization),
    );
  };
}
