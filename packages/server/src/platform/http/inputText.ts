import type { FastifyInstance } from 'fastify';
import { findInvalidText } from '@lamina/domain';
import { BadRequestError } from '../errors.js';

/**
 * The text rule of the domain package (well-formed Unicode, no NUL, bounded nesting) applied to
 * every parsed input of every route — path parameters, query string and JSON body — before the
 * route's own schema. One hook instead of a refinement per field: a field added later cannot
 * forget it, and nothing that PostgreSQL would store differently (or refuse) reaches a handler,
 * the audit trail included.
 */
export function registerInputTextRule(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const input of [request.params, request.query, request.body]) {
      const invalid = findInvalidText(input);
      if (invalid) throw new BadRequestError(invalid.message);
    }
  });
}
