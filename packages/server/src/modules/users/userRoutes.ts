import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  ROLES,
  USER_MESSAGES,
  cannotDecode,
  roleById,
  studyAccessRowSchema,
  userListQuerySchema,
  userListResponseSchema,
  userListRowSchema,
  userSaveResponseSchema,
  userSearchSchema,
  userUpdateSchema,
  type UserSortKey,
} from '@lamina/domain';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { policy, scope } from '../../platform/rbac/policy.js';

/** Accounts belong to no study: user administration is cross-study (study access lists are filtered by it). */
const USERS_ARE_GLOBAL = scope.global('user accounts belong to no study');
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { BadRequestError, NotFoundError } from '../../platform/errors.js';
import { idParams } from '../../platform/http/params.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { findUser, listUsers } from './userQueries.js';
import { presentUserRow } from './userPresenter.js';
import { studyAccessOf } from '../studyAccess/studyAccessQueries.js';
import { presentStudyAccess } from '../studyAccess/studyAccessPresenter.js';
import { UserService } from './userService.js';

/** A role query value: its id or its name (case-insensitive); anything else is 400 'Cannot decode role from …'. */
export function parseRole(value: string): number {
  const role = /^\d{1,10}$/.test(value)
    ? roleById(Number(value))
    : ROLES.find((r) => r.name.toLowerCase() === value.toLowerCase());
  if (!role) throw new BadRequestError(cannotDecode('role', value));
  return role.id;
}

function parseIds(list: string | undefined): number[] {
  if (!list) return [];
  return list
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isSafeInteger(n) && n > 0 && n <= 2_147_483_647);
}

/** The study of POST /api/users/list, when one is given (null: no study scope to check). */
function optionalStudyFromBody(request: FastifyRequest): number | null {
  const value = (request.body as { filterByStudyId?: unknown } | undefined)?.filterByStudyId;
  if (value === undefined || value === null) return null;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : -1;
}

/** Users list, search, profile and a user's study access (spec doc 1 §2.7, §2.8, §7). */
export function userRoutes(db: Db) {
  const users = new UserService(db);

  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get(
      '/api/users',
      {
        config: { policy: policy.anyOf(['UM_ViewUsersPage'], USERS_ARE_GLOBAL) },
        schema: { querystring: userListQuerySchema, response: { 200: userListResponseSchema } },
      },
      async (request) => {
        const { role, name, registered, exclude, page, pageSize, sort } = request.query;
        const { key, descending } = parseSort<UserSortKey>(sort);
        const { rows, total } = await listUsers(db, {
          roleId: role ? parseRole(role) : undefined,
          name: name?.trim() || undefined,
          registered: registered === undefined ? undefined : registered === 'true',
          exclude: parseIds(exclude),
          sort: key,
          descending,
          ...pageWindow(page, pageSize),
        });
        return { success: true as const, users: rows.map(presentUserRow), total };
      },
    );

    r.post(
      '/api/users/list',
      {
        config: { policy: policy.anyOf(['UM_ViewUsersPage'], scope.study(optionalStudyFromBody)) },
        schema: { body: userSearchSchema.nullish(), response: { 200: userListResponseSchema } },
      },
      async (request) => {
        const { rows, total } = await listUsers(db, {
          name: request.body?.name?.trim() || undefined,
          studyId: request.body?.filterByStudyId ?? undefined,
          sort: 'username',
          descending: false,
        });
        return { success: true as const, users: rows.map(presentUserRow), total };
      },
    );

    r.get(
      '/api/users/:id',
      {
        config: { policy: policy.anyOf(['UM_ViewUsersPage'], USERS_ARE_GLOBAL) },
        schema: { params: idParams, response: { 200: userListRowSchema } },
      },
      async (request) => {
        const user = await findUser(db, request.params.id);
        if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
        return presentUserRow(user);
      },
    );

    r.put(
      '/api/users/:id',
      {
        config: { policy: policy.anyOf(['UM_RegisterUser'], USERS_ARE_GLOBAL) },
        schema: { params: idParams, body: userUpdateSchema, response: { 200: userSaveResponseSchema } },
      },
      async (request) => {
        await users.updateProfile(request.params.id, request.body, principalOf(request), actorOf(request));
        const user = await findUser(db, request.params.id);
        if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
        return { success: true as const, message: USER_MESSAGES.userUpdated, user: presentUserRow(user) };
      },
    );

    r.get(
      '/api/users/:id/studyAccess',
      {
        config: { policy: policy.anyOf(['UM_ViewUsersPage'], USERS_ARE_GLOBAL) },
        schema: { params: idParams, response: { 200: z.array(studyAccessRowSchema) } },
      },
      async (request) => {
        const user = await findUser(db, request.params.id);
        if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
        return (await studyAccessOf(db, user.id, principalOf(request))).map(presentStudyAccess);
      },
    );
  };
}
