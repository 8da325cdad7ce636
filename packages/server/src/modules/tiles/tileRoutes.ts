import type { FastifyInstance } from 'fastify';
import type { Db } from '../../platform/db/database.js';
import { policy } from '../../platform/rbac/policy.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import { PyramidCache, type PyramidCacheOptions } from './pyramidCache.js';
import {
  createTileHandler,
  createTileResponder,
  measuredResponder,
  TILE_CACHE_CONTROL,
  tileHeaderTemplates,
  type RawHandler,
  type TileAnswerRecorder,
  type TileHeaderTemplates,
  type TileResponder,
} from './tileHandler.js';
import { VerifiedTokens } from './verifiedTokens.js';
import { TileRangeCache } from './tileRangeCache.js';
import { TileAccess } from '../../platform/tiles/tileAccess.js';

export { TILE_CACHE_CONTROL };

export interface TileRouteDeps {
  db: Db;
  storage: ObjectStorage;
  tileTokens: TileTokens;
  /** Name/value pairs every tile response carries (IMAGE_SECURITY_HEADERS). */
  securityHeaders: readonly string[];
  /** A cache to share (e.g. with the worker, to invalidate after re-processing); one is made otherwise. */
  cache?: PyramidCache;
  cacheOptions?: PyramidCacheOptions;
  /** TILE_READS (config.tiles.reads). Default async. */
  localReads?: 'sync' | 'async';
  /**
   * TILE_CACHE_MB in bytes (config.tiles.cacheBytes): tiles read from object storage kept in memory
   * (tileRangeCache.ts); 0 turns it off. Default 256 MiB. Unused with local storage (the page cache).
   */
  rangeCacheBytes?: number;
  /** TILE_ACCESS_REFRESH (config.tiles.accessRefreshSeconds). Default 15. */
  accessRefreshSeconds?: number;
  /** Where every answer's status and latency are counted (METRICS_PORT set); none → not measured. */
  metrics?: TileAnswerRecorder | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The tile server's pyramid cache (when the tiles role runs): `invalidate(imageId)` after re-processing. */
    tileCache?: PyramidCache;
    /** The tile server's cache of tiles read from object storage (STORAGE=s3 and the tiles role). */
    tileRangeCache?: TileRangeCache;
  }
}

/** TILE_CACHE_MB's default: 256 MiB, some 24 000 tiles of 11 KB (the bench slide's mean). */
const DEFAULT_RANGE_CACHE_BYTES = 256 * 1024 * 1024;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** 'warn', or the app's level when that is quieter still. */
function quietLevel(appLevel: string): string {
  return LEVELS.indexOf(appLevel) > LEVELS.indexOf('warn') ? appLevel : 'warn';
}

/** What the HTTP server needs to answer tiles ahead of Fastify (TileFastPath.install). */
export interface TileServing {
  handler: RawHandler;
  respond: TileResponder;
  templates: TileHeaderTemplates;
}

/**
 * `GET /tiles/{imageId}/{z}/{x}/{y}[?stack=n]&t={token}` (and HEAD): the stored JPEG tile of the
 * pyramid (tileHandler.ts). Authorised by the tile token alone (policy signedUrl: no session, no
 * database round trip). z = 0 is the zoom where the slide fits one 256-px tile; z = maxTmsZoom is
 * full resolution; x and y count from the top-left. Outside the grid (or no such pyramid) → 404.
 *
 * The route is declared in Fastify's table with its policy, and Fastify answers it through the
 * same responder (e.g. `app.inject`). The HTTP server answers tile requests before Fastify sees
 * them with what this returns (tileServer.ts, tileConnection.ts): the guard lets a signedUrl
 * route through untouched anyway, and the tile path skips the per-request framework work
 * (request object, hooks, reply serialisation, request id).
 */
export async function registerTileRoutes(app: FastifyInstance, deps: TileRouteDeps): Promise<TileServing> {
  // Object storage only: local pyramids are read from the page cache, which needs no second copy.
  const rangeCache = deps.storage.localPath
    ? null
    : new TileRangeCache(deps.rangeCacheBytes ?? DEFAULT_RANGE_CACHE_BYTES);
  if (rangeCache && deps.metrics) deps.metrics.rangeCache = rangeCache;
  const cache =
    deps.cache ??
    new PyramidCache(
      { db: deps.db, storage: deps.storage, log: app.log },
      { localReads: deps.localReads ?? 'async', rangeCache, ...deps.cacheOptions },
    );
  if (rangeCache && !app.hasDecorator('tileRangeCache')) app.decorate('tileRangeCache', rangeCache);
  app.addHook('onClose', async () => rangeCache?.clear());
  if (!app.hasDecorator('tileCache')) app.decorate('tileCache', cache);
  app.addHook('onClose', async () => cache.clear());
  // Revocation of tile tokens (logout, deactivation, lost access) from memory, refreshed.
  const access = new TileAccess(deps.db, (deps.accessRefreshSeconds ?? 15) * 1000, app.log);
  await access.start();
  app.addHook('onClose', async () => access.stop());

  // Tiles are the hot path (hundreds per second per reader): no per-request log lines, and one
  // shared logger instead of a child logger made (and re-levelled) for every request.
  const tileLog = app.log.child({ module: 'tiles' }, { level: quietLevel(app.log.level) });
  const unmeasured = createTileResponder({ cache, tokens: new VerifiedTokens(deps.tileTokens), access, log: tileLog });
  // Every path (on the connection, Node's HTTP server, Fastify) answers through this one responder.
  const respond = deps.metrics ? measuredResponder(unmeasured, deps.metrics) : unmeasured;
  const templates = tileHeaderTemplates(deps.securityHeaders);
  const handleTile = createTileHandler(respond, templates);

  app.get(
    '/tiles/:imageId/:z/:x/:y',
    { config: { policy: policy.signedUrl() }, childLoggerFactory: () => tileLog },
    (request, reply) => {
      // The handler writes the response itself (status, headers, body), as on the fast path.
      reply.hijack();
      handleTile(request.raw, reply.raw);
    },
  );
  return { handler: handleTile, respond, templates };
}

/** As a Fastify plugin: `app.register(tilesPlugin, deps)`. */
export const tilesPlugin = async (app: FastifyInstance, deps: TileRouteDeps) => {
  await registerTileRoutes(app, deps);
};
