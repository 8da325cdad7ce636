/**
 * npm run bench:cluster — tiles/s and API latency through nginx for 1 vs 2 tiles and api
 * processes (the cluster of `npm run test:cluster`: PostgreSQL, s3rver, nginx, ROLES=… processes).
 *
 * For each topology: a fresh cluster (1 worker), CMU-1-Small-Region.svs uploaded through the
 * signed URL and processed, then
 *  - tiles: wrk with random tile URLs of that slide (every tile of every level, with the token)
 *    at BENCH_CONNECTIONS (32) connections for BENCH_SECONDS (10);
 *  - API: a typical list call (GET /api/studies/list, the studies page) as `uploader`, from
 *    BENCH_API_CLIENTS (16) concurrent clients for BENCH_SECONDS: requests/s, p50 and p95.
 * Every answer must be 200: errors are counted and printed. Not a test: it prints figures.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Client, newCounters } from '../cluster/client.js';
import { CLUSTER_DIR, startCluster, type Cluster } from '../cluster/cluster.js';
import { tilePaths, uploadSlide, waitProcessed, type Study } from '../cluster/userPath.js';
import { cpuInfo, ensureTools, formatLoad, log, runWrk, SHARED, type LoadResult } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const API_CLIENTS = Number(process.env.BENCH_API_CLIENTS ?? 16);
const PASSWORD = 'bench-cluster-password';
const SLIDE = path.join(SHARED, 'testdata', 'wsi', 'CMU-1-Small-Region.svs');

interface ApiResult {
  requests: number;
  perSecond: number;
  p50ms: number;
  p95ms: number;
  maxMs: number;
  errors: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** `clients` users each sending the list call back to back for `seconds`, with their own session. */
async function apiLoad(cluster: Cluster, study: Study, clients: number, seconds: number): Promise<ApiResult> {
  const counters = newCounters();
  const sessions = await Promise.all(
    Array.from({ length: clients }, async () => {
      const c = new Client(cluster.url, 'uploader', counters);
      await c.login(PASSWORD);
      return c;
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const end = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    sessions.map(async (c) => {
      while (Date.now() < end) {
        const t = performance.now();
        const r = await c
          .request<{ studies: Study[] }>('GET', '/api/studies/list?page=1&pageSize=20')
          .catch(() => null);
        latencies.push(performance.now() - t);
        if (r?.status !== 200 || !r.body.studies.some((s) => s.id === study.id)) errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    perSecond: latencies.length / elapsed,
    p50ms: percentile(latencies, 50),
    p95ms: percentile(latencies, 95),
    maxMs: latencies.at(-1) ?? 0,
    errors: errors + counters.retries.length,
  };
}

async function measure(processes: number): Promise<{ tiles: LoadResult; api: ApiResult; tileCount: number }> {
  const cluster = await startCluster({
    postgresUrl: process.env.CLUSTER_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    database: 'lamina_cluster',
    api: processes,
    tiles: processes,
    worker: 1,
    demoPassword: PASSWORD,
    env: { LOG_LEVEL: 'error' },
    log,
  });
  try {
    const counters = newCounters();
    const uploader = new Client(cluster.url, 'uploader', counters);
    await uploader.login(PASSWORD);
    const { studies } = await uploader.expect<{ studies: Study[] }>(200, 'GET', '/api/studies/list?page=1&pageSize=20');
    const study = studies.find((s) => s.name.startsWith('DEMO-UC-001'));
    if (!study) throw new Error('no demo study');
    const image = await waitProcessed(uploader, await uploadSlide(uploader, study.id, SLIDE), 180);
    const tiles = await tilePaths(image, counters, cluster.url, 12);
    // The demo slides' jobs first: no pyramid being built while the load runs.
    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    for (let waited = 0; ; waited++) {
      const { rows } = await db.query<{ n: string }>(
        `select count(*)::text as n from images where processing_status not in ('SUCCESS', 'FAIL')`,
      );
      if (rows[0]?.n === '0' || waited > 300) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await db.end();
    const pathsFile = path.join(CLUSTER_DIR, 'tile-paths.txt');
    writeFileSync(pathsFile, tiles.map((t) => t.slice(cluster.url.length)).join('\n'));
    log(`${tiles.length} tiles of image ${image.id}; tiles: wrk ${CONNECTIONS} connections, ${SECONDS} s`);
    const tileResult = runWrk(cluster.url, pathsFile, { connections: CONNECTIONS, seconds: SECONDS });
    log(`API: GET /api/studies/list from ${API_CLIENTS} clients, ${SECONDS} s`);
    const api = await apiLoad(cluster, study, API_CLIENTS, SECONDS);
    return { tiles: tileResult, api, tileCount: tiles.length };
  } finally {
    await cluster.stop();
  }
}

ensureTools(['nginx', 'wrk']);
log(cpuInfo());
const results: { processes: number; tiles: LoadResult; api: ApiResult }[] = [];
for (const processes of [1, 2]) {
  log(`── ${processes} api + ${processes} tiles processes behind nginx ──`);
  results.push({ processes, ...(await measure(processes)) });
}
console.log('');
console.log(`Through nginx (1 worker process), ${cpuInfo()}:`);
for (const r of results) {
  console.log(`${r.processes} + ${r.processes}  ${formatLoad('tiles', r.tiles)}`);
  console.log(
    `${r.processes} + ${r.processes}  API      ${r.api.perSecond.toFixed(0).padStart(7)} req/s    p50 ${r.api.p50ms.toFixed(1)} ms  p95 ${r.api.p95ms.toFixed(1)} ms  max ${r.api.maxMs.toFixed(0)} ms  (${r.api.requests} requests, ${r.api.errors} errors)`,
  );
}
const failed = results.some((r) => r.tiles.errors + r.tiles.badStatus + r.api.errors > 0);
console.log(failed ? 'ERRORS: some requests failed (above)' : 'No errors.');
process.exitCode = failed ? 1 : 0;
