import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { MESSAGES, TEXT_MESSAGES } from '@lamina/domain';
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
    case '23502':
    case '23514':
      return { status: 400, message: 'A required value is missing or not allowed' };
    case '22021': // character not in repertoire (NUL in text)
    case '22P05': // untranslatable character
      return { status: 400, message: TEXT_MESSAGES.invalidCharacters };
    case '22001':
      return { status: 400, message: 'A value is too long' };
    default:
      // Any other data exception (class 22: out of range, bad format, division by zero …) comes
      // from a value the client sent.
      return error.code?.startsWith('22') ? { status: 400, message: 'A value has the wrong format' } : null;
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
    if (db) {
      request.log.warn({ err: error }, 'database refused a value');
      return reply.status(db.status).send({ success: false, message: db.message });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, unsupported media type, body too large …
      return reply.status(status).send({ success: false, message: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ success: false, message: MESSAGES.internalError });
  });
}
