import type { FastifyInstance } from 'fastify';
import type { Db } from '../../platform/db/database.js';
import { policy } from '../../platform/rbac/policy.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { databaseTileRows } from '../../platform/tiles/tileRows.js';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import type { PyramidCache, PyramidCacheOptions } from './pyramidCache.js';
import {
  TILE_CACHE_CONTROL,
  type RawHandler,
  type TileAnswerRecorder,
  type TileHeaderTemplates,
  type TileResponder,
} from './tileHandler.js';
import type { TileRangeCache } from './tileRangeCache.js';
import { createTileService } from './tileService.js';

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
  const { db, ...rest } = deps;
  const tiles = createTileService({ ...rest, rows: databaseTileRows(db), log: app.log });
  if (tiles.rangeCache && !app.hasDecorator('tileRangeCache')) app.decorate('tileRangeCache', tiles.rangeCache);
  if (!app.hasDecorator('tileCache')) app.decorate('tileCache', tiles.cache);
  app.addHook('onClose', async () => tiles.close());
  await tiles.start();

  const handleTile = tiles.handler;
  app.get(
    '/tiles/:imageId/:z/:x/:y',
    { config: { policy: policy.signedUrl() }, childLoggerFactory: () => tiles.log },
    (request, reply) => {
      // The handler writes the response itself (status, headers, body), as on the fast path.
      reply.hijack();
      handleTile(request.raw, reply.raw);
    },
  );
  return { handler: handleTile, respond: tiles.respond, templates: tiles.templates };
}

/** As a Fastify plugin: `app.register(tilesPlugin, deps)`. */
export const tilesPlugin = async (app: FastifyInstance, deps: TileRouteDeps) => {
  await registerTileRoutes(app, deps);
};
