import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  workAsRequestSchema,
  userInfoSchema,
  availableRolesResponseSchema,
  workAsResponseSchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { presentUserInfo } from './userInfoPresenter.js';
import { switchWorkAsRole } from './workAsService.js';

/** The current user: info, the roles they may work as, and switching role (spec doc 1 §2.3, §7). */
export function currentUserRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    // Open while a password change is pending: the web app learns from it that one is.
    r.get(
      '/api/users/info',
      {
        config: { policy: policy.authenticated({ duringPasswordChange: true }) },
        schema: { response: { 200: userInfoSchema } },
      },
      async (request) => presentUserInfo(principalOf(request)),
    );

    r.get(
      '/api/users/availableRoles',
      { config: { policy: policy.authenticated() }, schema: { response: { 200: availableRolesResponseSchema } } },
      async (request) => principalOf(request).roles.map((role) => ({ id: role.id, displayName: role.displayName })),
    );

    r.put(
      '/api/users/workAs',
      {
        config: { policy: policy.authenticated() },
        schema: { body: workAsRequestSchema, response: { 200: workAsResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const updated = await switchWorkAsRole(db, principal, request.body.roleId, actorOf(request));
        return {
          success: true as const,
          message: `Working as ${updated.workAsRole?.displayName ?? ''}`,
          user: presentUserInfo(updated),
        };
      },
    );
  };
}
