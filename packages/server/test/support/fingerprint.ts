import { sql } from 'kysely';
import type { Db } from '../../src/platform/db/database.js';

/** Tables that change on any authenticated request (last seen) or on refusals by design (throttling). */
const UNTRACKED = new Set(['sessions', 'login_failures', 'schema_migrations']);

/**
 * A fingerprint of the database: an md5 over every row of every tracked table, in one query. Two
 * equal fingerprints mean a request changed nothing (the route-walking and fuzz tests).
 */
export async function databaseFingerprint(db: Db): Promise<() => Promise<Record<string, string>>> {
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const query = `select ${tables.rows
    .map((r) => r.table_name)
    .filter((name) => !UNTRACKED.has(name))
    .map(
      (name) => `(select md5(coalesce(string_agg(x::text, ',' order by x::text), '')) from "${name}" x) as "${name}"`,
    )
    .join(', ')}`;
  return async () => (await sql.raw<Record<string, string>>(query).execute(db)).rows[0] ?? {};
}

/** The tables whose fingerprint differs. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(after).filter((table) => after[table] !== before[table]);
}
