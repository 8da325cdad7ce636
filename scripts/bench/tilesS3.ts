/**
 * BENCH_STORAGE=s3 npm run bench:tiles — tiles from S3 (s3rver) with the tile cache
 * (TILE_CACHE_MB) cold, warm and off.
 *
 * 1. Starts s3rver (an S3-compatible server from npm) in its own process, over a fresh folder.
 * 2. Starts the real server (all roles, STORAGE=s3) on a fresh DATA_DIR, uploads the bench slide
 *    (BENCH_SLIDE, as bench:tiles) through the signed URL into the bucket, waits for the pyramid.
 * 3. Restarts it as a dedicated tile host (ROLES=tiles) and measures, at BENCH_CONNECTIONS (32):
 *    - cold: one pass over every tile in random order, each tile asked for once (every tile a
 *      ranged GET: the cache is empty), driven from this process with keep-alive connections;
 *    - warm: the same pass again (every tile held);
 *    - wrk over random tiles for BENCH_SECONDS (15), cache warm;
 *    - the same wrk load with TILE_CACHE_MB=0 (every tile a ranged GET).
 * s3rver, the tile host and the load generator share this machine's cores: the figures say what
 * the cache saves here, not what a real bucket answers (S3's first-byte latency is 10-50 ms, so a
 * miss costs more there than on loopback).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, get } from 'node:http';
import type { ImageView } from '@lamina/domain';
import {
  BENCH_DIR,
  BENCH_PASSWORD,
  benchSlide,
  cpuInfo,
  ensureTools,
  formatLoad,
  log,
  memoryOf,
  ROOT,
  runWrk,
  startServer,
  uploadAndProcess,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECRET = 'bench-session-secret';
const BUCKET = 'lamina-bench';

/** s3rver in a child process (so its CPU is not this driver's); resolves with its endpoint. */
async function startS3rver(directory: string): Promise<{ endpoint: string; child: ChildProcess }> {
  const code = `
    const S3rver = require('s3rver');
    new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: ${JSON.stringify(directory)},
      configureBuckets: [{ name: ${JSON.stringify(BUCKET)} }] })
      .run().then(({ port }) => console.log('S3RVER_PORT ' + port));`;
  const child = spawn(process.execPath, ['-e', code], {
    cwd: path.join(ROOT, 'packages', 'server'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /S3RVER_PORT (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code})`)));
  });
  return { endpoint: `http://127.0.0.1:${port}`, child };
}

/** Every tile of every zoom (levels halve with floor, as the worker writes them). */
function allTiles(image: ImageView): string[] {
  const template = new URL(image.tileUrl ?? '', 'http://x');
  const paths: string[] = [];
  let w = image.width ?? 0;
  let h = image.height ?? 0;
  for (let z = image.maxTmsZoom; z >= 0; z--) {
    for (let y = 0; y < Math.ceil(h / 256); y++)
      for (let x = 0; x < Math.ceil(w / 256); x++)
        paths.push(
          `${decodeURIComponent(template.pathname).replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y))}${template.search}`,
        );
    w = Math.floor(w / 2);
    h = Math.floor(h / 2);
  }
  return paths;
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** GET with a keep-alive agent; resolves with the status and the body's size. */
function getTile(url: string, agent: Agent): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** One pass over `paths` (each once) at `connections` concurrent requests; tiles/s and latency. */
async function pass(baseUrl: string, paths: string[], connections: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let next = 0;
  let bytes = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < paths.length) {
        const p = paths[next++] as string;
        const t0 = performance.now();
        const response = await getTile(`${baseUrl}${p}`, agent);
        if (response.status !== 200) throw new Error(`GET ${p}: ${response.status}`);
        latencies.push(performance.now() - t0);
        bytes += response.bytes;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perSecond: paths.length / seconds, seconds, p50: at(0.5), p99: at(0.99), mb: bytes / 1024 / 1024 };
}

function formatPass(name: string, r: Awaited<ReturnType<typeof pass>>): string {
  return `${name.padEnd(26)} ${r.perSecond.toFixed(0).padStart(6)} tiles/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.seconds.toFixed(1)} s, ${r.mb.toFixed(0)} MB)`;
}

export async function benchTilesFromS3(): Promise<void> {
  ensureTools(['vips', 'wrk']);
  log(cpuInfo());
  const slide = benchSlide();
  const dataDir = path.join(BENCH_DIR, 'tiles-s3-data');
  const bucketDir = path.join(BENCH_DIR, 'tiles-s3-bucket');
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(bucketDir, { recursive: true, force: true });
  mkdirSync(bucketDir, { recursive: true });
  const s3 = await startS3rver(bucketDir);
  const common = {
    DATA_DIR: dataDir,
    SESSION_SECRET: SECRET,
    DEMO_PASSWORD: BENCH_PASSWORD,
    LOG_LEVEL: 'warn',
    STORAGE: 's3',
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: BUCKET,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
  };
  try {
    log(`s3rver at ${s3.endpoint}; starting the server (api, tiles, worker) with STORAGE=s3`);
    let server = await startServer({ ...common, DEMO: 'true' });
    let image: ImageView;
    try {
      image = await uploadAndProcess(server, slide);
    } finally {
      await server.stop();
    }
    const paths = allTiles(image);
    const pathsFile = path.join(BENCH_DIR, 'tile-s3-paths.txt');
    writeFileSync(pathsFile, paths.join('\n') + '\n');
    const results: string[] = [];

    log('tile host (ROLES=tiles) with TILE_CACHE_MB=256: cold pass, warm pass, then wrk');
    server = await startServer({ ...common, DEMO: 'false', ROLES: 'tiles', TILE_CACHE_MB: '256' });
    try {
      const [first] = paths;
      if (first) await getTile(`${server.url}${first}`, new Agent()); // opens the pyramid
      const cold = await pass(server.url, shuffled(paths), CONNECTIONS);
      const warm = await pass(server.url, shuffled(paths), CONNECTIONS);
      const rss = memoryOf(server.pid);
      const wrk = runWrk(server.url, pathsFile, { connections: CONNECTIONS, seconds: SECONDS });
      results.push(
        formatPass('cold pass (each tile once)', cold),
        formatPass('warm pass (each tile once)', warm),
        formatLoad('wrk warm', wrk),
        `tile host RSS after the warm pass: ${rss ? rss.rss.toFixed(0) : '?'} MiB`,
      );
    } finally {
      await server.stop();
    }

    log('tile host with TILE_CACHE_MB=0 (every tile a ranged GET)');
    server = await startServer({ ...common, DEMO: 'false', ROLES: 'tiles', TILE_CACHE_MB: '0' });
    try {
      const off = await pass(server.url, shuffled(paths), CONNECTIONS);
      const wrk = runWrk(server.url, pathsFile, { connections: CONNECTIONS, seconds: SECONDS });
      results.push(formatPass('cache off, pass', off), formatLoad('wrk off', wrk));
    } finally {
      await server.stop();
    }

    console.log('');
    console.log(
      `Tiles of a ${image.width} x ${image.height} slide (${paths.length} tiles) from s3rver, ${CONNECTIONS} connections; wrk ${SECONDS} s over random tiles`,
    );
    for (const line of results) console.log(line);
  } finally {
    s3.child.kill('SIGTERM');
  }
}
