import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { MESSAGES } from '@lamina/domain';
import { AppError } from '../errors.js';

interface PgError {
  code?: string;
  detail?: string;
}

/** Database constraint errors a client can cause are their fault (4xx), never a 500. */
function fromDatabase(error: PgError): { status: number; message: string } | null {
  switch (error.code) {
    case '23505':
      return { status: 409, message: 'This already exists' };
    case '23503':
      return { status: 400, message: 'A referenced record does not exist' };
    case '22P02':
    case '22003':
    case '22007':
    case '22008':
      return { status: 400, message: 'A value has the wrong format' };
    default:
      return null;
  }
}

/** One place maps every error to `{ success: false, message }` with its HTTP status. */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error.statusCode >= 500) request.log.error({ err: error }, error.message);
      return reply.status(error.statusCode).send({ success: false, message: error.message });
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const first = error.validation[0];
      return reply.status(400).send({ success: false, message: first?.message ?? 'Invalid request' });
    }
    const db = fromDatabase(error);
    if (db) return reply.status(db.status).send({ success: false, message: db.message });
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, unsupported media type, body too large …
      return reply.status(status).send({ success: false, message: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ success: false, message: MESSAGES.internalError });
  });
}
