// engine: postgres — a real server process killed mid-job; its job retried after the restart on the shared database
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageView, StudyListResponse } from '@lamina/domain';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { LocalStorage } from '../src/platform/storage/localStorage.js';
import { freePort, httpLogin, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { writeTissueSlide } from './support/slides.js';
import { waitFor } from './support/wait.js';
import { createServerDatabase } from './testApp.js';

/**
 * Issue 9, defect 3, end to end: the real server process is killed (SIGKILL) while its worker
 * builds a pyramid, then started again on the same data. The dead attempt's job is found by its
 * stale heartbeat and retried within seconds (WORKER_STALE_AFTER), not after pg-boss's expiry; the
 * image reaches SUCCESS with one pyramid and nothing left behind.
 */
const PASSWORD = 'crash-test-password-1';
const SIZE = 32_768;

let dir: string;
let slide: string;
let env: Record<string, string>;
let dropDatabase: (() => Promise<void>) | null = null;
let server: ServerProcess | null = null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-crash-'));
  slide = path.join(dir, 'big-slide.tif');
  await writeTissueSlide(slide, SIZE, SIZE);
  env = {
    DATA_DIR: path.join(dir, 'data'),
    DEMO: 'true',
    DEMO_PASSWORD: PASSWORD,
    WORKER_HEARTBEAT_INTERVAL: '1',
    WORKER_STALE_AFTER: '3',
    // The slide goes to the large-slide queue, beside the demo slide's small one.
    LARGE_SLIDE_BYTES: '50000000',
  };
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const created = await createServerDatabase(url, 'lamina_crash');
    env.DATABASE_URL = created.url;
    dropDatabase = created.drop;
  }
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await dropDatabase?.();
  await rm(dir, { recursive: true, force: true });
});

describe('a worker killed mid-pyramid', () => {
  it('is retried after the restart within the stale interval; one pyramid, no orphan files', async () => {
    const port = await freePort();
    server = await startServerProcess(port, env);
    let api = await httpLogin(server.baseUrl, 'studyadmin', PASSWORD);
    const studies = await api<StudyListResponse>('GET', '/api/studies/list');
    const studyId = studies.json.studies[0]?.id;
    if (!studyId) throw new Error('no demo study');

    // Upload through the signed URL and register, as the browser does.
    const signed = await api<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>('POST', '/api/signed-urls', {
      studyId,
      fileNames: ['big-slide.tif'],
    });
    const target = signed.json.data.urls[0];
    if (!target) throw new Error(`no signed URL: ${JSON.stringify(signed.json)}`);
    const put = await fetch(new URL(target.signedUrl, server.baseUrl), { method: 'PUT', body: await readFile(slide) });
    expect(put.status).toBeLessThan(300);
    const created = await api<{ image: ImageView }>('POST', '/api/images', {
      name: 'big-slide.tif',
      s3Key: target.s3Key,
      studyId,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const imageId = created.json.image.id;
    const image = async () => (await api<ImageView>('GET', `/api/images/${imageId}`)).json;

    // Killed while the pyramid is being written or stored (progress 35–97).
    const seen = await waitFor(
      'the pyramid to be under way',
      async () => {
        const now = await image();
        if (now.processingStatus === 'SUCCESS') throw new Error('processed before the test could kill the worker');
        return now.processingProgress > 35 && now.processingProgress < 97 ? now : undefined;
      },
      { timeoutMs: 120_000, everyMs: 150, context: () => server?.output() ?? '' },
    );
    expect(seen.processingStatus).toBe('SUBMITTED');
    await server.crash();
    const killedAt = Date.now();
    // A kill while the pyramid is being stored leaves that write's temporary file (never a visible
    // object): housekeeping's to remove, not the retry's.
    const storage = path.join(env.DATA_DIR as string, 'storage');
    const tmpFiles = async () =>
      existsSync(path.join(storage, '.tmp')) ? (await readdir(path.join(storage, '.tmp'))).sort() : [];
    const leftByTheKill = await tmpFiles();

    server = await startServerProcess(port, env);
    api = await httpLogin(server.baseUrl, 'studyadmin', PASSWORD);
    const done = await waitFor(
      'the image to be processed again',
      async () => {
        const now = await image();
        if (now.processingStatus === 'FAIL') throw new Error(`processing failed: ${now.statusMessage ?? ''}`);
        return now.processingStatus === 'SUCCESS' ? now : undefined;
      },
      { timeoutMs: 120_000, everyMs: 500, context: () => server?.output() ?? '' },
    );
    // Well within the two hours pg-boss would have waited (the stale interval is 3 s here).
    expect(Date.now() - killedAt).toBeLessThan(90_000);
    expect(done.status).toBe('CASE_ASSIGNMENT_PENDING');
    expect(done.width).toBe(SIZE);

    // One pyramid, and nothing else of the image in storage; no half-written objects; no scratch files.
    expect(await readdir(path.join(storage, 'images', String(imageId)))).toEqual(['pyramid.tif']);
    const pyramid = await readTiffStructure(path.join(storage, 'images', String(imageId), 'pyramid.tif'));
    expect(pyramid.ifds[0]).toMatchObject({ width: SIZE, height: SIZE });
    // The retry left no temporary file; the killed write's (if the kill came while storing) is
    // removed by housekeeping once stale.
    expect((await tmpFiles()).filter((name) => !leftByTheKill.includes(name))).toEqual([]);
    await new LocalStorage({ root: storage, secret: 'housekeeping' }).removeStale(0);
    expect(await tmpFiles()).toEqual([]);
    // The attempt that succeeded removes its scratch folder right after it records SUCCESS (in its
    // `finally`), so give it a moment; the dead attempt's folder was removed before the retry began.
    const scratch = path.join(env.DATA_DIR as string, 'tmp');
    const scratchOf = async () =>
      (existsSync(scratch) ? await readdir(scratch) : []).filter((name) => name.startsWith(`image-${imageId}-`));
    await waitFor(
      'the scratch folders to be removed',
      async () => ((await scratchOf()).length === 0 ? true : undefined),
      {
        timeoutMs: 10_000,
        everyMs: 100,
        context: () => `scratch folder ${scratch}`,
      },
    );
  }, 300_000);
});
