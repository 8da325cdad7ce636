/**
 * npm run bench:tiles — Lamina's tile route against nginx serving the same tiles as static files.
 *
 * 1. Makes the bench slide (../shared/scripts/make-bench-slide.sh; BENCH_SLIDE=8x6 by default).
 * 2. Starts the real server (all roles) on a fresh DATA_DIR, uploads the slide through the signed
 *    URL as `uploader`, registers it and waits for the worker to build the pyramid.
 * 3. Copies every tile out through the tile route into a folder for nginx.
 * 4. Starts the same data three ways — `npm start`'s layout (all roles, tiles in a tile process of
 *    their own), the same with TILE_PROCESS=inline (tiles in the one process, as before issue 28)
 *    and a dedicated tile host (ROLES=tiles) — and drives random tile requests at 32 connections
 *    with wrk at each, then at nginx (Debian, one worker process) with the same load.
 * Rounds go round the four in turn so that other load on the machine hits all alike; the median
 * round of each is printed. Then the API's latency (GET /api/images/{id}, one client) on each
 * all-in-one server, idle and while wrk drives tiles at it.
 * Environment: BENCH_SLIDE (e.g. 24x18), BENCH_SECONDS (default 15), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (32), NGINX_WORKERS (default 1: one process each, as one Node process).
 * BENCH_STORAGE=s3: tiles from S3 (s3rver) instead, with the tile cache cold, warm and off (tilesS3.ts).
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ImageView } from '@lamina/domain';
import {
  BENCH_DIR,
  BENCH_PASSWORD,
  benchSlide,
  cpuInfo,
  ensureTools,
  formatLoad,
  freePort,
  log,
  login,
  probeApi,
  runWrk,
  runWrkAsync,
  sleep,
  sampleMemory,
  startNginx,
  startServer,
  uploadAndProcess,
  type LoadResult,
} from './lib.js';
import { benchTilesFromS3 } from './tilesS3.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const NGINX_WORKERS = process.env.NGINX_WORKERS ?? '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PASSWORD = BENCH_PASSWORD;
const SECRET = 'bench-session-secret';

function median(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.perSecond - b.perSecond);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (!middle) throw new Error('no rounds');
  return middle;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Every tile of every zoom (levels halve with floor, as libvips writes them). */
function allTiles(image: ImageView): string[] {
  const template = new URL(image.tileUrl ?? '', 'http://x');
  const paths: string[] = [];
  let w = image.width ?? 0;
  let h = image.height ?? 0;
  for (let z = image.maxTmsZoom; z >= 0; z--) {
    for (let y = 0; y < Math.ceil(h / 256); y++) {
      for (let x = 0; x < Math.ceil(w / 256); x++) {
        const p = decodeURIComponent(template.pathname)
          .replace('{z}', String(z))
          .replace('{x}', String(x))
          .replace('{y}', String(y));
        paths.push(`${p}${template.search}`);
      }
    }
    w = Math.floor(w / 2);
    h = Math.floor(h / 2);
  }
  return paths;
}

async function extractTiles(baseUrl: string, paths: string[], root: string): Promise<number> {
  let bytes = 0;
  for (const p of paths) {
    const response = await fetch(`${baseUrl}${p}`);
    if (!response.ok) throw new Error(`GET ${p}: ${response.status}`);
    const body = Buffer.from(await response.arrayBuffer());
    bytes += body.length;
    const file = path.join(root, p.split('?')[0] ?? p);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, body);
  }
  return bytes;
}

/** A copy of a data folder for another server: the database copied, the (read-only) storage hard-linked. */
function copyDataDir(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from)) {
    const flags = entry === 'storage' ? '-al' : '-a';
    const copied = spawnSync('cp', [flags, path.join(from, entry), path.join(to, entry)], { encoding: 'utf8' });
    if (copied.status !== 0) throw new Error(`cp ${flags} ${entry}: ${copied.stderr}`);
  }
}

interface Target {
  name: string;
  url: string;
  rounds: LoadResult[];
  /** The goal against nginx's tiles a second, and the p99 limit. */
  goal?: { ratio: number; p99ms: number };
}

async function main(): Promise<void> {
  if (process.env.BENCH_STORAGE === 's3') return benchTilesFromS3();
  ensureTools(['vips', 'nginx', 'wrk']);
  log(cpuInfo());
  const slide = benchSlide();
  const dataDir = path.join(BENCH_DIR, 'tiles-data');
  const staticRoot = path.join(BENCH_DIR, 'tiles-static');
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(staticRoot, { recursive: true, force: true });

  const common = { DATA_DIR: dataDir, SESSION_SECRET: SECRET, DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' };
  log('starting the server (api, tiles, worker) on a fresh data folder');
  let server = await startServer({ ...common, DEMO: 'true' });
  let image: ImageView;
  try {
    image = await uploadAndProcess(server, slide);
  } finally {
    await server.stop();
  }

  // The same data served three ways, side by side: the default install (`npm start`: all roles,
  // tiles in a tile process of their own), the same with tiles in its one process
  // (TILE_PROCESS=inline, the layout before issue 28), and a dedicated tile host (ROLES=tiles).
  const separateDir = `${dataDir}-npm-start`;
  const inlineDir = `${dataDir}-inline`;
  copyDataDir(dataDir, separateDir);
  copyDataDir(dataDir, inlineDir);
  log('starting npm start (all roles; tile process), the same with TILE_PROCESS=inline, and ROLES=tiles');
  const allInOne = { DEMO: 'false', LOG_LEVEL: 'info' };
  const separate = await startServer({ ...common, ...allInOne, DATA_DIR: separateDir });
  const inline = await startServer({ ...common, ...allInOne, DATA_DIR: inlineDir, TILE_PROCESS: 'inline' });
  server = await startServer({ ...common, DEMO: 'false', ROLES: 'tiles', LOG_LEVEL: 'info' });
  const nginxPort = await freePort();
  let nginx: ChildProcess | null = null;
  try {
    const paths = allTiles(image);
    const pathsFile = path.join(BENCH_DIR, 'tile-paths.txt');
    writeFileSync(pathsFile, paths.join('\n') + '\n');
    const bytes = await extractTiles(server.url, paths, staticRoot);
    log(
      `${paths.length} tiles (${(bytes / 1024 / 1024).toFixed(1)} MB, ${(bytes / paths.length / 1024).toFixed(1)} KB each) copied out for nginx`,
    );

    nginx = await startNginx({
      root: staticRoot,
      port: nginxPort,
      prefix: path.join(BENCH_DIR, 'nginx'),
      workers: NGINX_WORKERS,
      serverDirectives: 'location /tiles/ { add_header Cache-Control "private, max-age=31536000, immutable"; }',
    });
    const targets: Target[] = [
      { name: 'npm start', url: separate.url, rounds: [], goal: { ratio: 0.8, p99ms: 10 } },
      { name: 'npm start, TILE_PROCESS=inline', url: inline.url, rounds: [] },
      { name: 'ROLES=tiles', url: server.url, rounds: [], goal: { ratio: 0.9, p99ms: 10 } },
      { name: `nginx, ${NGINX_WORKERS} worker`, url: `http://127.0.0.1:${nginxPort}`, rounds: [] },
    ];
    log(`warm-up: 5 s each; then ${ROUNDS} rounds of ${SECONDS} s each, the servers in turn`);
    for (const target of targets) runWrk(target.url, pathsFile, { connections: CONNECTIONS, seconds: 5 });
    let rss = { maxRss: 0, peak: 0 };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const memory = target.url === server.url ? sampleMemory(server.pid) : null;
        target.rounds.push(runWrk(target.url, pathsFile, { connections: CONNECTIONS, seconds: SECONDS }));
        const m = memory?.stop();
        if (m) rss = { maxRss: Math.max(rss.maxRss, m.maxRss), peak: Math.max(rss.peak, m.peak) };
      }
      const figures = targets.map((t) => `${t.name} ${t.rounds.at(-1)?.perSecond.toFixed(0)}/s`).join(', ');
      log(`round ${round}: ${figures} (load average ${loadAverage()})`);
    }

    // The API while tiles are under load: one client reading an image's details over and over, on
    // the idle server, then while wrk drives tiles at it.
    const api: string[] = [];
    // The rounds above ran wrk synchronously for minutes: this process's event loop has not seen
    // the servers close its idle keep-alive connections (the readiness probes'). One turn lets
    // fetch drop them; without it the first call below goes out on a closed connection (EPIPE).
    await sleep(100);
    for (const [index, target] of targets.slice(0, 2).entries()) {
      const running = index === 0 ? separate : inline;
      const session = await login(target.url, 'uploader', PASSWORD).catch((error: unknown) => {
        throw new Error(`login to ${target.name} failed: ${String(error)}\n${running.output()}`, { cause: error });
      });
      const route = `/api/images/${image.id}`;
      const idle = await probeApi(target.url, session, route, sleep(5000));
      const load = runWrkAsync(target.url, pathsFile, { connections: CONNECTIONS, seconds: SECONDS });
      const loaded = await probeApi(target.url, session, route, load);
      const tiles = await load;
      api.push(
        `${target.name}: GET ${route} p95 ${idle.p95ms.toFixed(1)} ms idle, ${loaded.p95ms.toFixed(1)} ms under tile load ` +
          `(p50 ${loaded.p50ms.toFixed(1)} ms, max ${loaded.maxMs.toFixed(1)} ms, ${loaded.requests} calls, ${loaded.failures} failed; ` +
          `tiles meanwhile ${tiles.perSecond.toFixed(0)}/s, p99 ${tiles.p99ms.toFixed(2)} ms)`,
      );
      log(api.at(-1) ?? '');
    }

    const reference = median(targets.at(-1)?.rounds ?? []);
    console.log('');
    console.log(
      `Random tiles of a ${image.width} x ${image.height} slide (${paths.length} tiles), ${CONNECTIONS} connections, wrk -t2, median of ${ROUNDS} rounds of ${SECONDS} s`,
    );
    for (const target of targets) console.log(formatLoad(target.name.padEnd(30), median(target.rounds)));
    for (const target of targets) {
      if (!target.goal) continue;
      const r = median(target.rounds);
      const ratio = r.perSecond / reference.perSecond;
      const met = ratio >= target.goal.ratio && r.p99ms <= target.goal.p99ms ? 'met' : 'NOT met';
      console.log(
        `${target.name} / nginx: ${ratio.toFixed(2)}, p99 ${r.p99ms.toFixed(2)} ms (goal >= ${target.goal.ratio} and p99 <= ${target.goal.p99ms} ms: ${met})`,
      );
    }
    const before = median(targets[1]?.rounds ?? []);
    console.log(
      `npm start, TILE_PROCESS=inline / nginx: ${(before.perSecond / reference.perSecond).toFixed(2)}, p99 ${before.p99ms.toFixed(2)} ms`,
    );
    console.log(`ROLES=tiles RSS max ${rss.maxRss.toFixed(0)} MiB`);
    console.log('The API while tiles are under load (one client, each call after the last answer):');
    for (const line of api) console.log(`  ${line}`);
  } finally {
    nginx?.kill('SIGQUIT');
    await Promise.all([server.stop(), separate.stop(), inline.stop()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
