import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

/** The session-level advisory lock every migration run holds (727_0NN: the issue that added it). */
export const MIGRATION_LOCK = 727_019;

/**
 * Applies the plain SQL files of migrations/ in name order, each in its own transaction, recording
 * each in schema_migrations. Forward-only: an applied file is never run again or rolled back.
 *
 * The whole run holds a PostgreSQL advisory lock on one connection: when several processes start
 * at once on one PostgreSQL, one applies what is missing while the others wait, then find every
 * file applied and go on; none fails and no file runs twice (before, each file's transaction
 * inserted its row first and the losers skipped on the unique violation, but creating
 * schema_migrations itself could still collide, and a unique violation from a migration's own SQL
 * would have been taken for "applied by another process"). The lock goes with the connection, so
 * a migrator that dies releases it. On PGlite (one process) it is taken all the same.
 */
export async function migrate(database: Database): Promise<string[]> {
  const files = await migrationFiles();
  return database.raw.session(async (connection) => {
    await connection.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await connection.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const rows = await connection.query<{ name: string }>('SELECT name FROM schema_migrations');
      const done = new Set(rows.map((r) => r.name));
      const applied: string[] = [];
      for (const file of files) {
        if (done.has(file)) continue;
        const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
        const name = file.replaceAll("'", "''");
        await connection.execInTransaction(`INSERT INTO schema_migrations (name) VALUES ('${name}');\n${text}`);
        applied.push(file);
      }
      return applied;
    } finally {
      // (The session's connection is closed afterwards, which releases the lock in any case.)
      await connection.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    }
  });
}

/** The migration files of this version, in the order they apply. */
export async function migrationFiles(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
}

/**
 * The files of `files` the database has not applied (readiness: a process whose schema is behind
 * its code is not ready). A database without schema_migrations has applied none.
 */
export async function pendingMigrations(database: Database, files: readonly string[]): Promise<string[]> {
  const [table] = await database.raw.query<{ present: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AS present`,
  );
  if (!table?.present) return [...files];
  const rows = await database.raw.query<{ name: string }>('SELECT name FROM schema_migrations');
  const done = new Set(rows.map((r) => r.name));
  return files.filter((f) => !done.has(f));
}
