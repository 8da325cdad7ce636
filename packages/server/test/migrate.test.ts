// engine: postgres — migrations under their advisory lock, six migrators started together on a new database
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/platform/db/database.js';
import { MIGRATION_LOCK, migrate, migrationFiles, pendingMigrations } from '../src/platform/db/migrate.js';
import { createServerDatabase, openTestDatabase } from './testApp.js';

/**
 * Migrations run once under an advisory lock (issue 19): processes starting together on one
 * PostgreSQL each run migrate(); one applies every file, the others wait for it and apply none;
 * none fails, and the lock is released afterwards.
 */
const url = process.env.TEST_DATABASE_URL;

describe('migrate', () => {
  it('applies nothing on a database that is up to date, and leaves no advisory lock behind', async () => {
    const { database, drop } = await openTestDatabase();
    try {
      expect(await migrate(database)).toEqual([]);
      expect(await pendingMigrations(database, await migrationFiles())).toEqual([]);
      // This database's: other test files migrate their own databases on the same server meanwhile.
      const locks = await database.raw.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1
           and database = (select oid from pg_database where datname = current_database())`,
        [MIGRATION_LOCK],
      );
      expect(locks[0]?.n).toBe(0);
    } finally {
      await database.close();
      await drop();
    }
  });

  it.skipIf(!url)(
    'on PostgreSQL: six migrators started together on a new database apply each file once, and none fails',
    async () => {
      const created = await createServerDatabase(url as string, 'lamina_migrate');
      const databases: Database[] = [];
      try {
        for (let i = 0; i < 6; i += 1)
          databases.push(await openDatabase({ databaseUrl: created.url, maxConnections: 2 }));
        const files = await migrationFiles();
        expect(await pendingMigrations(databases[0] as Database, files)).toEqual(files);

        const results = await Promise.allSettled(databases.map((database) => migrate(database)));
        const failures = results.filter((r) => r.status === 'rejected');
        expect(failures).toEqual([]);
        const applied = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        // One migrator applied every file; the others found them applied.
        expect(applied.filter((list) => list.length > 0)).toEqual([files]);
        expect(applied.filter((list) => list.length === 0)).toHaveLength(5);

        const rows = await (databases[0] as Database).raw.query<{ name: string }>(
          'select name from schema_migrations order by name',
        );
        expect(rows.map((r) => r.name)).toEqual(files);
        expect(await pendingMigrations(databases[0] as Database, files)).toEqual([]);
        const locks = await (databases[0] as Database).raw.query<{ n: number }>(
          // This database's: other test files migrate their own databases on the same server meanwhile.
          `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1
             and database = (select oid from pg_database where datname = current_database())`,
          [MIGRATION_LOCK],
        );
        expect(locks[0]?.n).toBe(0);
      } finally {
        for (const database of databases) await database.close();
        await created.drop();
      }
    },
    120_000,
  );
});
