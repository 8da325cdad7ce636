import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { TileMetrics, tileMetricObjects, type ExposedMetric } from './tileMetrics.js';

/** Seconds: API requests take from a millisecond (a cached list) to tens of seconds (a large export). */
const HTTP_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: jobs take from a second (an .mld file, a small slide) to an hour (PROCESSING_TIME_LIMIT). */
const JOB_SECONDS_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

export type JobOutcome = 'completed' | 'failed';
/**
 * Why a login was refused: a password login's wrong credentials or throttle; a single sign-on whose
 * verified e-mail matches no active account (sso_unknown_user), or whose answer from the identity
 * provider did not validate (sso_failed).
 */
export type LoginFailureReason = 'invalid_credentials' | 'throttled' | 'sso_unknown_user' | 'sso_failed';

/** One row of the job queue's depth (pg-boss states of jobs not yet finished). */
export interface QueueDepthRow {
  queue: string;
  state: 'created' | 'retry' | 'active';
  count: number;
}

/**
 * The process's Prometheus metrics (prom-client, one registry per app), served at /metrics on
 * METRICS_PORT (metricsServer.ts; docs/DEPLOYMENT.md lists them). `enabled` (METRICS_PORT set)
 * decides whether the per-request instruments are installed at all (the HTTP hook, the tile
 * responder's wrapper, the process metrics); the counters services bump (uploads, login
 * failures, job durations) cost an addition and are always kept.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly tiles = new TileMetrics();
  readonly httpRequests: Counter<'method' | 'route' | 'status_class'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_class'>;
  readonly jobDuration: Histogram<'queue' | 'outcome'>;
  readonly uploadBytes: Counter;
  readonly uploads: Counter;
  readonly loginFailures: Counter<'reason'>;
  private queueDepthSource: (() => Promise<QueueDepthRow[]>) | null = null;
  private tileScrape: Promise<ExposedMetric[]> | null = null;

  constructor(readonly enabled: boolean) {
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'lamina_http_requests_total',
      help: 'HTTP requests answered through Fastify (every route but the tile fast path), by route pattern and status class',
      labelNames: ['method', 'route', 'status_class'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'lamina_http_request_duration_seconds',
      help: 'Time from the request received to the response sent, by route pattern and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: HTTP_SECONDS_BUCKETS,
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'lamina_job_duration_seconds',
      help: 'Run time of the jobs this process worked on, by queue and outcome (failed: the handler threw; pg-boss retries)',
      labelNames: ['queue', 'outcome'],
      buckets: JOB_SECONDS_BUCKETS,
      registers,
    });
    this.uploadBytes = new Counter({
      name: 'lamina_upload_bytes_total',
      help: 'Bytes of the uploads registered as images through this process (their stored size)',
      registers,
    });
    this.uploads = new Counter({
      name: 'lamina_uploads_total',
      help: 'Uploads registered as images through this process',
      registers,
    });
    this.loginFailures = new Counter({
      name: 'lamina_login_failures_total',
      help: 'Refused logins: wrong username or password or a deactivated account (invalid_credentials), refused by the throttle (throttled), single sign-on without an active account for the verified e-mail (sso_unknown_user), single sign-on that did not validate (sso_failed)',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['invalid_credentials', 'throttled', 'sso_unknown_user', 'sso_failed'] as const)
      this.loginFailures.inc({ reason }, 0);
    const source = () => this.queueDepthSource;
    new Gauge({
      name: 'lamina_job_queue_depth',
      help: 'Jobs not finished per queue and pg-boss state (created: waiting or scheduled; retry: waiting for a retry; active: running), read from the database at scrape time by worker processes',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        const read = source();
        if (!read) return;
        const rows = await read().catch(() => null);
        if (rows === null) return; // the queue's schema is not there yet, or the database is away: no sample
        this.reset();
        for (const row of rows) this.set({ queue: row.queue, state: row.state }, row.count);
      },
    });
    this.registerExposed(tileMetricObjects(this.tiles), () => this.readTiles());
    if (enabled) collectDefaultMetrics({ register: this.registry });
  }

  /** Worker processes report the queues' depth (the same for every process: aggregate with max). */
  reportQueueDepth(read: () => Promise<QueueDepthRow[]>): void {
    this.queueDepthSource = read;
  }

  observeJob(queue: string, seconds: number, outcome: JobOutcome): void {
    this.jobDuration.observe({ queue, outcome }, seconds);
  }

  uploadRegistered(bytes: number): void {
    this.uploads.inc();
    this.uploadBytes.inc(bytes);
  }

  loginFailed(reason: LoginFailureReason): void {
    this.loginFailures.inc({ reason });
  }

  /** The text exposition of every metric (Prometheus' format). */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * The tile families at this scrape: this process's counters, plus those of its tile process when
   * it has one (asked once per scrape: every family's get() shares the answer).
   */
  private readTiles(): Promise<ExposedMetric[]> {
    this.tileScrape ??= (async () => {
      const child = (await this.tiles.tileProcess.read?.().catch(() => null)) ?? null;
      return tileMetricObjects(this.tiles, child);
    })().finally(() => (this.tileScrape = null));
    return this.tileScrape;
  }

  /**
   * Metric families computed at scrape time from counters kept outside prom-client (the tiles'):
   * registered as prom-client reads a metric, by its name and get().
   */
  private registerExposed(families: ExposedMetric[], read: () => Promise<ExposedMetric[]>): void {
    for (const [index, family] of families.entries()) {
      const metric = { name: family.name, help: family.help, get: async () => (await read())[index], reset() {} };
      this.registry.registerMetric(metric as unknown as Metric);
    }
  }
}
