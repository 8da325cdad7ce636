// engine: postgres — the reaper of every queue on pg-boss's own pool, jobs of a dead worker taken back
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MLD_IMPORT_MESSAGES, type MldRecord } from '@lamina/domain';
import { writePixelMld } from '@lamina/test-support/mldWriter';
import { QUEUES, type QueueName } from '../src/platform/jobs/jobQueue.js';
import { startMldWorker } from '../src/commands/mldImport.js';
import { login, type Session } from './testApp.js';
import {
  createCase,
  createSlideTestApp,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
  type SlideTestContext,
} from './factories.js';
import { waitFor } from './support/wait.js';
import { fetchJob } from './support/jobs.js';

/**
 * Issue 26 item 12: every job kind has the heartbeat and the reaper the image queues had (issue 9).
 * An .mld import whose worker was killed mid-run stayed PROCESSING until pg-boss's two-hour expiry;
 * now the reaper of any worker process gives its job back to the queue (the import runs again and
 * completes) or, out of retries, ends the import in ERROR with a message, within the stale interval
 * and one reaper round. The query-reminder sweep is reaped the same way.
 */
let t: SlideTestContext;
let isc: Session;
let imageId: number;
const SIZE = { width: 2000, height: 1500 };
const STALE_SECONDS = 2;

beforeAll(async () => {
  t = await createSlideTestApp({}, { jobs: { pollingIntervalSeconds: 0.5, heartbeatSeconds: 0.5 } });
  const db = t.database.db;
  const studyId = (await createStudy(db)).id;
  const caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  imageId = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', ...SIZE, mpp: 0.5 })).id;
  const made = await createUser(db, { studyRoles: [{ studyId, role: 'ISC' }] });
  isc = await login(t.app, made.username, PASSWORD);
}, 60_000);

afterAll(async () => {
  await t.close();
});

beforeEach(async () => {
  await t.app.slides.jobs.instance();
  await t.database.raw.query('DELETE FROM pgboss.job WHERE name = ANY($1)', [Object.values(QUEUES)]);
  await t.database.raw.query('DELETE FROM job_heartbeats');
});

/** An .mld uploaded and registered for the image: QUEUED, its mld-import job sent. */
async function registeredMld(): Promise<number> {
  const signed = await isc.request({
    method: 'POST',
    url: '/api/mld/get-signed-urls',
    payload: { fileNames: ['crash.mld'] },
  });
  expect(signed.statusCode, signed.body).toBe(200);
  const { s3Key, signedUrl } = signed.json<{ urls: { s3Key: string; signedUrl: string }[] }>().urls[0]!;
  const bytes = writePixelMld({
    size: SIZE,
    imagePath: 'D:\\Scans\\crash.svs',
    classes: [{ layer: 'ROI', names: [{ name: 'AI HPF', color: 0x00ff00 }] }],
    circles: [{ x: 500, y: 500, radius: 120 }],
  });
  const put = await t.app.inject({
    method: 'PUT',
    url: signedUrl,
    payload: Buffer.from(bytes),
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(put.statusCode).toBeLessThan(300);
  const registered = await isc.request({
    method: 'POST',
    url: '/api/mld',
    payload: { name: 'crash.mld', s3Key, imageId },
  });
  expect(registered.statusCode, registered.body).toBe(201);
  return registered.json<{ mld: MldRecord }>().mld.mldId;
}

/**
 * The job of `queue` taken by a worker that was then killed: active, its heartbeat two minutes old;
 * `lastAttempt` makes it the job's last try.
 */
async function killedMidRun(queue: QueueName, options: { lastAttempt?: boolean } = {}): Promise<string> {
  const boss = await t.app.slides.jobs.instance();
  const taken = await fetchJob(boss, queue);
  await t.database.raw.query(
    `INSERT INTO job_heartbeats (job_id, queue, worker, beat_at) VALUES ($1, $2, 'killed-worker', now() - interval '2 minutes')`,
    [taken.id, queue],
  );
  if (options.lastAttempt)
    await t.database.raw.query('UPDATE pgboss.job SET retry_count = retry_limit WHERE id = $1', [taken.id]);
  return taken.id;
}

async function mldRow(id: number) {
  return t.database.db.selectFrom('mld_files').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function jobState(id: string): Promise<string | undefined> {
  const [row] = await t.database.raw.query<{ state: string }>('SELECT state FROM pgboss.job WHERE id = $1', [id]);
  return row?.state;
}

async function stopWorking(ids: readonly string[]) {
  for (const id of ids) await t.app.slides.jobs.offWork(id);
}

describe('the reaper covers every job kind (issue 26 item 12)', () => {
  it('an .mld import killed mid-run (PROCESSING) is retried after the restart and completes, well within a minute', async () => {
    const mldId = await registeredMld();
    await killedMidRun(QUEUES.mldImport);
    // The killed worker had begun: the file says PROCESSING.
    await t.database.db.updateTable('mld_files').set({ status: 'PROCESSING' }).where('id', '=', mldId).execute();

    const restartedAt = Date.now();
    const worker = await startMldWorker({
      db: t.database.db,
      storage: t.app.slides.storage,
      jobs: t.app.slides.jobs,
      staleAfterSeconds: STALE_SECONDS,
    });
    try {
      const done = await waitFor(
        'the import to run again',
        async () => {
          const row = await mldRow(mldId);
          return row.status === 'COMPLETE' ? row : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(done.error_message).toBeNull();
      expect(Date.now() - restartedAt).toBeLessThan(30_000);
    } finally {
      await worker.stop();
    }
  }, 90_000);

  it('out of retries, the killed import ends in ERROR with a message (audited), and its job is failed', async () => {
    const mldId = await registeredMld();
    const jobId = await killedMidRun(QUEUES.mldImport, { lastAttempt: true });
    await t.database.db.updateTable('mld_files').set({ status: 'PROCESSING' }).where('id', '=', mldId).execute();

    const worker = await startMldWorker({
      db: t.database.db,
      storage: t.app.slides.storage,
      jobs: t.app.slides.jobs,
      staleAfterSeconds: STALE_SECONDS,
    });
    try {
      const failed = await waitFor(
        'the import to fail',
        async () => {
          const row = await mldRow(mldId);
          return row.status === 'ERROR' ? row : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(failed.error_message).toBe(MLD_IMPORT_MESSAGES.workerStopped);
      expect(await jobState(jobId)).toBe('failed');
      const audit = await t.database.db
        .selectFrom('audit_events')
        .select(['action', 'reason'])
        .where('entity_type', '=', 'mld_file')
        .where('entity_id', '=', String(mldId))
        .where('action', '=', 'MLD_IMPORT_FAILED')
        .execute();
      expect(audit).toEqual([{ action: 'MLD_IMPORT_FAILED', reason: MLD_IMPORT_MESSAGES.workerStopped }]);
    } finally {
      await worker.stop();
    }
  }, 90_000);

  it('a query-reminder sweep whose worker died is taken back and run again', async () => {
    const jobs = t.app.slides.jobs;
    await jobs.send(QUEUES.queryReminders, {});
    const jobId = await killedMidRun(QUEUES.queryReminders);
    let runs = 0;
    const id = await jobs.work(QUEUES.queryReminders, async () => {
      runs += 1;
    });
    await jobs.startReaper(STALE_SECONDS);
    try {
      await waitFor('the sweep to run again', async () => runs > 0 && (await jobState(jobId)) === 'completed', {
        timeoutMs: 60_000,
      });
    } finally {
      await stopWorking([id]);
    }
  }, 90_000);

  it('the reaper takes the jobs of every queue this process works, none of a queue it does not', async () => {
    const jobs = t.app.slides.jobs;
    const queues = Object.values(QUEUES);
    for (const queue of queues) await jobs.send(queue, {});
    const dead = new Map<QueueName, string>();
    for (const queue of queues) dead.set(queue, await killedMidRun(queue));
    const worked = queues.filter((q) => q !== QUEUES.imageProcessingLarge);
    const ids: string[] = [];
    const seen: string[] = [];
    for (const queue of worked)
      ids.push(
        await jobs.work(queue, async () => undefined, {
          pollingIntervalSeconds: 60,
          onReaped: async (job) => {
            seen.push(`${job.name} ${job.state}`);
          },
        }),
      );
    try {
      expect([...jobs.workedQueues()].sort()).toEqual([...worked].sort());
      await jobs.startReaper(STALE_SECONDS);
      await waitFor('every worked queue’s dead job to be reaped', async () => seen.length >= worked.length, {
        timeoutMs: 30_000,
      });
      expect(seen.sort()).toEqual(worked.map((q) => `${q} retry`).sort());
      expect(await jobState(dead.get(QUEUES.imageProcessingLarge)!)).toBe('active');
    } finally {
      await stopWorking(ids);
    }
    expect(jobs.workedQueues()).not.toContain(QUEUES.mldImport);
  }, 90_000);
});
