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

/**
 * The headers every page and API response carries, as name/value pairs (the app's onSend hook).
 * Tiles carry imageSecurityHeaders instead.
 */
export function securityHeaders(config: Pick<Config, 'frameAncestors' | 'tileServerLocation'>): string[] {
  return [
    'Content-Security-Policy',
    contentSecurityPolicy(config),
    'X-Content-Type-Options',
    'nosniff',
    'Referrer-Policy',
    'strict-origin-when-cross-origin',
    'Cross-Origin-Opener-Policy',
    'same-origin',
  ];
}

/**
 * The headers of tile responses (images and their JSON refusals): nosniff, and a policy that lets
 * the response do nothing should it ever be opened as a document. The page policy's sources,
 * Referrer-Policy and Cross-Origin-Opener-Policy only mean something for documents; leaving them off
 * halves the response head of the busiest route (docs/BENCHMARKS.md, "Reading the tile figures").
 */
export const IMAGE_SECURITY_HEADERS: readonly string[] = [
  'Content-Security-Policy',
  "default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options',
  'nosniff',
];

export function registerSecurityHeaders(app: FastifyInstance, config: Config): void {
  const headers = securityHeaders(config);
  app.addHook('onSend', async (request, reply) => {
    for (let i = 0; i + 1 < headers.length; i += 2) reply.header(headers[i] as string, headers[i + 1]);
    if (request.url.startsWith('/api/')) reply.header('Cache-Control', 'no-store');
  });
}
