import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { MESSAGES } from '@lamina/domain';
import type { PyramidCache, OpenPyramid } from './pyramidCache.js';
import { readTileInFile, type TileInFile } from './pyramidFile.js';
import { locateTile } from './pyramidIndex.js';
import { parseTileUrl, type TileRequest } from './tileRequest.js';
import type { VerifiedTokens } from './verifiedTokens.js';
import type { TileRangeCacheStats } from '../../platform/metrics/tileMetrics.js';
import type { TileAccess } from '../../platform/tiles/tileAccess.js';

/** A request handler written against Node's own request and response (no framework in between). */
export type RawHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A year: tile bytes under one URL (token, version) never change. */
export const TILE_CACHE_CONTROL = 'private, max-age=31536000, immutable';

export interface TileResponderDeps {
  cache: PyramidCache;
  tokens: VerifiedTokens;
  /** Whether a verified token's grant still stands (session live, access generation current). */
  access: TileAccess;
  /** Where failed reads are logged. */
  log: FastifyBaseLogger;
}

/** The value of a request header (all of its occurrences, comma-joined), read from the raw list. */
function requestHeader(req: IncomingMessage, lowerName: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) {
      const next = raw[i + 1] ?? '';
      value = value === undefined ? next : `${value}, ${next}`;
    }
  }
  return value;
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  // If-None-Match uses the weak comparison (RFC 9110 §13.1.2): W/ prefixes are ignored.
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/**
 * What a tile request is answered: the status and what varies; the headers come from templates. A
 * 200 carries the tile's bytes, or (when the caller can send from files) where they lie in the
 * pyramid file, valid until the current tick ends.
 */
export type TileAnswer =
  | { status: 200; etag: string; body: Buffer; file?: undefined }
  | { status: 200; etag: string; body: null; file: TileInFile }
  | { status: 304; etag: string; body: null; file?: undefined }
  | { status: 403 | 404 | 500; etag: null; body: Buffer; file?: undefined };

/** The Content-Length of an answer (0 for a 304). */
export function answerLength(answer: TileAnswer): number {
  if (answer.file) return answer.file.prefix.length + answer.file.length;
  return answer.body ? answer.body.length : 0;
}

/**
 * Answers a tile request from its URL (path and query) and If-None-Match; never rejects. With
 * `inFile`, a synchronous 200 may come as the tile's place in the file instead of its bytes.
 */
export type TileResponder = (
  url: string,
  ifNoneMatch: string | undefined,
  inFile: boolean,
) => TileAnswer | Promise<TileAnswer>;

const REFUSALS = {
  403: Buffer.from(JSON.stringify({ success: false, message: MESSAGES.accessDenied })),
  404: Buffer.from(JSON.stringify({ success: false, message: MESSAGES.notFound })),
  500: Buffer.from(JSON.stringify({ success: false, message: MESSAGES.internalError })),
} as const;
const FORBIDDEN: TileAnswer = { status: 403, etag: null, body: REFUSALS[403] };
const NOT_FOUND: TileAnswer = { status: 404, etag: null, body: REFUSALS[404] };
const FAILED: TileAnswer = { status: 500, etag: null, body: REFUSALS[500] };

/**
 * The response headers of each kind of answer as name/value pairs (`writeHead`); the 200 and 304
 * lists have the Content-Length (index 3) and ETag (index 5 / 1) to fill in.
 */
export interface TileHeaderTemplates {
  ok: readonly string[];
  notModified: readonly string[];
  refusal: Readonly<Record<403 | 404 | 500, readonly string[]>>;
}

export function tileHeaderTemplates(securityHeaders: readonly string[]): TileHeaderTemplates {
  const refusal = (status: 403 | 404 | 500) => [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(REFUSALS[status].length),
    'Cache-Control',
    'no-store',
    ...securityHeaders,
  ];
  return {
    ok: [
      'Content-Type',
      'image/jpeg',
      'Content-Length',
      '',
      'ETag',
      '',
      'Cache-Control',
      TILE_CACHE_CONTROL,
      ...securityHeaders,
    ],
    notModified: ['ETag', '', 'Cache-Control', TILE_CACHE_CONTROL, ...securityHeaders],
    refusal: { 403: refusal(403), 404: refusal(404), 500: refusal(500) },
  };
}

/**
 * `GET|HEAD /tiles/{imageId}/{z}/{x}/{y}?t={token}[&stack=n]`: the stored JPEG tile of the
 * pyramid, copied with one ranged read and the JPEG tables spliced in; no decode, no re-encode, no
 * database round trip (the token is an HMAC, remembered once verified; the pyramid index is cached
 * per image). Synchronous when the image is cached and its file is read with blocking reads.
 *
 * 403 (no, wrong or expired token; checked before anything is looked up), 404 (not a tile URL,
 * outside the grid, no such plane or pyramid), 500 (the read failed, logged): `{ success: false,
 * message }` with `Cache-Control: no-store`. 200 with a strong ETag and a year of private caching;
 * 304 when If-None-Match names the ETag.
 */
export function createTileResponder(deps: TileResponderDeps): TileResponder {
  const { cache, tokens, access, log } = deps;

  const fail = (url: string, error: unknown): TileAnswer => {
    // The path only: the query holds the token.
    log.error({ err: error, path: url.split('?')[0] }, 'tile request failed');
    return FAILED;
  };

  const answer = (
    url: string,
    ifNoneMatch: string | undefined,
    tile: TileRequest,
    pyramid: OpenPyramid | null,
    inFile: boolean,
  ) => {
    const location = pyramid ? locateTile(pyramid.index, tile.z, tile.x, tile.y, tile.stack) : null;
    if (!pyramid || !location) return NOT_FOUND;
    const etag = `"${tile.imageId}-${pyramid.index.version}-${tile.z}-${tile.x}-${tile.y}-${tile.stack}"`;
    if (etagMatches(ifNoneMatch, etag)) return { status: 304, etag, body: null } as const;
    const file = pyramid.file;
    const inPlace = inFile && file.tileInFile ? file.tileInFile(location) : null;
    if (inPlace) return { status: 200, etag, body: null, file: inPlace } as const;
    // A local pyramid read with a blocking pread (from the page cache: microseconds).
    if (file.readTileSync) return { status: 200, etag, body: file.readTileSync(location) } as const;
    // Object storage: a tile held by the range cache is answered at once (no promise).
    const held = file.cachedTile?.(location);
    if (held) return { status: 200, etag, body: held } as const;
    return file.readTile(location).then(
      (body): TileAnswer => ({ status: 200, etag, body }),
      (error: unknown) => fail(url, error),
    );
  };

  const serve = (url: string, ifNoneMatch: string | undefined, tile: TileRequest, inFile: boolean) => {
    if (tile.z < 0 || tile.x < 0 || tile.y < 0 || tile.stack < 0) return NOT_FOUND;
    const pyramid = cache.peek(tile.imageId);
    if (pyramid !== undefined) return answer(url, ifNoneMatch, tile, pyramid, inFile);
    // First tile of an image (or after the cache let it go): read its row and directories once.
    // Answered later, so with the bytes (the cache may retire the file before the answer is sent).
    return cache.get(tile.imageId).then(
      (loaded) => {
        try {
          return answer(url, ifNoneMatch, tile, loaded, false);
        } catch (error) {
          return fail(url, error);
        }
      },
      (error: unknown) => fail(url, error),
    );
  };

  return function respond(url, ifNoneMatch, inFile) {
    try {
      const tile = parseTileUrl(url);
      if (tile === null) return NOT_FOUND;
      const claims = tile.imageId > 0 ? tokens.verify(tile.token, tile.imageId) : null;
      if (!claims) return FORBIDDEN;
      const granted = access.check(claims);
      if (granted === true) return serve(url, ifNoneMatch, tile, inFile);
      if (granted === false) return FORBIDDEN;
      return granted.then(
        (ok) => (ok ? serve(url, ifNoneMatch, tile, false) : FORBIDDEN),
        (error: unknown) => fail(url, error),
      );
    } catch (error) {
      return fail(url, error);
    }
  };
}

/** Where a measured responder records each answer: its status and how long it took (ms). */
export interface TileAnswerRecorder {
  record(status: number, milliseconds: number): void;
  /** The tile range cache whose counters and size the metrics read at scrape (object storage only). */
  rangeCache?: TileRangeCacheStats | null;
}

/**
 * `respond`, recording every answer's status and the time it took to produce (METRICS_PORT set:
 * platform/metrics/tileMetrics.ts). Two clock reads and a few additions per tile; a synchronous
 * answer stays synchronous.
 */
export function measuredResponder(respond: TileResponder, recorder: TileAnswerRecorder): TileResponder {
  return function respondMeasured(url, ifNoneMatch, inFile) {
    const started = performance.now();
    const answer = respond(url, ifNoneMatch, inFile);
    if (answer instanceof Promise)
      return answer.then((done) => {
        recorder.record(done.status, performance.now() - started);
        return done;
      });
    recorder.record(answer.status, performance.now() - started);
    return answer;
  };
}

/**
 * The responder against Node's own request and response: answers requests that reach it before
 * Fastify (tileServer.ts) and through Fastify's route (inject, or no fast path). Every response
 * carries the app's security headers.
 */
export function createTileHandler(respond: TileResponder, templates: TileHeaderTemplates): RawHandler {
  const send = (res: ServerResponse, answer: TileAnswer) => {
    if (answer.status === 200) {
      const body = answer.body ?? readTileInFile(answer.file);
      const headers = templates.ok.slice();
      headers[3] = String(body.length);
      headers[5] = answer.etag;
      res.writeHead(200, headers);
      res.end(body);
    } else if (answer.status === 304) {
      const headers = templates.notModified.slice();
      headers[1] = answer.etag;
      res.writeHead(304, headers);
      res.end();
    } else {
      res.writeHead(answer.status, templates.refusal[answer.status] as string[]);
      res.end(answer.body);
    }
  };
  // The responder never throws; should writing fail anyway, the connection is dropped rather than
  // the process (no framework catches errors here).
  const sendOrDrop = (res: ServerResponse, answer: TileAnswer) => {
    try {
      send(res, answer);
    } catch {
      res.destroy();
    }
  };
  return function handleTile(req, res) {
    const answer = respond(req.url ?? '', requestHeader(req, 'if-none-match'), false);
    if (answer instanceof Promise) void answer.then((a) => sendOrDrop(res, a));
    else sendOrDrop(res, answer);
  };
}
