import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageView } from '@lamina/domain';
import { buildApp } from '../src/app.js';
import { processImage } from '../src/modules/processing/processImage.js';
import { buildPyramid } from '../src/modules/processing/pyramid.js';
import { describeSlide } from '../src/modules/processing/slideInfo.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { STRUCTURE_START_BYTES } from '../src/modules/tiles/pyramidFile.js';
import { TileRangeCache } from '../src/modules/tiles/tileRangeCache.js';
import { ConfigError, loadConfig } from '../src/platform/config.js';
import { initStorage } from '../src/platform/storage/createStorage.js';
import { S3Storage } from '../src/platform/storage/s3Storage.js';
import { TileTokens, type TileGrant } from '../src/platform/tiles/tileToken.js';
import {
  createImage,
  createSlideTestApp,
  createStudy,
  createTileGrant,
  createUploadedImage,
  createUser,
  PASSWORD,
  putUpload,
  startS3Server,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { login } from './testApp.js';
import { waitFor } from './support/wait.js';

/**
 * The tile host on object storage (issue 19): a pyramid in S3 (s3rver, behind a proxy that counts
 * and can fail the requests it passes) is opened with two ranged GETs and no HEAD; each tile is one
 * ranged GET the first time and none after (TILE_CACHE_MB, a bounded LRU in memory); concurrent
 * requests for one tile share one GET; a failed GET is not remembered; TILE_CACHE_MB=0 reads every
 * time; the bytes are those served from the local folder; a revoked token is refused even for a
 * tile held in memory.
 */

const SECRET = 'test-secret';

interface Logged {
  method: string;
  path: string;
  range: string | null;
  status: number;
}

/** An HTTP proxy in front of s3rver that logs every request and can answer 503 SlowDown instead. */
class CountingProxy {
  readonly log: Logged[] = [];
  /** Requests this returns true for get 503 SlowDown (S3's "reduce your request rate"). */
  fail: ((request: { method: string; path: string; range: string | null }) => boolean) | null = null;
  private server: Server | null = null;
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const entry: Logged = {
        method: req.method ?? '',
        path: req.url ?? '',
        range: req.headers.range ?? null,
        status: 0,
      };
      this.log.push(entry);
      if (this.fail?.(entry)) {
        entry.status = 503;
        req.resume();
        res.writeHead(503, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>test</Message></Error>');
        return;
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          entry.status = answer.statusCode ?? 0;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', (error) => res.destroy(error));
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The GETs and HEADs of one object since `from` (an index into the log). */
  requestsOf(key: string, from = 0): Logged[] {
    return this.log.slice(from).filter((r) => r.path.split('?')[0]?.endsWith(`/${key}`));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

let s3: Awaited<ReturnType<typeof startS3Server>>;
let proxy: CountingProxy;
let t: SlideTestContext;
let studyId: number;
let imageId: number;
let cogKey: string;
let grant: TileGrant;
const tokens = new TileTokens(SECRET);
const extraApps: FastifyInstance[] = [];
const dirs: string[] = [];

/** Env of an app that stores in the bucket through the counting proxy. */
const s3Env = () => ({ ...s3.env, S3_ENDPOINT: proxy.url });

/** Another tile host (ROLES=tiles) on the same database and bucket, with its own caches. */
async function tileHost(env: Record<string, string> = {}, storage: 'bucket' | 'local' = 'bucket') {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'lamina-s3cache-'));
  dirs.push(dataDir);
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET: SECRET,
    WEB_DIST: '/nonexistent',
    ROLES: 'tiles',
    DATA_DIR: dataDir,
    ...(storage === 'bucket' ? s3Env() : {}),
    ...env,
  });
  const app = await buildApp({ config, database: t.database });
  await app.ready();
  extraApps.push(app);
  return app;
}

const tileUrl = (z: number, x: number, y: number) =>
  `/tiles/${imageId}/${z}/${x}/${y}?t=${encodeURIComponent(tokens.issue(imageId, grant, 600))}`;

/** Every tile position of the slide (2220 x 2967 px, levels halved with floor), coarsest zoom first. */
function allTiles(): [number, number, number][] {
  const sizes: [number, number][] = [];
  for (let w = 2220, h = 2967; sizes.length < 5; w = Math.floor(w / 2), h = Math.floor(h / 2)) sizes.unshift([w, h]);
  return sizes.flatMap(([w, h], z) => {
    const out: [number, number, number][] = [];
    for (let y = 0; y < Math.ceil(h / 256); y++) for (let x = 0; x < Math.ceil(w / 256); x++) out.push([z, x, y]);
    return out;
  });
}

/** Ranged GETs of tiles (not of the structure: those start at 0 or run to the end) since `from`. */
const tileGets = (from: number, size: number) =>
  proxy
    .requestsOf(cogKey, from)
    .filter(
      (r) => r.method === 'GET' && r.range && !r.range.startsWith('bytes=0-') && !r.range.endsWith(`-${size - 1}`),
    );

let pyramidSize = 0;

beforeAll(async () => {
  s3 = await startS3Server();
  proxy = new CountingProxy(s3.endpoint);
  await proxy.start();
  // The main app: every role, on the bucket (through the proxy), default TILE_CACHE_MB.
  t = await createSlideTestApp({ ...s3Env(), TILE_ACCESS_REFRESH: '1' });
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
  imageId = (await createUploadedImage(db, { studyId, s3Key: key })).id;
  await processImage({ db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') }, imageId);
  const row = await db.selectFrom('images').select(['cog_key', 'width']).where('id', '=', imageId).executeTakeFirst();
  cogKey = row?.cog_key ?? '';
  expect([cogKey, row?.width]).toEqual([`images/${imageId}/pyramid.tif`, 2220]);
  pyramidSize = (await t.app.slides.storage.head(cogKey))?.size ?? 0;
  grant = await createTileGrant(db, SECRET);
}, 120_000);

afterAll(async () => {
  for (const app of extraApps) await app.close();
  await t?.close();
  await proxy?.close();
  await s3?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('a tile host on S3', () => {
  it('opens a pyramid with two ranged GETs and no HEAD: the header (with the size), then the rest from the first directory', async () => {
    const host = await tileHost();
    const from = proxy.log.length;
    const response = await host.inject({ method: 'GET', url: tileUrl(0, 0, 0) });
    expect(response.statusCode).toBe(200);
    const requests = proxy.requestsOf(cogKey, from);
    expect(requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
    const [header, directories, tile] = requests;
    expect(header?.range).toBe(`bytes=0-${STRUCTURE_START_BYTES - 1}`);
    // From level 0's directory to the end: every directory with its tile offsets, byte counts and
    // JPEG tables (and the small levels' tiles between them: libvips writes a directory after its
    // level's tiles), within STRUCTURE_TAIL_BYTES of the end.
    expect(directories?.range).toMatch(new RegExp(`^bytes=\\d+-${pyramidSize - 1}$`));
    expect(tile?.range).toMatch(/^bytes=\d+-\d+$/);
    // Another zoom of the same image: one GET (the index is cached with the image).
    const again = proxy.log.length;
    expect((await host.inject({ method: 'GET', url: tileUrl(4, 3, 5) })).statusCode).toBe(200);
    expect(proxy.requestsOf(cogKey, again)).toHaveLength(1);
  });

  it('a pyramid written in blocks (slides over 65 535 px) opens with two GETs, the second only its directories', async () => {
    const work = await mkdtemp(path.join(tmpdir(), 'lamina-s3cache-blocks-'));
    dirs.push(work);
    const source = path.join(WSI_DIR, 'CMU-1-Small-Region.svs');
    const target = path.join(work, 'blocks.tif');
    await buildPyramid(source, target, describeSlide(await readTiffStructure(source)), undefined, {
      writer: 'blocks',
      blockSize: 1024,
    });
    const key = `images/blocks-${Date.now()}/pyramid.tif`;
    await t.app.slides.storage.write(key, { filePath: target });
    const size = (await t.app.slides.storage.head(key))?.size ?? 0;
    const blocksImage = await createImage(t.database.db, { width: 2220, height: 2967, levels: 5, cogKey: key });
    const host = await tileHost();
    const from = proxy.log.length;
    const url = `/tiles/${blocksImage.id}/0/0/0?t=${encodeURIComponent(tokens.issue(blocksImage.id, grant, 600))}`;
    expect((await host.inject({ method: 'GET', url })).statusCode).toBe(200);
    const [header, directories, tile, ...more] = proxy.requestsOf(key, from);
    expect([header?.range, more]).toEqual([`bytes=0-${STRUCTURE_START_BYTES - 1}`, []]);
    const [start, end] = (directories?.range ?? '').replace('bytes=', '').split('-').map(Number);
    expect(end).toBe(size - 1);
    // Every directory of the five levels, with its tile offsets, byte counts and tables: a few KB.
    expect(size - (start ?? 0)).toBeLessThan(16 * 1024);
    expect(tile?.method).toBe('GET');
  });

  it('serves every tile byte for byte as from the local folder; the first time one ranged GET each, the second time none', async () => {
    const local = await tileHost({}, 'local');
    await initStorage(local.slides.storage);
    await local.slides.storage.write(cogKey, await t.app.slides.storage.readRange(cogKey, 0, pyramidSize));
    const host = await tileHost();
    expect((await host.inject({ method: 'GET', url: tileUrl(0, 0, 0) })).statusCode).toBe(200); // opens
    const tiles = allTiles();
    expect(tiles).toHaveLength(1 + 4 + 9 + 30 + 108);
    const from = proxy.log.length;
    for (const [z, x, y] of tiles) {
      const url = tileUrl(z, x, y);
      const [a, b] = [await local.inject({ method: 'GET', url }), await host.inject({ method: 'GET', url })];
      expect([a.statusCode, b.statusCode], `${z}/${x}/${y}`).toEqual([200, 200]);
      expect(b.rawPayload.equals(a.rawPayload), `${z}/${x}/${y}`).toBe(true);
      expect(b.headers.etag).toBe(a.headers.etag);
    }
    // 0/0/0 was read when the image was opened.
    expect(tileGets(from, pyramidSize)).toHaveLength(tiles.length - 1);
    const second = proxy.log.length;
    for (const [z, x, y] of tiles)
      expect((await host.inject({ method: 'GET', url: tileUrl(z, x, y) })).statusCode).toBe(200);
    expect(proxy.requestsOf(cogKey, second)).toEqual([]);
    const cache = host.tileRangeCache!;
    expect(cache.size).toBe(tiles.length);
    // Misses: every tile once; hits: 0/0/0 in the first pass, every tile in the second.
    expect(cache.counters).toMatchObject({ misses: tiles.length, hits: tiles.length + 1, failures: 0, evictions: 0 });
  });

  it('concurrent requests for a tile not in memory share one GET', async () => {
    const host = await tileHost();
    expect((await host.inject({ method: 'GET', url: tileUrl(0, 0, 0) })).statusCode).toBe(200);
    const from = proxy.log.length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => host.inject({ method: 'GET', url: tileUrl(4, 7, 9) })),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.rawPayload.toString('base64'))).size).toBe(1);
    expect(proxy.requestsOf(cogKey, from)).toHaveLength(1);
    expect(host.tileRangeCache!.counters).toMatchObject({ misses: 1 + 20, joined: 19, hits: 0 });
  });

  it('a failed read is not remembered: 500, then the next request reads again', async () => {
    const host = await tileHost();
    expect((await host.inject({ method: 'GET', url: tileUrl(0, 0, 0) })).statusCode).toBe(200);
    const from = proxy.log.length;
    proxy.fail = (r) => r.method === 'GET' && r.path.includes(cogKey);
    try {
      const failed = await host.inject({ method: 'GET', url: tileUrl(4, 2, 2) });
      expect(failed.statusCode).toBe(500);
      expect(failed.headers['cache-control']).toBe('no-store');
    } finally {
      proxy.fail = null;
    }
    const failures = proxy.requestsOf(cogKey, from);
    expect(failures.length).toBeGreaterThanOrEqual(1); // the SDK retries a 503
    expect(failures.every((r) => r.status === 503)).toBe(true);
    const retried = proxy.log.length;
    expect((await host.inject({ method: 'GET', url: tileUrl(4, 2, 2) })).statusCode).toBe(200);
    expect(proxy.requestsOf(cogKey, retried).map((r) => r.status)).toEqual([206]);
    expect((await host.inject({ method: 'GET', url: tileUrl(4, 2, 2) })).statusCode).toBe(200);
    expect(proxy.requestsOf(cogKey, retried)).toHaveLength(1);
    expect(host.tileRangeCache!.counters).toMatchObject({ failures: 1, hits: 1 });
  });

  it('TILE_CACHE_MB=0: nothing is kept, every request is a ranged GET', async () => {
    const host = await tileHost({ TILE_CACHE_MB: '0' });
    expect((await host.inject({ method: 'GET', url: tileUrl(0, 0, 0) })).statusCode).toBe(200);
    const from = proxy.log.length;
    for (let i = 0; i < 3; i++)
      expect((await host.inject({ method: 'GET', url: tileUrl(3, 1, 1) })).statusCode).toBe(200);
    await Promise.all([1, 2].map(() => host.inject({ method: 'GET', url: tileUrl(3, 1, 2) })));
    expect(proxy.requestsOf(cogKey, from)).toHaveLength(5);
    expect(host.tileRangeCache!.bytes).toBe(0);
    expect(host.tileRangeCache!.size).toBe(0);
  });

  it('stays within TILE_CACHE_MB: filled past it, the least recently used tiles go first', async () => {
    const host = await tileHost({ TILE_CACHE_MB: '1' });
    const cache = host.tileRangeCache!;
    const tiles = allTiles();
    let peak = 0;
    for (const [z, x, y] of tiles) {
      expect((await host.inject({ method: 'GET', url: tileUrl(z, x, y) })).statusCode).toBe(200);
      peak = Math.max(peak, cache.bytes);
    }
    expect(cache.maxBytes).toBe(1024 * 1024);
    expect(peak).toBeLessThanOrEqual(1024 * 1024);
    expect(cache.counters.evictions).toBeGreaterThan(0);
    expect(cache.bytes).toBeGreaterThan(1024 * 1024 - 64 * 1024); // full, less at most a tile or two
    // The newest tiles are held, the oldest were evicted.
    const [newest, oldest] = [tiles[tiles.length - 1]!, tiles[0]!];
    const from = proxy.log.length;
    expect((await host.inject({ method: 'GET', url: tileUrl(...newest) })).statusCode).toBe(200);
    expect(proxy.requestsOf(cogKey, from)).toHaveLength(0);
    expect((await host.inject({ method: 'GET', url: tileUrl(...oldest) })).statusCode).toBe(200);
    expect(proxy.requestsOf(cogKey, from)).toHaveLength(1);
    expect(cache.bytes).toBeLessThanOrEqual(1024 * 1024);
  });

  it('a revoked token is refused although its tile is held in memory (the cache is below the checks)', async () => {
    const user = await createUser(t.database.db, { studyRoles: [{ studyId, role: 'LabTech' }] });
    const session = await login(t.app, user.username, PASSWORD);
    const image = (await session.request({ method: 'GET', url: `/api/images/${imageId}` })).json<ImageView>();
    const url = image.tileUrl!.replace('{z}', '3').replace('{x}', '2').replace('{y}', '4');
    const cache = t.app.tileRangeCache!;
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    const hits = cache.counters.hits;
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    expect(cache.counters.hits).toBe(hits + 1);
    expect((await session.request({ method: 'POST', url: '/api/auth/logout' })).statusCode).toBe(200);
    await waitFor(
      'the token to be refused',
      async () => (await t.app.inject({ method: 'GET', url })).statusCode === 403,
      {
        timeoutMs: 5000,
        everyMs: 100,
      },
    );
    // Still held, never handed out: the refusal comes before the cache is looked at.
    const [held, hitsNow] = [cache.size, cache.counters.hits];
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(403);
    expect([cache.size, cache.counters.hits]).toEqual([held, hitsNow]);
  });

  it('counts hits, misses, evictions and bytes as Prometheus metrics', async () => {
    const host = await tileHost({ METRICS_PORT: '0', TILE_CACHE_MB: '2' });
    for (const [z, x, y] of [
      [0, 0, 0],
      [0, 0, 0],
      [2, 1, 1],
    ] as const)
      expect((await host.inject({ method: 'GET', url: tileUrl(z, x, y) })).statusCode).toBe(200);
    const { body } = await host.metrics.scrape();
    const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
    expect(sample('lamina_tile_cache_hits_total')).toBe(1);
    expect(sample('lamina_tile_cache_misses_total')).toBe(2);
    expect(sample('lamina_tile_cache_evictions_total')).toBe(0);
    expect(sample('lamina_tile_cache_bytes')).toBe(host.tileRangeCache!.bytes);
    expect(sample('lamina_tile_cache_bytes')).toBeGreaterThan(0);
    expect(sample('lamina_tile_cache_max_bytes')).toBe(2 * 1024 * 1024);
    expect(body).toMatch(/# TYPE lamina_tile_cache_bytes gauge/);
  });
});

describe('S3Storage.readRangeOf', () => {
  it('reads a range and tells the size and version head() reports, in one GET; null for a missing object', async () => {
    const storage = new S3Storage(s3.options);
    try {
      const key = `tests/range-of/${Date.now()}.bin`;
      const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
      await storage.write(key, data);
      const head = await storage.head(key);
      const start = await storage.readRangeOf(key, 0, 16 * 1024);
      expect(start).toEqual({ data, size: 5000, version: head?.version });
      const middle = await storage.readRangeOf(key, 1000, 10);
      expect([middle?.data.equals(data.subarray(1000, 1010)), middle?.size]).toEqual([true, 5000]);
      expect(await storage.readRangeOf(`${key}.gone`, 0, 16)).toBeNull();
    } finally {
      storage.client.destroy();
    }
  });
});

describe('TileRangeCache', () => {
  const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

  it('evicts the least recently used first and never holds more than its bound', async () => {
    const cache = new TileRangeCache(100);
    for (const key of ['a', 'b', 'c']) await cache.read(key, () => Promise.resolve(bytes(30, key.charCodeAt(0))));
    expect(cache.bytes).toBe(90);
    cache.take('a'); // a is now the most recent: b is the coldest
    await cache.read('d', () => Promise.resolve(bytes(30, 100)));
    expect(['a', 'b', 'c', 'd'].filter((k) => cache.has(k))).toEqual(['a', 'c', 'd']);
    expect(cache.bytes).toBe(90);
    await cache.read('e', () => Promise.resolve(bytes(95, 101)));
    expect([cache.size, cache.bytes]).toEqual([1, 95]);
    await cache.read('huge', () => Promise.resolve(bytes(101, 1))); // larger than the bound: not kept
    expect(cache.has('huge')).toBe(false);
    expect(cache.counters.evictions).toBe(4);
  });

  it('keeps a copy of its own of a view into a larger allocation, counting only the tile', async () => {
    const cache = new TileRangeCache(1000);
    const slab = Buffer.alloc(8192, 7);
    await cache.read('v', () => Promise.resolve(slab.subarray(100, 300)));
    const held = cache.take('v')!;
    expect([held.length, held.buffer.byteLength, cache.bytes]).toEqual([200, 200, 200]);
  });

  it('shares one read between concurrent callers, and forgets a failure', async () => {
    const cache = new TileRangeCache(1000);
    let calls = 0;
    let release: (value: Buffer) => void = () => {};
    const slow = () => {
      calls++;
      return new Promise<Buffer>((resolve) => (release = resolve));
    };
    const waiting = [cache.read('k', slow), cache.read('k', slow), cache.read('k', slow)];
    release(bytes(10, 1));
    expect((await Promise.all(waiting)).every((b) => b.equals(bytes(10, 1)))).toBe(true);
    expect(calls).toBe(1);
    await expect(cache.read('x', () => Promise.reject(new Error('SlowDown')))).rejects.toThrow('SlowDown');
    expect(cache.has('x')).toBe(false);
    expect((await cache.read('x', () => Promise.resolve(bytes(5, 2)))).length).toBe(5);
    expect(cache.counters).toMatchObject({ misses: 5, joined: 2, failures: 1 });
  });
});

describe('TILE_CACHE_MB', () => {
  const tilesOf = (value?: string) =>
    loadConfig({ DEMO: 'false', SESSION_SECRET: 'x', ...(value === undefined ? {} : { TILE_CACHE_MB: value }) }).tiles;

  it('defaults to 256 MiB; 0 turns the cache off; whole megabytes', () => {
    expect(tilesOf().cacheBytes).toBe(256 * 1024 * 1024);
    expect(tilesOf('').cacheBytes).toBe(256 * 1024 * 1024);
    expect(tilesOf('0').cacheBytes).toBe(0);
    expect(tilesOf('64').cacheBytes).toBe(64 * 1024 * 1024);
    expect(tilesOf(' 8 ').cacheBytes).toBe(8 * 1024 * 1024);
  });

  it('refuses anything else with a message that says what it takes', () => {
    for (const bad of ['-1', 'abc', '1.5', '1e3', '256MB', '0x10', '2000000']) {
      expect(() => tilesOf(bad), bad).toThrow(ConfigError);
      expect(() => tilesOf(bad), bad).toThrow(
        `TILE_CACHE_MB must be a whole number of megabytes from 0 (no cache) to 1048576, got '${bad}'`,
      );
    }
  });
});
