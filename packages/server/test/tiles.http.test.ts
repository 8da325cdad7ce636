import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import type { Database } from '../src/platform/db/database.js';
import { initStorage } from '../src/platform/storage/createStorage.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { TILE_CACHE_CONTROL } from '../src/modules/tiles/tileRoutes.js';
import { parseTileUrl } from '../src/modules/tiles/tileRequest.js';
import { createImage, createTileGrant } from './factories.js';
import { openTestDatabase } from './testApp.js';
import { waitFor } from './support/wait.js';
import type { TileGrant } from '../src/platform/tiles/tileToken.js';

/**
 * The tile fast path, over real sockets: plain tile requests are answered on the connection
 * (tileConnection.ts); a connection is handed to Node's HTTP server at its first other request,
 * where GET and HEAD under /tiles/ still skip Fastify (the request listener, tileServer.ts); the
 * same responder answers through Fastify's route (inject). Every test of the HTTP behaviour runs
 * twice: with the fast path on, and forced off (TILE_HTTP=http, what a failed start-up self-test
 * also leaves: Node's HTTP server only, no Node internals; tiles.fastPathSelfTest.test.ts).
 */

const SOURCE = path.resolve(import.meta.dirname, '../../../../shared/testdata/wsi/CMU-1-Small-Region.svs');
const SESSION_SECRET = 'tile-http-test-secret';
const PYRAMID_KEY = 'images/test-http/pyramid.tif';
const tokens = new TileTokens(SESSION_SECRET);

interface Served {
  app: FastifyInstance;
  base: string;
  /** Requests Fastify saw (its onRequest hooks ran). */
  fastifyRequests: string[];
}

let dir: string;
let database: Database;
let drop: () => Promise<void>;
let tilesOnly: Served;
let allRoles: Served;
/** TILE_HTTP=http: the fast path off, no connection-level answers, tiles through Node's HTTP server only. */
let httpMode: Served;
let httpAllRoles: Served;
const HTTP_MODE = { TILE_HTTP: 'http' };
/** TILE_SEND=write, TILE_SOCKET_READS=stream: connection-level answers through the socket's stream. */
let streamTiles: Served;
let streamAllRoles: Served;
const STREAM_MODE = { TILE_SEND: 'write', TILE_SOCKET_READS: 'stream' };
/** Node's own 'connection' listener of an HTTP server (the fast path takes it; nothing else does). */
const NODE_CONNECTION_LISTENERS = createServer().listeners('connection');
let imageId = 0;
let secondImageId = 0;

async function serve(roles: string, env: Record<string, string> = {}): Promise<Served> {
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET,
    WEB_DIST: '/nonexistent',
    ROLES: roles,
    DATA_DIR: dir,
    ...env,
  });
  const app = await buildApp({ config, database });
  const fastifyRequests: string[] = [];
  app.addHook('onRequest', async (request) => {
    fastifyRequests.push(`${request.method} ${request.url.split('?')[0]}`);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { app, base: `http://127.0.0.1:${port}`, fastifyRequests };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One request on a new keep-alive connection (node:http, so HEAD and raw paths go out as written). */
function send(base: string, method: string, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const agent = new Agent({ keepAlive: true });
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(`${base}${url}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)])),
          body: Buffer.concat(chunks),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  }).finally(() => agent.destroy());
}

interface Exchange {
  responses: Answer[];
  /** The server closed the connection. */
  closed: boolean;
}

/**
 * Writes the chunks on one connection (a few ms apart) and reads `count` responses (HTTP/1.1,
 * Content-Length bodies; `bodiless[i]`: the i-th answers a HEAD).
 */
function exchange(
  base: string,
  chunks: (string | Buffer)[],
  count: number,
  bodiless: boolean[] = [],
): Promise<Exchange> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const responses: Answer[] = [];
    let received = Buffer.alloc(0);
    let closed = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`timed out with ${responses.length} of ${count} responses: ${received.toString('latin1')}`));
    }, 10_000);
    const done = () => {
      clearTimeout(timer);
      resolve({ responses, closed });
    };
    const parse = () => {
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) return;
        const lines = received.subarray(0, end).toString('latin1').split('\r\n');
        const status = Number(lines[0]?.split(' ')[1]);
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = bodiless[responses.length] || status === 304 ? 0 : Number(headers['content-length'] ?? 0);
        if (received.length < end + 4 + length) return;
        responses.push({ status, headers, body: Buffer.from(received.subarray(end + 4, end + 4 + length)) });
        received = received.subarray(end + 4 + length);
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      parse();
      if (responses.length >= count) {
        // A window to see whether the server closes the connection after its answers (inherent:
        // some tests prove that it does not, which no event announces).
        setTimeout(() => {
          socket.destroy();
          done();
        }, 50);
      }
    });
    socket.on('close', () => {
      closed = true;
      if (responses.length >= count) done();
    });
    socket.on('error', () => {});
    void (async () => {
      for (const chunk of chunks) {
        socket.write(chunk);
        // Kept apart in time (inherent: what is tested is how the server reads a request that
        // arrives in pieces, and nothing tells the client when the server has read one).
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
  });
}

const get = (url: string, extra = '') => `GET ${url} HTTP/1.1\r\nHost: tiles.test\r\n${extra}\r\n`;

/** The grant of a live session in this file's database (beforeAll). */
let grant: TileGrant;
const token = (id: number) => tokens.issue(id, grant, 600);
const tileUrl = (id: number, z: number, x: number, y: number, t: string | null = token(id)) =>
  `/tiles/${id}/${z}/${x}/${y}${t === null ? '' : `?t=${encodeURIComponent(t)}`}`;

/** The headers a tile response must carry the same on both paths. */
const COMPARED = [
  'content-type',
  'content-length',
  'etag',
  'cache-control',
  'content-security-policy',
  'x-content-type-options',
  'referrer-policy',
  'cross-origin-opener-policy',
];

function pick(headers: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(COMPARED.map((name) => [name, headers[name]]));
}

function injected(response: LightMyRequestResponse): Answer {
  return {
    status: response.statusCode,
    headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, String(v)])),
    body: response.rawPayload,
  };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-tiles-http-'));
  ({ database, drop } = await openTestDatabase());
  grant = await createTileGrant(database.db, SESSION_SECRET);
  const file = path.join(dir, 'pyramid.tif');
  await sharp(SOURCE)
    .tiff({ tile: true, tileWidth: 256, tileHeight: 256, pyramid: true, compression: 'jpeg', quality: 85 })
    .toFile(file);
  tilesOnly = await serve('tiles');
  allRoles = await serve('api,tiles');
  httpMode = await serve('tiles', HTTP_MODE);
  httpAllRoles = await serve('api,tiles', HTTP_MODE);
  streamTiles = await serve('tiles', STREAM_MODE);
  streamAllRoles = await serve('api,tiles', STREAM_MODE);
  await initStorage(tilesOnly.app.slides.storage);
  await tilesOnly.app.slides.storage.write(PYRAMID_KEY, { filePath: file });
  const dims = { width: 2220, height: 2967, levels: 5, cogKey: PYRAMID_KEY };
  imageId = (await createImage(database.db, dims)).id;
  secondImageId = (await createImage(database.db, dims)).id;
}, 120_000);

afterAll(async () => {
  await tilesOnly?.app.close();
  await allRoles?.app.close();
  await httpMode?.app.close();
  await httpAllRoles?.app.close();
  await streamTiles?.app.close();
  await streamAllRoles?.app.close();
  await database?.close();
  await drop?.();
  await rm(dir, { recursive: true, force: true });
});

describe('tile URLs parsed by hand', () => {
  it('reads the path numbers, the token and the plane', () => {
    expect(parseTileUrl('/tiles/12/3/4/5?t=a.b.c.d&stack=2')).toEqual({
      imageId: 12,
      z: 3,
      x: 4,
      y: 5,
      stack: 2,
      token: 'a.b.c.d',
    });
    expect(parseTileUrl('/tiles/12/3/4/5')).toMatchObject({ stack: 0, token: undefined });
    // Query values are decoded as a query-string parser would; the first of a repeated one counts.
    expect(parseTileUrl('/tiles/1/0/0/0?x=1&t=a%2Eb+c&t=other')?.token).toBe('a.b c');
    expect(parseTileUrl('/tiles/1/0/0/0?t=%E0%A4%A')?.token).toBe('');
    expect(parseTileUrl('/tiles/1/0/0/0?stack=')?.stack).toBe(-1);
  });

  it('marks anything but 1–9 decimal digits as -1, and refuses other path shapes', () => {
    expect(parseTileUrl('/tiles/1/a/-1/0.5')).toMatchObject({ z: -1, x: -1, y: -1 });
    expect(parseTileUrl('/tiles/1/0/0/1234567890')?.y).toBe(-1);
    expect(parseTileUrl('/tiles/%31/0/0/0')?.imageId).toBe(-1);
    for (const url of [
      '/tiles/',
      '/tiles/1/2/3',
      '/tiles/1/2/3/4/',
      '/tiles/1/2/3/4/5',
      '/tiles/1//3/4',
      '/tiles//2/3/4',
      '/tile/1/2/3/4',
      '/tiles/1/2/3/?t=x/y',
    ]) {
      expect(parseTileUrl(url), url).toBeNull();
    }
    expect(parseTileUrl('/tiles/1/2/3/4?t=a/b')?.token).toBe('a/b');
  });
});

describe('the tile fast path (real HTTP)', () => {
  it('answers tiles without Fastify, on the connection and through Node, with the same status, headers and bytes as the route', async () => {
    const cases: [string, Record<string, string>][] = [
      [tileUrl(imageId, 2, 1, 1), {}],
      [tileUrl(imageId, 4, 8, 11), {}],
      [`${tileUrl(imageId, 0, 0, 0)}&stack=0`, {}],
      [tileUrl(imageId, 0, 0, 0, null), {}], // 403: no token
      [tileUrl(imageId, 0, 0, 0, token(secondImageId)), {}], // 403: another image's token
      [tileUrl(imageId, 4, 9, 0), {}], // 404: outside the grid
      [`${tileUrl(imageId, 0, 0, 0)}&stack=1`, {}], // 404: no such plane
      [tileUrl(imageId, 0, 0, 0).replace('/0/0/0?', '/a/0/0?'), {}], // 404: not a number
      [tileUrl(999_999, 0, 0, 0), {}], // 404: no such image
    ];
    for (const [url, headers] of cases) {
      const seen = tilesOnly.fastifyRequests.length;
      const onConnection = await send(tilesOnly.base, 'GET', url, headers);
      expect(tilesOnly.fastifyRequests.length, url).toBe(seen);
      const throughHttp = await send(httpMode.base, 'GET', url, headers);
      expect(httpMode.fastifyRequests, url).toEqual([]);
      const routed = injected(await tilesOnly.app.inject({ method: 'GET', url, headers }));
      expect(tilesOnly.fastifyRequests.length, url).toBe(seen + 1);
      for (const fast of [onConnection, throughHttp]) {
        expect(fast.status, url).toBe(routed.status);
        expect(pick(fast.headers), url).toEqual(pick(routed.headers));
        expect(fast.body.equals(routed.body), url).toBe(true);
        expect(fast.headers.connection).toBe('keep-alive');
        expect(fast.headers['keep-alive']).toBe('timeout=72');
        expect(fast.headers.date).toBeDefined();
      }
    }
  });

  it('keeps the tile route in the route table with its declared policy (signedUrl)', () => {
    const tiles = tilesOnly.app.registeredRoutes.filter((r) => r.url === '/tiles/:imageId/:z/:x/:y');
    expect(tiles.map((r) => r.method).sort()).toEqual(['GET', 'HEAD']);
    expect(tiles.every((r) => r.hasPolicy)).toBe(true);
  });

  it('only the tiles role installs the fast path: an API-only server leaves /tiles/ to Fastify', async () => {
    const api = await serve('api');
    try {
      const response = await send(api.base, 'GET', tileUrl(imageId, 0, 0, 0));
      expect(response.status).toBe(404);
      expect(api.fastifyRequests).toEqual([`GET /tiles/${imageId}/0/0/0`]);
      expect(api.app.server.listeners('connection')).toEqual(NODE_CONNECTION_LISTENERS); // not taken
    } finally {
      await api.app.close();
    }
  });
});

/** The HTTP behaviour of tiles, the same with the fast path on and forced off. */
const PATHS = [
  { path: 'fast path on', tiles: () => tilesOnly, all: () => allRoles },
  { path: 'fast path off, TILE_HTTP=http', tiles: () => httpMode, all: () => httpAllRoles },
];

describe.each(PATHS)('tiles over real HTTP ($path)', ({ tiles, all }) => {
  // This suite's servers (the outer names, so that both paths run the same tests).
  let tilesOnly: Served;
  let allRoles: Served;
  beforeAll(() => {
    tilesOnly = tiles();
    allRoles = all();
  });

  it('200: a JPEG with a strong ETag, a year of private caching and the security headers', async () => {
    const response = await send(tilesOnly.base, 'GET', tileUrl(imageId, 3, 2, 2));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/jpeg');
    expect(Number(response.headers['content-length'])).toBe(response.body.length);
    expect([...response.body.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    expect(response.headers['cache-control']).toBe(TILE_CACHE_CONTROL);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers.date).toBeDefined();
    expect(response.headers.connection).toBe('keep-alive');
    const decoded = await sharp(response.body).metadata();
    expect([decoded.width, decoded.height]).toEqual([256, 256]);
  });

  it('carries the image security headers, not the page policy', async () => {
    const tile = await send(tilesOnly.base, 'GET', tileUrl(imageId, 0, 0, 0));
    const refused = await send(tilesOnly.base, 'GET', tileUrl(imageId, 0, 0, 0, 'garbage'));
    const page = await send(tilesOnly.base, 'GET', '/api/nothing-here');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    for (const response of [tile, refused]) {
      expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBeUndefined();
      expect(response.headers['cross-origin-opener-policy']).toBeUndefined();
    }
  });

  it('304 for a matching If-None-Match, over HTTP as through the route', async () => {
    const url = tileUrl(imageId, 2, 0, 1);
    const first = await send(tilesOnly.base, 'GET', url);
    const etag = first.headers.etag!;
    for (const header of [etag, `"other", W/${etag}`, '*']) {
      const again = await send(tilesOnly.base, 'GET', url, { 'If-None-Match': header });
      expect(again.status, header).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe(TILE_CACHE_CONTROL);
      expect(again.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await send(tilesOnly.base, 'GET', url, { 'If-None-Match': '"stale"' })).status).toBe(200);
  });

  it('403 and 404 are JSON envelopes that are not cached', async () => {
    const forbidden = await send(tilesOnly.base, 'GET', tileUrl(imageId, 0, 0, 0, 'garbage'));
    expect(forbidden.status).toBe(403);
    expect(JSON.parse(forbidden.body.toString())).toEqual({
      success: false,
      message: 'You do not have permission to do this',
    });
    expect(forbidden.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(forbidden.headers['cache-control']).toBe('no-store');
    expect(forbidden.headers['x-content-type-options']).toBe('nosniff');
    const missing = await send(tilesOnly.base, 'GET', tileUrl(imageId, 7, 0, 0));
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body.toString())).toEqual({ success: false, message: 'Not found' });
    expect(missing.headers['cache-control']).toBe('no-store');
  });

  it('answers malformed tile URLs with 404 or 403, never 500, and keeps the connection usable', async () => {
    const t = encodeURIComponent(token(imageId));
    const answers: [string, number][] = [
      ['/tiles/', 404],
      ['/tiles/x', 404],
      [`/tiles/${imageId}/0/0?t=${t}`, 404],
      [`/tiles/${imageId}/0/0/0/0?t=${t}`, 404],
      [`/tiles/${imageId}//0/0?t=${t}`, 404],
      [`/tiles/${imageId}/0/0/0/?t=${t}`, 404],
      [`/tiles/${imageId}/0/0/99999999999?t=${t}`, 404],
      [`/tiles/${imageId}/%zz/0/0?t=${t}`, 404],
      [`/tiles/%zz/0/0/0?t=${t}`, 403],
      [`/tiles/${imageId}/0/0/0?t=%E0%A4%A`, 403],
      [`/tiles/${imageId}/0/0/0?t`, 403],
      [`/tiles/${imageId}/0/0/0?t=${t}&stack=%zz`, 404],
      [`/tiles/${'9'.repeat(500)}/0/0/0?t=${t}`, 403],
    ];
    for (const [url, status] of answers) {
      const response = await send(tilesOnly.base, 'GET', url);
      expect(response.status, url).toBe(status);
      expect(JSON.parse(response.body.toString()).success, url).toBe(false);
    }
    expect((await send(tilesOnly.base, 'GET', tileUrl(imageId, 0, 0, 0))).status).toBe(200);
  });

  it('HEAD: the headers of the GET, no body', async () => {
    const url = tileUrl(imageId, 3, 1, 2);
    const get = await send(tilesOnly.base, 'GET', url);
    const seen = tilesOnly.fastifyRequests.length;
    const head = await send(tilesOnly.base, 'HEAD', url);
    expect(tilesOnly.fastifyRequests.length).toBe(seen);
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(pick(head.headers)).toEqual(pick(get.headers));
    const routed = await tilesOnly.app.inject({ method: 'HEAD', url });
    expect(routed.statusCode).toBe(200);
    expect(pick(injected(routed).headers)).toEqual(pick(get.headers));
    expect(routed.rawPayload.length).toBe(0);
    expect((await send(tilesOnly.base, 'HEAD', tileUrl(imageId, 0, 0, 0, null))).status).toBe(403);
    expect((await send(tilesOnly.base, 'HEAD', url, { 'If-None-Match': get.headers.etag! })).status).toBe(304);
  });

  it('sends other methods and every other path to Fastify', async () => {
    const seen = tilesOnly.fastifyRequests.length;
    const post = await send(tilesOnly.base, 'POST', tileUrl(imageId, 0, 0, 0));
    expect(post.status).toBe(404);
    const options = await send(tilesOnly.base, 'OPTIONS', tileUrl(imageId, 0, 0, 0));
    expect(options.status).toBe(404);
    expect((await send(tilesOnly.base, 'GET', '/tilesx/1/0/0/0')).status).toBe(404);
    expect(tilesOnly.fastifyRequests.slice(seen)).toEqual([
      `POST /tiles/${imageId}/0/0/0`,
      `OPTIONS /tiles/${imageId}/0/0/0`,
      'GET /tilesx/1/0/0/0',
    ]);
  });

  it('serves tiles beside the API on one server (all roles), the API still through Fastify', async () => {
    const seen = allRoles.fastifyRequests.length;
    const tile = await send(allRoles.base, 'GET', tileUrl(imageId, 1, 1, 1));
    expect(tile.status).toBe(200);
    expect(allRoles.fastifyRequests.length).toBe(seen);
    const config = await send(allRoles.base, 'GET', '/api/config');
    expect(config.status).toBe(200);
    expect(config.headers['cache-control']).toBe('no-store');
    expect(allRoles.fastifyRequests.slice(seen)).toEqual(['GET /api/config']);
  });

  it('loads an image once for concurrent first requests, many on few connections', async () => {
    const cache = tilesOnly.app.tileCache!;
    const loads = cache.loads;
    const urls = Array.from({ length: 60 }, (_, i) => tileUrl(secondImageId, 4, i % 9, Math.floor(i / 9)));
    const responses = await Promise.all(urls.map((url) => fetch(`${tilesOnly.base}${url}`)));
    expect(responses.map((r) => r.status)).toEqual(urls.map(() => 200));
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    expect(cache.loads).toBe(loads + 1);
  });

  it('500 with the envelope when a read fails; the next tile is served', async () => {
    const pyramid = await tilesOnly.app.tileCache!.get(imageId);
    const file = pyramid!.file;
    expect(file.readTileSync).toBeTypeOf('function');
    const failing = vi
      .spyOn(file as { readTileSync: (l: unknown) => Buffer }, 'readTileSync')
      .mockImplementationOnce(() => {
        throw new Error('disk gone');
      });
    const response = await send(tilesOnly.base, 'GET', tileUrl(imageId, 1, 0, 0));
    failing.mockRestore();
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({
      success: false,
      message: 'Something went wrong on the server. The error has been logged.',
    });
    expect(response.headers['cache-control']).toBe('no-store');
    expect((await send(tilesOnly.base, 'GET', tileUrl(imageId, 1, 0, 0))).status).toBe(200);
  });
});

const CONNECTION_MODES = [
  { mode: 'sendfile, reads below the stream', tiles: () => tilesOnly, all: () => allRoles, env: {}, fromFile: true },
  {
    mode: 'TILE_SEND=write, TILE_SOCKET_READS=stream',
    tiles: () => streamTiles,
    all: () => streamAllRoles,
    env: STREAM_MODE,
    fromFile: false,
  },
  {
    mode: "fast path off, TILE_HTTP=http: Node's HTTP server reads every request",
    tiles: () => httpMode,
    all: () => httpAllRoles,
    env: HTTP_MODE,
    fromFile: false,
  },
];

describe('the raw socket paths on this machine', () => {
  it('has the native sendfile module and reads below the stream (else tiles take the slower stream path)', () => {
    // Built by `npm ci` (postinstall: scripts/build-native.mjs); found on this Node's sockets, and
    // the start-up self-test passed (fastPathSelfTest.ts).
    expect(tilesOnly.app.tileFastPath).toMatchObject({ mode: 'connections', offReason: null, socketReads: true });
    expect(tilesOnly.app.tileFastPath?.sendfile).not.toBeNull();
    expect(streamTiles.app.tileFastPath).toMatchObject({ mode: 'connections', sendfile: null, socketReads: false });
    expect(httpMode.app.tileFastPath).toMatchObject({
      mode: 'http',
      offReason: null,
      sendfile: null,
      socketReads: false,
    });
    expect(httpMode.app.server.listeners('connection')).toEqual(NODE_CONNECTION_LISTENERS); // not taken
    expect(tilesOnly.app.server.listeners('connection')).not.toEqual(NODE_CONNECTION_LISTENERS);
  });
});

describe.each(CONNECTION_MODES)('tile requests on one connection ($mode)', ({ tiles, all, env, fromFile }) => {
  // This suite's servers (the outer names, so that both modes run the same tests).
  let tilesOnly: Served;
  let allRoles: Served;
  beforeAll(() => {
    tilesOnly = tiles();
    allRoles = all();
  });

  it('sends a tile it has read once from the file, the same bytes as the route', async () => {
    const counts = tilesOnly.app.tileFastPath!.counts;
    const before = counts.sentFromFile;
    const url = tileUrl(imageId, 4, 7, 9);
    const routed = injected(await tilesOnly.app.inject({ method: 'GET', url }));
    const { responses } = await exchange(tilesOnly.base, [get(url), get(url), get(url)], 3);
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.body.equals(routed.body)).toBe(true);
      expect(pick(response.headers)).toEqual(pick(routed.headers));
    }
    // The route's read saw its SOI first; every answer on the connection then came from the file.
    expect(counts.sentFromFile - before).toBe(fromFile ? 3 : 0);
  });

  it('answers pipelined tile requests in order on one keep-alive connection, without Fastify', async () => {
    const seen = tilesOnly.fastifyRequests.length;
    const urls = [
      tileUrl(imageId, 2, 1, 1),
      tileUrl(imageId, 0, 0, 0, 'forged'),
      tileUrl(imageId, 7, 0, 0),
      tileUrl(imageId, 0, 0, 0),
    ];
    const { responses, closed } = await exchange(tilesOnly.base, [urls.map((u) => get(u)).join('')], 4);
    expect(responses.map((r) => r.status)).toEqual([200, 403, 404, 200]);
    expect(closed).toBe(false);
    for (const [i, url] of urls.entries()) {
      const routed = injected(await tilesOnly.app.inject({ method: 'GET', url }));
      expect(responses[i]!.body.equals(routed.body), url).toBe(true);
      expect(pick(responses[i]!.headers), url).toEqual(pick(routed.headers));
    }
    expect(tilesOnly.fastifyRequests.length).toBe(seen + urls.length); // the inject calls only
  });

  it('keeps requests pipelined behind an answer that waits (first tile of an image) in order', async () => {
    tilesOnly.app.tileCache!.invalidate(imageId);
    const urls = [
      tileUrl(imageId, 4, 0, 0),
      tileUrl(imageId, 4, 1, 0),
      tileUrl(imageId, 9, 0, 0),
      tileUrl(imageId, 4, 2, 0),
    ];
    const { responses } = await exchange(tilesOnly.base, [urls.map((u) => get(u)).join('')], 4);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 404, 200]);
    for (const [i, url] of urls.entries()) {
      const routed = injected(await tilesOnly.app.inject({ method: 'GET', url }));
      expect(responses[i]!.body.equals(routed.body), url).toBe(true);
    }
  });

  it('waits for a head split across packets', async () => {
    const request = get(tileUrl(imageId, 1, 0, 1));
    const { responses } = await exchange(
      tilesOnly.base,
      [request.slice(0, 9), request.slice(9, 40), request.slice(40, -3), request.slice(-3)],
      1,
    );
    expect(responses[0]?.status).toBe(200);
  });

  it('HEAD and 304 carry no body, and the next request on the connection is read right', async () => {
    const url = tileUrl(imageId, 3, 1, 2);
    const first = await send(tilesOnly.base, 'GET', url);
    const etag = first.headers.etag!;
    const { responses } = await exchange(
      tilesOnly.base,
      [
        `HEAD ${url} HTTP/1.1\r\nHost: x\r\n\r\n`,
        get(url, `If-None-Match: ${etag}\r\n`),
        get(url, 'if-none-match: "stale"\r\n'),
      ],
      3,
      [true],
    );
    expect(responses.map((r) => r.status)).toEqual([200, 304, 200]);
    expect(responses[0]!.headers['content-length']).toBe(String(first.body.length));
    expect(responses[0]!.body.length).toBe(0);
    expect(responses[1]!.headers.etag).toBe(etag);
    expect(responses[1]!.headers['content-length']).toBeUndefined();
    expect(responses[2]!.body.equals(first.body)).toBe(true);
  });

  it('Connection: close: the answer says so and the server closes the connection', async () => {
    const { responses, closed } = await exchange(
      tilesOnly.base,
      [get(tileUrl(imageId, 0, 0, 0), 'Connection: close\r\n') + get(tileUrl(imageId, 1, 0, 0))],
      1,
    );
    expect(responses[0]!.status).toBe(200);
    expect(responses[0]!.headers.connection).toBe('close');
    expect(closed).toBe(true);
  });

  it('hands the connection to Node at its first other request; answers stay in order', async () => {
    const seen = allRoles.fastifyRequests.length;
    const tile = tileUrl(imageId, 2, 0, 0);
    const { responses } = await exchange(allRoles.base, [get(tile) + get('/api/config') + get(tile), get(tile)], 4);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(responses.map((r) => r.headers['content-type'])).toEqual([
      'image/jpeg',
      'application/json; charset=utf-8',
      'image/jpeg',
      'image/jpeg',
    ]);
    expect(JSON.parse(responses[1]!.body.toString())).toHaveProperty('tileServerLocation');
    expect(responses[2]!.body.equals(responses[0]!.body)).toBe(true);
    // Fastify saw the API request only: after the hand-over, tiles still skip it.
    expect(allRoles.fastifyRequests.slice(seen)).toEqual(['GET /api/config']);
  });

  it('after the hand-over Node reads a body that arrives in later packets, then tiles again', async () => {
    const tile = tileUrl(imageId, 2, 1, 0);
    const body = JSON.stringify({ username: 'nobody', password: 'wrong-password' });
    const post =
      `POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const { responses } = await exchange(
      allRoles.base,
      [get(tile) + post, body.slice(0, 10), body.slice(10) + get(tile), get(tile)],
      4,
    );
    expect(responses.map((r) => r.status)).toEqual([200, 401, 200, 200]);
    expect(JSON.parse(responses[1]!.body.toString())).toEqual({
      success: false,
      message: 'Invalid username or password',
    });
    expect(responses[2]!.body.equals(responses[0]!.body)).toBe(true);
    expect(responses[3]!.body.equals(responses[0]!.body)).toBe(true);
  });

  it('an Upgrade request goes to Node, which answers it as an ordinary request (no upgrade handler)', async () => {
    const upgrade = 'GET /api/config HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n';
    const tile = tileUrl(imageId, 0, 0, 0);
    // What follows an upgrade belongs to the upgraded protocol: Node leaves it unread.
    const { responses } = await exchange(allRoles.base, [get(tile) + upgrade, 'bytes of another protocol'], 2);
    expect(responses.map((r) => r.status)).toEqual([200, 200]);
    expect(JSON.parse(responses[1]!.body.toString())).toHaveProperty('tileServerLocation');
    expect((await send(allRoles.base, 'GET', tile)).body.equals(responses[0]!.body)).toBe(true);
  });

  it('leaves to Node what it must decide: HTTP/1.0, bodies, no Host, folded or oversized heads, bare line feeds', async () => {
    const url = tileUrl(imageId, 0, 0, 0);
    const http10 = await exchange(tilesOnly.base, [`GET ${url} HTTP/1.0\r\nHost: x\r\n\r\n`], 1);
    expect(http10.responses[0]!.status).toBe(200);
    // A body announced by Content-Length or chunked encoding is read (and ignored) by Node: the
    // request after it is still found where it starts.
    const withLength = await exchange(tilesOnly.base, [get(url, 'Content-Length: 5\r\n') + 'hello' + get(url)], 2);
    expect(withLength.responses.map((r) => r.status)).toEqual([200, 200]);
    const chunked = await exchange(
      tilesOnly.base,
      [get(url, 'Transfer-Encoding: chunked\r\n') + '5\r\nhello\r\n0\r\n\r\n' + get(url)],
      2,
    );
    expect(chunked.responses.map((r) => r.status)).toEqual([200, 200]);
    const noHost = await exchange(tilesOnly.base, [`GET ${url} HTTP/1.1\r\n\r\n`], 1);
    expect(noHost.responses[0]!.status).toBe(400);
    const folded = await exchange(tilesOnly.base, [`GET ${url} HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  2\r\n\r\n`], 1);
    expect(folded.responses[0]!.status).toBe(400);
    const huge = await exchange(tilesOnly.base, [get(url, `X-Big: ${'a'.repeat(20_000)}\r\n`)], 1);
    expect(huge.responses[0]!.status).toBe(431);
    const bareLf = await exchange(tilesOnly.base, [`GET ${url} HTTP/1.1\nHost: x\n\n`], 1);
    expect(bareLf.responses[0]!.status).toBe(400);
    const badChar = await exchange(tilesOnly.base, [`GET ${url} HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n`], 1);
    expect(badChar.responses[0]!.status).toBe(400);
  });

  it('stops reading while the client does not read its answers, then answers every request in order', async () => {
    const tiles = Array.from({ length: 600 }, (_, i) => tileUrl(imageId, 4, i % 9, Math.floor(i / 9) % 12));
    const expected = new Map<string, Buffer>();
    for (const url of new Set(tiles))
      expected.set(url, (await tilesOnly.app.inject({ method: 'GET', url })).rawPayload);
    const counts = tilesOnly.app.tileFastPath!.counts;
    const before = { ...counts };
    const { hostname, port } = new URL(tilesOnly.base);
    // The server's end of the connection, to see its answers back up.
    const serverEnd = new Promise<Socket>((resolve) => tilesOnly.app.server.once('connection', resolve));
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause(); // the client reads nothing for now
    socket.write(tiles.map((u) => get(u)).join(''));
    // The client reads on once the kernel's buffers are full and the server holds answers it cannot send.
    const server = await serverEnd;
    await waitFor('the answers to back up on the server', async () => server.writableLength > 0, {
      timeoutMs: 10_000,
      everyMs: 10,
    });
    let received = Buffer.alloc(0);
    let count = 0;
    const all = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        for (;;) {
          const end = received.indexOf('\r\n\r\n');
          if (end === -1) break;
          const head = received.subarray(0, end).toString('latin1');
          expect(head.startsWith('HTTP/1.1 200 OK')).toBe(true);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
          if (received.length < end + 4 + length) break;
          const body = received.subarray(end + 4, end + 4 + length);
          expect(body.equals(expected.get(tiles[count]!)!), tiles[count]).toBe(true);
          received = received.subarray(end + 4 + length);
          count++;
        }
        if (count === tiles.length) resolve();
      });
    });
    socket.resume();
    await all;
    socket.destroy();
    expect(count).toBe(600);
    if (fromFile) {
      // Tiles went out with sendfile until the socket's buffer was full; the rest of that tile
      // through the stream, in order.
      expect(counts.sentFromFile).toBeGreaterThan(before.sentFromFile);
      expect(counts.restWritten).toBeGreaterThan(before.restWritten);
    } else {
      expect(counts).toEqual(before);
    }
  });

  it('a request head sent a byte at a time is cut off at TILE_HEADERS_TIMEOUT (408), as Node cuts its own', async () => {
    const served = await serve('tiles', { ...env, TILE_HEADERS_TIMEOUT: '1' });
    try {
      const { hostname, port } = new URL(served.base);
      const socket = connect(Number(port), hostname);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', () => {});
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      const head = get(tileUrl(imageId, 0, 0, 0));
      const started = Date.now();
      // The head's bytes in order, one every 200 ms: each restarts the idle timer, none completes the head.
      let next = 0;
      const trickle = setInterval(() => {
        if (!socket.destroyed) socket.write(head[next++] ?? 'x');
      }, 200);
      await closed;
      clearInterval(trickle);
      expect(received.startsWith('HTTP/1.1 408 ')).toBe(true);
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      await served.app.close();
    }
  });

  it('closing the app closes idle tile connections', async () => {
    const served = await serve('tiles', env);
    const { hostname, port } = new URL(served.base);
    const socket = connect(Number(port), hostname);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
    const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write(get(tileUrl(imageId, 0, 0, 0)));
    await answered;
    const started = Date.now();
    await served.app.close();
    await closed;
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
