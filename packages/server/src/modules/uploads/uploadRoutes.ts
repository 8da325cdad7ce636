import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { imageFileNameError } from '../../platform/openslide/slideFormats.js';
import {
  completeMultipartRequestSchema,
  createMultipartRequestSchema,
  IMAGE_MESSAGES,
  signedUrlsRequestSchema,
  signPartsRequestSchema,
  uppySignRequestSchema,
  type Permission,
  signedUrlsResponseSchema,
  createMultipartResponseSchema,
  listPartsResponseSchema,
  signedUrlResponseSchema,
  signPartsResponseSchema,
  completeMultipartResponseSchema,
  successResponseSchema,
  uppySignResponseSchema,
} from '@lamina/domain';
import { policy, scope, studyFromBody } from '../../platform/rbac/policy.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../platform/errors.js';
import { ObjectExistsError } from '../../platform/storage/storage.js';
import { studyIdOfUploadKey, type UploadKeys } from '../../platform/storage/keys.js';
import { principalOf } from '../../platform/http/requestContext.js';
import { NoSuchUploadError, InvalidPartError, type AppStorage } from '../../platform/storage/uploadSigning.js';

/**
 * Who may upload (and register, and replace) slides: the upload permission (doc 2 §2.5 'Upload
 * image' (upload permission); doc 2 §6 "image upload or replace: S_ImageListTab_UploadImage").
 * IM_ImagesListTab_UploadImagestoAssignedStudiesOnly is the 'Upload Sample Data' button (sample-data
 * import, SAMPLE_UPLOAD_PERMISSION), not a slide upload: LIS holds it and uploads no slides (issue 26).
 */
export const UPLOAD_PERMISSIONS: readonly Permission[] = ['S_ImageListTab_UploadImage'];

/** The study of an upload key given in the query string or body (`key`); -1 (→ 404) when none. */
export const studyFromUploadKey = scope.study((request: FastifyRequest) => {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.key;
  const fromBody = (request.body as Record<string, unknown> | undefined)?.key;
  const key = typeof fromQuery === 'string' ? fromQuery : typeof fromBody === 'string' ? fromBody : '';
  return studyIdOfUploadKey(key) ?? -1;
});

function checkFileName(fileName: string): void {
  const error = imageFileNameError(fileName);
  if (error) throw new BadRequestError(error);
}

const uploadIdParams = z.object({ uploadId: z.string().min(1).max(1024) });
const keyQuery = z.object({ key: z.string().min(1).max(1024) });
const partParams = uploadIdParams.extend({ partNumber: z.coerce.number().int().min(1).max(10_000) });

const NO_SUCH_UPLOAD = 'No such upload';

async function withUploadErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof NoSuchUploadError) throw new NotFoundError(NO_SUCH_UPLOAD);
    if (error instanceof InvalidPartError) throw new BadRequestError(error.message);
    if (error instanceof ObjectExistsError) throw new ConflictError(IMAGE_MESSAGES.objectExists);
    throw error;
  }
}

/**
 * Upload calls: the spec's signed URLs for a PUT per file, and a resumable multipart upload for
 * large files (create → signed part URLs → complete, with list-parts and abort). The bytes never
 * pass through these routes: they go to the signed URLs (S3, or the local storage's own routes).
 * Keys are `uploads/{studyId}/{uuid}/{file}`: the study of every later call is read from the key.
 */
export function uploadRoutes(storage: AppStorage, ttlSeconds: number, keys: UploadKeys) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    /** Multipart calls on a key: only by the user it was issued to (anyone else: 'No such upload'). */
    const ownKey = (request: FastifyRequest, key: string): string => {
      if (keys.ownerOf(key) !== principalOf(request).id) throw new NotFoundError(NO_SUCH_UPLOAD);
      return key;
    };
    const byBodyStudy = { policy: policy.anyOf(UPLOAD_PERMISSIONS, studyFromBody()) };
    const byKeyStudy = { policy: policy.anyOf(UPLOAD_PERMISSIONS, studyFromUploadKey) };

    r.post(
      '/api/signed-urls',
      { config: byBodyStudy, schema: { body: signedUrlsRequestSchema, response: { 200: signedUrlsResponseSchema } } },
      async (request) => {
        const { studyId, fileNames } = request.body;
        for (const name of fileNames) checkFileName(name);
        const userId = principalOf(request).id;
        const urls = await Promise.all(
          fileNames.map(async (fileName) => {
            const s3Key = keys.issue(studyId, userId, fileName);
            return { fileName, signedUrl: await storage.signedPutUrl(s3Key, ttlSeconds), s3Key };
          }),
        );
        return { success: true as const, data: { urls } };
      },
    );

    r.post(
      '/api/uploads/multipart',
      {
        config: byBodyStudy,
        schema: { body: createMultipartRequestSchema, response: { 200: createMultipartResponseSchema } },
      },
      async (request) => {
        checkFileName(request.body.fileName);
        const key = keys.issue(request.body.studyId, principalOf(request).id, request.body.fileName);
        const { uploadId } = await storage.createMultipartUpload(key);
        return { success: true as const, uploadId, key };
      },
    );

    r.get(
      '/api/uploads/multipart/:uploadId/parts',
      {
        config: byKeyStudy,
        schema: { params: uploadIdParams, querystring: keyQuery, response: { 200: listPartsResponseSchema } },
      },
      async (request) => {
        const key = ownKey(request, request.query.key);
        const parts = await withUploadErrors(() => storage.listParts(key, request.params.uploadId));
        return { success: true as const, parts };
      },
    );

    r.post(
      '/api/uploads/multipart/:uploadId/parts/:partNumber/url',
      {
        config: byKeyStudy,
        schema: { params: partParams, body: keyQuery, response: { 200: signedUrlResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        url: await storage.signedPartUrl(
          ownKey(request, request.body.key),
          request.params.uploadId,
          request.params.partNumber,
          ttlSeconds,
        ),
      }),
    );

    r.post(
      '/api/uploads/multipart/:uploadId/urls',
      {
        config: byKeyStudy,
        schema: { params: uploadIdParams, body: signPartsRequestSchema, response: { 200: signPartsResponseSchema } },
      },
      async (request) => {
        const key = ownKey(request, request.body.key);
        const urls = await Promise.all(
          request.body.partNumbers.map(async (partNumber) => ({
            partNumber,
            url: await storage.signedPartUrl(key, request.params.uploadId, partNumber, ttlSeconds),
          })),
        );
        return { success: true as const, urls };
      },
    );

    r.post(
      '/api/uploads/multipart/:uploadId/complete',
      {
        config: byKeyStudy,
        schema: {
          params: uploadIdParams,
          body: completeMultipartRequestSchema,
          response: { 200: completeMultipartResponseSchema },
        },
      },
      async (request) => {
        const key = ownKey(request, request.body.key);
        await withUploadErrors(() => storage.completeMultipartUpload(key, request.params.uploadId, request.body.parts));
        const head = await storage.head(key);
        return { success: true as const, key, size: head?.size ?? null };
      },
    );

    r.delete(
      '/api/uploads/multipart/:uploadId',
      {
        config: byKeyStudy,
        schema: { params: uploadIdParams, querystring: keyQuery, response: { 200: successResponseSchema } },
      },
      async (request) => {
        const key = ownKey(request, request.query.key);
        await withUploadErrors(() => storage.abortMultipartUpload(key, request.params.uploadId));
        return { success: true as const };
      },
    );

    /**
     * The `signRequest` callback of @uppy/aws-s3 (v6): signs one S3 request of the upload. New
     * objects (PutObject, CreateMultipartUpload) get a server-chosen key under the study's upload
     * prefix, returned as `key`; every other request must name a key of that prefix.
     */
    r.post(
      '/api/uploads/sign',
      { config: byBodyStudy, schema: { body: uppySignRequestSchema, response: { 200: uppySignResponseSchema } } },
      async (request) => {
        const { studyId, method, key, uploadId, partNumber } = request.body;
        if (!uploadId && (method === 'PUT' || method === 'POST')) {
          const fileName = request.body.fileName ?? key.split('/').pop() ?? key;
          checkFileName(fileName);
          const newKey = keys.issue(studyId, principalOf(request).id, fileName);
          const url =
            method === 'PUT'
              ? await storage.signedPutUrl(newKey, ttlSeconds)
              : await storage.signedCreateMultipartUrl(newKey, ttlSeconds);
          return { url, key: newKey };
        }
        if (studyIdOfUploadKey(key) !== studyId) throw new BadRequestError(IMAGE_MESSAGES.uploadNotInStudy);
        if (!uploadId) throw new BadRequestError('Only uploads can be signed');
        ownKey(request, key);
        switch (method) {
          case 'PUT':
            if (partNumber === undefined) throw new BadRequestError('partNumber is required');
            return { url: await storage.signedPartUrl(key, uploadId, partNumber, ttlSeconds) };
          case 'GET':
            return { url: await storage.signedListPartsUrl(key, uploadId, ttlSeconds) };
          case 'POST':
            return { url: await storage.signedCompleteMultipartUrl(key, uploadId, ttlSeconds) };
          case 'DELETE':
            return { url: await storage.signedAbortMultipartUrl(key, uploadId, ttlSeconds) };
        }
      },
    );
  };
}
