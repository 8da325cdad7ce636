import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/**
 * Counts and times every response Fastify sends, by method, route pattern (`/api/images/:id`, never
 * the raw URL: the label set stays bounded) and status class. Requests that matched no route are
 * `unmatched`. Tiles answered ahead of Fastify are counted by the tile responder instead.
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_class: STATUS_CLASSES[((reply.statusCode / 100) | 0) - 1] ?? 'other',
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
