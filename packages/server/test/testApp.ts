import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';
import { CSRF_HEADER, SESSION_COOKIE } from '@lamina/domain';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/platform/config.js';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { syncReferenceData } from '../src/platform/rbac/referenceData.js';
import { seedQueryReasons } from '../src/modules/queries/queryReasonService.js';
import { waitFor } from './support/wait.js';

export interface TestContext {
  app: FastifyInstance;
  database: Database;
  config: Config;
  close(): Promise<void>;
}

/**
 * A real database per test file: embedded PGlite loaded from the migrated template, or, when
 * TEST_DATABASE_URL is set, a new database on that PostgreSQL server, dropped afterwards.
 */
export async function openTestDatabase(): Promise<{ database: Database; drop: () => Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const file = inject('pgliteTemplate');
    const database = await openDatabase({ loadDataDir: new Blob([await readFile(file)]) });
    return { database, drop: async () => {} };
  }
  const created = await createServerDatabase(url);
  const database = await openDatabase({ databaseUrl: created.url, maxConnections: 5 });
  await migrate(database);
  await syncReferenceData(database.db);
  await seedQueryReasons(database.db);
  return { database, drop: created.drop };
}

/** A new, empty database on the PostgreSQL server of `url`: its URL, and how to drop it. */
export async function createServerDatabase(
  url: string,
  prefix = 'lamina_test',
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  return {
    url: dbUrl.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      // pg's pool.end() resolves before its sockets are closed: a DROP … WITH (FORCE) while they
      // close terminates their backends, and the closing clients emit an unhandled 57P01. Wait
      // until the server has no connection to the database left (then FORCE ends none), at most 5 s.
      await waitFor(
        `the connections to ${name} to close`,
        async () => {
          const { rows } = await client.query<{ n: number }>(
            'select count(*)::int as n from pg_stat_activity where datname = $1',
            [name],
          );
          return rows[0]?.n === 0;
        },
        { timeoutMs: 5000, everyMs: 20 },
      ).catch(() => undefined);
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export async function createTestApp(env: Record<string, string> = {}): Promise<TestContext> {
  const { database, drop } = await openTestDatabase();
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET: 'test-secret',
    WEB_DIST: '/nonexistent',
    QUERY_REMINDER_CRON: 'off',
    ...env,
  });
  const app = await buildApp({ config, database });
  await app.ready();
  return {
    app,
    database,
    config,
    async close() {
      await app.close();
      await database.close();
      await drop();
    },
  };
}

/** A logged-in browser: the session cookie and the CSRF token, sent on every request. */
export interface Session {
  cookie: string;
  csrfToken: string;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
}

export function cookieFrom(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE);
  if (!cookie) throw new Error(`no session cookie in response ${response.statusCode} ${response.body}`);
  return cookie.value;
}

export async function login(app: FastifyInstance, username: string, password: string): Promise<Session> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
  if (response.statusCode !== 200)
    throw new Error(`login of ${username} failed: ${response.statusCode} ${response.body}`);
  const cookie = cookieFrom(response);
  const { csrfToken } = response.json<{ csrfToken: string }>();
  return {
    cookie,
    csrfToken,
    request: (options) =>
      app.inject({
        ...options,
        cookies: { ...(options.cookies as Record<string, string> | undefined), [SESSION_COOKIE]: cookie },
        headers: { [CSRF_HEADER]: csrfToken, ...(options.headers as Record<string, string> | undefined) },
      }),
  };
}
