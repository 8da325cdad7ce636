/**
 * npm run bench:tiles — Lamina's tile route against nginx serving the same tiles as static files.
 *
 * 1. Makes the bench slide (../shared/scripts/make-bench-slide.sh; BENCH_SLIDE=8x6 by default).
 * 2. Starts the real server (all roles) on a fresh DATA_DIR, uploads the slide through the signed
 *    URL as `uploader`, registers it and waits for the worker to build the pyramid.
 * 3. Copies every tile out through the tile route into a folder for nginx.
 * 4. Restarts the server as a dedicated tile host (ROLES=tiles) and drives random tile requests at
 *    32 connections with wrk; then nginx (Debian, one worker process) with the same load.
 * Rounds alternate (Lamina, nginx, Lamina, …) so that other load on the machine hits both alike;
 * the median round of each is printed.
 * Environment: BENCH_SLIDE (e.g. 24x18), BENCH_SECONDS (default 15), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (32), NGINX_WORKERS (default 1: one process each, as one Node process).
 * BENCH_STORAGE=s3: tiles from S3 (s3rver) instead, with the tile cache cold, warm and off (tilesS3.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  runWrk,
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

  log('restarting as a dedicated tile host (ROLES=tiles)');
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
    const nginxUrl = `http://127.0.0.1:${nginxPort}`;
    log(
      `warm-up: 5 s each; then ${ROUNDS} alternating rounds of ${SECONDS} s each (Lamina, nginx with ${NGINX_WORKERS} worker)`,
    );
    runWrk(server.url, pathsFile, { connections: CONNECTIONS, seconds: 5 });
    runWrk(nginxUrl, pathsFile, { connections: CONNECTIONS, seconds: 5 });
    const laminaRounds: LoadResult[] = [];
    const nginxRounds: LoadResult[] = [];
    let rss = { maxRss: 0, peak: 0 };
    for (let round = 1; round <= ROUNDS; round++) {
      const memory = sampleMemory(server.pid);
      laminaRounds.push(runWrk(server.url, pathsFile, { connections: CONNECTIONS, seconds: SECONDS }));
      const m = memory.stop();
      rss = { maxRss: Math.max(rss.maxRss, m.maxRss), peak: Math.max(rss.peak, m.peak) };
      nginxRounds.push(runWrk(nginxUrl, pathsFile, { connections: CONNECTIONS, seconds: SECONDS }));
      log(
        `round ${round}: Lamina ${laminaRounds.at(-1)?.perSecond.toFixed(0)}/s, nginx ${nginxRounds.at(-1)?.perSecond.toFixed(0)}/s (load average ${loadAverage()})`,
      );
    }
    const lamina = median(laminaRounds);
    const reference = median(nginxRounds);

    console.log('');
    console.log(
      `Random tiles of a ${image.width} x ${image.height} slide (${paths.length} tiles), ${CONNECTIONS} connections, wrk -t2, median of ${ROUNDS} rounds of ${SECONDS} s`,
    );
    console.log(formatLoad('Lamina', lamina));
    console.log(formatLoad('nginx', reference));
    console.log(
      `Lamina / nginx throughput: ${(lamina.perSecond / reference.perSecond).toFixed(2)} (target >= 0.5); Lamina p99 ${lamina.p99ms.toFixed(2)} ms (target <= 10 ms); tile server RSS max ${rss.maxRss.toFixed(0)} MiB`,
    );
  } finally {
    nginx?.kill('SIGQUIT');
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
