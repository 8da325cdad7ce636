import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { IM_EDIT_PERMISSIONS, editImColumnRequestSchema, editImColumnResponseSchema } from '@lamina/domain';
import type { Db } from '../platform/db/database.js';
import { policy } from '../platform/rbac/policy.js';
import { actorOf, principalOf } from '../platform/http/requestContext.js';
import { idParams } from '../platform/http/params.js';
import { imageOrCaseScope } from '../access/caseScope.js';
import { ImEditService } from './imEditService.js';

/** Image Management's Edit Column (doc 2 §5–7): one column of one image or case. */
export function imEditRoutes(db: Db) {
  const edits = new ImEditService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/imageManagement/:id/editImageColumn',
      {
        config: { policy: policy.anyOf(IM_EDIT_PERMISSIONS, imageOrCaseScope) },
        schema: { params: idParams, body: editImColumnRequestSchema, response: { 200: editImColumnResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        message: await edits.editColumn(principalOf(request), actorOf(request), request.params.id, request.body),
      }),
    );
  };
}
