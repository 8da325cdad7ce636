// engine: postgres — pg-boss on its own connection pool: enqueue, processing, retries with backoff, expiry
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageView } from '@lamina/domain';
import { JobQueue, QUEUES } from '../src/platform/jobs/jobQueue.js';
import type { ObjectStorage } from '../src/platform/storage/storage.js';
import { startImageWorker, type RunningWorker } from '../src/modules/processing/imageWorker.js';
import { login, type Session } from './testApp.js';
import {
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  createUser,
  PASSWORD,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { waitFor } from './support/wait.js';
import { fetchJob } from './support/jobs.js';

let t: SlideTestContext;
let studyId: number;
let uploader: Session;

beforeAll(async () => {
  t = await createSlideTestApp(
    {},
    { jobs: { maintenanceIntervalSeconds: 1, pollingIntervalSeconds: 0.5, retryDelaySeconds: 1 } },
  );
  studyId = (await createStudy(t.database.db)).id;
  const user = await createUser(t.database.db, { studyRoles: [{ studyId, role: 'UPLOADER' }] });
  uploader = await login(t.app, user.username, PASSWORD);
});

afterAll(async () => {
  await t.close();
});

async function image(id: number) {
  return t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

function worker(
  storage: ObjectStorage = t.app.slides.storage,
  jobs: JobQueue = t.app.slides.jobs,
): Promise<RunningWorker> {
  return startImageWorker({ db: t.database.db, storage, jobs, tmpDir: path.join(t.dataDir, 'tmp') });
}

/** A storage whose first `failures` reads of the object fail like an unreachable S3. */
function flakyStorage(failures: number): ObjectStorage & { calls: number } {
  const real = t.app.slides.storage;
  const flaky = Object.create(real) as ObjectStorage & { calls: number };
  flaky.calls = 0;
  flaky.head = async (key: string) => {
    flaky.calls++;
    if (flaky.calls <= failures) throw new Error('connect ECONNREFUSED 127.0.0.1:9000');
    return real.head(key);
  };
  return flaky;
}

/** An uploaded image in a study of its own (so the same test slide is never a duplicate). */
async function queuedImage(file = 'small.svs'): Promise<number> {
  const study = (await createStudy(t.database.db)).id;
  const key = await putUpload(t.app.slides.storage, study, path.join(WSI_DIR, file));
  return (await createUploadedImage(t.database.db, { studyId: study, s3Key: key })).id;
}

describe('image-processing queue', () => {
  it('an upload registered through the API is processed by the worker; progress reaches 100', async () => {
    const running = await worker();
    try {
      const signed = (
        await uploader.request({
          method: 'POST',
          url: '/api/signed-urls',
          payload: { studyId, fileNames: ['CMU-1-Small-Region.svs'] },
        })
      ).json();
      const { signedUrl, s3Key } = signed.data.urls[0];
      const body = await readFile(path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
      expect(
        (
          await t.app.inject({
            method: 'PUT',
            url: signedUrl,
            payload: body,
            headers: { 'content-type': 'application/octet-stream' },
          })
        ).statusCode,
      ).toBe(200);
      const created = await uploader.request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'CMU-1-Small-Region.svs', s3Key, studyId },
      });
      const id: number = created.json().image.id;

      const seen = new Set<string>();
      const done = await waitFor('processing', async () => {
        const view = (await uploader.request({ method: 'GET', url: `/api/images/${id}` })).json<ImageView>();
        seen.add(view.processingStatus);
        return view.processingStatus === 'SUCCESS' || view.processingStatus === 'FAIL' ? view : undefined;
      });
      expect(done).toMatchObject({
        processingStatus: 'SUCCESS',
        processingProgress: 100,
        status: 'CASE_ASSIGNMENT_PENDING',
        width: 2220,
      });
      expect(done.tileUrl).toMatch(new RegExp(`^/tiles/${id}/\\{z\\}/\\{x\\}/\\{y\\}\\?t=`));
      expect([...seen].every((s) => ['PENDING', 'SUBMITTED', 'SUCCESS'].includes(s))).toBe(true);
      expect((await image(id)).processing_attempts).toBe(1);
    } finally {
      await running.stop();
    }
  });

  it('a transient error is retried with backoff and then succeeds', async () => {
    const storage = flakyStorage(1);
    const running = await worker(storage);
    try {
      const id = await queuedImage();
      await t.app.slides.jobs.send(QUEUES.imageProcessing, { imageId: id });
      const retrying = await waitFor('the first attempt to fail', async () => {
        const row = await image(id);
        return row.status_message?.startsWith('Retrying') ? row : undefined;
      });
      expect(retrying).toMatchObject({ processing_status: 'SUBMITTED', status: 'PROCESSING' });
      expect(retrying.status_message).toContain('ECONNREFUSED');
      const done = await waitFor('the retry', async () => {
        const row = await image(id);
        return row.processing_status === 'SUCCESS' ? row : undefined;
      });
      expect(done).toMatchObject({ status: 'CASE_ASSIGNMENT_PENDING', processing_attempts: 2, status_message: null });
      // pg-boss marks the job completed just after the handler returns.
      const job = await waitFor('the job to complete', async () => {
        const [row] = await t.database.raw.query<{ retry_count: number; state: string }>(
          `SELECT retry_count, state FROM pgboss.job WHERE name = $1 AND data->>'imageId' = $2`,
          [QUEUES.imageProcessing, String(id)],
        );
        return row?.state === 'completed' ? row : undefined;
      });
      expect(job.retry_count).toBe(1);
    } finally {
      await running.stop();
    }
  });

  it('when the retries are used up, the image fails with the last error as its reason', async () => {
    const storage = flakyStorage(100);
    const running = await worker(storage);
    try {
      const id = await queuedImage();
      await t.app.slides.jobs.send(
        QUEUES.imageProcessing,
        { imageId: id },
        { retryLimit: 1, retryDelay: 1, retryBackoff: false },
      );
      const failed = await waitFor('the last attempt', async () => {
        const row = await image(id);
        return row.processing_status === 'FAIL' ? row : undefined;
      });
      expect(failed).toMatchObject({
        status: 'FAIL_PROCESSING',
        processing_attempts: 2,
        status_message: 'connect ECONNREFUSED 127.0.0.1:9000',
      });
    } finally {
      await running.stop();
    }
  });

  it("a killed worker's job runs again after it expires, on a restarted worker", async () => {
    const id = await queuedImage();
    await t.app.slides.jobs.send(QUEUES.imageProcessing, { imageId: id }, { expireInSeconds: 2 });
    // A worker takes the job and dies without a word: the job stays active, the image untouched.
    const boss = await t.app.slides.jobs.instance();
    const taken = await fetchJob<{ imageId: number }>(boss, QUEUES.imageProcessing);
    expect(taken.data.imageId).toBe(id);
    await t.database.db
      .updateTable('images')
      .set({ processing_status: 'SUBMITTED', processing_attempts: 1 })
      .where('id', '=', id)
      .execute();

    // A new worker process (its own pg-boss instance on the same database) starts.
    const restarted = new JobQueue(t.database, t.app.slides.jobs.databaseUrl, {
      maintenanceIntervalSeconds: 1,
      pollingIntervalSeconds: 0.5,
      retryDelaySeconds: 1,
    });
    const running = await worker(t.app.slides.storage, restarted);
    try {
      const done = await waitFor('the expired job to run again', async () => {
        const row = await image(id);
        return row.processing_status === 'SUCCESS' ? row : undefined;
      });
      expect(done).toMatchObject({ status: 'CASE_ASSIGNMENT_PENDING', processing_attempts: 2 });
      const job = await waitFor('the job to complete', async () => {
        const [row] = await t.database.raw.query<{ retry_count: number; state: string }>(
          `SELECT retry_count, state FROM pgboss.job WHERE id = $1`,
          [taken.id],
        );
        return row?.state === 'completed' ? row : undefined;
      });
      expect(job.retry_count).toBe(1);
    } finally {
      await running.stop();
      await restarted.stop();
    }
  });
});
