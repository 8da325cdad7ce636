import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { createStorage } from './storage/createStorage.js';
import type { AppStorage } from './storage/uploadSigning.js';
import { JobQueue } from './jobs/jobQueue.js';
import { Mailer } from './mail/mailer.js';
import { TileTokens } from './tiles/tileToken.js';

/** The shared services of the slide pipeline, made once per process (app.slides): api, tiles and worker use them. */
export interface SlidePipeline {
  storage: AppStorage;
  jobs: JobQueue;
  mailer: Mailer;
  /** Tile tokens: HMAC with SESSION_SECRET, so a separate tile host with the same secret verifies them. */
  tileTokens: TileTokens;
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
    async close() {
      await jobs.stop();
      mailer.close();
    },
  };
}
