import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  STUDY_MESSAGES,
  studyCreateSchema,
  studyListQuerySchema,
  studyListResponseSchema,
  studySaveResponseSchema,
  studyUpdateSchema,
  studyViewSchema,
  type Permission,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope, studyFromParam } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { presentStudyRow } from './studyPresenter.js';
import { StudyService } from './studyService.js';

/** Who may list and open studies: the study page, or either study-scope permission. */
export const VIEW_STUDIES: readonly Permission[] = [
  'S_Main_ViewStudyPage',
  'S_Main_ViewAllStudies',
  'S_Main_ViewAssignedStudies',
];

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
        const { rows, total } = await studies.list(principal, request.query);
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
