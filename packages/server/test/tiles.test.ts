import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { maxTmsZoom } from '@lamina/domain';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import type { Database } from '../src/platform/db/database.js';
import { initStorage } from '../src/platform/storage/createStorage.js';
import { S3Storage } from '../src/platform/storage/s3Storage.js';
import type { AppStorage } from '../src/platform/storage/uploadSigning.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { databaseTileRows } from '../src/platform/tiles/tileRows.js';
import { PyramidCache } from '../src/modules/tiles/pyramidCache.js';
import { TILE_CACHE_CONTROL } from '../src/modules/tiles/tileRoutes.js';
import { createImage } from './factories.js';
import { openTestDatabase } from './testApp.js';
import { createTileGrant } from './factories.js';
import type { TileGrant } from '../src/platform/tiles/tileToken.js';

/** Every call of sharp in this test file's module graph (the test's own decoding included). */
const sharpCalls = vi.hoisted(() => ({ count: 0 }));
vi.mock('sharp', async (importOriginal) => {
  const actual = (await importOriginal<{ default: typeof sharp }>()).default;
  const counted = ((...args: Parameters<typeof sharp>) => {
    sharpCalls.count++;
    return actual(...args);
  }) as typeof sharp;
  Object.assign(counted, actual);
  return { default: counted };
});

/** The bits of s3rver (an S3 server for tests; it ships no types) used here. */
interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverServer;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;

const WSI = path.resolve(import.meta.dirname, '../../../../shared/testdata/wsi');
const SOURCE = path.join(WSI, 'CMU-1-Small-Region.svs');
const SESSION_SECRET = 'tile-test-secret';

interface Served {
  app: FastifyInstance;
  storage: AppStorage;
  cache: PyramidCache;
}

let dir: string;
let database: Database;
let drop: () => Promise<void>;
let s3server: S3rverServer;
/** Tokens as the images API issues them: HMAC with the session secret. */
const tokens = new TileTokens(SESSION_SECRET);
/** Local folder storage: the tile server keeps a file descriptor per pyramid. */
let local: Served;
/** S3 (s3rver): the tile server makes one ranged GET per tile not in its tile cache. */
let s3: Served;
/** Level-0 RGB pixels of the source slide, for the colour comparison. */
let source: { data: Buffer; width: number; height: number };

const images: Record<'classic' | 'bigtiff' | 'thirdParty' | 'unprocessed' | 'missingFile', number> = {
  classic: 0,
  bigtiff: 0,
  thirdParty: 0,
  unprocessed: 0,
  missingFile: 0,
};

/** The real app with the tiles role, on the given storage (the configured local folder by default). */
async function serve(storage?: AppStorage): Promise<Served> {
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET,
    WEB_DIST: '/nonexistent',
    ROLES: 'tiles',
    DATA_DIR: dir,
  });
  const app = await buildApp({ config, database, slides: { storage } });
  await app.ready();
  if (!app.tileCache) throw new Error('the tiles role did not register its routes');
  return { app, storage: app.slides.storage, cache: app.tileCache };
}

const PYRAMID_KEYS = {
  classic: 'images/test-classic/pyramid.tif',
  bigtiff: 'images/test-bigtiff/pyramid.tif',
  thirdParty: 'images/test-third/pyramid.tif',
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-tiles-'));
  ({ database, drop } = await openTestDatabase());
  grant = await createTileGrant(database.db, SESSION_SECRET);
  // The pyramids as the worker writes them (sharp/libvips), in classic TIFF and in BigTIFF, and a
  // third-party pyramid written by the vips CLI (non-integer downsamples 2.0003 … 16.06).
  const options = {
    tile: true,
    tileWidth: 256,
    tileHeight: 256,
    pyramid: true,
    compression: 'jpeg',
    quality: 85,
  } as const;
  const files = {
    classic: path.join(dir, 'classic.tif'),
    bigtiff: path.join(dir, 'bigtiff.tif'),
    thirdParty: path.join(dir, 'third.tif'),
  };
  await sharp(SOURCE).tiff(options).toFile(files.classic);
  await sharp(SOURCE)
    .tiff({ ...options, bigtiff: true })
    .toFile(files.bigtiff);
  await copyFile(path.join(WSI, 'derived/CMU-1-Small-Region_generic-jpeg-256.tiff'), files.thirdParty);
  const raw = await sharp(SOURCE).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  source = { data: raw.data, width: raw.info.width, height: raw.info.height };

  s3server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.join(dir, 's3rver'),
    configureBuckets: [{ name: 'lamina-tiles' }],
  });
  const { port } = await s3server.run();
  const s3storage = new S3Storage({
    bucket: 'lamina-tiles',
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  });

  local = await serve();
  await initStorage(local.storage);
  s3 = await serve(s3storage);
  for (const name of ['classic', 'bigtiff', 'thirdParty'] as const) {
    await local.storage.write(PYRAMID_KEYS[name], { filePath: files[name] });
    await s3.storage.write(PYRAMID_KEYS[name], { filePath: files[name] });
  }

  const dims = { width: 2220, height: 2967, levels: 5, mpp: 0.499, objectivePower: 20 };
  images.classic = (await createImage(database.db, { ...dims, cogKey: PYRAMID_KEYS.classic })).id;
  images.bigtiff = (await createImage(database.db, { ...dims, cogKey: PYRAMID_KEYS.bigtiff })).id;
  images.thirdParty = (await createImage(database.db, { ...dims, cogKey: PYRAMID_KEYS.thirdParty })).id;
  images.unprocessed = (await createImage(database.db, {})).id;
  images.missingFile = (await createImage(database.db, { ...dims, cogKey: 'images/gone/pyramid.tif' })).id;
}, 120_000);

afterAll(async () => {
  await local?.app.close();
  await s3?.app.close();
  await s3server?.close();
  await database?.close();
  await drop?.();
  await rm(dir, { recursive: true, force: true });
});

/** The grant of a live session in this file's database (beforeAll). */
let grant: TileGrant;
const token = (imageId: number) => tokens.issue(imageId, grant, 600);
const tileUrl = (imageId: number, z: number, x: number, y: number, t: string | null = token(imageId)) =>
  `/tiles/${imageId}/${z}/${x}/${y}${t === null ? '' : `?t=${encodeURIComponent(t)}`}`;

/** Mean R, G, B of a region of raw RGB pixels. */
function meanOf(data: Buffer, stride: number, x0: number, y0: number, x1: number, y1: number): number[] {
  const sum = [0, 0, 0];
  for (let y = y0; y < y1; y++) {
    let i = (y * stride + x0) * 3;
    for (let x = x0; x < x1; x++, i += 3) {
      sum[0]! += data[i]!;
      sum[1]! += data[i + 1]!;
      sum[2]! += data[i + 2]!;
    }
  }
  const n = Math.max(1, (x1 - x0) * (y1 - y0));
  return sum.map((s) => s / n);
}

interface Grid {
  z: number;
  levelWidth: number;
  levelHeight: number;
}

/** The level sizes each zoom is served from, as libvips halves them (floor). */
function libvipsGrids(width: number, height: number): Grid[] {
  const max = maxTmsZoom(width, height);
  const grids: Grid[] = [];
  let w = width;
  let h = height;
  for (let z = max; z >= 0; z--) {
    grids.unshift({ z, levelWidth: w, levelHeight: h });
    w = Math.floor(w / 2);
    h = Math.floor(h / 2);
  }
  return grids;
}

/** Requests every tile of every zoom; returns the bodies with their grid position. */
async function fetchAllTiles(served: Served, imageId: number, grids: Grid[]) {
  const tiles: { grid: Grid; x: number; y: number; body: Buffer }[] = [];
  for (const grid of grids) {
    for (let y = 0; y < Math.ceil(grid.levelHeight / 256); y++) {
      for (let x = 0; x < Math.ceil(grid.levelWidth / 256); x++) {
        const response = await served.app.inject({ method: 'GET', url: tileUrl(imageId, grid.z, x, y) });
        expect(response.statusCode, `z${grid.z} ${x},${y}`).toBe(200);
        expect(response.headers['content-type']).toBe('image/jpeg');
        tiles.push({ grid, x, y, body: response.rawPayload });
      }
    }
  }
  return tiles;
}

async function expectTilesMatchSource(tiles: Awaited<ReturnType<typeof fetchAllTiles>>) {
  let worst = 0;
  let total = 0;
  for (const { grid, x, y, body } of tiles) {
    // TIFF tiles are stored whole: edge tiles are 256x256 with padding past the level's edge, which
    // the viewer clips to the image extent. The valid part is compared.
    const decoded = await sharp(body).raw().toBuffer({ resolveWithObject: true });
    expect([decoded.info.width, decoded.info.height]).toEqual([256, 256]);
    expect(decoded.info.channels).toBe(3);
    const validW = Math.min(256, grid.levelWidth - x * 256);
    const validH = Math.min(256, grid.levelHeight - y * 256);
    const got = meanOf(decoded.data, 256, 0, 0, validW, validH);
    const dx = source.width / grid.levelWidth;
    const dy = source.height / grid.levelHeight;
    const want = meanOf(
      source.data,
      source.width,
      Math.round(x * 256 * dx),
      Math.round(y * 256 * dy),
      Math.min(source.width, Math.round((x * 256 + validW) * dx)),
      Math.min(source.height, Math.round((y * 256 + validH) * dy)),
    );
    const error = Math.max(...got.map((g, c) => Math.abs(g - want[c]!)));
    worst = Math.max(worst, error);
    total += error;
  }
  expect(worst).toBeLessThan(4);
  expect(total / tiles.length).toBeLessThan(1.5);
}

describe('GET /tiles/{imageId}/{z}/{x}/{y}', () => {
  it('serves every tile of every zoom of a sharp pyramid, each decoding to the source region (classic TIFF, local file)', async () => {
    const grids = libvipsGrids(2220, 2967);
    expect(grids.map((g) => [g.z, g.levelWidth])).toEqual([
      [0, 138],
      [1, 277],
      [2, 555],
      [3, 1110],
      [4, 2220],
    ]);
    const before = sharpCalls.count;
    const tiles = await fetchAllTiles(local, images.classic, grids);
    // The handler decodes and encodes nothing: no sharp call while 152 tiles were served.
    expect(sharpCalls.count).toBe(before);
    expect(tiles).toHaveLength(1 + 4 + 9 + 30 + 108);
    await expectTilesMatchSource(tiles);
  });

  it('serves a BigTIFF pyramid from S3 (s3rver): one ranged GET per tile not yet in the tile cache', async () => {
    const grids = libvipsGrids(2220, 2967);
    await s3.app.inject({ method: 'GET', url: tileUrl(images.bigtiff, 0, 0, 0) });
    const reads = vi.spyOn(s3.storage, 'readRange');
    const tiles = await fetchAllTiles(s3, images.bigtiff, grids);
    // 0/0/0 is held since the first request (TILE_CACHE_MB; test/tiles.s3cache.test.ts).
    expect(reads).toHaveBeenCalledTimes(tiles.length - 1);
    reads.mockRestore();
    await expectTilesMatchSource(tiles);
  });

  it('serves a classic-TIFF pyramid from the local folder and from S3 with the same bytes', async () => {
    for (const [z, x, y] of [
      [0, 0, 0],
      [3, 4, 5],
      [4, 8, 11],
    ] as const) {
      const a = await local.app.inject({ method: 'GET', url: tileUrl(images.classic, z, x, y) });
      const b = await s3.app.inject({ method: 'GET', url: tileUrl(images.classic, z, x, y) });
      expect(a.statusCode).toBe(200);
      expect(b.rawPayload.equals(a.rawPayload)).toBe(true);
      expect(b.headers.etag).toBe(a.headers.etag);
    }
  });

  it('serves a third-party libvips pyramid with non-integer downsamples, mapping zooms by level size', async () => {
    const tiles = await fetchAllTiles(local, images.thirdParty, libvipsGrids(2220, 2967));
    await expectTilesMatchSource(tiles);
  });

  it('answers a complete JPEG: SOI, the tables, the tile stream, EOI; the stored bytes unchanged', async () => {
    const response = await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 4, 3, 5) });
    const body = response.rawPayload;
    expect([...body.subarray(0, 4)]).toEqual([0xff, 0xd8, 0xff, 0xdb]);
    expect([...body.subarray(-2)]).toEqual([0xff, 0xd9]);
    // Exactly one SOI: the tables' and the tile's own were dropped.
    expect(body.indexOf(Buffer.from([0xff, 0xd8]), 2)).toBe(-1);
    // The scan data is a byte-for-byte suffix of the stored file.
    const stored = await readFile(path.join(dir, 'storage', PYRAMID_KEYS.classic));
    const sos = body.indexOf(Buffer.from([0xff, 0xda]));
    expect(stored.indexOf(body.subarray(sos))).toBeGreaterThan(0);
  });

  it('sends a strong ETag and long-lived private cache headers, and 304 on If-None-Match', async () => {
    const url = tileUrl(images.classic, 2, 1, 1);
    const first = await local.app.inject({ method: 'GET', url });
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(etag.startsWith('W/')).toBe(false);
    expect(first.headers['cache-control']).toBe(TILE_CACHE_CONTROL);
    expect(first.headers['cache-control']).toBe('private, max-age=31536000, immutable');

    const again = await local.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    const listed = await local.app.inject({ method: 'GET', url, headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(listed.statusCode).toBe(304);
    const stale = await local.app.inject({ method: 'GET', url, headers: { 'if-none-match': '"stale"' } });
    expect(stale.statusCode).toBe(200);

    // Different tiles, and the same tile of another pyramid, have different ETags.
    const other = await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 2, 1, 0) });
    expect(other.headers.etag).not.toBe(etag);
    const bigtiff = await local.app.inject({ method: 'GET', url: tileUrl(images.bigtiff, 2, 1, 1) });
    expect(bigtiff.headers.etag).not.toBe(etag);
    // The same tile served again has the same ETag.
    const repeat = await local.app.inject({ method: 'GET', url });
    expect(repeat.headers.etag).toBe(etag);
    expect(repeat.rawPayload.equals(first.rawPayload)).toBe(true);
  });

  describe('authorisation by tile token', () => {
    it('403 without a token', async () => {
      const response = await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 0, 0, 0, null) });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ success: false, message: 'You do not have permission to do this' });
      expect(response.headers['cache-control']).toBe('no-store');
    });

    it('403 with a forged token', async () => {
      const good = token(images.classic);
      const forged = good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      expect(
        (await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 0, 0, 0, forged) })).statusCode,
      ).toBe(403);
      const otherSecret = new TileTokens('another-secret').issue(images.classic, grant, 600);
      // (the secret of the tile tokens is the session secret)
      expect(
        (await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 0, 0, 0, otherSecret) })).statusCode,
      ).toBe(403);
      expect(
        (await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 0, 0, 0, 'garbage') })).statusCode,
      ).toBe(403);
    });

    it('403 with an expired token', async () => {
      const expired = tokens.issue(images.classic, grant, 60, Date.now() - 120_000);
      expect(
        (await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 0, 0, 0, expired) })).statusCode,
      ).toBe(403);
    });

    it("403 with another image's token", async () => {
      const response = await local.app.inject({
        method: 'GET',
        url: tileUrl(images.classic, 0, 0, 0, token(images.bigtiff)),
      });
      expect(response.statusCode).toBe(403);
    });

    it('403 before anything is looked up: a tokenless request does not load the image', async () => {
      const loads = local.cache.loads;
      await local.app.inject({ method: 'GET', url: tileUrl(images.unprocessed, 0, 0, 0, null) });
      expect(local.cache.loads).toBe(loads);
    });

    it('remembers verified tokens, still refusing them for another image and once expired', async () => {
      const { VerifiedTokens } = await import('../src/modules/tiles/verifiedTokens.js');
      const verified = new VerifiedTokens(tokens, 2);
      const now = Date.now();
      const t = tokens.issue(7, grant, 60, now);
      expect(verified.verify(t, 7, now)).toMatchObject({ imageId: 7, userId: grant.userId, generation: 0 });
      expect(verified.verify(t, 7, now + 1000)).not.toBeNull();
      expect(verified.verify(t, 8, now)).toBeNull();
      expect(verified.verify(t, 7, now + 61_000)).toBeNull();
      expect(verified.verify(`${t.slice(0, -2)}xx`, 7, now)).toBeNull();
      expect(verified.verify(undefined, 7, now)).toBeNull();
      // Bounded: older entries make room (and verify again by HMAC when seen again).
      expect(verified.verify(tokens.issue(1, grant, 60, now), 1, now)).not.toBeNull();
      expect(verified.verify(tokens.issue(2, grant, 60, now), 2, now)).not.toBeNull();
      expect(verified.verify(t, 7, now)).not.toBeNull();
    });

    it('needs no session: no cookie is read or set', async () => {
      const response = await local.app.inject({ method: 'GET', url: tileUrl(images.classic, 0, 0, 0) });
      expect(response.statusCode).toBe(200);
      expect(response.headers['set-cookie']).toBeUndefined();
    });
  });

  describe('404', () => {
    it.each([
      ['x past the last column', 4, 9, 0],
      ['y past the last row', 4, 0, 12],
      ['z past full resolution', 5, 0, 0],
      ['x past the single tile of z 0', 0, 1, 0],
    ])('%s', async (_name, z, x, y) => {
      const response = await local.app.inject({ method: 'GET', url: tileUrl(images.classic, z, x, y) });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ success: false, message: 'Not found' });
    });

    it('for non-numeric or negative coordinates', async () => {
      for (const url of [
        `/tiles/${images.classic}/a/0/0?t=${token(images.classic)}`,
        `/tiles/${images.classic}/0/-1/0?t=${token(images.classic)}`,
        `/tiles/${images.classic}/0/0/0.5?t=${token(images.classic)}`,
      ]) {
        expect((await local.app.inject({ method: 'GET', url })).statusCode).toBe(404);
      }
    });

    it('for a z-stack plane the image does not have; stack 0 is the default plane', async () => {
      const url = tileUrl(images.classic, 0, 0, 0);
      expect((await local.app.inject({ method: 'GET', url: `${url}&stack=1` })).statusCode).toBe(404);
      const plane0 = await local.app.inject({ method: 'GET', url: `${url}&stack=0` });
      expect(plane0.statusCode).toBe(200);
      expect(plane0.rawPayload.equals((await local.app.inject({ method: 'GET', url })).rawPayload)).toBe(true);
    });

    it('for an image not processed yet, one whose pyramid is missing, and one that does not exist', async () => {
      expect((await local.app.inject({ method: 'GET', url: tileUrl(images.unprocessed, 0, 0, 0) })).statusCode).toBe(
        404,
      );
      expect((await local.app.inject({ method: 'GET', url: tileUrl(images.missingFile, 0, 0, 0) })).statusCode).toBe(
        404,
      );
      expect((await s3.app.inject({ method: 'GET', url: tileUrl(images.missingFile, 0, 0, 0) })).statusCode).toBe(404);
      expect((await local.app.inject({ method: 'GET', url: tileUrl(999_999, 0, 0, 0) })).statusCode).toBe(404);
    });
  });

  it('reads the image row and the pyramid directories once per image, not per tile', async () => {
    const served = await serve();
    try {
      const requests = Array.from({ length: 40 }, (_, i) =>
        served.app.inject({ method: 'GET', url: tileUrl(images.classic, 4, i % 9, Math.floor(i / 9)) }),
      );
      const responses = await Promise.all(requests);
      expect(responses.every((r) => r.statusCode === 200)).toBe(true);
      expect(served.cache.loads).toBe(1);
      expect(served.cache.size).toBe(1);
    } finally {
      await served.app.close();
    }
  });

  it('reads the same tiles through the thread pool (TILE_READS=async) as with blocking reads', async () => {
    const sync = new PyramidCache(
      { rows: databaseTileRows(database.db), storage: local.storage },
      { localReads: 'sync' },
    );
    const pooled = new PyramidCache(
      { rows: databaseTileRows(database.db), storage: local.storage },
      { localReads: 'async' },
    );
    const a = (await sync.get(images.classic))!;
    const b = (await pooled.get(images.classic))!;
    // The mode reaches the open file: only blocking reads offer the handler a synchronous read.
    expect(a.file.readTileSync).toBeTypeOf('function');
    expect(b.file.readTileSync).toBeUndefined();
    const { locateTile } = await import('../src/modules/tiles/pyramidIndex.js');
    for (const [z, x, y] of [
      [0, 0, 0],
      [4, 8, 11],
      [2, 1, 2],
    ] as const) {
      const where = locateTile(a.index, z, x, y, 0)!;
      const [one, two] = await Promise.all([a.file.readTile(where), b.file.readTile(where)]);
      expect(two.equals(one)).toBe(true);
    }
    sync.clear();
    pooled.clear();
  });

  it('hands out tile buffers from slabs without ever overlapping', async () => {
    const { TileBuffers } = await import('../src/modules/tiles/pyramidFile.js');
    const buffers = new TileBuffers(64 * 1024);
    const taken = Array.from({ length: 50 }, (_, i) => {
      const b = buffers.take(3000 + i);
      b.fill(i);
      return b;
    });
    taken.forEach((b, i) => expect(b.every((v) => v === i)).toBe(true));
    expect(buffers.take(20_000).length).toBe(20_000); // larger than a slab allows: its own allocation
  });

  it('keeps the cache bounded, closing evicted files, and still serves evicted images', async () => {
    const cache = new PyramidCache({ rows: databaseTileRows(database.db), storage: local.storage }, { maxImages: 1 });
    const a = await cache.get(images.classic);
    const b = await cache.get(images.bigtiff);
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(cache.size).toBe(1);
    const again = await cache.get(images.classic);
    expect(again?.index.version).toBe(a?.index.version);
    expect(cache.loads).toBe(3);
    // The evicted file was closed once idle: reading it now fails, the live one works.
    await expect(a!.file.readRange(0, 8)).rejects.toThrow(/closed/);
    expect((await again!.file.readRange(0, 2)).toString('latin1')).toBe('II');
    cache.clear();
  });

  it('the tiles module does not import sharp or any image codec', async () => {
    const folder = path.resolve(import.meta.dirname, '../src/modules/tiles');
    for (const file of await readdir(folder)) {
      const text = await readFile(path.join(folder, file), 'utf8');
      expect(text, file).not.toMatch(/from ['"](sharp|geotiff|jpeg-js)['"]/);
    }
  });
});
