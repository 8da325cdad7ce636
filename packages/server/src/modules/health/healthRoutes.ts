import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { actionResponseSchema, readinessSchema } from '@lamina/domain';
import type { Readiness } from '../../platform/health/readiness.js';
import { policy } from '../../platform/rbac/policy.js';

/**
 * Liveness and readiness, registered in every process whatever its roles (docs/DEPLOYMENT.md):
 * - `GET /api/health`: the process is up and its event loop answers; nothing else is checked, so a
 *   database outage does not get every process restarted.
 * - `GET /api/ready`: 200 when this process can do its roles' work (database, migrations, storage),
 *   503 with the failing checks otherwise. While the server shuts down every request, this one
 *   included, is answered 503 (Fastify's return503OnClosing).
 */
export function healthRoutes(readiness: Readiness) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.get(
      '/api/health',
      { config: { policy: policy.public() }, schema: { response: { 200: actionResponseSchema } } },
      async () => ({ success: true, message: 'ok' }),
    );
    r.get(
      '/api/ready',
      { config: { policy: policy.public() }, schema: { response: { 200: readinessSchema, 503: readinessSchema } } },
      async (_request, reply) => {
        const result = await readiness.evaluate();
        return reply.code(result.success ? 200 : 503).send(result);
      },
    );
  };
}
