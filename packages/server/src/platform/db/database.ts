import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { Mutex } from './mutex.js';
import { PGliteDialect } from './pgliteDialect.js';
import type { DB } from './schema.js';

export type Db = Kysely<DB>;

/** Runs SQL outside Kysely (migrations, the job queue): multi-statement text, or one statement with parameters. */
export interface RawSql {
  exec(text: string): Promise<void>;
  /** Runs multi-statement text in one transaction on one connection; rolls back on error. */
  execInTransaction(text: string): Promise<void>;
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  /**
   * Runs `work` on one connection held for its whole duration (session-level advisory locks, e.g.
   * the migrations'). PGlite has one connection anyway.
   */
  session<T>(work: (connection: Omit<RawSql, 'session'>) => Promise<T>): Promise<T>;
}

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Db;
  readonly raw: RawSql;
  close(): Promise<void>;
  /** PGlite only: the data folder as a tar blob (tests build a migrated template once). */
  dump?: () => Promise<Blob>;
}

// int8 (counts, bigint ids) as JS numbers on both drivers: every value we keep fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
// Calendar dates stay 'YYYY-MM-DD' strings: a JS Date would shift them by the server's time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v: string) => v);
const DATE_OID = 1082;

export interface OpenOptions {
  /** postgres:// URL; when absent the embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** PGlite data folder; absent means in memory. */
  dataDir?: string | undefined;
  /** A PGlite data-folder dump (tar) to start from, used by tests to skip initdb and migrations. */
  loadDataDir?: Blob | undefined;
  maxConnections?: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.maxConnections ?? 10);
  return openPGlite(options.dataDir, options.loadDataDir);
}

async function openPostgres(url: string, max: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max });
  // An idle client whose connection the server ends (restart, admin terminating backends, a test
  // dropping its database) emits 'error' on the pool; unhandled, that would crash the process.
  pool.on('error', (error) => {
    console.warn(`PostgreSQL idle client error: ${error.message}`);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  await sql`select 1`.execute(db);
  return {
    kind: 'postgres',
    db,
    raw: {
      async exec(text) {
        await pool.query(text);
      },
      async execInTransaction(text) {
        const client = await pool.connect();
        try {
          await inTransaction(client, text);
        } finally {
          client.release();
        }
      },
      async query<R>(text: string, params?: unknown[]) {
        const result = await pool.query(text, params);
        return result.rows as R[];
      },
      async session(work) {
        const client = await pool.connect();
        try {
          return await work({
            exec: async (text) => {
              await client.query(text);
            },
            execInTransaction: (text) => inTransaction(client, text),
            query: async <R>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as R[],
          });
        } finally {
          // Closed, not returned to the pool: nothing the work held on it (a session lock, whatever
          // the work's failure left) can outlive the work. Sessions are rare (migrations at start).
          client.release(true);
        }
      },
    },
    async close() {
      await db.destroy();
    },
  };
}

async function inTransaction(client: pg.PoolClient, text: string): Promise<void> {
  try {
    await client.query('BEGIN');
    await client.query(text);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

async function openPGlite(dataDir: string | undefined, loadDataDir: Blob | undefined): Promise<Database> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const pglite = await PGlite.create({
    parsers: { [DATE_OID]: (v: string) => v },
    // Trigram search of Image Management (migration 0012).
    extensions: { pg_trgm },
    ...(dataDir ? { dataDir } : {}),
    ...(loadDataDir ? { loadDataDir } : {}),
  });
  const mutex = new Mutex();
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, mutex) });
  const raw: RawSql = {
    exec: (text) =>
      mutex.run(async () => {
        await pglite.exec(text);
      }),
    execInTransaction: (text) =>
      mutex.run(async () => {
        await pglite.exec('BEGIN');
        try {
          await pglite.exec(text);
          await pglite.exec('COMMIT');
        } catch (error) {
          await pglite.exec('ROLLBACK');
          throw error;
        }
      }),
    query: <R>(text: string, params?: unknown[]) =>
      mutex.run(async () => (await pglite.query<R>(text, params ?? [])).rows),
    // One connection: the work's statements take the mutex one by one, as everything else's.
    session: (work) => work(raw),
  };
  return {
    kind: 'pglite',
    db,
    raw,
    async close() {
      await db.destroy();
      await pglite.close();
    },
    dump: () => mutex.run(async () => await pglite.dumpDataDir('none')),
  };
}
