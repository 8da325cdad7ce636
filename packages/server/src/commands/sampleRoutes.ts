import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  SAMPLE_UPLOAD_PERMISSION,
  sampleDataRequestSchema,
  sampleImportResultSchema,
  sampleProgressQuerySchema,
  sampleProgressResponseSchema,
  sampleUploadRequestSchema,
  sampleUploadResponseSchema,
} from '@lamina/domain';
import type { Db } from '../platform/db/database.js';
import { actorOf, principalOf } from '../platform/http/requestContext.js';
import { policy, scope } from '../platform/rbac/policy.js';
import type { ObjectStorage } from '../platform/storage/storage.js';
import type { UploadKeys } from '../platform/storage/keys.js';
import { SampleImportService } from './sampleImportService.js';

const samplePolicy = policy.anyOf(
  [SAMPLE_UPLOAD_PERMISSION],
  scope.global('a sample-data file spans the studies the user may see; each row reaches only those (visibleStudies)'),
);

/** Sample-data import (issue 12; doc 2 §4, §7; docs/SAMPLE-DATA.md). */
export function sampleRoutes(options: { db: Db; storage: ObjectStorage; keys: UploadKeys; ttlSeconds: number }) {
  const samples = new SampleImportService(options.db, options.storage, options.keys, options.ttlSeconds);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/samples/upload',
      {
        config: { policy: samplePolicy },
        schema: { body: sampleUploadRequestSchema, response: { 200: sampleUploadResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        ...(await samples.upload(principalOf(request), request.body.fileName)),
      }),
    );

    r.post(
      '/api/samples/process',
      {
        config: { policy: samplePolicy },
        schema: { body: sampleDataRequestSchema, response: { 200: sampleImportResultSchema } },
      },
      async (request) => ({
        success: true as const,
        ...(await samples.process(principalOf(request), actorOf(request), request.body)),
      }),
    );

    r.get(
      '/api/samples/progress',
      {
        config: { policy: samplePolicy },
        schema: { querystring: sampleProgressQuerySchema, response: { 200: sampleProgressResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        ...(await samples.progress(principalOf(request), request.query.s3SampleDataKey)),
      }),
    );
  };
}
