import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  imCaseListRequestSchema,
  imCaseListResponseSchema,
  imCaseRecordResponseSchema,
  imImageListRequestSchema,
  imImageListResponseSchema,
  imImageRecordResponseSchema,
  imListQuerySchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { policy, scope } from '../../platform/rbac/policy.js';
import { caseScope } from '../../access/caseScope.js';
import { imageScope } from '../../access/imageScope.js';
import { IM_CASES_PERMISSION, IM_IMAGES_PERMISSION } from './imageColumns.js';
import { ImageManagementService } from './imService.js';

/**
 * Image Management (doc 2 §2.1–2.2, §3, §7): the cross-study image and case lists over the studies
 * the user may see (a page, or `?reportFormat=csv`), and one-row refreshes. What a user may see,
 * search, sort by and export is the service's (imService.ts).
 */
export function imageManagementRoutes(db: Db) {
  const im = new ImageManagementService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/imageManagement/images',
      {
        config: {
          policy: policy.anyOf(
            [IM_IMAGES_PERMISSION],
            scope.global('lists the images of the studies the user may see (visibleStudies)'),
          ),
        },
        schema: {
          querystring: imListQuerySchema,
          body: imImageListRequestSchema,
          response: { 200: imImageListResponseSchema },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        if (request.query.reportFormat === 'csv') return im.exportImages(reply, principal, request.body);
        return { success: true as const, ...(await im.listImages(principal, request.body)) };
      },
    );

    r.post(
      '/api/imageManagement/cases',
      {
        config: {
          policy: policy.anyOf(
            [IM_CASES_PERMISSION],
            scope.global('lists the cases of the studies the user may see (visibleStudies)'),
          ),
        },
        schema: {
          querystring: imListQuerySchema,
          body: imCaseListRequestSchema,
          response: { 200: imCaseListResponseSchema },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        if (request.query.reportFormat === 'csv') return im.exportCases(reply, principal, request.body);
        return { success: true as const, ...(await im.listCases(principal, request.body)) };
      },
    );

    r.get(
      '/api/imageManagement/imageRecord/:id',
      {
        config: { policy: policy.anyOf([IM_IMAGES_PERMISSION], imageScope) },
        schema: { params: idParams, response: { 200: imImageRecordResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        results: await im.imageRecord(principalOf(request), request.params.id),
      }),
    );

    r.get(
      '/api/imageManagement/caseRecord/:id',
      {
        config: { policy: policy.anyOf([IM_CASES_PERMISSION], caseScope()) },
        schema: { params: idParams, response: { 200: imCaseRecordResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        results: await im.caseRecord(principalOf(request), request.params.id),
      }),
    );
  };
}
