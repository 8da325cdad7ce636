import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MESSAGES } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy } from '../../platform/rbac/policy.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import { PyramidCache, type PyramidCacheOptions } from './pyramidCache.js';
import { locateTile } from './pyramidIndex.js';
import { VerifiedTokens } from './verifiedTokens.js';

export interface TileRouteDeps {
  db: Db;
  storage: ObjectStorage;
  tileTokens: TileTokens;
  /** A cache to share (e.g. with the worker, to invalidate after re-processing); one is made otherwise. */
  cache?: PyramidCache;
  cacheOptions?: PyramidCacheOptions;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The tile server's pyramid cache (when the tiles role runs): `invalidate(imageId)` after re-processing. */
    tileCache?: PyramidCache;
  }
}

/** A year: tile bytes under one URL (token, version) never change. */
export const TILE_CACHE_CONTROL = 'private, max-age=31536000, immutable';

const NUMBER = /^\d{1,9}$/;

interface TileParams {
  imageId: string;
  z: string;
  x: string;
  y: string;
}

interface TileQuery {
  t?: string;
  stack?: string;
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  // If-None-Match uses the weak comparison (RFC 9110 §13.1.2): W/ prefixes are ignored.
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** 'warn', or the app's level when that is quieter still. */
function quietLevel(appLevel: string): string {
  return LEVELS.indexOf(appLevel) > LEVELS.indexOf('warn') ? appLevel : 'warn';
}

function refuse(reply: FastifyReply, status: 403 | 404) {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .send({ success: false, message: status === 403 ? MESSAGES.accessDenied : MESSAGES.notFound });
}

/**
 * `GET /tiles/{imageId}/{z}/{x}/{y}[?stack=n]&t={token}`: the stored JPEG tile of the pyramid,
 * copied with one ranged read and the JPEG tables spliced in; no decode, no re-encode.
 * Authorised by the tile token alone (policy signedUrl: no session, no database round trip).
 * z = 0 is the zoom where the slide fits one 256-px tile; z = maxTmsZoom is full resolution; x and
 * y count from the top-left. Outside the grid (or no such pyramid) → 404.
 */
export async function registerTileRoutes(app: FastifyInstance, deps: TileRouteDeps): Promise<void> {
  const cache =
    deps.cache ??
    new PyramidCache(
      { db: deps.db, storage: deps.storage, log: app.log },
      { localReads: process.env.TILE_READS === 'async' ? 'async' : 'sync', ...deps.cacheOptions },
    );
  const tileTokens = new VerifiedTokens(deps.tileTokens);
  if (!app.hasDecorator('tileCache')) app.decorate('tileCache', cache);
  app.addHook('onClose', async () => cache.clear());

  const tileLog = app.log.child({ module: 'tiles' }, { level: quietLevel(app.log.level) });

  const handleTile = async (
    request: FastifyRequest<{ Params: TileParams; Querystring: TileQuery }>,
    reply: FastifyReply,
  ) => {
    const { imageId: id, z: zs, x: xs, y: ys } = request.params;
    const query = request.query;
    const imageId = NUMBER.test(id) ? Number(id) : 0;
    if (imageId <= 0 || !tileTokens.verify(query.t, imageId)) return refuse(reply, 403);
    const stackText = query.stack ?? '0';
    if (!NUMBER.test(zs) || !NUMBER.test(xs) || !NUMBER.test(ys) || !NUMBER.test(stackText)) return refuse(reply, 404);
    const z = Number(zs);
    const x = Number(xs);
    const y = Number(ys);
    const stack = Number(stackText);

    let pyramid = cache.peek(imageId);
    if (pyramid === undefined) pyramid = await cache.get(imageId);
    const location = pyramid ? locateTile(pyramid.index, z, x, y, stack) : null;
    if (!pyramid || !location) return refuse(reply, 404);

    const etag = `"${imageId}-${pyramid.index.version}-${z}-${x}-${y}-${stack}"`;
    reply.header('ETag', etag).header('Cache-Control', TILE_CACHE_CONTROL);
    if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const body = await pyramid.file.readTile(location);
    return reply.type('image/jpeg').send(body);
  };

  app.get<{ Params: TileParams; Querystring: TileQuery }>(
    '/tiles/:imageId/:z/:x/:y',
    // Tiles are the hot path (hundreds per second per reader): no per-request log lines, and one
    // shared logger instead of a child logger made (and re-levelled) for every request.
    { config: { policy: policy.signedUrl() }, childLoggerFactory: () => tileLog },
    handleTile,
  );
}

/** As a Fastify plugin: `app.register(tilesPlugin, deps)`. */
export const tilesPlugin = async (app: FastifyInstance, deps: TileRouteDeps) => registerTileRoutes(app, deps);
