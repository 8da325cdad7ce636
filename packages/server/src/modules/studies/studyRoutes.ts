import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  VIEW_SPONSOR_PERMISSION,
  STUDY_COUNTS_BY_KIND,
  STUDY_MESSAGES,
  studyCreateSchema,
  studyListKind,
  studyListQuerySchema,
  studyListResponseSchema,
  studySaveResponseSchema,
  studyUpdateSchema,
  studyViewSchema,
  type Permission,
  type StudyCountKey,
  type StudySortKey,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope, studyFromParam } from '../../platform/rbac/policy.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { listStudies } from './studyQueries.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { idParams } from '../../platform/http/params.js';
import { presentStudyRow } from './studyPresenter.js';
import { StudyService } from './studyService.js';

/** Who may list and open studies: the study page, or either study-scope permission. */
export const VIEW_STUDIES: readonly Permission[] = [
  'S_Main_ViewStudyPage',
  'S_Main_ViewAllStudies',
  'S_Main_ViewAssignedStudies',
];

function isCountKey(key: StudySortKey): key is StudySortKey & StudyCountKey {
  return key.startsWith('numberOf');
}

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
        config: {
          policy: policy.anyOf(VIEW_STUDIES, scope.global('lists the studies the user may see (visibleStudies)')),
        },
        schema: { querystring: studyListQuerySchema, response: { 200: studyListResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const { name, page, pageSize, sort } = request.query;
        const parsed = parseSort<StudySortKey>(sort);
        // A count the user's kind does not see is no sort key for them (its order would tell it).
        const hidden =
          (isCountKey(parsed.key) &&
            !STUDY_COUNTS_BY_KIND[studyListKind(principal.workAsRole?.name)].includes(parsed.key)) ||
          (parsed.key === 'sponsor' && !principal.actions.has(VIEW_SPONSOR_PERMISSION));
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
        config: { policy: policy.anyOf(VIEW_STUDIES, studyFromParam('id')) },
        schema: { params: idParams, response: { 200: studyViewSchema } },
      },
      async (request) => studies.view(request.params.id, principalOf(request)),
    );

    r.post(
      '/api/studies',
      {
        config: { policy: policy.anyOf(['S_Main_CreateStudy'], scope.global('creates a study')) },
        schema: { body: studyCreateSchema, response: { 201: studySaveResponseSchema } },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { uploaders, readers, readonlyUsers, ...config } = request.body;
        const id = await studies.create(config, { uploaders, readers, readonlyUsers }, principal, actorOf(request));
        const study = await studies.view(id, principal);
        return reply.code(201).send({ success: true as const, message: STUDY_MESSAGES.studyCreated, study });
      },
    );

    r.put(
      '/api/studies/:id',
      {
        config: { policy: policy.anyOf(['S_Main_EditStudy'], studyFromParam('id')) },
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
