import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  MLD_IMPORT_MESSAGES,
  MLD_IMPORT_PERMISSION,
  VIEW_ANNOTATIONS_PERMISSIONS,
  aiLayersResponseSchema,
  imListQuerySchema,
  mldListRequestSchema,
  mldListResponseSchema,
  mldSignedUrlsRequestSchema,
  mldSignedUrlsResponseSchema,
  registerMldRequestSchema,
  registerMldResponseSchema,
  type Permission,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { UploadKeys } from '../../platform/storage/keys.js';
import type { JobQueue } from '../../platform/jobs/jobQueue.js';
import { policy, scope } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { sendJsonStream } from '../../platform/http/jsonStream.js';
import { imageScope, mldImageScope, optionalImageStudyFromBody } from '../../access/imageScope.js';
import { emitVisibleAnnotations } from '../annotations/annotationQueries.js';
import { MldService } from './mldService.js';

const importPolicy = policy.anyOf(
  [MLD_IMPORT_PERMISSION],
  scope.global('an .mld file names its image only inside; the import links it to an image the uploader sees'),
);
/** The Annotations tab of Image Management (doc 2 §2.3): who sees the Images tab. */
const LIST: readonly Permission[] = ['IM_ImageListTab_ViewImageslistTab', MLD_IMPORT_PERMISSION];

/**
 * Imported AI annotations (issue 17; doc 2 §2.3, §7): the upload and registration of .mld files,
 * the Annotations tab, and the viewer's AI layers (classes, objects, heatmap). The import itself is
 * the mld-import job (commands/mldImport.ts).
 */
export function mldRoutes(deps: {
  db: Db;
  storage: ObjectStorage;
  keys: UploadKeys;
  jobs: JobQueue;
  ttlSeconds: number;
}) {
  const { db } = deps;
  const mld = new MldService(deps);
  const imageStudyFromBody = optionalImageStudyFromBody(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/mld/get-signed-urls',
      {
        config: { policy: importPolicy },
        schema: { body: mldSignedUrlsRequestSchema, response: { 200: mldSignedUrlsResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        urls: await mld.signedUrls(principalOf(request), request.body.fileNames),
      }),
    );

    r.post(
      '/api/mld',
      {
        config: { policy: policy.anyOf([MLD_IMPORT_PERMISSION], imageStudyFromBody) },
        schema: { body: registerMldRequestSchema, response: { 201: registerMldResponseSchema } },
      },
      async (request, reply) =>
        reply.code(201).send({
          success: true as const,
          message: MLD_IMPORT_MESSAGES.registered,
          mld: await mld.register(principalOf(request), actorOf(request), request.body),
        }),
    );

    r.post(
      '/api/imageManagement/annotations',
      {
        config: {
          policy: policy.anyOf(LIST, scope.global('the imports of every study the caller sees (seesMld)')),
        },
        schema: {
          querystring: imListQuerySchema,
          body: mldListRequestSchema,
          response: { 200: mldListResponseSchema },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        if (request.query.reportFormat === 'csv') return mld.exportCsv(reply, principal, request.body);
        return { success: true as const, ...(await mld.list(principal, request.body)) };
      },
    );

    r.get(
      '/api/images/:id/ai-layers',
      {
        config: { policy: policy.anyOf(VIEW_ANNOTATIONS_PERMISSIONS, imageScope) },
        schema: { params: idParams, response: { 200: aiLayersResponseSchema } },
      },
      async (request) => mld.aiLayers(request.params.id),
    );

    r.get(
      '/api/images/:id/ai-annotations',
      { config: { policy: policy.anyOf(VIEW_ANNOTATIONS_PERMISSIONS, imageScope) }, schema: { params: idParams } },
      async (request, reply) => {
        const imageId = request.params.id;
        const principal = principalOf(request);
        return sendJsonStream(reply, async (emit) => {
          await emit(`{"imageId":${imageId},"annotations":[`);
          await emitVisibleAnnotations(db, principal, imageId, emit, 'ai');
          await emit(']}');
        });
      },
    );

    r.get(
      '/api/mld/:id/heatmap',
      { config: { policy: policy.anyOf(VIEW_ANNOTATIONS_PERMISSIONS, mldImageScope) }, schema: { params: idParams } },
      async (request, reply) => {
        const heatmap = await mld.heatmap(request.params.id);
        return reply.type('image/png').header('cache-control', 'private, max-age=3600').send(heatmap);
      },
    );
  };
}
