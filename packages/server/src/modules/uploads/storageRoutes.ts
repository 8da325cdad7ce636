import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IMAGE_MESSAGES, MESSAGES } from '@lamina/domain';
import { policy } from '../../platform/rbac/policy.js';
import { attachmentDisposition, isValidKey, type SignedUrlClaims } from '../../platform/storage/keys.js';
import { SizeMismatchError, type LocalStorage } from '../../platform/storage/localStorage.js';
import { InvalidPartError, NoSuchUploadError } from '../../platform/storage/uploadSigning.js';
import { ObjectExistsError } from '../../platform/storage/storage.js';
import { parseCompleteMultipartXml, xml } from './s3Xml.js';

/** Largest CompleteMultipartUpload document accepted (10,000 parts fit in well under 1 MiB). */
const MAX_XML_BYTES = 2 * 1024 * 1024;

function fail(reply: FastifyReply, status: number, message: string) {
  return reply.status(status).send({ success: false, message });
}

function announcedLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

function bodyStream(request: FastifyRequest): Readable {
  return request.body instanceof Readable ? request.body : request.raw;
}

async function readSmallBody(stream: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new InvalidPartError('The request body is too large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses `bytes=a-b`, `bytes=a-`, `bytes=-n` against a size; undefined = no range, null = unsatisfiable. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined; // multi-range or garbage: whole object
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return null;
  return { start, end };
}

/**
 * The local storage's signed URLs: `/api/storage/{key}?op=…&expires=…&sig=…`, authorised by the
 * HMAC signature alone (policy signedUrl: no session). They speak the S3 subset a browser client
 * needs — PutObject, GetObject (with Range), and the multipart calls with S3's XML — so the same
 * client code (Uppy's @uppy/aws-s3) uploads to S3 and to the local folder.
 *
 * Bodies are never buffered: every content type is handed over as the raw stream and written to a
 * temporary file, renamed into place when complete (Fastify's body limit does not apply here).
 */
export function storageRoutes(storage: LocalStorage) {
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, payload, done) => {
      done(null, payload);
    });

    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const key = (request.params as { '*': string })['*'];
      if (!isValidKey(key)) return fail(reply, 404, MESSAGES.notFound);
      const claims = storage.signer.verify(key, request.query as Record<string, unknown>);
      if (!claims) return fail(reply, 403, IMAGE_MESSAGES.invalidSignature);
      try {
        return await dispatch(storage, claims, request, reply);
      } catch (error) {
        if (error instanceof NoSuchUploadError) return fail(reply, 404, 'No such upload');
        // S3's answer to a conditional write over an existing object: objects are never replaced.
        if (error instanceof ObjectExistsError) return fail(reply, 412, IMAGE_MESSAGES.objectExists);
        if (error instanceof InvalidPartError || error instanceof SizeMismatchError)
          return fail(reply, 400, error.message);
        if ((error as { code?: string }).code === 'ENOENT') return fail(reply, 404, MESSAGES.notFound);
        if (
          (error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE' ||
          (error as { code?: string }).code === 'ECONNRESET'
        ) {
          return fail(reply, 400, IMAGE_MESSAGES.uploadIncomplete);
        }
        throw error;
      }
    };

    app.route({
      method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
      url: '/api/storage/*',
      config: { policy: policy.signedUrl() },
      handler,
    });
  };
}

async function dispatch(storage: LocalStorage, claims: SignedUrlClaims, request: FastifyRequest, reply: FastifyReply) {
  const { key } = claims;
  const method = request.method;
  const wrongMethod = () => fail(reply, 403, IMAGE_MESSAGES.invalidSignature);
  switch (claims.op) {
    case 'get': {
      if (method !== 'GET' && method !== 'HEAD') return wrongMethod();
      const head = await storage.head(key);
      if (!head) return fail(reply, 404, MESSAGES.notFound);
      const range = parseRange(request.headers.range, head.size);
      reply
        .header('Accept-Ranges', 'bytes')
        .header('Content-Type', 'application/octet-stream')
        .header('Cache-Control', 'private, no-store');
      if (claims.downloadName) {
        reply.header('Content-Disposition', attachmentDisposition(claims.downloadName));
      }
      if (range === null) return reply.status(416).header('Content-Range', `bytes */${head.size}`).send();
      if (range) {
        reply
          .status(206)
          .header('Content-Range', `bytes ${range.start}-${range.end}/${head.size}`)
          .header('Content-Length', range.end - range.start + 1);
      } else {
        reply.header('Content-Length', head.size);
      }
      if (method === 'HEAD') return reply.send();
      return reply.send(await storage.createReadStream(key, range ?? undefined));
    }
    case 'put': {
      if (method !== 'PUT') return wrongMethod();
      const { etag, size } = await storage.writeStream(key, bodyStream(request), announcedLength(request));
      return reply.header('ETag', `"${etag}"`).send({ success: true, key, size });
    }
    case 'part': {
      if (method !== 'PUT' || !claims.uploadId || claims.partNumber === undefined) return wrongMethod();
      const { etag, size } = await storage.writePart(
        key,
        claims.uploadId,
        claims.partNumber,
        bodyStream(request),
        announcedLength(request),
      );
      return reply.header('ETag', `"${etag}"`).send({ success: true, partNumber: claims.partNumber, size });
    }
    case 'create': {
      if (method !== 'POST') return wrongMethod();
      bodyStream(request).resume();
      const { uploadId } = await storage.createMultipartUpload(key);
      return reply.type('application/xml').send(
        xml('InitiateMultipartUploadResult', [
          ['Bucket', 'local'],
          ['Key', key],
          ['UploadId', uploadId],
        ]),
      );
    }
    case 'list': {
      if (method !== 'GET' || !claims.uploadId) return wrongMethod();
      const parts = await storage.listParts(key, claims.uploadId);
      return reply.type('application/xml').send(
        xml('ListPartsResult', [
          ['Bucket', 'local'],
          ['Key', key],
          ['UploadId', claims.uploadId],
          ['IsTruncated', 'false'],
          ...parts.map((p): [string, [string, string][]] => [
            'Part',
            [
              ['PartNumber', String(p.partNumber)],
              ['ETag', `"${p.etag}"`],
              ['Size', String(p.size)],
            ],
          ]),
        ]),
      );
    }
    case 'complete': {
      if (method !== 'POST' || !claims.uploadId) return wrongMethod();
      const parts = parseCompleteMultipartXml(await readSmallBody(bodyStream(request), MAX_XML_BYTES));
      if (parts.length === 0) return fail(reply, 400, 'No parts listed');
      await storage.completeMultipartUpload(key, claims.uploadId, parts);
      return reply.type('application/xml').send(
        xml('CompleteMultipartUploadResult', [
          ['Location', `/api/storage/${key}`],
          ['Bucket', 'local'],
          ['Key', key],
          ['ETag', `"${claims.uploadId}-${parts.length}"`],
        ]),
      );
    }
    case 'abort': {
      if (method !== 'DELETE' || !claims.uploadId) return wrongMethod();
      await storage.abortMultipartUpload(key, claims.uploadId);
      return reply.status(204).send();
    }
  }
}
