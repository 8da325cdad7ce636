import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import type { Database } from '../src/platform/db/database.js';
import { TileMetrics } from '../src/platform/metrics/tileMetrics.js';
import { initStorage } from '../src/platform/storage/createStorage.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { fastPathSelfTest, type FastPathNeeds } from '../src/modules/tiles/fastPathSelfTest.js';
import {
  nativeSendfile,
  socketDescriptor,
  socketReadsProblem,
  type NativeSendfile,
} from '../src/modules/tiles/rawSocket.js';
import { TileFastPath, type TileFastPathSettings } from '../src/modules/tiles/tileServer.js';
import { createImage, createTileGrant } from './factories.js';
import { openTestDatabase } from './testApp.js';

/**
 * The tile fast path's start-up self-test (fastPathSelfTest.ts): it passes on this Node, and when
 * an internal the fast path uses is missing or behaves differently — simulated on fake sockets,
 * on this Node's own TCP handles (useUserBuffer taken away or made to do nothing), with a
 * sendfile module that sends the wrong bytes, an HTTP server with another 'connection' listener —
 * it names what failed, the process answers tiles through Node's HTTP server (as TILE_HTTP=http
 * does; tiles.http.test.ts runs the HTTP tests that way too), logs the reason and reports 0.
 */

const ALL: FastPathNeeds = { sendfile: nativeSendfile, socketReads: true };
const SETTINGS: TileFastPathSettings = {
  http: 'connections',
  send: 'sendfile',
  socketReads: 'direct',
  headersTimeoutSeconds: 60,
};

/** Where this Node's TCP handles get useUserBuffer from (LibuvStreamWrap's prototype). */
function userBufferOwner(): { useUserBuffer?: unknown } {
  const server = net.createServer().listen(0); // without a host the handle exists at once
  let proto = Object.getPrototypeOf((server as unknown as { _handle: object })._handle) as object | null;
  server.close();
  while (proto && !Object.hasOwn(proto, 'useUserBuffer')) proto = Object.getPrototypeOf(proto) as object | null;
  if (!proto) throw new Error('this Node has no useUserBuffer on its TCP handles');
  return proto;
}

const owner = userBufferOwner();
const useUserBuffer = owner.useUserBuffer;

/** This Node as if it had no useUserBuffer (undefined) or a different one (afterEach puts it back). */
function replaceUserBuffer(replacement: ((buffer: Buffer) => void) | undefined): void {
  if (replacement === undefined) delete owner.useUserBuffer;
  else owner.useUserBuffer = replacement;
}

afterEach(() => {
  owner.useUserBuffer = useUserBuffer;
  vi.restoreAllMocks();
});

describe('the self-test on this Node', () => {
  it('passes for every combination of TILE_SEND and TILE_SOCKET_READS, in milliseconds', async () => {
    expect(nativeSendfile).not.toBeNull();
    for (const sendfile of [nativeSendfile, null]) {
      for (const socketReads of [true, false]) {
        const started = performance.now();
        expect(await fastPathSelfTest({ sendfile, socketReads }), `${String(!!sendfile)} ${String(socketReads)}`).toBe(
          null,
        );
        expect(performance.now() - started).toBeLessThan(2000);
      }
    }
  });
});

describe('a missing internal', () => {
  it('is named on fake sockets, one member after another', () => {
    const kBuffer = Symbol('kBuffer');
    const kBufferCb = Symbol('kBufferCb');
    const kBufferGen = Symbol('kBufferGen');
    const fake = (fields: object) => fields as unknown as Socket;
    const handle = { useUserBuffer() {}, fd: 7 };
    expect(socketReadsProblem(fake({}))).toBe('net.Socket._handle missing');
    expect(socketReadsProblem(fake({ _handle: { fd: 7 } }))).toBe('net.Socket._handle.useUserBuffer missing');
    expect(socketReadsProblem(fake({ _handle: handle }))).toBe('net.Socket private symbol kBuffer missing');
    expect(socketReadsProblem(fake({ _handle: handle, [kBuffer]: null, [kBufferCb]: null }))).toBe(
      'net.Socket private symbol kBufferGen missing',
    );
    const complete = { _handle: handle, [kBuffer]: null, [kBufferCb]: null, [kBufferGen]: null };
    expect(socketReadsProblem(fake(complete))).toBeNull();
    expect(socketReadsProblem(fake({ ...complete, [kBuffer]: Buffer.alloc(1) }))).toBe(
      'net.Socket[kBuffer] is not null on an accepted socket',
    );
    expect(socketDescriptor(fake({ _handle: handle }))).toBe(7);
    expect(socketDescriptor(fake({ _handle: {} }))).toBe(-1);
    expect(socketDescriptor(fake({ _handle: handle, encrypted: true }))).toBe(-1);
  });

  it('useUserBuffer gone from this Node’s TCP handles: named, and needed only for reads below the stream', async () => {
    replaceUserBuffer(undefined);
    expect(await fastPathSelfTest(ALL)).toBe('net.Socket._handle.useUserBuffer missing');
    expect(await fastPathSelfTest({ sendfile: nativeSendfile, socketReads: false })).toBeNull();
  });

  it("http.Server with another 'connection' listener than Node's own", async () => {
    const createServer = http.createServer.bind(http);
    vi.spyOn(http, 'createServer').mockImplementation((...args: Parameters<typeof http.createServer>) =>
      createServer(...args).on('connection', () => {}),
    );
    expect(await fastPathSelfTest(ALL)).toBe(
      "take http.Server's 'connection' listener: http.Server has 2 'connection' listeners, not Node's own one",
    );
  });
});

describe('an internal that behaves differently', () => {
  const STEP =
    'a tile request read below the stream (net.Socket._handle.useUserBuffer, kBuffer, kBufferCb), answered on the connection with sendfile(2)';

  it('useUserBuffer that does not read into the buffer: the request is not read right', async () => {
    replaceUserBuffer(() => {});
    const problem = await fastPathSelfTest(ALL, 500);
    expect(problem).toMatch(/: (expected 200 .* got \d{3} |no answer within 500 ms)/);
    expect(problem?.startsWith(`${STEP}: `)).toBe(true);
  });

  it('sendfile sending other bytes, or failing', async () => {
    const native = nativeSendfile!;
    const shifted: NativeSendfile = {
      sendTile: (socket, head, file, offset, length) => native.sendTile(socket, head, file, offset + 1, length),
    };
    expect(await fastPathSelfTest({ sendfile: shifted, socketReads: true })).toMatch(
      new RegExp(
        `^${STEP.replace(/[().]/g, '\\$&')}: expected 200 ".*" \\(\\d+ bytes\\), got 200 ".*" \\(\\d+ bytes\\)$`,
      ),
    );
    const failing: NativeSendfile = { sendTile: () => -32 };
    expect(await fastPathSelfTest({ sendfile: failing, socketReads: true })).toBe(
      `${STEP}: the connection closed after 0 of 1 answers`,
    );
  });
});

describe('TileFastPath.start and report', () => {
  const log = () => ({ info: vi.fn(), warn: vi.fn() });

  it('a failed self-test: tiles through Node’s HTTP server, one warning naming what failed, the gauge at 0', async () => {
    const fastPath = await TileFastPath.start(SETTINGS, true, async () => 'net.Socket._handle.useUserBuffer missing');
    expect(fastPath).toMatchObject({
      mode: 'http',
      offReason: 'net.Socket._handle.useUserBuffer missing',
      sendfile: null,
      socketReads: false,
    });
    const logged = log();
    const metrics = new TileMetrics();
    metrics.fastPath = 1;
    fastPath.report(logged, metrics);
    expect(logged.warn.mock.calls).toEqual([
      [
        "tile fast path off: net.Socket._handle.useUserBuffer missing (tiles go through Node's HTTP server, as with TILE_HTTP=http)",
      ],
    ]);
    expect(logged.info).not.toHaveBeenCalled();
    expect(metrics.fastPath).toBe(0);
  });

  it('a passed self-test: the fast path as configured, one info line, the gauge at 1', async () => {
    const check = vi.fn(async () => null);
    const fastPath = await TileFastPath.start(SETTINGS, true, check);
    expect(check).toHaveBeenCalledWith({ sendfile: nativeSendfile, socketReads: true, passing: false });
    expect(fastPath).toMatchObject({ mode: 'connections', offReason: null, socketReads: true });
    const logged = log();
    const metrics = new TileMetrics();
    fastPath.report(logged, metrics);
    expect(logged.info.mock.calls).toEqual([
      ['tile fast path on: tiles answered on the connections, sendfile(2), reads below the stream (self-test passed)'],
    ]);
    expect(metrics.fastPath).toBe(1);
    const stream = await TileFastPath.start({ ...SETTINGS, send: 'write', socketReads: 'stream' }, true, check);
    expect(check).toHaveBeenLastCalledWith({ sendfile: null, socketReads: false, passing: false });
    expect(stream).toMatchObject({ mode: 'connections', sendfile: null, socketReads: false });
    // A process whose connections move to or from a tile process: the self-test checks readStop too.
    await TileFastPath.start({ ...SETTINGS, passesConnections: true }, true, check);
    expect(check).toHaveBeenLastCalledWith({ sendfile: nativeSendfile, socketReads: true, passing: true });
  });

  it('no self-test where the fast path is not used: TILE_HTTP=http, or a process without the tiles role', async () => {
    const check = vi.fn(async () => null);
    expect(await TileFastPath.start({ ...SETTINGS, http: 'http' }, true, check)).toMatchObject({
      mode: 'http',
      offReason: null,
    });
    expect(await TileFastPath.start(SETTINGS, false, check)).toMatchObject({ mode: 'http', offReason: null });
    expect(check).not.toHaveBeenCalled();
  });
});

describe('a tile server started on a Node without useUserBuffer', () => {
  const SESSION_SECRET = 'fast-path-self-test-secret';
  const PYRAMID = path.resolve(
    import.meta.dirname,
    '../../../../shared/testdata/wsi/derived/CMU-1-Small-Region_generic-jpeg-256.tiff',
  );
  let dir: string;
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'lamina-fast-path-'));
    ({ database, drop } = await openTestDatabase());
  });

  afterAll(async () => {
    await database?.close();
    await drop?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers tiles through Node’s HTTP server (still not Fastify), logs why and reports lamina_tile_fast_path 0', async () => {
    replaceUserBuffer(undefined);
    const report = vi.spyOn(TileFastPath.prototype, 'report');
    const config = loadConfig({
      DEMO: 'false',
      SESSION_SECRET,
      WEB_DIST: '/nonexistent',
      ROLES: 'tiles',
      DATA_DIR: dir,
    });
    const app = await buildApp({ config, database });
    owner.useUserBuffer = useUserBuffer;
    try {
      const fastifyRequests: string[] = [];
      app.addHook('onRequest', async (request) => void fastifyRequests.push(request.url));
      await app.listen({ port: 0, host: '127.0.0.1' });
      expect(app.tileFastPath).toMatchObject({
        mode: 'http',
        offReason: 'net.Socket._handle.useUserBuffer missing',
        sendfile: null,
      });
      expect(report).toHaveBeenCalledWith(app.log, app.metrics.tiles);
      expect((await app.metrics.scrape()).body).toMatch(/^lamina_tile_fast_path 0$/m);
      // Node's own 'connection' listener was left in place: no tile connections.
      expect(app.server.listeners('connection')).toEqual(http.createServer().listeners('connection'));

      await initStorage(app.slides.storage);
      await app.slides.storage.write('images/fast-path-off/pyramid.tif', { filePath: PYRAMID });
      const image = await createImage(database.db, {
        width: 2220,
        height: 2967,
        levels: 5,
        cogKey: 'images/fast-path-off/pyramid.tif',
      });
      const grant = await createTileGrant(database.db, SESSION_SECRET);
      const token = new TileTokens(SESSION_SECRET).issue(image.id, grant, 600);
      const { port } = app.server.address() as AddressInfo;
      for (const tile of ['4/0/0', '4/0/0', '3/1/1']) {
        const response = await fetch(
          `http://127.0.0.1:${port}/tiles/${image.id}/${tile}?t=${encodeURIComponent(token)}`,
        );
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('image/jpeg');
        const body = Buffer.from(await response.arrayBuffer());
        expect([...body.subarray(0, 2)]).toEqual([0xff, 0xd8]);
      }
      expect(fastifyRequests).toEqual([]);
      expect(app.tileFastPath?.counts).toEqual({ sentFromFile: 0, restWritten: 0 });
    } finally {
      owner.useUserBuffer = useUserBuffer;
      await app.close();
    }
  });
});
