/**
 * Shared pieces of the benchmarks (npm run bench:*): tools, the bench slide, the real server as a
 * child process, the upload of a slide through the product's path, nginx, HTTP helpers, memory
 * sampling and wrk. Benchmarks print figures; they are not tests.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ImageView } from '@lamina/domain';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BENCH_DIR = path.join(ROOT, '.tmp', 'bench');
export const SHARED = path.resolve(ROOT, '..', 'shared');

export function log(message: string): void {
  console.log(`[bench] ${message}`);
}

export function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Debian packages the benchmarks use; installed with apt-get when missing and running as root. */
const PACKAGES: Record<string, string> = { vips: 'libvips-tools', nginx: 'nginx-light', wrk: 'wrk' };

export function ensureTools(commands: string[]): void {
  const missing = commands.filter((c) => !has(c));
  if (missing.length === 0) return;
  const packages = missing.map((c) => PACKAGES[c] ?? c);
  if (process.getuid?.() !== 0 || !has('apt-get')) {
    throw new Error(`needs ${missing.join(', ')}: apt-get install -y ${packages.join(' ')}`);
  }
  log(`installing ${packages.join(' ')} (apt-get)`);
  const install = spawnSync(
    'sh',
    [
      '-c',
      `apt-get install -y -qq ${packages.join(' ')} || (apt-get update -qq && apt-get install -y -qq ${packages.join(' ')})`,
    ],
    {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    },
  );
  if (install.status !== 0) throw new Error(`apt-get install ${packages.join(' ')} failed`);
}

/** BENCH_SLIDE=ACROSSxDOWN (default 8x6: 17760 x 17802 px, ~46 MB) — copies of CMU-1-Small-Region. */
export function slideGrid(): { across: number; down: number } {
  const match = /^(\d+)x(\d+)$/.exec(process.env.BENCH_SLIDE ?? '8x6');
  if (!match) throw new Error('BENCH_SLIDE must look like 8x6');
  return { across: Number(match[1]), down: Number(match[2]) };
}

/** The bench slide (made once with ../shared/scripts/make-bench-slide.sh, then reused). */
export function benchSlide(): string {
  const { across, down } = slideGrid();
  mkdirSync(BENCH_DIR, { recursive: true });
  const file = path.join(BENCH_DIR, `bench-slide-${across}x${down}.tif`);
  if (existsSync(file) && statSync(file).size > 0) return file;
  ensureTools(['vips']);
  log(`making ${path.basename(file)} (${across} x ${down} copies of CMU-1-Small-Region.svs)`);
  const made = spawnSync(
    'bash',
    [path.join(SHARED, 'scripts', 'make-bench-slide.sh'), file, String(across), String(down)],
    { stdio: 'inherit' },
  );
  if (made.status !== 0) throw new Error('make-bench-slide.sh failed');
  return file;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RunningServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** The end of what the server printed (for a failure's message). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The real server (packages/server/src/main.ts) in its own Node process, on a free port, with
 * the given DATA_DIR and roles. Resolves once /api/health (or, for a tiles-only server, the port)
 * answers.
 */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'packages/server/src/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), WEB_DIST: '/nonexistent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Kept short: a long benchmark's server may print for minutes.
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-64_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${output.slice(-4000)}`);
    try {
      const response = await fetch(`${url}/tiles/0/0/0/0`);
      await response.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`server did not start:\n${output.slice(-4000)}`);
      await sleep(250);
    }
  }
  return {
    url,
    pid: child.pid ?? 0,
    child,
    output: () => output.slice(-8000),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

export interface Session {
  cookie: string;
  csrf: string;
}

export async function login(url: string, username: string, password: string): Promise<Session> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (!response.ok) throw new Error(`login ${username}: ${response.status} ${await response.text()}`);
  const cookie = (response.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  return { cookie, csrf: csrfToken };
}

export async function api<T>(url: string, session: Session, method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: {
      Cookie: session.cookie,
      'x-csrf-token': session.csrf,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Resident memory of a process from /proc: current and peak (VmHWM), in MiB. */
export function memoryOf(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Samples a process's memory every `everyMs` until stopped; returns the highest figures seen. */
export function sampleMemory(pid: number, everyMs = 100): { stop(): { maxRss: number; peak: number } } {
  let maxRss = 0;
  let peak = 0;
  const take = () => {
    const m = memoryOf(pid);
    if (m) {
      maxRss = Math.max(maxRss, m.rss);
      peak = Math.max(peak, m.peak);
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      take();
      clearInterval(timer);
      return { maxRss, peak };
    },
  };
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  errors: number;
  badStatus: number;
  p50ms: number;
  p90ms: number;
  p99ms: number;
  maxMs: number;
  mbPerSecond: number;
}

const WRK_SCRIPT = `
local paths = {}
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  local seed = tonumber(tostring({}):match("0x(%x+)") or "1", 16) or 1
  math.randomseed(os.time() + seed % 1000003)
end
request = function()
  return wrk.format("GET", paths[math.random(#paths)])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"errors":%d,"status":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"bytes":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, summary.bytes))
end
`;

interface WrkOptions {
  connections: number;
  seconds: number;
  threads?: number;
}

function wrkArguments(baseUrl: string, pathsFile: string, options: WrkOptions): string[] {
  const script = path.join(BENCH_DIR, 'random-paths.lua');
  writeFileSync(script, WRK_SCRIPT);
  return [
    `-t${options.threads ?? 2}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--timeout',
    '5s',
    '-s',
    script,
    baseUrl,
    '--',
    pathsFile,
  ];
}

function wrkResult(stdout: string, stderr: string): LoadResult {
  const line = /WRK_JSON (\{.*\})/.exec(stdout)?.[1];
  if (!line) throw new Error(`wrk failed: ${stdout}\n${stderr}`);
  const r = JSON.parse(line) as Record<string, number>;
  const seconds = (r.duration_us ?? 1) / 1e6;
  return {
    requests: r.requests ?? 0,
    seconds,
    perSecond: (r.requests ?? 0) / seconds,
    errors: r.errors ?? 0,
    badStatus: r.status ?? 0,
    p50ms: (r.p50 ?? 0) / 1000,
    p90ms: (r.p90 ?? 0) / 1000,
    p99ms: (r.p99 ?? 0) / 1000,
    maxMs: (r.max ?? 0) / 1000,
    mbPerSecond: (r.bytes ?? 0) / seconds / 1024 / 1024,
  };
}

/** wrk with random paths from a file: `connections` keep-alive connections for `seconds`. */
export function runWrk(baseUrl: string, pathsFile: string, options: WrkOptions): LoadResult {
  const result = spawnSync('wrk', wrkArguments(baseUrl, pathsFile, options), { encoding: 'utf8' });
  return wrkResult(result.stdout, result.stderr);
}

/** runWrk without blocking this process: something else can be measured while wrk runs. */
export function runWrkAsync(baseUrl: string, pathsFile: string, options: WrkOptions): Promise<LoadResult> {
  const child = spawn('wrk', wrkArguments(baseUrl, pathsFile, options), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => {
      try {
        resolve(wrkResult(stdout, stderr));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

export interface LatencyResult {
  requests: number;
  failures: number;
  p50ms: number;
  p95ms: number;
  maxMs: number;
}

/**
 * One client calling `route` of the API again and again (each call after the last answer) until
 * `stop` resolves: the latency a user of the API sees, e.g. while tiles are under load.
 */
export async function probeApi(
  url: string,
  session: Session,
  route: string,
  stop: Promise<unknown>,
): Promise<LatencyResult> {
  let stopped = false;
  void stop.finally(() => (stopped = true));
  const times: number[] = [];
  let failures = 0;
  while (!stopped) {
    const started = performance.now();
    try {
      const response = await fetch(`${url}${route}`, { headers: { Cookie: session.cookie } });
      await response.arrayBuffer();
      if (!response.ok) failures += 1;
    } catch {
      failures += 1;
    }
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  return { requests: times.length, failures, p50ms: at(0.5), p95ms: at(0.95), maxMs: times.at(-1) ?? 0 };
}

export function formatLatency(name: string, r: LatencyResult): string {
  return `${name}: p50 ${r.p50ms.toFixed(1)} ms  p95 ${r.p95ms.toFixed(1)} ms  max ${r.maxMs.toFixed(1)} ms  (${r.requests} calls, ${r.failures} failed)`;
}

export function formatLoad(name: string, r: LoadResult): string {
  return `${name.padEnd(8)} ${r.perSecond.toFixed(0).padStart(7)} tiles/s  p50 ${r.p50ms.toFixed(2)} ms  p90 ${r.p90ms.toFixed(2)} ms  p99 ${r.p99ms.toFixed(2)} ms  max ${r.maxMs.toFixed(1)} ms  ${r.mbPerSecond.toFixed(0)} MB/s  (${r.requests} requests, ${r.errors} socket errors, ${r.badStatus} non-2xx)`;
}

export function cpuInfo(): string {
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const cores = readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? 0;
  return `${cores} x ${model}, Node ${process.version}`;
}

/** The demo accounts' password the benchmarks start the server with (DEMO_PASSWORD). */
export const BENCH_PASSWORD = 'bench-password';

/** PUT a file to a signed URL, streamed. */
export function putFile(url: string, file: string): Promise<void> {
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

/**
 * The product's path for a slide: as the demo `uploader`, a signed URL for the first DEMO- study,
 * the file PUT to it, the image registered, then polled until the worker has built the pyramid.
 */
export async function uploadAndProcess(
  server: RunningServer,
  slide: string,
  password = BENCH_PASSWORD,
): Promise<ImageView> {
  const session: Session = await login(server.url, 'uploader', password);
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

export interface NginxOptions {
  /** The folder served. */
  root: string;
  port: number;
  /** nginx's prefix folder (config, pid, logs, temp). */
  prefix: string;
  /** worker_processes; default 1. */
  workers?: string;
  /** Directives inside `server { }` after `listen` and `root`. */
  serverDirectives?: string;
  /** `default_type` of the http block; default image/jpeg (tiles without an extension). */
  defaultType?: string;
}

/** Debian's nginx in the foreground with a config of our own; resolves once the port answers. */
export async function startNginx(options: NginxOptions): Promise<ChildProcess> {
  const { root, port, prefix } = options;
  mkdirSync(prefix, { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes ${options.workers ?? '1'};
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
  default_type ${options.defaultType ?? 'image/jpeg'};
  server {
    listen 127.0.0.1:${port};
    root ${root};
    ${options.serverDirectives ?? ''}
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
