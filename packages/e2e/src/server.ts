import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './paths.js';

export const WEB_DIR = path.join(REPO_ROOT, 'packages/web');
export const WEB_DIST = path.join(WEB_DIR, 'dist');
const SERVER_MAIN = 'packages/server/src/main.ts';

export interface RunningServer {
  baseUrl: string;
  password: string;
  dataDir: string;
  stop: () => Promise<void>;
}

/** Builds the web app when packages/web/dist has no index.html (the repo's test script builds it first). */
export function ensureWebBuilt(): void {
  if (existsSync(path.join(WEB_DIST, 'index.html'))) return;
  const result = spawnSync('npx', ['vite', 'build'], { cwd: WEB_DIR, stdio: 'pipe', encoding: 'utf8' });
  if (result.status !== 0 || !existsSync(path.join(WEB_DIST, 'index.html'))) {
    throw new Error(
      `vite build of packages/web failed (exit ${String(result.status)}):\n${result.stdout}\n${result.stderr}`,
    );
  }
}

/** The /assets/… files index.html loads; all of them must exist for the app to start. */
function missingAssets(dist: string): string[] {
  const index = path.join(dist, 'index.html');
  if (!existsSync(index)) return ['index.html'];
  const html = readFileSync(index, 'utf8');
  const refs = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  return refs.filter((ref) => !existsSync(path.join(dist, ref)));
}

/**
 * Copies the built web app into the run's temp folder, so another package rebuilding
 * packages/web/dist (new hashed file names) during the run cannot pull files from under the server.
 */
async function snapshotWebDist(target: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    await rm(target, { recursive: true, force: true });
    await cp(WEB_DIST, target, { recursive: true });
    const missing = missingAssets(target);
    if (missing.length === 0) return target;
    if (attempt >= 5) throw new Error(`packages/web/dist is incomplete; missing: ${missing.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('No free port'))));
    });
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Signals the server's whole process group (it was started detached, as its own group leader). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || exited(child)) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function waitForHealth(baseUrl: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited(child))
      throw new Error(`server exited early (code ${String(child.exitCode)}, signal ${String(child.signalCode)})`);
    try {
      const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`server did not answer GET /api/health with 200 within ${timeoutMs} ms`);
}

/** Server settings of the caller's shell that would change what the tests see (or touch a real database). */
const SERVER_SETTINGS = [
  'DATABASE_URL',
  'ROLES',
  'DEMO',
  'SESSION_SECRET',
  'SSO_LOGIN_URL',
  'SSO_LOGOUT_URL',
  'TILE_SERVER_LOCATION',
  'FRAME_ANCESTORS',
  'EMBEDDED_COOKIES',
  'TRUST_PROXY',
  'PUBLIC_URL',
  'LOCAL_LOGIN',
  'OIDC_ISSUER',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'OIDC_NAME',
];

function inheritedEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVER_SETTINGS.includes(name)));
}

/**
 * Starts one Lamina server (embedded PGlite, demo data) on a fresh temp data folder and a free
 * port (or `options.port`), with `options.env` added to its environment. Resolves once
 * GET /api/health answers 200.
 */
export async function startServer(
  password: string,
  options: { port?: number; env?: Record<string, string> } = {},
): Promise<RunningServer> {
  ensureWebBuilt();
  const tempRoot = await mkdtemp(path.join(tmpdir(), 'lamina-e2e-'));
  const dataDir = path.join(tempRoot, 'data');
  const webDist = await snapshotWebDist(path.join(tempRoot, 'web-dist'));
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;

  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_MAIN], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...inheritedEnv(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DEMO_PASSWORD: password,
      WEB_DIST: webDist,
      LOG_LEVEL: 'warn',
      // The NOTO embedded test frames the app in a page of its own origin; same-site, so the
      // ordinary (Lax) session cookie is sent and the embedded cookie mode (https only) stays off.
      FRAME_ANCESTORS: "'self'",
      EMBEDDED_COOKIES: 'false',
      ...options.env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));

  const stop = async (): Promise<void> => {
    signalGroup(child, 'SIGTERM');
    if (!(await waitForExit(child, 10_000))) {
      signalGroup(child, 'SIGKILL');
      await waitForExit(child, 5_000);
    }
    await rm(tempRoot, { recursive: true, force: true });
  };

  try {
    await waitForHealth(baseUrl, child, 120_000);
  } catch (error) {
    await stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Lamina server failed to start: ${reason}\n--- server stderr ---\n${stderr}\n--- server stdout ---\n${stdout}`,
      {
        cause: error,
      },
    );
  }
  return { baseUrl, password, dataDir, stop };
}
