import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageView } from '@lamina/domain';
import { processImage } from '../src/modules/processing/processImage.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { syncReferenceData } from '../src/platform/rbac/referenceData.js';
import { createStorage, initStorage } from '../src/platform/storage/createStorage.js';
import { createStudy, createUploadedImage, createUser, PASSWORD, putUpload, WSI_DIR } from './factories.js';
import { freePort, httpLogin, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { waitFor } from './support/wait.js';

/**
 * The tile process of `npm start` (issue 28, modules/tiles/tileProcess.ts), on the real server
 * process with its default roles (api, tiles, worker) on the embedded database: tiles are answered
 * by a child process of its own on the same port, while the API stays in the main process. A
 * keep-alive connection that carries tiles, then an API request, then tiles loses and repeats
 * nothing; token revocation still stops tiles within TILE_ACCESS_REFRESH (the child reads the
 * sessions through the main process); the child's counters are on the main process's metrics; a
 * child that dies is noticed, tiles are answered in the main process meanwhile and a new child
 * takes over; SIGTERM drains both processes (a request under way on a connection the child gave
 * back completes) and exits 0.
 */
let dir: string;
let dataDir: string;
let server: ServerProcess;
let metricsUrl: string;
let imageId: number;
let uploader: { username: string };
let viewerName: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-tile-process-'));
  dataDir = path.join(dir, 'data');
  // The server's own database folder and storage, prepared before it starts: a study, a lab
  // technician who sees it, a study administrator who uploads, and one processed slide.
  const config = loadConfig({ DATA_DIR: dataDir, DEMO: 'false' });
  const database = await openDatabase({ dataDir: path.join(dataDir, 'db') });
  try {
    await migrate(database);
    await syncReferenceData(database.db);
    const studyId = (await createStudy(database.db)).id;
    viewerName = (await createUser(database.db, { studyRoles: [{ studyId, role: 'LabTech' }] })).username;
    uploader = await createUser(database.db, { globalRoles: ['StudyAdmin'] });
    const storage = createStorage(config);
    await initStorage(storage);
    const key = await putUpload(storage, studyId, path.join(WSI_DIR, 'small.svs'));
    imageId = (await createUploadedImage(database.db, { studyId, s3Key: key })).id;
    await processImage({ db: database.db, storage, tmpDir: path.join(dataDir, 'tmp') }, imageId);
  } finally {
    await database.close();
  }
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  server = await startServerProcess(await freePort(), {
    DATA_DIR: dataDir,
    DEMO: 'false',
    LOG_LEVEL: 'info',
    TILE_ACCESS_REFRESH: '1',
    METRICS_PORT: String(metricsPort),
    SHUTDOWN_GRACE: '30',
  });
  await tileProcessReady();
}, 120_000);

afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The pid of the tile process once it has said it is ready (the `nth` time: after restarts). */
async function tileProcessReady(nth = 1): Promise<number> {
  return waitFor(
    'the tile process to be ready',
    async () => {
      const ready = [...server.output().matchAll(/tile process ready \(pid (\d+)\)/g)];
      return ready.length >= nth ? Number(ready[nth - 1]?.[1]) : null;
    },
    { timeoutMs: 60_000, context: () => server.output() },
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Answer {
  status: number;
  head: string;
  body: Buffer;
}

/** One client connection on which requests are written as raw bytes and responses read in order. */
class RawConnection {
  private received = Buffer.alloc(0);
  private readonly answers: Answer[] = [];
  private wake: (() => void) | null = null;
  closed = false;
  readonly socket: net.Socket;

  constructor(baseUrl: string) {
    const url = new URL(baseUrl);
    this.socket = net.connect(Number(url.port), url.hostname);
    this.socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.parse();
      this.wake?.();
    });
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  send(text: string): void {
    this.socket.write(text, 'latin1');
  }

  private parse(): void {
    for (;;) {
      const end = this.received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = this.received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (this.received.length < end + 4 + length) return;
      this.answers.push({
        status: Number(head.slice(9, 12)),
        head,
        body: Buffer.from(this.received.subarray(end + 4, end + 4 + length)),
      });
      this.received = this.received.subarray(end + 4 + length);
    }
  }

  /** The next `count` responses; fails after `timeoutMs` or when the connection closes first. */
  async next(count: number, timeoutMs = 10_000): Promise<Answer[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.answers.length < count) {
      if (this.closed) throw new Error(`closed after ${this.answers.length} of ${count} responses`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.answers.length} of ${count} responses within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.answers.splice(0, count);
  }

  /** Resolves once the server has closed the connection (within `timeoutMs`). */
  async closedByServer(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }
}

const get = (url: string, extra = '') => `GET ${url} HTTP/1.1\r\nHost: lamina\r\n${extra}\r\n`;

function post(url: string, body: string, headers = ''): string {
  return `POST ${url} HTTP/1.1\r\nHost: lamina\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;
}

/** The tile URL (z 0, tile 0,0) the viewer is given for the image, in a session of `username`. */
async function tileUrlFor(username: string): Promise<{ tile: string; api: Awaited<ReturnType<typeof httpLogin>> }> {
  const api = await httpLogin(server.baseUrl, username, PASSWORD);
  const image = await api<ImageView>('GET', `/api/images/${imageId}`);
  expect(image.status).toBe(200);
  const tile = image.json.tileUrl!.replace('{z}', '0').replace('{x}', '0').replace('{y}', '0');
  return { tile, api };
}

/** A tile on a connection of its own (so that it starts with a tile request): its status. */
async function freshTile(url: string): Promise<number> {
  const connection = new RawConnection(server.baseUrl);
  try {
    connection.send(get(url, 'Connection: close\r\n'));
    const [answer] = await connection.next(1);
    return answer?.status ?? 0;
  } finally {
    connection.close();
  }
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

describe('npm start’s tile process', () => {
  it('answers the tiles of a connection that starts with one, while the API answers in the main process', async () => {
    const childPid = await tileProcessReady();
    expect(childPid).not.toBe(server.child.pid);
    const { tile } = await tileUrlFor(viewerName);
    const connection = new RawConnection(server.baseUrl);
    try {
      connection.send(get(tile));
      const [first] = await connection.next(1);
      expect(first?.status).toBe(200);
      expect(first?.head).toMatch(/\r\nContent-Type: image\/jpeg/i);
      // With the tile process stopped, the connection's next tile waits for it; the API, in the
      // main process, answers meanwhile.
      process.kill(childPid, 'SIGSTOP');
      try {
        connection.send(get(tile));
        await expect(connection.next(1, 500)).rejects.toThrow('0 of 1 responses within 500 ms');
        const health = await fetch(`${server.baseUrl}/api/health`, { signal: AbortSignal.timeout(5000) });
        expect(health.status).toBe(200);
      } finally {
        process.kill(childPid, 'SIGCONT');
      }
      const [second] = await connection.next(1);
      expect(second?.status).toBe(200);
      expect(second?.body.equals(first?.body ?? Buffer.alloc(0))).toBe(true);
    } finally {
      connection.close();
    }
    expect(await metric('lamina_tile_process')).toBe(1);
  });

  it('hands a keep-alive connection back to the main process at an API request: tile, POST, tile, in packets and pipelined', async () => {
    const { tile } = await tileUrlFor(viewerName);
    const login = JSON.stringify({ username: viewerName, password: PASSWORD });
    // One request per packet, the POST's body split across two.
    const apart = new RawConnection(server.baseUrl);
    try {
      apart.send(get(tile));
      expect((await apart.next(1)).map((a) => a.status)).toEqual([200]);
      const loginRequest = post('/api/auth/login', login);
      const cut = loginRequest.length - 10;
      apart.send(loginRequest.slice(0, cut));
      // The rest of the body in a later packet (the server must wait for it, not answer early).
      await new Promise((resolve) => setTimeout(resolve, 100));
      apart.send(loginRequest.slice(cut));
      const [loggedIn] = await apart.next(1);
      expect(loggedIn?.status).toBe(200);
      const cookie = /\r\nset-cookie: *([^;\r]+)/i.exec(loggedIn?.head ?? '')?.[1];
      expect(cookie).toBeDefined();
      apart.send(get(tile));
      expect((await apart.next(1)).map((a) => a.status)).toEqual([200]);
      // The session that POST made is live: the main process answered it once, whole.
      apart.send(get('/api/auth/session', `Cookie: ${cookie ?? ''}\r\n`));
      const [session] = await apart.next(1);
      expect(JSON.parse(session?.body.toString() ?? '{}')).toEqual({ authenticated: true });
    } finally {
      apart.close();
    }
    // All of it in one packet: the tile process answers the tile and passes the rest back.
    const together = new RawConnection(server.baseUrl);
    try {
      together.send(get(tile) + post('/api/auth/login', login) + get(tile) + get('/api/health'));
      const answers = await together.next(4);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(answers[1]?.head).toMatch(/\r\nset-cookie: /i);
      expect(answers[2]?.body.equals(answers[0]?.body ?? Buffer.alloc(0))).toBe(true);
      // Nothing repeated: no answer beyond those four.
      await expect(together.next(1, 300)).rejects.toThrow('0 of 1 responses within 300 ms');
    } finally {
      together.close();
    }
  });

  it('stops a tile token within TILE_ACCESS_REFRESH of its logout (the sessions read through the main process)', async () => {
    const { tile, api } = await tileUrlFor(viewerName);
    expect(await freshTile(tile)).toBe(200);
    expect((await api('POST', '/api/auth/logout')).status).toBe(200);
    const started = Date.now();
    await waitFor('the tile token to be refused', async () => (await freshTile(tile)) === 403, {
      timeoutMs: 5000,
      everyMs: 100,
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('counts the tile process’s tiles on the main process’s metrics port', async () => {
    const { tile } = await tileUrlFor(viewerName);
    const before = await metric('lamina_tile_requests_total{status_class="2xx"}');
    for (let i = 0; i < 5; i++) expect(await freshTile(tile)).toBe(200);
    expect(await metric('lamina_tile_requests_total{status_class="2xx"}')).toBe(before + 5);
    expect(await metric('lamina_tile_duration_seconds_count')).toBeGreaterThanOrEqual(before + 5);
  });

  it('notices a tile process that died: tiles answered in the main process, then by a new tile process', async () => {
    const { tile } = await tileUrlFor(viewerName);
    const first = await tileProcessReady(1);
    process.kill(first, 'SIGKILL');
    await waitFor('the main process to notice', async () => /tile process ended \(SIGKILL\)/.test(server.output()), {
      context: () => server.output(),
    });
    // Meanwhile the main process answers tiles itself.
    expect(await metric('lamina_tile_process')).toBe(0);
    expect(await freshTile(tile)).toBe(200);
    const second = await tileProcessReady(2);
    expect(second).not.toBe(first);
    expect(await metric('lamina_tile_process')).toBe(1);
    expect(await metric('lamina_tile_process_restarts_total')).toBe(1);
    expect(await freshTile(tile)).toBe(200);
  });

  it('drains both processes on SIGTERM: an upload under way on a connection the tile process gave back completes; exit 0', async () => {
    const childPid = await tileProcessReady(2);
    const { tile } = await tileUrlFor(uploader.username);
    const api = await httpLogin(server.baseUrl, uploader.username, PASSWORD);
    const studies = await api<{ studies: { id: number }[] }>('GET', '/api/studies/list?page=1&pageSize=10');
    const studyId = studies.json.studies[0]?.id;
    const signed = await api<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>('POST', '/api/signed-urls', {
      studyId,
      fileNames: ['during-shutdown.svs'],
    });
    const target = signed.json.data.urls[0];
    expect(target).toBeDefined();
    const uploadPath = new URL(target?.signedUrl ?? '', server.baseUrl);
    const body = Buffer.alloc(256 * 1024, 7);

    // A connection that starts with a tile (the tile process's), then a PUT half sent: back in the main process.
    const upload = new RawConnection(server.baseUrl);
    // An idle connection of the tile process's: closed at SIGTERM.
    const idleTiles = new RawConnection(server.baseUrl);
    try {
      upload.send(get(tile));
      expect((await upload.next(1)).map((a) => a.status)).toEqual([200]);
      idleTiles.send(get(tile));
      expect((await idleTiles.next(1)).map((a) => a.status)).toEqual([200]);
      const half = body.length / 2;
      upload.send(
        `PUT ${uploadPath.pathname}${uploadPath.search} HTTP/1.1\r\nHost: lamina\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      upload.socket.write(body.subarray(0, half));
      await waitFor('the upload to be under way', async () => {
        const names = await import('node:fs/promises').then((fs) =>
          fs.readdir(path.join(dataDir, 'storage', '.tmp')).catch(() => [] as string[]),
        );
        return names.length > 0;
      });
      const exited = server.terminate();
      // The tile process closes its idle connection at once; the main process's listener closes.
      expect(await idleTiles.closedByServer()).toBe(true);
      await waitFor('new connections to be refused', async () =>
        fetch(`${server.baseUrl}/api/health`, { signal: AbortSignal.timeout(1000) }).then(
          () => false,
          () => true,
        ),
      );
      expect(server.child.exitCode).toBeNull();
      upload.socket.write(body.subarray(half));
      const [stored] = await upload.next(1);
      expect(stored?.status, stored?.body.toString()).toBe(200);
      // Once answered, the connection closes (it is idle): the shutdown does not wait out its grace.
      expect(await upload.closedByServer(5000)).toBe(true);
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(alive(childPid)).toBe(false);
      expect(server.output()).not.toMatch(/shutdown did not finish|shutdown failed|shutdown grace over/);
    } finally {
      upload.close();
      idleTiles.close();
    }
  }, 90_000);
});
