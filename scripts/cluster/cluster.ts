/**
 * A Lamina cluster on this machine, as the reference topology runs it (docs/DEPLOYMENT.md): a
 * fresh PostgreSQL database, an S3-compatible server (s3rver from npm), api, tiles and worker
 * processes of the server source (`ROLES=…`, each on its own port), and nginx in front
 * (deploy/nginx/lamina.conf.template). Used by `npm run test:cluster` and `npm run bench:cluster`.
 *
 * Every process started is in its own process group and is killed on stop(), on an error and
 * when this process exits (also on Ctrl-C).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { nginxMainConf, renderLaminaConf, ROOT } from './nginx.js';

export { ROOT };
export const CLUSTER_DIR = path.join(ROOT, '.tmp', 'cluster');
export const SERVER_MAIN = path.join(ROOT, 'packages', 'server', 'src', 'main.ts');
export const WEB_DIST = path.join(ROOT, 'packages', 'web', 'dist');
export const NGINX = '/usr/sbin/nginx';

export type Role = 'api' | 'tiles' | 'worker';

export interface ClusterOptions {
  /** PostgreSQL server (trust or password in the URL); the database `database` is dropped and created. */
  postgresUrl: string;
  database: string;
  api: number;
  tiles: number;
  worker: number;
  /** Extra environment of every server process. */
  env?: Record<string, string>;
  /** The demo password (DEMO=on on the first api process only: it seeds the new database). */
  demoPassword: string;
  log?: (line: string) => void;
}

export interface ServerNode {
  name: string;
  role: Role;
  port: number;
  child: ChildProcess;
  logFile: string;
  readonly alive: boolean;
}

export interface Cluster {
  /** nginx's address: what a browser would open. */
  url: string;
  databaseUrl: string;
  /** The environment every server process shares (DATABASE_URL, STORAGE=s3, …). */
  sharedEnv: Record<string, string>;
  nodes: ServerNode[];
  nginxAccessLog: string;
  /** SIGKILL of one process (group), as a crash or the OOM killer would; resolves when it is gone. */
  kill(node: ServerNode): Promise<void>;
  /** SIGTERM everything, then SIGKILL what is left; removes nothing on disk. */
  stop(): Promise<void>;
}

/** Settings of the caller's shell that must not leak into the server processes. */
const CLEARED = [
  'DATABASE_URL',
  'ROLES',
  'DEMO',
  'SESSION_SECRET',
  'TRUST_PROXY',
  'STORAGE',
  'TEST_DATABASE_URL',
  'PORT',
  'METRICS_PORT',
  'DATA_DIR',
];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function waitForExit(child: ChildProcess, ms: number): Promise<void> {
  if (exited(child)) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || exited(child)) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Every child group started by this process: killed however this process ends. */
const started = new Set<ChildProcess>();
let exitHooked = false;
function track(child: ChildProcess): void {
  started.add(child);
  child.once('exit', () => started.delete(child));
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const c of started) signalGroup(c, 'SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const c of started) signalGroup(c, 'SIGKILL');
      process.exit(130);
    });
  }
}

export async function recreateDatabase(postgresUrl: string, database: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`database name '${database}'`);
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The object store: s3rver in its own process (not this one's event loop, which drives the load). */
async function startS3(directory: string, bucket: string): Promise<{ port: number; child: ChildProcess }> {
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts', 'cluster', 's3server.ts'), directory, bucket, String(port)],
    { cwd: ROOT, detached: true, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  track(child);
  await waitFor(
    's3rver',
    async () => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) })).status < 500,
    30_000,
    child,
  );
  return { port, child };
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  ms: number,
  child?: ChildProcess,
  logFile?: string,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child && exited(child)) {
      const tail = logFile ? readFileSync(logFile, 'utf8').slice(-3000) : '';
      throw new Error(`${what} exited (${String(child.exitCode ?? child.signalCode)}):\n${tail}`);
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${ms / 1000} s`);
    await sleep(250);
  }
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const log = options.log ?? (() => undefined);
  const dir = CLUSTER_DIR;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const nodes: ServerNode[] = [];
  let nginx: ChildProcess | null = null;
  let s3: ChildProcess | null = null;

  const stop = async () => {
    for (const node of nodes) signalGroup(node.child, 'SIGTERM');
    await Promise.all(nodes.map((n) => waitForExit(n.child, 20_000)));
    for (const node of nodes) signalGroup(node.child, 'SIGKILL');
    await Promise.all(nodes.map((n) => waitForExit(n.child, 5_000)));
    if (nginx) {
      signalGroup(nginx, 'SIGQUIT');
      await waitForExit(nginx, 5_000);
      signalGroup(nginx, 'SIGKILL');
    }
    if (s3) {
      signalGroup(s3, 'SIGTERM');
      await waitForExit(s3, 5_000);
      signalGroup(s3, 'SIGKILL');
    }
  };

  try {
    const databaseUrl = await recreateDatabase(options.postgresUrl, options.database);
    const bucket = 'lamina-cluster';
    const s3Server = await startS3(path.join(dir, 's3'), bucket);
    s3 = s3Server.child;
    const nginxPort = await freePort();
    const url = `http://127.0.0.1:${nginxPort}`;
    log(`database ${options.database} created; s3rver on :${s3Server.port}; nginx will listen on :${nginxPort}`);

    const sharedEnv: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      STORAGE: 's3',
      // The bucket through the load balancer (same origin as the app: see the nginx template).
      S3_ENDPOINT: url,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
      SESSION_SECRET: 'cluster-simulation-session-secret-0123456789abcdef',
      TRUST_PROXY: 'on',
      PUBLIC_URL: url,
      HOST: '127.0.0.1',
      WEB_DIST,
      LOG_LEVEL: 'warn',
      DEMO_PASSWORD: options.demoPassword,
      // One anchor file for the api processes (a shared volume in a real deployment).
      AUDIT_ANCHOR_FILE: path.join(dir, 'audit-anchors.jsonl'),
      AUDIT_ANCHOR_INTERVAL: '5',
      // Short, so that a killed worker's job is back in the queue within seconds.
      WORKER_HEARTBEAT_INTERVAL: '1',
      WORKER_STALE_AFTER: '3',
      SHUTDOWN_GRACE: '5',
      QUERY_REMINDER_CRON: 'off',
      MALLOC_ARENA_MAX: '2',
      ...options.env,
    };
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CLEARED.includes(name)));

    // Every port first: nginx starts before the processes (their storage is S3_ENDPOINT, which
    // is nginx), with the upstreams they will listen on.
    const plan: { role: Role; index: number; port: number }[] = [];
    for (const [role, count] of [
      ['api', options.api],
      ['tiles', options.tiles],
      ['worker', options.worker],
    ] as const) {
      for (let i = 1; i <= count; i++) plan.push({ role, index: i, port: await freePort() });
    }
    const prefix = path.join(dir, 'nginx');
    mkdirSync(prefix, { recursive: true });
    const conf = path.join(prefix, 'nginx.conf');
    const at = (role: Role) => plan.filter((p) => p.role === role).map((p) => `127.0.0.1:${p.port}`);
    const laminaConf = renderLaminaConf({
      listen: `127.0.0.1:${nginxPort}`,
      api: at('api'),
      tiles: at('tiles'),
      s3: [`127.0.0.1:${s3Server.port}`],
      bucket,
    });
    writeFileSync(path.join(prefix, 'lamina.conf'), laminaConf);
    writeFileSync(conf, nginxMainConf(prefix, `  include ${path.join(prefix, 'lamina.conf')};`));
    const test = spawnSync(NGINX, ['-t', '-p', prefix, '-c', conf], { encoding: 'utf8' });
    if (test.status !== 0) throw new Error(`nginx -t failed:\n${test.stderr}`);
    const nginxChild = spawn(NGINX, ['-p', prefix, '-c', conf], { detached: true, stdio: 'ignore' });
    nginx = nginxChild;
    track(nginxChild);
    await waitFor(
      'nginx',
      async () => (await fetch(`${url}/${bucket}/`, { signal: AbortSignal.timeout(2000) })).status < 500,
      20_000,
      nginxChild,
    );
    log(`nginx at ${url}`);

    const spawnNode = (role: Role, index: number, port: number, demo: boolean): ServerNode => {
      const name = `${role}-${index}`;
      const logFile = path.join(dir, 'logs', `${name}.log`);
      const out = createWriteStream(logFile);
      const child = spawn(process.execPath, ['--import', 'tsx', SERVER_MAIN], {
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...inherited,
          ...sharedEnv,
          ROLES: role,
          PORT: String(port),
          DATA_DIR: path.join(dir, name),
          DEMO: demo ? 'on' : 'off',
        },
      });
      track(child);
      child.stdout?.pipe(out, { end: false });
      child.stderr?.pipe(out, { end: false });
      const node: ServerNode = {
        name,
        role,
        port,
        child,
        logFile,
        get alive() {
          return !exited(child);
        },
      };
      nodes.push(node);
      return node;
    };
    const ready = (node: ServerNode) =>
      waitFor(
        node.name,
        async () => (await fetch(`http://127.0.0.1:${node.port}/api/ready`, { signal: AbortSignal.timeout(3000) })).ok,
        180_000,
        node.child,
        node.logFile,
      );

    // The first api process migrates the new database and seeds the demo accounts and study
    // (DEMO=on); the others start together once it is ready, as an orchestrator scales out.
    const t0 = Date.now();
    const [head, ...tail] = plan;
    if (!head) throw new Error('no process to start');
    const first = spawnNode(head.role, head.index, head.port, true);
    await ready(first);
    log(`${first.name} ready (migrated, demo data seeded) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const rest = tail.map((p) => spawnNode(p.role, p.index, p.port, false));
    await Promise.all(rest.map(ready));
    log(`${nodes.map((n) => `${n.name} :${n.port}`).join(', ')} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    return {
      url,
      databaseUrl,
      sharedEnv,
      nodes,
      nginxAccessLog: path.join(prefix, 'access.log'),
      async kill(node) {
        signalGroup(node.child, 'SIGKILL');
        await waitForExit(node.child, 10_000);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
