import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ANNOTATION_MESSAGES,
  CREATE_ANNOTATION_PERMISSION,
  DELETE_ANNOTATION_PERMISSION,
  VIEW_ANNOTATIONS_PERMISSIONS,
  createAnnotationRequestSchema,
  createAnnotationResponseSchema,
  deleteAnnotationQuerySchema,
  deleteAnnotationResponseSchema,
  importAnnotationsResponseSchema,
  restoreAnnotationResponseSchema,
  toAnnotationView,
  type AnnotationListResponse,
  type AnnotationView,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { sendJsonArray, sendJsonStream } from '../../platform/http/jsonStream.js';
import { BadRequestError, NotFoundError } from '../../platform/errors.js';
import { annotationScope, restorableAnnotationScope } from '../../access/annotationVisibility.js';
import { imageFromBody, imageScope } from '../../access/imageScope.js';
import { AnnotationService, annotatedImage, readLocked } from './annotationService.js';
import {
  annotationAuthors,
  emitVisibleAnnotations,
  visibleAnnotationJson,
  visibleAnnotationsJson,
} from './annotationQueries.js';
import { exportQuery, featureJson, GeoJsonImport, IMPORT_JSON_BUDGET } from './annotationGeoJson.js';
import { exceedsJsonBudget } from './jsonBudget.js';

/**
 * GeoJSON files may be large (200,000 points is about 30 MB); what they hold is bounded apart from
 * their size (IMPORT_JSON_BUDGET, then the annotation and vertex limits).
 */
const IMPORT_BODY_LIMIT = 128 * 1024 * 1024;

/**
 * Annotations (issue 14; doc 3 §7): the image's visible annotations streamed as one compact JSON
 * document, create, soft delete, restore (undo, issue 29), and the GeoJSON export and import.
 */
export function annotationRoutes(db: Db) {
  const service = new AnnotationService(db);
  const geoJson = new GeoJsonImport(db, service);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    const listHead = async (request: FastifyRequest, imageId: number) => {
      const principal = principalOf(request);
      const image = await annotatedImage(db, imageId);
      return {
        principal,
        image,
        locked: await readLocked(db, image.caseId, principal.id),
        authors: await annotationAuthors(db, principal, imageId),
      };
    };

    r.get(
      '/api/images/:id/annotations',
      { config: { policy: policy.anyOf(VIEW_ANNOTATIONS_PERMISSIONS, imageScope) }, schema: { params: idParams } },
      async (request, reply) => {
        const imageId = request.params.id;
        const { principal, locked, authors } = await listHead(request, imageId);
        const head: Omit<AnnotationListResponse, 'annotations'> = { imageId, locked, authors };
        return sendJsonStream(reply, async (emit) => {
          await emit(`${JSON.stringify(head).slice(0, -1)},"annotations":[`);
          await emitVisibleAnnotations(db, principal, imageId, emit);
          await emit(']}');
        });
      },
    );

    r.get(
      '/api/images/:id/annotations.geojson',
      { config: { policy: policy.anyOf(VIEW_ANNOTATIONS_PERMISSIONS, imageScope) }, schema: { params: idParams } },
      async (request, reply) => {
        const imageId = request.params.id;
        const principal = principalOf(request);
        return sendJsonArray(reply, {
          head: '{"type":"FeatureCollection","features":[',
          tail: ']}',
          db,
          query: exportQuery(db, principal, imageId),
          json: featureJson,
          contentType: 'application/geo+json; charset=utf-8',
          fileName: `image-${imageId}-annotations.geojson`,
        });
      },
    );

    // The import has its own JSON parser: the body is measured against IMPORT_JSON_BUDGET before
    // JSON.parse builds it (issue 26), then parsed as every other body is.
    await app.register(async (importApp) => {
      const parseJson = importApp.getDefaultJsonParser('error', 'error');
      importApp.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
        if (exceedsJsonBudget(body as string, IMPORT_JSON_BUDGET))
          done(new BadRequestError(ANNOTATION_MESSAGES.importTooLarge), undefined);
        else void parseJson(request, body as string, done);
      });
      importApp.withTypeProvider<ZodTypeProvider>().post(
        '/api/images/:id/annotations/import',
        {
          bodyLimit: IMPORT_BODY_LIMIT,
          config: { policy: policy.anyOf([CREATE_ANNOTATION_PERMISSION], imageScope) },
          schema: { params: idParams, body: z.unknown(), response: { 200: importAnnotationsResponseSchema } },
        },
        async (request) => {
          const count = await geoJson.import(principalOf(request), actorOf(request), request.params.id, request.body);
          return { success: true as const, message: ANNOTATION_MESSAGES.imported(count), count };
        },
      );
    });

    r.post(
      '/api/annotations',
      {
        config: { policy: policy.anyOf([CREATE_ANNOTATION_PERMISSION], imageFromBody) },
        schema: { body: createAnnotationRequestSchema, response: { 200: createAnnotationResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const { id, reparented } = await service.create(principal, actorOf(request), request.body);
        const row = await visibleAnnotationJson(db, principal, request.body.imageId, id);
        if (!row) throw new NotFoundError(ANNOTATION_MESSAGES.notFound);
        return {
          success: true as const,
          message: ANNOTATION_MESSAGES.created,
          annotation: toAnnotationView(JSON.parse(row) as Partial<AnnotationView>),
          reparented,
        };
      },
    );

    r.delete(
      '/api/annotations/:id',
      {
        config: { policy: policy.anyOf([DELETE_ANNOTATION_PERMISSION], annotationScope) },
        schema: {
          params: idParams,
          querystring: deleteAnnotationQuerySchema,
          response: { 200: deleteAnnotationResponseSchema },
        },
      },
      async (request) => {
        const result = await service.delete(
          principalOf(request),
          actorOf(request),
          request.params.id,
          request.query.deleteNested,
        );
        return { success: true as const, message: ANNOTATION_MESSAGES.deleted, ...result };
      },
    );

    // Restoring is creating again (the create permission), by the user who deleted it (the service).
    r.post(
      '/api/annotations/:id/restore',
      {
        config: { policy: policy.anyOf([CREATE_ANNOTATION_PERMISSION], restorableAnnotationScope) },
        schema: { params: idParams, response: { 200: restoreAnnotationResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const { imageId, ids, reparented } = await service.restore(principal, actorOf(request), request.params.id);
        const rows = await visibleAnnotationsJson(db, principal, imageId, ids);
        return {
          success: true as const,
          message: ANNOTATION_MESSAGES.restored,
          annotations: rows.map((row) => toAnnotationView(JSON.parse(row) as Partial<AnnotationView>)),
          reparented,
        };
      },
    );
  };
}
