import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

/**
 * Applies the plain SQL files of migrations/ in name order, each in its own transaction, recording
 * each in schema_migrations. Forward-only: an applied file is never run again or rolled back.
 *
 * The migration's row is inserted first in its transaction: when several processes start at once
 * on one PostgreSQL, the second blocks on that primary key until the first commits, then fails
 * with a unique violation and skips the file, which the first has applied.
 */
export async function migrate(database: Database): Promise<string[]> {
  const { raw } = database;
  const files = await migrationFiles();
  await raw.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
  const done = new Set((await raw.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name));
  const applied: string[] = [];
  for (const file of files) {
    if (done.has(file)) continue;
    const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
    const name = file.replaceAll("'", "''");
    try {
      await raw.execInTransaction(`INSERT INTO schema_migrations (name) VALUES ('${name}');\n${text}`);
      applied.push(file);
    } catch (error) {
      if ((error as { code?: string }).code === '23505') continue; // applied by another process
      throw error;
    }
  }
  return applied;
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
