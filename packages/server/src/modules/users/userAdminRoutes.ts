import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  USER_MESSAGES,
  userCreateResponseSchema,
  userCreateSchema,
  userSaveResponseSchema,
  userStatusChangeSchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { NotFoundError } from '../../platform/errors.js';
import { idParams } from '../../platform/http/params.js';
import { findUser } from './userQueries.js';
import { presentUserRow } from './userPresenter.js';
import { UserService } from './userService.js';

/**
 * Accounts (system admins working as SystemAdmin): create with a one-time initial password,
 * deactivate and activate. The spec does not show these screens; accounts are never deleted.
 */
export function userAdminRoutes(db: Db) {
  const users = new UserService(db);

  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    const present = async (id: number) => {
      const user = await findUser(db, id);
      if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
      return presentUserRow(user);
    };

    r.post(
      '/api/users',
      {
        config: { policy: policy.systemAdmin() },
        schema: { body: userCreateSchema, response: { 201: userCreateResponseSchema } },
      },
      async (request, reply) => {
        const { id, initialPassword } = await users.create(request.body, actorOf(request));
        return reply.code(201).send({
          success: true as const,
          message: USER_MESSAGES.userCreated,
          user: await present(id),
          initialPassword,
        });
      },
    );

    for (const [action, active] of [
      ['deactivate', false],
      ['activate', true],
    ] as const) {
      r.patch(
        `/api/users/:id/${action}`,
        {
          config: { policy: policy.systemAdmin() },
          schema: {
            params: idParams,
            body: userStatusChangeSchema.nullish(),
            response: { 200: userSaveResponseSchema },
          },
        },
        async (request) => {
          await users.setActive(
            request.params.id,
            active,
            request.body?.reason,
            principalOf(request),
            actorOf(request),
          );
          const message = active ? USER_MESSAGES.userActivated : USER_MESSAGES.userDeactivated;
          return { success: true as const, message, user: await present(request.params.id) };
        },
      );
    }
  };
}
