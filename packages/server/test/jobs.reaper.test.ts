// engine: postgres — several reapers at once on separate connections take each job once
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IMAGE_MESSAGES } from '@lamina/domain';
import { QUEUES } from '../src/platform/jobs/jobQueue.js';
import { startImageWorker } from '../src/modules/processing/imageWorker.js';
import {
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { waitFor } from './support/wait.js';
import { fetchJob } from './support/jobs.js';

/**
 * Issue 9, defect 3: a job whose worker died stays `active` until pg-boss expires it (two hours).
 * Workers write heartbeats while they run a job; the reaper of any worker process requeues a job
 * whose heartbeat is stale, or fails its image when the job is out of retries.
 */
let t: SlideTestContext;

beforeAll(async () => {
  t = await createSlideTestApp({}, { jobs: { pollingIntervalSeconds: 0.5, heartbeatSeconds: 0.5 } });
});

afterAll(async () => {
  await t.close();
});

/** Each test starts with empty queues: the jobs of the one before do not get in the way. */
beforeEach(async () => {
  await t.app.slides.jobs.instance();
  await t.database.raw.query('DELETE FROM pgboss.job WHERE name = ANY($1)', [Object.values(QUEUES)]);
  await t.database.raw.query('DELETE FROM job_heartbeats');
});

/** An uploaded slide waiting for processing, in a study of its own (so it is nobody's duplicate). */
async function queuedImage(): Promise<number> {
  const study = (await createStudy(t.database.db)).id;
  const key = await putUpload(t.app.slides.storage, study, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
  return (await createUploadedImage(t.database.db, { studyId: study, s3Key: key })).id;
}

async function job(id: string) {
  const [row] = await t.database.raw.query<{ state: string; retry_count: number; start_after: Date }>(
    'SELECT state, retry_count, start_after FROM pgboss.job WHERE id = $1',
    [id],
  );
  return row;
}

/** A job taken by a worker that then died: active, with a heartbeat `ageSeconds` old (or none). */
async function abandonedJob(imageId: number, ageSeconds: number | null, options: { retryLimit?: number } = {}) {
  const jobs = t.app.slides.jobs;
  const boss = await jobs.instance();
  await jobs.send(
    QUEUES.imageProcessing,
    { imageId },
    options.retryLimit === undefined ? {} : { retryLimit: options.retryLimit },
  );
  const taken = await fetchJob<{ imageId: number }>(boss, QUEUES.imageProcessing);
  if (ageSeconds !== null) {
    await t.database.raw.query(
      `INSERT INTO job_heartbeats (job_id, queue, worker, beat_at) VALUES ($1, $2, 'dead-worker', now() - make_interval(secs => $3))`,
      [taken.id, QUEUES.imageProcessing, ageSeconds],
    );
  } else {
    // No heartbeat row at all (died between fetching and the first beat): the start counts.
    await t.database.raw.query(`UPDATE pgboss.job SET started_on = now() - interval '1 minute' WHERE id = $1`, [
      taken.id,
    ]);
  }
  return taken.id;
}

/** A worker whose reaper takes jobs silent for 2 s. */
function startWorker() {
  return startImageWorker({
    db: t.database.db,
    storage: t.app.slides.storage,
    jobs: t.app.slides.jobs,
    tmpDir: path.join(t.dataDir, 'tmp'),
    staleAfterSeconds: 2,
  });
}

async function image(id: number) {
  return t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('the reaper', () => {
  it('requeues at once the active jobs with a stale heartbeat (or none), and no live one', async () => {
    const stale = await abandonedJob(await queuedImage(), 120);
    const silent = await abandonedJob(await queuedImage(), null);
    const live = await abandonedJob(await queuedImage(), 1);

    const reaped = await t.app.slides.jobs.reapStale([QUEUES.imageProcessing, QUEUES.imageProcessingLarge], 30);
    expect(reaped.map((r) => r.id).sort()).toEqual([stale, silent].sort());
    expect(reaped.every((r) => r.state === 'retry')).toBe(true);
    for (const id of [stale, silent]) {
      const row = await job(id);
      expect(row?.state).toBe('retry');
      expect(row!.start_after.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    }
    expect((await job(live))?.state).toBe('active');
    const beats = await t.database.db.selectFrom('job_heartbeats').select('job_id').execute();
    expect(beats.map((b) => b.job_id)).toEqual([live]);
  });

  it('several reapers at once take each job once', async () => {
    const ids = [await abandonedJob(await queuedImage(), 120), await abandonedJob(await queuedImage(), 120)];
    const queues = [QUEUES.imageProcessing] as const;
    const results = await Promise.all([
      t.app.slides.jobs.reapStale(queues, 30),
      t.app.slides.jobs.reapStale(queues, 30),
      t.app.slides.jobs.reapStale(queues, 30),
    ]);
    const all = results.flat().map((r) => r.id);
    expect(all.sort()).toEqual([...ids].sort());
  });

  it("a worker picks up a dead worker's job within seconds and the image reaches SUCCESS", async () => {
    const imageId = await queuedImage();
    await abandonedJob(imageId, 120);
    await t.database.db
      .updateTable('images')
      .set({ processing_status: 'SUBMITTED', processing_attempts: 1, processing_progress: 40 })
      .where('id', '=', imageId)
      .execute();
    const worker = await startWorker();
    try {
      const done = await waitFor('the reaped job to run again', async () => {
        const row = await image(imageId);
        return row.processing_status === 'SUCCESS' ? row : undefined;
      });
      expect(done).toMatchObject({ status: 'CASE_ASSIGNMENT_PENDING', processing_attempts: 2 });
    } finally {
      await worker.stop();
    }
  });

  it('a job out of retries is failed, and its image fails with a reason', async () => {
    const imageId = await queuedImage();
    const jobId = await abandonedJob(imageId, 120, { retryLimit: 0 });
    const worker = await startWorker();
    try {
      const failed = await waitFor('the image to fail', async () => {
        const row = await image(imageId);
        return row.status === 'FAIL_PROCESSING' ? row : undefined;
      });
      expect(failed.status_message).toBe(IMAGE_MESSAGES.workerStopped);
      expect((await job(jobId))?.state).toBe('failed');
    } finally {
      await worker.stop();
    }
  });
});
