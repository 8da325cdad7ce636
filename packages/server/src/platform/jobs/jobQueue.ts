import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import PgBoss from 'pg-boss';
import { CompiledQuery, sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { DB } from '../db/schema.js';

/**
 * Queue names. Uploads above LARGE_SLIDE_BYTES go to their own queue, which a worker takes one job
 * of at a time beside one of the other: a multi-GB slide never holds up small ones.
 */
export const QUEUES = {
  imageProcessing: 'image-processing',
  imageProcessingLarge: 'image-processing-large',
  /** A scheduled sweep (cron): the reminder e-mails of queries whose follow-up date came (issue 15). */
  queryReminders: 'query-reminders',
  /** Imports of .mld files (issue 17): parse, link to the image, insert the AI annotations. */
  mldImport: 'mld-import',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** pg-boss's `db` option bound to a Kysely transaction: the job is enqueued atomically with the row. */
export function inTransaction(tx: Transaction<DB>) {
  return {
    executeSql: async (text: string, values: unknown[]) => ({
      rows: (await tx.executeQuery(CompiledQuery.raw(text, values))).rows,
    }),
  };
}

/** A job the reaper took from a dead worker: back in the queue ('retry') or out of retries ('failed'). */
export interface ReapedJob {
  id: string;
  name: string;
  state: 'retry' | 'failed';
  data: unknown;
}

/** This process's name in job heartbeats (host, pid and a random part). */
export const WORKER_NAME = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

export interface JobQueueOptions {
  /** Retries after the first attempt (a failed or expired job runs again). Default 3. */
  retryLimit?: number;
  /** Seconds before the first retry; doubled each time with backoff. Default 30. */
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /**
   * A job active longer than this is taken as lost (its worker died) and retried. Also the
   * longest a processing run may take. Default 2 hours.
   */
  expireInSeconds?: number;
  /** How often expired jobs are looked for. Default 60 s. */
  maintenanceIntervalSeconds?: number;
  /** How often an idle worker polls. Default 2 s. */
  pollingIntervalSeconds?: number;
  /** How often a running job's heartbeat is written. Default 10 s. */
  heartbeatSeconds?: number;
  /**
   * Run pg-boss's clock for scheduled (cron) jobs in this process. Default false: worker processes
   * turn it on; pg-boss makes sure each cron tick is sent once whatever number of processes run it.
   */
  schedule?: boolean;
}

const DEFAULTS: Required<JobQueueOptions> = {
  retryLimit: 3,
  retryDelaySeconds: 30,
  retryBackoff: true,
  expireInSeconds: 2 * 60 * 60,
  maintenanceIntervalSeconds: 60,
  pollingIntervalSeconds: 2,
  heartbeatSeconds: 10,
  schedule: false,
};

/** Told each job's queue, run time in seconds and whether its handler completed or threw. */
export type JobObserver = (queue: QueueName, seconds: number, outcome: 'completed' | 'failed') => void;

export type JobHandler<T> = (job: PgBoss.JobWithMetadata<T>) => Promise<void>;

/**
 * Told of each job of its queue the reaper took from a dead worker: back in the queue ('retry') or,
 * out of retries, failed — then the work it stood for must end with a reason (an image FAIL, an
 * .mld import ERROR), since no handler will run for it again.
 */
export type ReapedHandler = (job: ReapedJob) => Promise<void>;

/** Where the reaper writes what it took and what went wrong. */
export interface ReaperLog {
  warn(obj: object, msg?: string): void;
}

interface PgError {
  code?: string;
  message?: string;
}

/**
 * pg-boss on the application's own database. Embedded PGlite: pg-boss runs its SQL through the
 * database's raw adapter, under the same connection mutex as everything else (parameterised SQL
 * through `query`, multi-statement scripts through `exec`). PostgreSQL: pg-boss's own small pool
 * on DATABASE_URL.
 *
 * Starting is lazy and idempotent: an API process starts the queue on its first `send`; a worker
 * process starts it with `work`.
 */
export class JobQueue {
  private boss: PgBoss | null = null;
  private starting: Promise<PgBoss> | null = null;
  private stopped = false;
  readonly options: Required<JobQueueOptions>;

  constructor(
    private readonly database: Database,
    /** PostgreSQL: pg-boss's own pool connects here; unset → through the database's raw adapter. */
    readonly databaseUrl: string | undefined,
    options: JobQueueOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Starts pg-boss (creating or migrating its schema) and the queues; safe to call repeatedly. */
  start(): Promise<PgBoss> {
    if (this.stopped) return Promise.reject(new Error('The job queue is stopped'));
    this.starting ??= this.doStart().catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  private async doStart(): Promise<PgBoss> {
    const common = {
      schema: 'pgboss',
      schedule: this.options.schedule,
      supervise: true,
      maintenanceIntervalSeconds: this.options.maintenanceIntervalSeconds,
    };
    const boss =
      this.database.kind === 'pglite' || !this.databaseUrl
        ? new PgBoss({ ...common, db: { executeSql: (text, values) => this.executeSql(text, values) } })
        : new PgBoss({ ...common, connectionString: this.databaseUrl, max: 4, application_name: 'lamina-jobs' });
    boss.on('error', (error: unknown) => {
      // Transient errors of the maintenance loop (e.g. the database closing in tests) are retried by pg-boss.
      if (process.env.LOG_LEVEL === 'debug') console.error('pg-boss:', error);
    });
    await boss.start();
    for (const name of Object.values(QUEUES)) {
      const queue = {
        name,
        retryLimit: this.options.retryLimit,
        retryDelay: this.options.retryDelaySeconds,
        retryBackoff: this.options.retryBackoff,
        expireInSeconds: this.options.expireInSeconds,
      };
      // Processes starting together on a new database create the same queues at once. pg-boss's
      // create_queue (a partition of its job table, with keys and indexes) then deadlocks with
      // another process's (40P01: PostgreSQL aborts one of them) or finds the queue just made
      // (23505). Either way nothing was half made: look again and go on.
      for (let attempt = 1; ; attempt += 1) {
        try {
          if (await boss.getQueue(name)) await boss.updateQueue(name, queue);
          else await boss.createQueue(name, queue);
          break;
        } catch (error) {
          const code = (error as PgError).code;
          if ((code !== '40P01' && code !== '23505') || attempt >= 10) throw error;
        }
      }
    }
    this.boss = boss;
    return boss;
  }

  private async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
    const { raw } = this.database;
    if (values && values.length > 0) return { rows: (await raw.query(text, values)) ?? [] };
    try {
      // (On PostgreSQL a multi-statement script answers no rows here, which pg-boss does not read.)
      return { rows: (await raw.query(text)) ?? [] };
    } catch (error) {
      // PGlite refuses several statements in one prepared statement: run the script as such.
      if ((error as PgError).code === '42601' && /multiple commands/i.test((error as PgError).message ?? '')) {
        await raw.exec(text);
        return { rows: [] };
      }
      throw error;
    }
  }

  async send(queue: QueueName, data: object, options: PgBoss.SendOptions = {}): Promise<string | null> {
    const boss = await this.start();
    return boss.send(queue, data, options);
  }

  /**
   * Runs `handler` for each job of `queue`, one at a time per worker, writing the job's heartbeat
   * (job_heartbeats) while it runs. Returns the worker id.
   */
  async work<T extends object>(
    queue: QueueName,
    handler: JobHandler<T>,
    options: { pollingIntervalSeconds?: number; onReaped?: ReapedHandler } = {},
  ): Promise<string> {
    const boss = await this.start();
    const id = await boss.work<T>(
      queue,
      {
        batchSize: 1,
        includeMetadata: true,
        pollingIntervalSeconds: options.pollingIntervalSeconds ?? this.options.pollingIntervalSeconds,
      },
      async (jobs) => {
        for (const job of jobs) await this.withHeartbeat(queue, job.id, () => handler(job));
      },
    );
    this.working.set(id, { queue, onReaped: options.onReaped ?? null });
    return id;
  }

  /** Stops the worker `id` of `work` (its running job is left to finish) and its queue's reaping here. */
  async offWork(id: string): Promise<void> {
    this.working.delete(id);
    const boss = await this.instance().catch(() => null);
    if (boss) await boss.offWork({ id });
  }

  /** The workers of this process: their queue and what to do with a reaped job of it. */
  private readonly working = new Map<string, { queue: QueueName; onReaped: ReapedHandler | null }>();

  /** The queues this process works on (each once). */
  workedQueues(): QueueName[] {
    return [...new Set([...this.working.values()].map((w) => w.queue))];
  }

  private reaper: { timer: NodeJS.Timeout; staleAfterSeconds: number } | null = null;

  /**
   * The reaper of this process (issue 9; every job kind since issue 26): every `intervalMs`
   * (default a third of `staleAfterSeconds`, at least 1 s), and once at once, the jobs of every
   * queue this process works on whose worker stopped sending heartbeats `staleAfterSeconds` ago go
   * back to their queue or, out of retries, are failed, and the queue's `onReaped` is told. A job of
   * a dead worker is so retried or ended within `staleAfterSeconds` plus one interval — whatever
   * its kind (an image, an .mld import, a reminder sweep), not after pg-boss's expiry. Started once
   * per process; later calls keep the first one's timing. Ends with `stop`.
   */
  async startReaper(staleAfterSeconds: number, options: { intervalMs?: number; log?: ReaperLog } = {}): Promise<void> {
    if (this.reaper || this.stopped) return;
    let reaping = false;
    const round = async () => {
      if (reaping) return;
      reaping = true;
      try {
        await this.reapWorked(staleAfterSeconds, options.log);
      } catch (error) {
        options.log?.warn({ err: error }, 'job reaper failed');
      } finally {
        reaping = false;
      }
    };
    const timer = setInterval(() => void round(), options.intervalMs ?? Math.max(1000, (staleAfterSeconds * 1000) / 3));
    timer.unref();
    this.reaper = { timer, staleAfterSeconds };
    await round();
  }

  /** One round of the reaper: the stale jobs of the queues worked here, each told to its queue's `onReaped`. */
  async reapWorked(staleAfterSeconds: number, log?: ReaperLog): Promise<ReapedJob[]> {
    const queues = this.workedQueues();
    if (queues.length === 0) return [];
    const reaped = await this.reapStale(queues, staleAfterSeconds);
    for (const job of reaped) {
      log?.warn({ jobId: job.id, queue: job.name, data: job.data, state: job.state }, 'job of a dead worker reaped');
      const onReaped = [...this.working.values()].find((w) => w.queue === job.name && w.onReaped)?.onReaped;
      try {
        await onReaped?.(job);
      } catch (error) {
        log?.warn({ err: error, jobId: job.id, queue: job.name }, 'a reaped job could not be ended');
      }
    }
    return reaped;
  }

  private observer: JobObserver | null = null;

  /** Told the queue, run time and outcome of every job this process works on (the job metrics). */
  observeJobs(observer: JobObserver): void {
    this.observer = observer;
  }

  /**
   * Jobs not finished, per queue and state, by the database (the queue depth metric). Reads
   * pg-boss's table without starting pg-boss here; rejects while its schema does not exist yet.
   */
  async depth(): Promise<{ queue: QueueName; state: 'created' | 'retry' | 'active'; count: number }[]> {
    const { rows } = await sql<{ queue: string; state: 'created' | 'retry' | 'active'; count: number }>`
      select name as queue, state::text as state, count(*)::int as count
      from pgboss.job
      where name = any(${Object.values(QUEUES)}::text[]) and state in ('created', 'retry', 'active')
      group by name, state`.execute(this.database.db);
    const found = new Map(rows.map((r) => [`${r.queue} ${r.state}`, r.count]));
    return Object.values(QUEUES).flatMap((queue) =>
      (['created', 'retry', 'active'] as const).map((state) => ({
        queue,
        state,
        count: found.get(`${queue} ${state}`) ?? 0,
      })),
    );
  }

  private async withHeartbeat(queue: QueueName, jobId: string, run: () => Promise<void>): Promise<void> {
    const { db } = this.database;
    await db
      .insertInto('job_heartbeats')
      .values({ job_id: jobId, queue, worker: WORKER_NAME })
      .onConflict((oc) =>
        oc
          .column('job_id')
          .doUpdateSet({ worker: WORKER_NAME, started_at: sql<Date>`now()`, beat_at: sql<Date>`now()` }),
      )
      .execute();
    const beat = setInterval(() => {
      void db
        .updateTable('job_heartbeats')
        .set({ beat_at: sql<Date>`now()` })
        .where('job_id', '=', jobId)
        .where('worker', '=', WORKER_NAME)
        .execute()
        .catch(() => undefined);
    }, this.options.heartbeatSeconds * 1000);
    const started = performance.now();
    let outcome: 'completed' | 'failed' = 'failed';
    try {
      await run();
      outcome = 'completed';
    } finally {
      this.observer?.(queue, (performance.now() - started) / 1000, outcome);
      clearInterval(beat);
      await db
        .deleteFrom('job_heartbeats')
        .where('job_id', '=', jobId)
        .where('worker', '=', WORKER_NAME)
        .execute()
        .catch(() => undefined);
    }
  }

  /**
   * The reaper: active jobs of `queues` whose heartbeat (or, without one, whose start) is older
   * than `staleSeconds` by the database clock belonged to a worker that died. Each goes back to the
   * queue at once ('retry', counted as an attempt) or, out of retries, is failed. Rows are locked
   * with SKIP LOCKED, so reapers of several processes never take the same job twice.
   */
  async reapStale(queues: readonly QueueName[], staleSeconds: number): Promise<ReapedJob[]> {
    await this.start();
    const { db } = this.database;
    const { rows } = await sql<ReapedJob>`
      with stale as (
        select j.id, j.name
        from pgboss.job j
        left join job_heartbeats h on h.job_id = j.id
        where j.name = any(${[...queues]}::text[])
          and j.state = 'active'
          and coalesce(h.beat_at, j.started_on) < now() - make_interval(secs => ${staleSeconds})
        for update of j skip locked
      )
      update pgboss.job j set
        state = (case when j.retry_count < j.retry_limit then 'retry' else 'failed' end)::pgboss.job_state,
        start_after = now(),
        completed_on = case when j.retry_count < j.retry_limit then null else now() end,
        output = jsonb_build_object('message', 'The worker stopped sending heartbeats')
      from stale
      where j.name = stale.name and j.id = stale.id
      returning j.id::text as id, j.name, j.state::text as state, j.data`.execute(db);
    if (rows.length > 0) {
      await db
        .deleteFrom('job_heartbeats')
        .where(
          'job_id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
    }
    return rows;
  }

  /**
   * A cron schedule for `queue` (pg-boss sends one job per tick to its workers). Needs `schedule`
   * on in some process for the ticks to be sent.
   */
  async schedule(queue: QueueName, cron: string): Promise<void> {
    const boss = await this.start();
    await boss.schedule(queue, cron, {}, { tz: 'UTC' });
  }

  /** The pg-boss instance, started (tests and tools). */
  instance(): Promise<PgBoss> {
    return this.start();
  }

  private stopping: Promise<void> | null = null;

  /**
   * Stops polling and maintenance. Jobs still running are left to finish for `graceMs`; whatever
   * is still active afterwards is failed back to the queue (and retried after the retry delay, as
   * an attempt). Every call waits for the same stop: the first one's grace counts (the server's
   * shutdown passes SHUTDOWN_GRACE before the app's close hook calls it again).
   */
  stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.reaper) clearInterval(this.reaper.timer);
    this.stopping ??= (async () => {
      const pending = this.starting;
      if (!pending) return;
      const boss = await pending.catch(() => null);
      if (!boss) return;
      await boss.stop({ graceful: true, wait: true, timeout: Math.max(1000, graceMs), close: true });
    })();
    return this.stopping;
  }
}
