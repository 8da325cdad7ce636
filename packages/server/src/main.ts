import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { buildApp } from './app.js';
import { loadConfig, type Config } from './platform/config.js';
import { AuditAnchorWriter } from './platform/audit/anchors.js';
import { openDatabase } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';
import { syncReferenceData } from './platform/rbac/referenceData.js';
import { seedQueryReasons } from './modules/queries/queryReasonService.js';
import { startQueryReminders } from './modules/queries/queryReminders.js';
import { startMldWorker } from './commands/mldImport.js';
import { DEMO_USERS, seedDemoData } from './modules/demo/demoSeed.js';
import { ensureDemoCases } from './modules/demo/demoCases.js';
import { ensureDemoSlide } from './modules/demo/demoSlide.js';
import { ensureDemoZStack } from './modules/demo/demoZStack.js';
import { ensureDemoVendorSlide } from './modules/demo/demoVendorSlide.js';
import { startImageWorker } from './modules/processing/imageWorker.js';
import { startMetricsServer, type MetricsServer } from './platform/metrics/metricsServer.js';
import { DEFAULT_SLIDE_LIMITS } from './modules/processing/slideLimits.js';
import { TileProcess, usesTileProcess } from './modules/tiles/tileProcess.js';
import { databaseTileRows } from './platform/tiles/tileRows.js';

// V8 lets its old space grow to up to 4x the live heap before a full collection while a process
// allocates fast: a 10^6-row CSV export (~50 MB live) was collected at ~210 MB, so the server's
// resident memory rose from ~230 MB to ~390 MB, with nothing but garbage (issue 12: under 300 MB).
// Collecting at 1.5x keeps it within ~30 MB of the idle server, for more frequent (mostly
// concurrent) major collections. It caps nothing: a large sample import still gets the heap it
// needs, as it would not under --max-old-space-size. Set here so that every way of starting the
// server has it; V8 reads it at each collection (an unknown flag would only be reported).
setFlagsFromString('--heap-growing-percent=50');

/** Embedded default: keep a generated SESSION_SECRET in DATA_DIR so sessions survive a restart. */
async function persistentSessionSecret(config: Config): Promise<string> {
  if (process.env.SESSION_SECRET) return config.sessionSecret;
  const file = path.join(config.dataDir, 'session-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(32).toString('hex');
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (process.env.SESSION_SECRET === undefined) {
    // Kept in DATA_DIR so that a restart keeps everyone logged in and signed tile and upload URLs
    // valid. Processes on several machines share one only through SESSION_SECRET.
    config.sessionSecret = await persistentSessionSecret(config);
  }
  const started = Date.now();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : path.join(config.dataDir, 'db'),
  });
  const applied = await migrate(database);
  const reference = await syncReferenceData(database.db);
  await seedQueryReasons(database.db);
  const seeded = config.demo ? await seedDemoData(database.db, config.demoPassword) : false;

  const app = await buildApp({ config, database, logger: true });
  let stopWorker: (() => Promise<void>) | null = null;
  // Set by startTheRest (typed with `as`: TypeScript would narrow a `null` initialiser to null here).
  let metricsServer = null as MetricsServer | null;
  let tileProcess = null as TileProcess | null;
  // The audit chain's head, copied outside the database (platform/audit/anchors.ts).
  const anchors = config.roles.has('api')
    ? new AuditAnchorWriter(database.db, {
        file: config.auditAnchorFile,
        intervalSeconds: config.auditAnchorIntervalSeconds,
        log: app.log,
      })
    : null;
  // SIGTERM/SIGINT: stop taking work and let the work under way end (docs/DEPLOYMENT.md). The
  // listening socket closes at once and requests still arriving on open connections get 503 (so
  // /api/ready fails); in-flight requests and running jobs get SHUTDOWN_GRACE seconds, together.
  // Then jobs still running are failed back to their queue (pg-boss retries them elsewhere) and
  // connections still open are closed. Exit 0 once everything stopped; 1 if that hangs.
  const graceMs = config.shutdownGraceSeconds * 1000;
  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal}: shutting down (grace ${config.shutdownGraceSeconds} s)`);
    setTimeout(() => {
      app.log.error('shutdown did not finish in time: exiting');
      process.exit(1);
    }, graceMs + 15_000).unref();
    const cutOff = setTimeout(() => {
      app.log.warn('shutdown grace over: closing the connections still open');
      app.server.closeAllConnections();
    }, graceMs);
    cutOff.unref();
    try {
      await Promise.all([
        stopWorker?.(),
        app.slides.jobs.stop(graceMs),
        anchors?.stop(),
        // The tile process drains its connections (a request for the API goes back to app.close's 503).
        tileProcess?.stop(),
        app.close(),
      ]);
      clearTimeout(cutOff);
      await metricsServer?.close();
      await database.close();
      app.log.info('shut down');
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void close('SIGINT'));
  process.once('SIGTERM', () => void close('SIGTERM'));

  async function startTheRest(): Promise<void> {
    if (closing) return;
    // Tiles in a process of their own beside the API (TILE_PROCESS=separate; modules/tiles/tileProcess.ts).
    if (app.tileFastPath?.mode === 'connections' && usesTileProcess(config)) {
      tileProcess = new TileProcess({
        fastPath: app.tileFastPath,
        rows: databaseTileRows(database.db),
        log: app.log,
        metrics: app.metrics.tiles,
        env: { ...process.env, ROLES: 'tiles', SESSION_SECRET: config.sessionSecret },
        graceMs,
      });
      tileProcess.start();
    }
    if (config.metrics.port !== null) {
      // Prometheus metrics on their own port, never the public one (docs/DEPLOYMENT.md).
      metricsServer = await startMetricsServer(app.metrics, {
        ...config.metrics,
        port: config.metrics.port,
        log: app.log,
      });
    }
    await anchors?.start();
    // Slide pipeline: the processing worker, and the demo slide (processed by that same worker).
    if (closing) return;
    if (config.roles.has('worker')) {
      const worker = await startImageWorker({
        db: database.db,
        storage: app.slides.storage,
        jobs: app.slides.jobs,
        mailer: app.slides.mailer,
        tmpDir: path.join(config.dataDir, 'tmp'),
        log: app.log,
        limits: { ...DEFAULT_SLIDE_LIMITS, maxPixels: config.processing.maxSlidePixels },
        timeLimitSeconds: config.processing.timeLimitSeconds,
        staleAfterSeconds: config.processing.staleAfterSeconds,
      });
      // .mld imports and the reminder sweep share the worker's heartbeats and reaper (jobQueue.ts).
      const mldWorker = await startMldWorker({
        db: database.db,
        storage: app.slides.storage,
        jobs: app.slides.jobs,
        log: app.log,
        staleAfterSeconds: config.processing.staleAfterSeconds,
      });
      stopWorker = async () => {
        await Promise.all([worker.stop(), mldWorker.stop()]);
      };
      if (config.queryReminderCron !== null)
        await startQueryReminders({
          db: database.db,
          jobs: app.slides.jobs,
          mailer: app.slides.mailer,
          publicUrl: config.publicUrl,
          cron: config.queryReminderCron,
          log: app.log,
        });
    }
    if (config.demo) {
      ensureDemoSlide({ db: database.db, storage: app.slides.storage, jobs: app.slides.jobs })
        .then((id) => id !== null && app.log.info(`demo slide generated (image ${id}); processing`))
        // A z-stack slide (five focal planes of a real test slide), queued after the demo slide.
        .then(() => ensureDemoZStack({ db: database.db, storage: app.slides.storage, jobs: app.slides.jobs }))
        .then(
          (made) =>
            made &&
            app.log.info(
              `demo z-stack slide generated (image ${made.id}, from the ${made.from === 'synthetic' ? 'synthetic demo slide: ../shared/testdata is not beside the repository' : 'test slide CMU-1-Small-Region.svs'}); processing`,
            ),
        )
        // A slide of another scanner (Hamamatsu NDPI through OpenSlide), when the test data and OpenSlide are here.
        .then(() => ensureDemoVendorSlide({ db: database.db, storage: app.slides.storage, jobs: app.slides.jobs }))
        .then((vendor) => {
          if (vendor.made)
            app.log.info(`demo Hamamatsu slide uploaded (image ${vendor.id}); processing with OpenSlide`);
          else if (vendor.why !== 'exists') app.log.info(`demo Hamamatsu slide not uploaded (${vendor.why})`);
        })
        // Then the demo cases, once the slide is processed (their slides share its pyramid).
        .then(() => ensureDemoCases(database.db))
        .then((n) => n > 0 && app.log.info(`demo cases created (${n})`))
        .catch((error: unknown) => app.log.error({ err: error }, 'demo slide or cases not created'));
    }
  }

  await app.listen({ port: config.port, host: config.host });
  // The server answers from here on, and a SIGTERM may arrive while the rest starts (a test or an
  // orchestrator stopping a fresh process): the start then stops where it is, and a step the
  // shutdown has already stopped under it (the job queue: 'The job queue is stopped') does not end
  // the process with 1 while close() drains it (shutdown.test.ts failed so about 1 run in 10).
  try {
    await startTheRest();
  } catch (error) {
    if (closing) return;
    throw error;
  }
  if (closing) return;
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${config.port}`;
  const lines = [
    '',
    `Lamina is running on ${url}  (${database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'}; roles ${[...config.roles].join(',')})`,
    ...(metricsServer ? [`  metrics on http://${config.metrics.host}:${metricsServer.port}/metrics`] : []),
    ...(tileProcess
      ? [`  tiles answered by a tile process of their own (pid ${String(tileProcess.pid)}; TILE_PROCESS=inline: here)`]
      : []),
    `  started in ${Date.now() - started} ms; migrations applied: ${applied.length > 0 ? applied.join(', ') : 'none'}; permissions granted ${reference.granted}, revoked ${reference.revoked}`,
  ];
  if (seeded) {
    lines.push(`  demo data created: ${DEMO_USERS.map((u) => u.username).join(', ')}`);
  }
  if (config.demo) {
    lines.push(
      config.demoPasswordGenerated
        ? seeded
          ? `  demo password (generated; set DEMO_PASSWORD to choose one): ${config.demoPassword}`
          : '  demo accounts keep the password printed when they were created (or set DEMO_PASSWORD before the first start)'
        : '  demo password: the value of DEMO_PASSWORD',
    );
  }
  console.log(lines.join('\n') + '\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
