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
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import type { ImageView } from '@lamina/domain';
import {
  api,
  BENCH_DIR,
  benchSlide,
  cpuInfo,
  ensureTools,
  formatLoad,
  freePort,
  log,
  login,
  runWrk,
  sampleMemory,
  sleep,
  startServer,
  type LoadResult,
  type RunningServer,
  type Session,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const NGINX_WORKERS = process.env.NGINX_WORKERS ?? '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PASSWORD = 'bench-password';
const SECRET = 'bench-session-secret';

/** PUT a file to a signed URL, streamed. */
function putFile(url: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      target,
      { method: 'PUT', headers: { 'Content-Type': 'image/tiff', 'Content-Length': statSync(file).size } },
      (res) => {
        res.resume();
        res.on('end', () => ((res.statusCode ?? 500) < 300 ? resolve() : reject(new Error(`PUT ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

function median(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.perSecond - b.perSecond);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (!middle) throw new Error('no rounds');
  return middle;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function uploadAndProcess(server: RunningServer, slide: string): Promise<ImageView> {
  const session: Session = await login(server.url, 'uploader', PASSWORD);
  const { studies } = await api<{ studies: { id: number; name: string }[] }>(
    server.url,
    session,
    'GET',
    '/api/studies/list?page=1&pageSize=100',
  );
  const study = studies.find((s) => s.name.startsWith('DEMO-')) ?? studies[0];
  if (!study) throw new Error('no study visible to uploader');
  const name = path.basename(slide);
  const signed = await api<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>(
    server.url,
    session,
    'POST',
    '/api/signed-urls',
    {
      studyId: study.id,
      fileNames: [name],
    },
  );
  const target = signed.data.urls[0];
  if (!target) throw new Error('no signed URL');
  const size = statSync(slide).size;
  let started = Date.now();
  await putFile(new URL(target.signedUrl, server.url).toString(), slide);
  log(
    `uploaded ${(size / 1024 / 1024).toFixed(0)} MB through the signed URL in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  started = Date.now();
  const { image } = await api<{ image: ImageView }>(server.url, session, 'POST', '/api/images', {
    name,
    s3Key: target.s3Key,
    studyId: study.id,
  });
  for (;;) {
    const current = await api<ImageView>(server.url, session, 'GET', `/api/images/${image.id}`);
    if (current.processingStatus === 'SUCCESS') {
      log(
        `processed by the worker in ${((Date.now() - started) / 1000).toFixed(1)} s: ${current.width} x ${current.height}, maxTmsZoom ${current.maxTmsZoom}`,
      );
      return current;
    }
    if (current.processingStatus === 'FAIL') throw new Error(`processing failed: ${current.statusMessage ?? ''}`);
    await sleep(1000);
  }
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

async function startNginx(root: string, port: number, prefix: string): Promise<ChildProcess> {
  mkdirSync(prefix, { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes ${NGINX_WORKERS};
worker_rlimit_nofile 20000;
user root;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 1000000;
  open_file_cache max=16000 inactive=120s;
  client_body_temp_path ${prefix}/body;
  default_type image/jpeg;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    location /tiles/ { add_header Cache-Control "private, max-age=31536000, immutable"; }
  }
}
`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', prefix], { stdio: 'inherit' });
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return child;
    } catch {
      await sleep(100);
    }
  }
  throw new Error('nginx did not start');
}

async function main(): Promise<void> {
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

    nginx = await startNginx(staticRoot, nginxPort, path.join(BENCH_DIR, 'nginx'));
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
