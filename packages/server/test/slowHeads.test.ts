import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import type { Database } from '../src/platform/db/database.js';
import { headTimeouts } from '../src/modules/tiles/tileServer.js';
import { openTestDatabase } from './testApp.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 26 item 15: a request head that has not arrived HEADERS_TIMEOUT seconds after its first byte
 * is answered 408 and its connection closed by then — on the API and the tile paths alike, whether
 * the tile connections (tileConnection.ts) or Node's HTTP server hold the connection. Node checks
 * its headersTimeout only every connectionsCheckingInterval (30 s by default), so a slow head used
 * to be cut off only after 60 to 115 s. Real sockets; the limit is 2 s here, the default 60 s.
 */
const LIMIT_SECONDS = 2;
/**
 * What a loaded machine may add to a timer (the 2 s limit's answer came 1.5–2.2 s after the first
 * byte; the behaviour fixed took 60–90 s, so a wide margin still tells them apart).
 */
const MARGIN_MS = 3000;

let dir: string;
let database: Database;
let drop: () => Promise<void>;
const servers: FastifyInstance[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-slow-heads-'));
  ({ database, drop } = await openTestDatabase());
}, 60_000);

afterAll(async () => {
  for (const app of servers) await app.close();
  await database.close();
  await drop();
  await rm(dir, { recursive: true, force: true });
});

async function serve(env: Record<string, string>): Promise<{ host: string; port: number }> {
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET: 'slow-heads-secret',
    WEB_DIST: '/nonexistent',
    DATA_DIR: dir,
    QUERY_REMINDER_CRON: 'off',
    HEADERS_TIMEOUT: String(LIMIT_SECONDS),
    ...env,
  });
  const app = await buildApp({ config, database });
  servers.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { host: '127.0.0.1', port };
}

/** How many whole answers (head, and body by its Content-Length) `data` holds. */
function wholeAnswers(data: string): number {
  let count = 0;
  let rest = data;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return count;
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(rest.slice(0, end))?.[1] ?? 0);
    if (rest.length < end + 4 + length) return count;
    rest = rest.slice(end + 4 + length);
    count += 1;
  }
}

/**
 * Opens a connection, sends `before` whole (complete requests, answered), then a head a byte every
 * 150 ms that never ends; resolves with what came back after the slow head began and how long
 * after its first byte the connection was closed.
 */
async function slowHead(
  at: { host: string; port: number },
  slow: string,
  before = '',
): Promise<{ answer: string; ms: number }> {
  const socket = connect(at.port, at.host);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  if (before !== '') {
    socket.write(before);
    const requests = before.split('\r\n\r\n').length - 1;
    await waitFor(
      'the answers to the complete requests, bodies included',
      async () => wholeAnswers(received) >= requests,
      { timeoutMs: 5000, everyMs: 10 },
    );
  }
  const answeredBefore = received.length;
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const started = Date.now();
  let i = 0;
  const trickle = setInterval(() => {
    if (!socket.destroyed) socket.write(slow[i] ?? 'x');
    i += 1;
  }, 150);
  socket.write(slow[i++] ?? 'x');
  const guard = setTimeout(() => socket.destroy(), 20_000);
  await closed;
  const ms = Date.now() - started;
  clearInterval(trickle);
  clearTimeout(guard);
  return { answer: received.slice(answeredBefore), ms };
}

const API_HEAD = 'GET /api/health HTTP/1.1\r\nHost: lamina\r\nX-Slow: ';
const TILE_HEAD = 'GET /tiles/1/0/0/0.jpeg?token=abc HTTP/1.1\r\nHost: lamina\r\nX-Slow: ';
const COMPLETE_API = 'GET /api/health HTTP/1.1\r\nHost: lamina\r\n\r\n';

function expectCutOffInTime(result: { answer: string; ms: number }) {
  expect(result.answer.startsWith('HTTP/1.1 408 '), JSON.stringify(result.answer)).toBe(true);
  expect(result.ms).toBeLessThan(LIMIT_SECONDS * 1000 + MARGIN_MS);
  // Not before Node's own headersTimeout (the limit less one check interval).
  expect(result.ms).toBeGreaterThanOrEqual(headTimeouts(LIMIT_SECONDS).headersTimeoutMs - 50);
}

describe('a slow request head gets 408 within HEADERS_TIMEOUT (issue 26 item 15)', () => {
  it('API path, held by a tile connection (every role, TILE_HTTP=connections)', async () => {
    expectCutOffInTime(await slowHead(await serve({}), API_HEAD));
  }, 30_000);

  it('tile path, held by a tile connection', async () => {
    expectCutOffInTime(await slowHead(await serve({}), TILE_HEAD));
  }, 30_000);

  it('API path, held by Node’s HTTP server (no tiles role)', async () => {
    expectCutOffInTime(await slowHead(await serve({ ROLES: 'api' }), API_HEAD));
  }, 30_000);

  it('tile path, held by Node’s HTTP server (TILE_HTTP=http)', async () => {
    expectCutOffInTime(await slowHead(await serve({ TILE_HTTP: 'http' }), TILE_HEAD));
  }, 30_000);

  it('a second request on a kept-alive connection Node’s server already holds', async () => {
    expectCutOffInTime(await slowHead(await serve({}), API_HEAD, COMPLETE_API));
  }, 30_000);

  it('the production default: at most 60 s from the first byte to the 408, whichever holds the head', () => {
    const config = loadConfig({ DEMO: 'false', SESSION_SECRET: 'x', WEB_DIST: '/nonexistent' });
    expect(config.headersTimeoutSeconds).toBe(60);
    expect(config.tiles.headersTimeoutSeconds).toBe(60);
    const node = headTimeouts(config.headersTimeoutSeconds);
    expect(node.headersTimeoutMs + node.checkIntervalMs).toBeLessThanOrEqual(60_000);
    expect(node.checkIntervalMs).toBeLessThanOrEqual(1000);
    // The former name still sets it.
    expect(loadConfig({ DEMO: 'false', SESSION_SECRET: 'x', TILE_HEADERS_TIMEOUT: '30' }).headersTimeoutSeconds).toBe(
      30,
    );
  });
});
