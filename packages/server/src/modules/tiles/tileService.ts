import type { FastifyBaseLogger } from 'fastify';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { TileAccess } from '../../platform/tiles/tileAccess.js';
import type { TileRows } from '../../platform/tiles/tileRows.js';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import { PyramidCache, type PyramidCacheOptions } from './pyramidCache.js';
import {
  createTileHandler,
  createTileResponder,
  measuredResponder,
  tileHeaderTemplates,
  type RawHandler,
  type TileAnswerRecorder,
  type TileHeaderTemplates,
  type TileResponder,
} from './tileHandler.js';
import { TileRangeCache } from './tileRangeCache.js';
import { VerifiedTokens } from './verifiedTokens.js';

export interface TileServiceDeps {
  /** The image rows and live sessions (the database, or the process that owns it). */
  rows: TileRows;
  storage: ObjectStorage;
  tileTokens: TileTokens;
  /** Name/value pairs every tile response carries (IMAGE_SECURITY_HEADERS). */
  securityHeaders: readonly string[];
  log: FastifyBaseLogger;
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

/** The tile responder of a process with its caches and token revocation (tileRoutes.ts, tileProcessChild.ts). */
export interface TileService {
  /** Every path (on the connection, Node's HTTP server, Fastify) answers through this one responder. */
  respond: TileResponder;
  /** The responder against Node's own request and response. */
  handler: RawHandler;
  templates: TileHeaderTemplates;
  /** The tile logger: warnings and errors only, unless the process logs less still. */
  log: FastifyBaseLogger;
  cache: PyramidCache;
  /** Tiles read from object storage (null with local storage: the page cache serves). */
  rangeCache: TileRangeCache | null;
  /** Reads the live sessions once, then every TILE_ACCESS_REFRESH seconds. */
  start(): Promise<void>;
  /** Stops the refresh, closes every open pyramid, empties the caches. */
  close(): void;
}

/** TILE_CACHE_MB's default: 256 MiB, some 24 000 tiles of 11 KB (the bench slide's mean). */
const DEFAULT_RANGE_CACHE_BYTES = 256 * 1024 * 1024;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** 'warn', or the logger's level when that is quieter still. */
function quietLevel(level: string): string {
  return LEVELS.indexOf(level) > LEVELS.indexOf('warn') ? level : 'warn';
}

export function createTileService(deps: TileServiceDeps): TileService {
  // Object storage only: local pyramids are read from the page cache, which needs no second copy.
  const rangeCache = deps.storage.localPath
    ? null
    : new TileRangeCache(deps.rangeCacheBytes ?? DEFAULT_RANGE_CACHE_BYTES);
  if (rangeCache && deps.metrics) deps.metrics.rangeCache = rangeCache;
  const cache =
    deps.cache ??
    new PyramidCache(
      { rows: deps.rows, storage: deps.storage, log: deps.log },
      { localReads: deps.localReads ?? 'async', rangeCache, ...deps.cacheOptions },
    );
  // Revocation of tile tokens (logout, deactivation, lost access) from memory, refreshed.
  const access = new TileAccess(deps.rows, (deps.accessRefreshSeconds ?? 15) * 1000, deps.log);
  // Tiles are the hot path (hundreds per second per reader): no per-request log lines, and one
  // shared logger instead of a child logger made (and re-levelled) for every request.
  const tileLog = deps.log.child({ module: 'tiles' }, { level: quietLevel(deps.log.level) });
  const unmeasured = createTileResponder({ cache, tokens: new VerifiedTokens(deps.tileTokens), access, log: tileLog });
  const respond = deps.metrics ? measuredResponder(unmeasured, deps.metrics) : unmeasured;
  const templates = tileHeaderTemplates(deps.securityHeaders);
  return {
    respond,
    handler: createTileHandler(respond, templates),
    templates,
    log: tileLog,
    cache,
    rangeCache,
    start: () => access.start(),
    close() {
      access.stop();
      rangeCache?.clear();
      cache.clear();
    },
  };
}
