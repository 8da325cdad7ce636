import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Db } from '../../platform/db/database.js';
import { QUEUES, type JobQueue } from '../../platform/jobs/jobQueue.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { LocalStorage } from '../../platform/storage/localStorage.js';
import { processImage, type ProcessingDeps } from './processImage.js';

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
}

export interface RunningWorker {
  stop(): Promise<void>;
}

/**
 * The processing worker (ROLES includes worker): takes `image-processing` jobs one at a time. pg-boss
 * retries a job that throws (with backoff) or that stays active past its expiry (its worker died),
 * and the job knows its attempt, so the last one marks the image failed instead of throwing.
 */
export async function startImageWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const processing: ProcessingDeps = {
    db: deps.db,
    storage: deps.storage,
    tmpDir: deps.tmpDir ?? path.join(tmpdir(), 'lamina-worker'),
    log: deps.log,
  };
  await removeStaleWork(processing.tmpDir);
  if (deps.storage instanceof LocalStorage) await deps.storage.removeStale().catch(() => 0);
  const workerId = await deps.jobs.work<ImageJobData>(QUEUES.imageProcessing, async (job) => {
    const imageId: unknown = job.data.imageId;
    if (typeof imageId !== 'number' || !Number.isSafeInteger(imageId) || imageId <= 0) return; // not ours: completed as a no-op
    await processImage(processing, imageId, { retryCount: job.retryCount, retryLimit: job.retryLimit });
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
      const boss = await deps.jobs.instance();
      await boss.offWork({ id: workerId });
    },
  };
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
