import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { createImageRequestSchema, createImageResponseSchema } from '@lamina/domain';
import type { Config } from '../platform/config.js';
import { policy, studyFromBody } from '../platform/rbac/policy.js';
import { actorOf, principalOf } from '../platform/http/requestContext.js';
import type { TileTokens } from '../platform/tiles/tileToken.js';
import { UPLOAD_PERMISSIONS } from '../modules/uploads/uploadRoutes.js';
import { presentImage, tileUrlOptions } from '../modules/images/imagePresenter.js';
import { registerImage, type RegisterImageDeps } from './registerImage.js';

/** POST /api/images: an uploaded slide becomes an image of the study, or replaces one (doc 3 §6). */
export function registerImageRoutes(deps: RegisterImageDeps & { config: Config; tileTokens: TileTokens }) {
  const { config, tileTokens } = deps;
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/images',
      {
        config: { policy: policy.anyOf(UPLOAD_PERMISSIONS, studyFromBody()) },
        schema: { body: createImageRequestSchema, response: { 200: createImageResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const row = await registerImage(deps, principal, actorOf(request), request.body);
        const tiles = tileUrlOptions(
          tileTokens,
          config.tileServerLocation,
          principal,
          request.session?.sessionId ?? '',
        );
        return { success: true as const, image: presentImage(row, tiles, principal) };
      },
    );
  };
}
