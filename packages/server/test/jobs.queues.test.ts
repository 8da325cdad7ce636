// engine: postgres — pg-boss working two queues side by side on a server
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../src/platform/jobs/jobQueue.js';
import { startImageWorker } from '../src/modules/processing/imageWorker.js';
import { login, type Session } from './testApp.js';
import {
  createSlideTestApp,
  createStudy,
  createUser,
  PASSWORD,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { writeTissueSlide } from './support/slides.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 9, defect 4 (last part): large jobs must not starve small ones. Uploads of at least
 * LARGE_SLIDE_BYTES go to their own queue; a worker runs one job of each queue at a time.
 */
let t: SlideTestContext;
let dir: string;
let bigSlide: string;
let uploader: Session;

beforeAll(async () => {
  t = await createSlideTestApp({ LARGE_SLIDE_BYTES: '20000000' }, { jobs: { pollingIntervalSeconds: 0.5 } });
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-queues-'));
  bigSlide = path.join(dir, 'big.tif');
  await writeTissueSlide(bigSlide, 24_576, 24_576); // 0.6 gigapixel, 75 MB: seconds of work
  const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
  uploader = await login(t.app, user.username, PASSWORD);
}, 60_000);

afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

async function register(studyId: number, file: string): Promise<number> {
  const key = await putUpload(t.app.slides.storage, studyId, file);
  const response = await uploader.request({
    method: 'POST',
    url: '/api/images',
    payload: { name: path.basename(file), s3Key: key, studyId },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ image: { id: number } }>().image.id;
}

async function queueOf(imageId: number): Promise<string | undefined> {
  const rows = await t.database.raw.query<{ name: string }>(`SELECT name FROM pgboss.job WHERE data->>'imageId' = $1`, [
    String(imageId),
  ]);
  return rows[0]?.name;
}

async function row(id: number) {
  return t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('large and small uploads', () => {
  it('go to separate queues, and a small slide is done while a large one is still being processed', async () => {
    const studyId = (await createStudy(t.database.db)).id;
    const large = await register(studyId, bigSlide);
    const small = await register(studyId, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
    expect(await queueOf(large)).toBe(QUEUES.imageProcessingLarge);
    expect(await queueOf(small)).toBe(QUEUES.imageProcessing);

    const worker = await startImageWorker({
      db: t.database.db,
      storage: t.app.slides.storage,
      jobs: t.app.slides.jobs,
      tmpDir: path.join(t.dataDir, 'tmp'),
    });
    try {
      await waitFor('the small slide to be processed', async () => (await row(small)).processing_status === 'SUCCESS', {
        timeoutMs: 60_000,
        everyMs: 100,
      });
      // The large one started first and is still going.
      expect((await row(large)).processing_status).toBe('SUBMITTED');
      await waitFor('the large slide to be processed', async () => (await row(large)).processing_status === 'SUCCESS', {
        timeoutMs: 120_000,
        everyMs: 250,
      });
    } finally {
      await worker.stop();
    }
  }, 180_000);
});
