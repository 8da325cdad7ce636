import type { FastifyInstance } from 'fastify';
import type { Config } from '../../platform/config.js';
import type { Database } from '../../platform/db/database.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import { createStorage } from '../../platform/storage/createStorage.js';
import { LocalStorage } from '../../platform/storage/localStorage.js';
import { sampleRoutes } from '../samples/sampleRoutes.js';
import { mldRoutes } from '../mld/mldRoutes.js';
import { UploadKeys } from '../../platform/storage/keys.js';
import type { AppStorage } from '../../platform/storage/uploadSigning.js';
import { JobQueue } from '../../platform/jobs/jobQueue.js';
import { Mailer } from '../../platform/mail/mailer.js';
import { TileTokens } from '../../platform/tiles/tileToken.js';
import { storageRoutes } from '../uploads/storageRoutes.js';
import { uploadRoutes } from '../uploads/uploadRoutes.js';
import { imageRoutes } from './imageRoutes.js';
import { ImageService } from './imageService.js';

/** The shared services of the slide pipeline, made once per process (app.slides). */
export interface SlidePipeline {
  storage: AppStorage;
  jobs: JobQueue;
  mailer: Mailer;
  /** Tile tokens: HMAC with SESSION_SECRET, so a separate tile host with the same secret verifies them. */
  tileTokens: TileTokens;
  images: ImageService;
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    slides: SlidePipeline;
  }
}

export interface SlidePipelineOverrides {
  storage?: AppStorage | undefined;
  jobs?: JobQueue | undefined;
  mailer?: Mailer | undefined;
}

export function createSlidePipeline(
  config: Config,
  database: Database,
  overrides: SlidePipelineOverrides = {},
  metrics?: Metrics,
): SlidePipeline {
  const storage = overrides.storage ?? createStorage(config);
  const jobs =
    overrides.jobs ??
    new JobQueue(database, config.databaseUrl, {
      heartbeatSeconds: config.processing.heartbeatSeconds,
      // pg-boss's own expiry is only a backstop now: heartbeats find a dead worker within a minute.
      expireInSeconds: config.processing.timeLimitSeconds + 15 * 60,
      // Scheduled jobs (the query reminders) are timed by the worker processes.
      schedule: config.roles.has('worker') && config.queryReminderCron !== null,
    });
  const mailer = overrides.mailer ?? new Mailer(database.db, config.smtpUrl, config.mailFrom);
  return {
    storage,
    jobs,
    mailer,
    tileTokens: new TileTokens(config.sessionSecret),
    images: new ImageService({
      db: database.db,
      storage,
      jobs,
      mailer,
      largeSlideBytes: config.processing.largeSlideBytes,
      metrics,
    }),
    async close() {
      await jobs.stop();
      mailer.close();
    },
  };
}

/** The API routes of the slide pipeline: uploads, the local storage's signed URLs, images, sample data, .mld imports. */
export function slideApiRoutes(database: Database, config: Config, slides: SlidePipeline) {
  return async (app: FastifyInstance) => {
    if (slides.storage instanceof LocalStorage) await app.register(storageRoutes(slides.storage));
    const keys = new UploadKeys(config.sessionSecret);
    await app.register(uploadRoutes(slides.storage, config.uploadUrlTtlSeconds, keys));
    await app.register(
      sampleRoutes({ db: database.db, storage: slides.storage, keys, ttlSeconds: config.uploadUrlTtlSeconds }),
    );
    await app.register(
      mldRoutes({
        db: database.db,
        storage: slides.storage,
        keys,
        jobs: slides.jobs,
        ttlSeconds: config.uploadUrlTtlSeconds,
      }),
    );
    await app.register(
      imageRoutes({
        db: database.db,
        config,
        storage: slides.storage,
        tileTokens: slides.tileTokens,
        images: slides.images,
      }),
    );
  };
}
