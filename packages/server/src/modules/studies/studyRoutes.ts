import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  MESSAGES,
  roleById,
  roleByName,
  roleNotForUserList,
  STUDY_COUNTS_BY_KIND,
  STUDY_MESSAGES,
  STUDY_USER_LIST_ROLES,
  USER_MESSAGES,
  studyCreateSchema,
  studyListKind,
  studyListQuerySchema,
  studyListResponseSchema,
  studySaveResponseSchema,
  studyUpdateSchema,
  studyViewSchema,
  type Permission,
  type StudyCountKey,
  type StudyUserAssignment,
  type StudyUserGroup,
  type StudySortKey,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, studyFromParam } from '../../platform/rbac/policy.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { listStudies } from './studyQueries.js';
import { pageWindow, parseSort } from './paging.js';
import { presentStudyRow } from './studyPresenter.js';
import { StudyService, type StudyAccessGrant } from './studyService.js';
import { BadRequestError, ForbiddenError } from '../../platform/errors.js';

/** Who may list and open studies: the study page, or either study-scope permission. */
export const VIEW_STUDIES: readonly Permission[] = [
  'S_Main_ViewStudyPage',
  'S_Main_ViewAllStudies',
  'S_Main_ViewAssignedStudies',
];

/**
 * The study access a create payload asks for (spec doc 1 §7 `uploaders`, `readers`, `readonlyUsers`):
 * each entry a user id (the list's default role) or `{ id, roleId }` with one of the list's roles
 * ({@link STUDY_USER_LIST_ROLES}); another role is 400. Repeats are dropped.
 */
function studyAccessOfPayload(lists: Record<StudyUserGroup, readonly StudyUserAssignment[]>): StudyAccessGrant[] {
  const grants = new Map<string, StudyAccessGrant>();
  for (const list of Object.keys(STUDY_USER_LIST_ROLES) as StudyUserGroup[]) {
    const allowed = STUDY_USER_LIST_ROLES[list];
    for (const entry of lists[list]) {
      const userId = typeof entry === 'number' ? entry : entry.id;
      const role =
        typeof entry === 'number' || entry.roleId === undefined ? roleByName(allowed[0]) : roleById(entry.roleId);
      if (!role) throw new BadRequestError(USER_MESSAGES.roleNotAssignable);
      if (!allowed.includes(role.name)) throw new BadRequestError(roleNotForUserList(list, role.displayName));
      grants.set(`${userId}:${role.id}`, { userId, roleId: role.id, roleName: role.name });
    }
  }
  return [...grants.values()];
}

function isCountKey(key: StudySortKey): key is StudySortKey & StudyCountKey {
  return key.startsWith('numberOf');
}

export const idParams = z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) });

/**
 * Studies (spec doc 1 §2.4–2.6, §7): the list with its counts, the study view, create and edit.
 * A study that is missing or not visible answers 404 'Study not found' (the guard's study scope).
 */
export function studyRoutes(db: Db) {
  const studies = new StudyService(db);

  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get(
      '/api/studies/list',
      {
        config: { policy: policy.anyOf(VIEW_STUDIES) },
        schema: { querystring: studyListQuerySchema, response: { 200: studyListResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const { name, page, pageSize, sort } = request.query;
        const parsed = parseSort<StudySortKey>(sort);
        // A count the user's kind does not see is no sort key for them (its order would tell it).
        const hidden =
          isCountKey(parsed.key) &&
          !STUDY_COUNTS_BY_KIND[studyListKind(principal.workAsRole?.name)].includes(parsed.key);
        const { key, descending } = hidden ? { key: 'createdAt' as const, descending: true } : parsed;
        const { rows, total } = await listStudies(db, {
          userId: principal.id,
          visible: visibleStudies(principal),
          name: name?.trim() || undefined,
          sort: key,
          descending,
          ...pageWindow(page, pageSize),
        });
        return { success: true as const, studies: rows.map((row) => presentStudyRow(row, principal)), total };
      },
    );

    r.get(
      '/api/studies/:id',
      {
        config: { policy: policy.anyOf(VIEW_STUDIES, { study: studyFromParam('id') }) },
        schema: { params: idParams, response: { 200: studyViewSchema } },
      },
      async (request) => studies.view(request.params.id, principalOf(request)),
    );

    r.post(
      '/api/studies',
      {
        config: { policy: policy.anyOf(['S_Main_CreateStudy']) },
        schema: { body: studyCreateSchema, response: { 201: studySaveResponseSchema } },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { uploaders, readers, readonlyUsers, ...config } = request.body;
        const access = studyAccessOfPayload({ uploaders, readers, readonlyUsers });
        if (access.length > 0 && !principal.actions.has('UM_GrantStudyAccess'))
          throw new ForbiddenError(MESSAGES.accessDenied);
        if (access.some((a) => a.userId === principal.id)) throw new ForbiddenError(USER_MESSAGES.ownStudyAccess);
        const id = await studies.create(config, actorOf(request), principal.id, access);
        const study = await studies.view(id, principal);
        return reply.code(201).send({ success: true as const, message: STUDY_MESSAGES.studyCreated, study });
      },
    );

    r.put(
      '/api/studies/:id',
      {
        config: { policy: policy.anyOf(['S_Main_EditStudy'], { study: studyFromParam('id') }) },
        schema: { params: idParams, body: studyUpdateSchema, response: { 200: studySaveResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const changed = await studies.update(request.params.id, request.body, actorOf(request));
        const study = await studies.view(request.params.id, principal);
        return {
          success: true as const,
          message: changed ? STUDY_MESSAGES.studyUpdated : STUDY_MESSAGES.noChanges,
          study,
        };
      },
    );
  };
}
