import { sql } from 'kysely';
import type { Db } from '../../src/platform/db/database.js';

/** Tables that change on any authenticated request (last seen) or on refusals by design (throttling). */
const UNTRACKED = new Set(['sessions', 'login_failures', 'schema_migrations']);

export interface Fingerprint {
  (): Promise<Record<string, string>>;
  /** How many calls read every row (`full`), and how many reused the last reading (`reused`). */
  readonly stats: { full: number; reused: number };
}

/**
 * A fingerprint of the database: an md5 over every row of every tracked table. Two equal
 * fingerprints mean a request changed nothing (the route-walking and fuzz tests).
 *
 * Reading every row grows with the audit trail, so a reading is kept with the MVCC snapshot it was
 * taken in (`pg_current_snapshot()`: xmin, xmax and the transactions in progress). While the
 * current snapshot is the same text, no transaction has committed or rolled back since — nothing
 * that wrote a row can have become visible — and the kept reading is returned without reading a
 * row. Any write (a refused request's included) takes a transaction id and moves the snapshot, and
 * then every row is read again; so does activity of other databases on a shared PostgreSQL server
 * (slower, never wrong).
 */
export async function databaseFingerprint(db: Db): Promise<Fingerprint> {
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const columns = tables.rows
    .map((r) => r.table_name)
    .filter((name) => !UNTRACKED.has(name))
    .map(
      (name) => `(select md5(coalesce(string_agg(x::text, ',' order by x::text), '')) from "${name}" x) as "${name}"`,
    );
  // One statement: the rows read and the snapshot named are those of the same snapshot.
  const query = `select pg_current_snapshot()::text as "$snapshot", ${columns.join(', ')}`;
  let kept: { snapshot: string; tables: Record<string, string> } | null = null;
  const stats = { full: 0, reused: 0 };
  const fingerprint = async () => {
    if (kept) {
      const now = await sql<{ snapshot: string }>`select pg_current_snapshot()::text as snapshot`.execute(db);
      if (now.rows[0]?.snapshot === kept.snapshot) {
        stats.reused += 1;
        return kept.tables;
      }
    }
    const { $snapshot, ...read } = (await sql.raw<Record<string, string>>(query).execute(db)).rows[0] ?? {};
    stats.full += 1;
    kept = $snapshot === undefined ? null : { snapshot: $snapshot, tables: read };
    return read;
  };
  return Object.assign(fingerprint, { stats });
}

/** The tables whose fingerprint differs. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(after).filter((table) => after[table] !== before[table]);
}
