// engine: postgres — a real server process on a shared database: pg-boss hands its active job back on SIGTERM
import http from 'node:http';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageView } from '@lamina/domain';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { syncReferenceData } from '../src/platform/rbac/referenceData.js';
import { createStudy, createUser, PASSWORD } from './factories.js';
import { freePort, httpLogin, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { writeTissueSlide } from './support/slides.js';
import { waitFor } from './support/wait.js';
import { createServerDatabase } from './testApp.js';

/**
 * Graceful shutdown (issue 19), end to end on the real server process: SIGTERM while a request is
 * half sent lets that request complete, refuses new connections, and the process exits 0; a
 * processing job that does not finish within SHUTDOWN_GRACE goes back to its queue (pg-boss fails
 * it back for a retry) instead of being lost or failing the image, and is processed after the
 * restart. Without demo data (its slides would be generated and processed beside the test's): a
 * study and a study administrator are written to the database before the server first starts.
 */
let dir: string;
let env: Record<string, string>;
let studyId: number;
let username: string;
let dropDatabase: (() => Promise<void>) | null = null;
let server: ServerProcess | null = null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-shutdown-'));
  // A long grace: on a loaded machine the test may take seconds to send the rest of its request
  // after SIGTERM, and a grace over by then would close that connection (EPIPE). The process still
  // exits as soon as the request is done.
  env = { DATA_DIR: path.join(dir, 'data'), DEMO: 'false', SHUTDOWN_GRACE: '30' };
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const created = await createServerDatabase(url, 'lamina_shutdown');
    env.DATABASE_URL = created.url;
    dropDatabase = created.drop;
  }
  const database = await openServerDatabase();
  try {
    await migrate(database);
    await syncReferenceData(database.db);
    studyId = (await createStudy(database.db)).id;
    username = (await createUser(database.db, { globalRoles: ['StudyAdmin'] })).username;
  } finally {
    await database.close();
  }
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await dropDatabase?.();
  await rm(dir, { recursive: true, force: true });
});

type Api = Awaited<ReturnType<typeof httpLogin>>;

/** The database the server process opens (its PGlite folder or its PostgreSQL database), while it is stopped. */
function openServerDatabase() {
  return openDatabase(
    env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { dataDir: path.join(env.DATA_DIR as string, 'db') },
  );
}

async function signedUpload(api: Api, studyId: number, fileName: string) {
  const signed = await api<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>('POST', '/api/signed-urls', {
    studyId,
    fileNames: [fileName],
  });
  const target = signed.json.data.urls[0];
  if (!target) throw new Error(`no signed URL: ${JSON.stringify(signed.json)}`);
  return target;
}

/** A PUT whose body is sent in two halves: the second only when `second` resolves. */
function putInTwoHalves(url: URL, body: Buffer, second: Promise<void>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: 'PUT',
      headers: { 'content-length': body.length, 'content-type': 'application/octet-stream' },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    const half = Math.floor(body.length / 2);
    request.write(body.subarray(0, half));
    void second.then(() => request.end(body.subarray(half)), reject);
  });
}

describe('SIGTERM', () => {
  it('lets a request under way complete, takes no new connections, and exits 0', async () => {
    const port = await freePort();
    server = await startServerProcess(port, env);
    const api = await httpLogin(server.baseUrl, username, PASSWORD);
    const target = await signedUpload(api, studyId, 'half-sent.svs');
    const body = Buffer.alloc(4 * 1024 * 1024, 7);

    let sendRest!: () => void;
    const rest = new Promise<void>((resolve) => (sendRest = resolve));
    const put = putInTwoHalves(new URL(target.signedUrl, server.baseUrl), body, rest);
    // The first half has reached the server: the file is being written.
    const running = server;
    await waitFor('the upload to be under way', async () => {
      const tmp = path.join(env.DATA_DIR as string, 'storage', '.tmp');
      const names = await readdir(tmp).catch(() => []);
      for (const name of names) if ((await stat(path.join(tmp, name))).size > 0) return true;
      return false;
    });
    const exited = running.terminate();
    // The listening socket closes at once: a new connection is refused.
    await waitFor('new connections to be refused', async () =>
      fetch(`${running.baseUrl}/api/health`, { signal: AbortSignal.timeout(1000) }).then(
        () => false,
        () => true,
      ),
    );
    expect(running.child.exitCode).toBeNull();
    sendRest();
    const answer = await put;
    expect(answer.status, answer.text).toBe(200);
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(running.output()).not.toMatch(/shutdown did not finish|shutdown failed/);
    // The whole upload is in storage.
    const stored = await readFile(path.join(env.DATA_DIR as string, 'storage', target.s3Key));
    expect(stored.equals(body)).toBe(true);
  }, 180_000);

  it('hands a job that does not finish within the grace back to its queue; it is processed after the restart', async () => {
    const slide = path.join(dir, 'long-slide.tif');
    await writeTissueSlide(slide, 24_576, 24_576);
    const port = await freePort();
    server = await startServerProcess(port, { ...env, SHUTDOWN_GRACE: '1', LARGE_SLIDE_BYTES: '50000000' });
    let api = await httpLogin(server.baseUrl, username, PASSWORD);
    const target = await signedUpload(api, studyId, 'long-slide.tif');
    const put = await fetch(new URL(target.signedUrl, server.baseUrl), { method: 'PUT', body: await readFile(slide) });
    expect(put.status).toBeLessThan(300);
    const created = await api<{ image: ImageView }>('POST', '/api/images', {
      name: 'long-slide.tif',
      s3Key: target.s3Key,
      studyId,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const imageId = created.json.image.id;
    const image = async () => (await api<ImageView>('GET', `/api/images/${imageId}`)).json;
    const running = server;
    await waitFor(
      'processing to be under way',
      async () => {
        const now = await image();
        if (now.processingStatus === 'SUCCESS') throw new Error('processed before the test could stop the server');
        return now.processingStatus === 'SUBMITTED' && now.processingProgress > 5;
      },
      { timeoutMs: 120_000, everyMs: 100, context: () => running.output() },
    );
    const started = Date.now();
    expect(await running.terminate()).toEqual({ code: 0, signal: null });
    // The grace (1 s) and the queue's wind-down, not the whole pyramid.
    expect(Date.now() - started).toBeLessThan(15_000);

    // Back in the queue for a retry, the image neither failed nor done.
    const database = await openServerDatabase();
    try {
      const jobs = await database.raw.query<{ state: string; output: { value?: string } | null }>(
        `select state::text as state, output from pgboss.job
          where name = 'image-processing-large' and (data->>'imageId')::int = $1`,
        [imageId],
      );
      expect(jobs).toEqual([
        { state: 'retry', output: expect.objectContaining({ value: 'pg-boss shut down while active' }) as unknown },
      ]);
      const [row] = await database.raw.query<{ processing_status: string }>(
        'select processing_status from images where id = $1',
        [imageId],
      );
      expect(row?.processing_status).toBe('SUBMITTED');
      // The retry would wait for the queue's retry delay (30 s); not in a test.
      await database.raw.query(
        `update pgboss.job set start_after = now() where name = 'image-processing-large' and state = 'retry'`,
      );
    } finally {
      await database.close();
    }

    server = await startServerProcess(port, env);
    api = await httpLogin(server.baseUrl, username, PASSWORD);
    const restarted = server;
    const done = await waitFor(
      'the image to be processed after the restart',
      async () => {
        const now = await image();
        if (now.processingStatus === 'FAIL') throw new Error(`processing failed: ${now.statusMessage ?? ''}`);
        return now.processingStatus === 'SUCCESS' ? now : undefined;
      },
      { timeoutMs: 180_000, everyMs: 500, context: () => restarted.output() },
    );
    expect(done.width).toBe(24_576);
  }, 400_000);
});
