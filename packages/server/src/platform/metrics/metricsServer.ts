import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export interface MetricsServer {
  /** The port it listens on (METRICS_PORT, or the one chosen for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on its own port (METRICS_PORT), apart from the public one: the metrics name
 * routes, queues and volumes, which are for the operators' Prometheus, not for the internet.
 * Anything else answers 404; no session, no Fastify.
 */
export async function startMetricsServer(
  metrics: Metrics,
  options: { port: number; host: string; log: { error(object: object, message: string): void } },
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        options.log.error({ err: error }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics unavailable\n');
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
