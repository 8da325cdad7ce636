import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  IMAGE_ACTION_MESSAGES,
  imageActionResponseSchema,
  moveImageRequestSchema,
  type MoveChange,
  type MoveImageRequest,
} from '@lamina/domain';
import type { Db } from '../platform/db/database.js';
import { policy } from '../platform/rbac/policy.js';
import { actorOf, principalOf } from '../platform/http/requestContext.js';
import { idParams } from '../platform/http/params.js';
import { imageScope } from '../access/imageScope.js';
import { moveImageToCase, moveImageToStudy } from './moveImage.js';

/** Both moves' options: the permission within the image's study, the request and the answer. */
const options = () => ({
  config: { policy: policy.anyOf(['S_ImageListTab_MoveImage'], imageScope) },
  schema: { params: idParams, body: moveImageRequestSchema, response: { 200: imageActionResponseSchema } },
});

/** The answer of a move: the warnings list of a preview, else the message. */
const moved = (imageId: number, request: MoveImageRequest, changes: MoveChange[]) => ({
  success: true as const,
  message: request.preview ? '' : IMAGE_ACTION_MESSAGES.moved,
  imageId,
  changes,
});

/** Move Image (doc 2 §4, §7): the study page's row action, into another case or another study. */
export function moveImageRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.patch('/api/images/:id/case', options(), async (request) => {
      const { id } = request.params;
      return moved(
        id,
        request.body,
        await moveImageToCase(db, principalOf(request), actorOf(request), id, request.body),
      );
    });

    r.patch('/api/images/:id/study', options(), async (request) => {
      const { id } = request.params;
      return moved(
        id,
        request.body,
        await moveImageToStudy(db, principalOf(request), actorOf(request), id, request.body),
      );
    });
  };
}
