import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

function originOf(location: string): string | null {
  try {
    return location ? new URL(location).origin : null;
  } catch {
    return null;
  }
}

/** The Content-Security-Policy of every response; frame-ancestors from FRAME_ANCESTORS ('none' by default). */
export function contentSecurityPolicy(config: Pick<Config, 'frameAncestors' | 'tileServerLocation'>): string {
  const tiles = originOf(config.tileServerLocation);
  const extra = tiles ? ` ${tiles}` : '';
  const ancestors = config.frameAncestors.length > 0 ? config.frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${extra}`,
    `connect-src 'self'${extra}`,
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

export function registerSecurityHeaders(app: FastifyInstance, config: Config): void {
  const csp = contentSecurityPolicy(config);
  app.addHook('onSend', async (request, reply) => {
    reply.header('Content-Security-Policy', csp);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'strict-origin-when-cross-origin');
    reply.header('Cross-Origin-Opener-Policy', 'same-origin');
    if (request.url.startsWith('/api/')) reply.header('Cache-Control', 'no-store');
  });
}
