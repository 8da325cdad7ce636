import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Db } from '../../platform/db/database.js';
import { IMAGE_MESSAGES } from '@lamina/domain';
import { QUEUES, type JobQueue, type ReapedJob } from '../../platform/jobs/jobQueue.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { LocalStorage } from '../../platform/storage/localStorage.js';
import { markFailed, processImage, type ProcessingDeps } from './processImage.js';
import type { SlideLimits } from './slideLimits.js';

export interface ImageJobData {
  imageId: number;
}

export interface WorkerDeps {
  db: Db;
  storage: ObjectStorage;
  jobs: JobQueue;
  mailer?: Mailer | undefined;
  /** Scratch folder (downloads, pyramids before upload); default the OS temp folder. */
  tmpDir?: string | undefined;
  log?: ProcessingDeps['log'];
  /** How often undelivered mail is retried; default 60 s (0 = never). */
  mailRetryMs?: number;
  /** What a slide may claim before decoding; default DEFAULT_SLIDE_LIMITS. */
  limits?: SlideLimits | undefined;
  /** Seconds one job may take; default DEFAULT_PROCESSING_TIME_LIMIT_SECONDS. */
  timeLimitSeconds?: number | undefined;
  /** A job whose heartbeat is older than this many seconds is taken from its dead worker. Default 30. */
  staleAfterSeconds?: number | undefined;
  /** How often this process looks for such jobs; default a third of staleAfterSeconds. */
  reapIntervalMs?: number | undefined;
}

const IMAGE_QUEUES = [QUEUES.imageProcessing, QUEUES.imageProcessingLarge] as const;

export interface RunningWorker {
  stop(): Promise<void>;
}

/**
 * The processing worker (ROLES includes worker): takes one job at a time from each image queue
 * (small and large uploads), so a multi-GB slide never holds up the small ones. pg-boss retries a
 * job that throws (with backoff), and the job knows its attempt, so the last one marks the image
 * failed instead of throwing. A job whose worker died (kill -9, a lost machine) stops sending
 * heartbeats: the reaper of any worker process (the job queue's, shared by every job kind) puts
 * it back in the queue within `staleAfterSeconds` plus one reaper interval, or fails the image
 * when it is out of retries.
 */
export async function startImageWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const processing: ProcessingDeps = {
    db: deps.db,
    storage: deps.storage,
    tmpDir: deps.tmpDir ?? path.join(tmpdir(), 'lamina-worker'),
    log: deps.log,
    limits: deps.limits,
    timeLimitSeconds: deps.timeLimitSeconds,
  };
  await removeStaleWork(processing.tmpDir);
  if (deps.storage instanceof LocalStorage) await deps.storage.removeStale().catch(() => 0);
  const handler = async (job: { data: ImageJobData; retryCount: number; retryLimit: number }) => {
    const imageId: unknown = job.data.imageId;
    if (typeof imageId !== 'number' || !Number.isSafeInteger(imageId) || imageId <= 0) return; // not ours: completed as a no-op
    await processImage(processing, imageId, { retryCount: job.retryCount, retryLimit: job.retryLimit });
  };
  const workerIds = await Promise.all(
    IMAGE_QUEUES.map((queue) =>
      deps.jobs.work<ImageJobData>(queue, handler, { onReaped: (job) => afterReaped(deps, job) }),
    ),
  );
  // The process's reaper, shared by every job kind (jobQueue.ts startReaper).
  await deps.jobs.startReaper(deps.staleAfterSeconds ?? 30, {
    ...(deps.reapIntervalMs !== undefined && { intervalMs: deps.reapIntervalMs }),
    ...(deps.log && { log: deps.log }),
  });

  const mailTimer =
    deps.mailer && (deps.mailRetryMs ?? 60_000) > 0
      ? setInterval(() => {
          void deps.mailer?.deliverPending().catch(() => undefined);
        }, deps.mailRetryMs ?? 60_000)
      : null;
  mailTimer?.unref();
  return {
    async stop() {
      if (mailTimer) clearInterval(mailTimer);
      // A queue already stopping takes its workers off itself (and hands back what still runs).
      for (const id of workerIds) await deps.jobs.offWork(id);
    },
  };
}

/** A job taken from a dead worker (the reaper logged it): out of retries, its image fails with a reason. */
async function afterReaped(deps: WorkerDeps, job: ReapedJob): Promise<void> {
  const imageId = (job.data as Partial<ImageJobData> | null)?.imageId;
  if (job.state === 'failed' && typeof imageId === 'number')
    await markFailed(deps.db, imageId, IMAGE_MESSAGES.workerStopped);
}

/** Work folders a killed worker left behind (older than any job may run). */
async function removeStaleWork(tmpDir: string, maxAgeMs = 6 * 3600_000): Promise<void> {
  await mkdir(tmpDir, { recursive: true });
  const now = Date.now();
  for (const name of await readdir(tmpDir)) {
    if (!name.startsWith('image-')) continue;
    const entry = path.join(tmpDir, name);
    const { mtimeMs } = await stat(entry).catch(() => ({ mtimeMs: now }));
    if (now - mtimeMs > maxAgeMs) await rm(entry, { recursive: true, force: true });
  }
}
