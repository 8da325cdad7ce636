import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  completeMultipartRequestSchema,
  createMultipartRequestSchema,
  hasImageExtension,
  IMAGE_MESSAGES,
  signedUrlsRequestSchema,
  signPartsRequestSchema,
  unsupportedFileType,
  uppySignRequestSchema,
  type Permission,
} from '@lamina/domain';
import { policy, studyFromBody, type StudyResolver } from '../../platform/rbac/policy.js';
import { BadRequestError, NotFoundError } from '../../platform/errors.js';
import { studyIdOfUploadKey, uploadKey } from '../../platform/storage/keys.js';
import { NoSuchUploadError, InvalidPartError, type AppStorage } from '../../platform/storage/uploadSigning.js';

/** Who may upload images: the upload permission, or upload to assigned studies only (doc 2 §6). */
export const UPLOAD_PERMISSIONS: readonly Permission[] = [
  'S_ImageListTab_UploadImage',
  'IM_ImagesListTab_UploadImagestoAssignedStudiesOnly',
];

/** The study of an upload key given in the query string or body (`key`); -1 (→ 404) when none. */
export const studyFromUploadKey: StudyResolver = (request: FastifyRequest) => {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.key;
  const fromBody = (request.body as Record<string, unknown> | undefined)?.key;
  const key = typeof fromQuery === 'string' ? fromQuery : typeof fromBody === 'string' ? fromBody : '';
  return studyIdOfUploadKey(key) ?? -1;
};

function checkFileName(fileName: string): void {
  if (!hasImageExtension(fileName)) throw new BadRequestError(unsupportedFileType(fileName));
}

const uploadIdParams = z.object({ uploadId: z.string().min(1).max(1024) });
const keyQuery = z.object({ key: z.string().min(1).max(1024) });
const partParams = uploadIdParams.extend({ partNumber: z.coerce.number().int().min(1).max(10_000) });

async function withUploadErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof NoSuchUploadError) throw new NotFoundError('No such upload');
    if (error instanceof InvalidPartError) throw new BadRequestError(error.message);
    throw error;
  }
}

/**
 * Upload calls: the spec's signed URLs for a PUT per file, and a resumable multipart upload for
 * large files (create → signed part URLs → complete, with list-parts and abort). The bytes never
 * pass through these routes: they go to the signed URLs (S3, or the local storage's own routes).
 * Keys are `uploads/{studyId}/{uuid}/{file}`: the study of every later call is read from the key.
 */
export function uploadRoutes(storage: AppStorage, ttlSeconds: number) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const byBodyStudy = { policy: policy.anyOf(UPLOAD_PERMISSIONS, { study: studyFromBody() }) };
    const byKeyStudy = { policy: policy.anyOf(UPLOAD_PERMISSIONS, { study: studyFromUploadKey }) };

    r.post('/api/signed-urls', { config: byBodyStudy, schema: { body: signedUrlsRequestSchema } }, async (request) => {
      const { studyId, fileNames } = request.body;
      for (const name of fileNames) checkFileName(name);
      const urls = await Promise.all(
        fileNames.map(async (fileName) => {
          const s3Key = uploadKey(studyId, fileName);
          return { fileName, signedUrl: await storage.signedPutUrl(s3Key, ttlSeconds), s3Key };
        }),
      );
      return { success: true as const, data: { urls } };
    });

    r.post(
      '/api/uploads/multipart',
      { config: byBodyStudy, schema: { body: createMultipartRequestSchema } },
      async (request) => {
        checkFileName(request.body.fileName);
        const key = uploadKey(request.body.studyId, request.body.fileName);
        const { uploadId } = await storage.createMultipartUpload(key);
        return { success: true, uploadId, key };
      },
    );

    r.get(
      '/api/uploads/multipart/:uploadId/parts',
      { config: byKeyStudy, schema: { params: uploadIdParams, querystring: keyQuery } },
      async (request) => {
        const parts = await withUploadErrors(() => storage.listParts(request.query.key, request.params.uploadId));
        return { success: true, parts };
      },
    );

    r.post(
      '/api/uploads/multipart/:uploadId/parts/:partNumber/url',
      { config: byKeyStudy, schema: { params: partParams, body: keyQuery } },
      async (request) => ({
        success: true,
        url: await storage.signedPartUrl(
          request.body.key,
          request.params.uploadId,
          request.params.partNumber,
          ttlSeconds,
        ),
      }),
    );

    r.post(
      '/api/uploads/multipart/:uploadId/urls',
      { config: byKeyStudy, schema: { params: uploadIdParams, body: signPartsRequestSchema } },
      async (request) => {
        const urls = await Promise.all(
          request.body.partNumbers.map(async (partNumber) => ({
            partNumber,
            url: await storage.signedPartUrl(request.body.key, request.params.uploadId, partNumber, ttlSeconds),
          })),
        );
        return { success: true, urls };
      },
    );

    r.post(
      '/api/uploads/multipart/:uploadId/complete',
      { config: byKeyStudy, schema: { params: uploadIdParams, body: completeMultipartRequestSchema } },
      async (request) => {
        await withUploadErrors(() =>
          storage.completeMultipartUpload(request.body.key, request.params.uploadId, request.body.parts),
        );
        const head = await storage.head(request.body.key);
        return { success: true, key: request.body.key, size: head?.size ?? null };
      },
    );

    r.delete(
      '/api/uploads/multipart/:uploadId',
      { config: byKeyStudy, schema: { params: uploadIdParams, querystring: keyQuery } },
      async (request) => {
        await withUploadErrors(() => storage.abortMultipartUpload(request.query.key, request.params.uploadId));
        return { success: true };
      },
    );

    /**
     * The `signRequest` callback of @uppy/aws-s3 (v6): signs one S3 request of the upload. New
     * objects (PutObject, CreateMultipartUpload) get a server-chosen key under the study's upload
     * prefix, returned as `key`; every other request must name a key of that prefix.
     */
    r.post('/api/uploads/sign', { config: byBodyStudy, schema: { body: uppySignRequestSchema } }, async (request) => {
      const { studyId, method, key, uploadId, partNumber } = request.body;
      if (!uploadId && (method === 'PUT' || method === 'POST')) {
        const fileName = request.body.fileName ?? key.split('/').pop() ?? key;
        checkFileName(fileName);
        const newKey = uploadKey(studyId, fileName);
        const url =
          method === 'PUT'
            ? await storage.signedPutUrl(newKey, ttlSeconds)
            : await storage.signedCreateMultipartUrl(newKey, ttlSeconds);
        return { url, key: newKey };
      }
      if (studyIdOfUploadKey(key) !== studyId) throw new BadRequestError(IMAGE_MESSAGES.uploadNotInStudy);
      if (!uploadId) throw new BadRequestError('Only uploads can be signed');
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
    });
  };
}
