import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { inlineScriptSources } from './webApp.js';

function originOf(location: string): string | null {
  try {
    return location ? new URL(location).origin : null;
  } catch {
    return null;
  }
}

type PolicyConfig = Pick<Config, 'frameAncestors' | 'tileServerLocation'> & {
  storage?: Config['storage'];
  /** Inline scripts of the web app's page allowed by hash (webApp.ts inlineScriptSources). */
  scriptSources?: readonly string[];
};

/**
 * Where the browser sends upload bytes with STORAGE=s3: the origin of the signed URLs. They name
 * S3_ENDPOINT when it is set (MinIO, or the bucket behind the app's own load balancer), else AWS
 * (virtual-hosted or path-style, by S3_FORCE_PATH_STYLE). Local storage: the app's own routes.
 */
function uploadOrigin(storage: Config['storage'] | undefined): string | null {
  if (storage?.kind !== 's3') return null;
  const { endpoint, bucket, region, forcePathStyle } = storage.s3;
  if (endpoint) return originOf(endpoint);
  return forcePathStyle ? `https://s3.${region}.amazonaws.com` : `https://${bucket}.s3.${region}.amazonaws.com`;
}

/** The Content-Security-Policy of every response; frame-ancestors from FRAME_ANCESTORS ('none' by default). */
export function contentSecurityPolicy(config: PolicyConfig): string {
  const tiles = originOf(config.tileServerLocation);
  const extra = tiles ? ` ${tiles}` : '';
  // The upload's PUTs (XHR) to the bucket's signed URLs: without it the browser refuses them
  // whenever the bucket is on another origin than the app (any S3 deployment but a same-origin one).
  const uploads = uploadOrigin(config.storage);
  const connect = [...new Set(['self', tiles, uploads].filter((o): o is string => o !== null))]
    .map((o) => (o === 'self' ? "'self'" : o))
    .join(' ');
  const ancestors = config.frameAncestors.length > 0 ? config.frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'self'",
    ["script-src 'self'", ...(config.scriptSources ?? [])].join(' '),
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${extra}`,
    `connect-src ${connect}`,
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
export function securityHeaders(config: PolicyConfig): string[] {
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
  const headers = securityHeaders({ ...config, scriptSources: inlineScriptSources(config.webDist) });
  app.addHook('onSend', async (request, reply) => {
    for (let i = 0; i + 1 < headers.length; i += 2) reply.header(headers[i] as string, headers[i + 1]);
    if (request.url.startsWith('/api/')) reply.header('Cache-Control', 'no-store');
  });
}
