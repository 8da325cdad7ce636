import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SERVER_MAIN = path.join(REPO_ROOT, 'packages/server/src/main.ts');

/** Settings of the caller's shell that must not leak into the child server. */
const CLEARED = ['DATABASE_URL', 'ROLES', 'DEMO', 'SESSION_SECRET', 'TRUST_PROXY', 'STORAGE', 'TEST_DATABASE_URL'];

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

export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  /** kill -9 of the whole process (group), as a crash or the OOM killer would. */
  crash(): Promise<void>;
  /** SIGTERM, as an orchestrator stopping the process: resolves with how it exited (within `ms`). */
  terminate(ms?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

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

/**
 * The real server (`packages/server/src/main.ts`) as a child process on `port`, with `env` on top
 * of the caller's environment. Resolves once GET /api/health answers 200.
 */
export async function startServerProcess(port: number, env: Record<string, string>): Promise<ServerProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CLEARED.includes(name)));
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_MAIN], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', WEB_DIST: '/nonexistent', LOG_LEVEL: 'warn', ...env },
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const signal = (name: NodeJS.Signals) => {
    if (child.pid !== undefined && !exited(child)) {
      try {
        process.kill(-child.pid, name);
      } catch {
        // already gone
      }
    }
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    baseUrl,
    child,
    output: () => output,
    async crash() {
      signal('SIGKILL');
      await waitForExit(child, 10_000);
    },
    async terminate(ms = 60_000) {
      signal('SIGTERM');
      await waitForExit(child, ms);
      return { code: child.exitCode, signal: child.signalCode };
    },
    async stop() {
      signal('SIGTERM');
      await waitForExit(child, 15_000);
      signal('SIGKILL');
      await waitForExit(child, 5_000);
    },
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited(child)) throw new Error(`server exited early (${String(child.exitCode)}):\n${output}`);
    const ok = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return server;
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`server did not start within 120 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A logged-in HTTP client of a running server (session cookie and CSRF token). */
export async function httpLogin(baseUrl: string, username: string, password: string) {
  const response = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (response.status !== 200) throw new Error(`login ${response.status}: ${await response.text()}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the response shape
  return async <T>(method: string, url: string, body?: unknown): Promise<{ status: number; json: T }> => {
    const r = await fetch(`${baseUrl}${url}`, {
      method,
      headers: {
        cookie,
        'x-csrf-token': csrfToken,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, json: (await r.json()) as T };
  };
}
