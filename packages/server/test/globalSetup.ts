import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { syncReferenceData } from '../src/platform/rbac/referenceData.js';
import { seedQueryReasons } from '../src/modules/queries/queryReasonService.js';

let dir: string | undefined;

/**
 * Builds one migrated embedded database and dumps its data folder; every test file starts its own
 * PGlite from that dump (fast) instead of running initdb and the migrations again.
 */
export async function setup(project: TestProject): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-test-'));
  const database = await openDatabase({});
  await migrate(database);
  await syncReferenceData(database.db);
  await seedQueryReasons(database.db);
  const dump = await database.dump?.();
  await database.close();
  if (!dump) throw new Error('PGlite dump unavailable');
  const file = path.join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
}

export async function teardown(): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}
