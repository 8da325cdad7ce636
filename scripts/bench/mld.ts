/**
 * npm run bench:mld — an .mld import at AI scale (issue 17): a file of BENCH_MLD_OBJECTS objects
 * (200 000 by default: HPF circles with nuclei polygons around them, written by the test writer of
 * the documented layout) imported by the import job into an image of the same size — parse, link,
 * place, bulk insert as annotations, finish COMPLETE. Prints the file size and each phase's seconds
 * (the goal: 200 000 objects in under 30 s).
 *
 * On the embedded database (PGlite, in memory) by default; on PostgreSQL with BENCH_DATABASE_URL
 * (a database of its own, `lamina_bench_mld`, made again on each run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { roleByName } from '@lamina/domain';
import { openDatabase, type Database } from '../../packages/server/src/platform/db/database.js';
import { migrate } from '../../packages/server/src/platform/db/migrate.js';
import { syncReferenceData } from '../../packages/server/src/platform/rbac/referenceData.js';
import { LocalStorage } from '../../packages/server/src/platform/storage/localStorage.js';
import { processMldImport } from '../../packages/server/src/commands/mldImport.js';
import { parseMld } from '../../packages/server/src/modules/mld/mldParser.js';
import { placeMld } from '../../packages/server/src/modules/mld/mldCoordinates.js';
import { writePixelMld } from '@lamina/test-support/mldWriter';
import { cpuInfo, log } from './lib.js';

const OBJECTS = Number(process.env.BENCH_MLD_OBJECTS ?? 200_000);
const SIZE = { width: 100_000, height: 80_000 };

async function database(): Promise<Database> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) return openDatabase({});
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query('DROP DATABASE IF EXISTS lamina_bench_mld WITH (FORCE)');
  await client.query('CREATE DATABASE lamina_bench_mld');
  await client.end();
  const url = new URL(admin);
  url.pathname = '/lamina_bench_mld';
  return openDatabase({ databaseUrl: url.toString() });
}

/** HPFs on a grid, each with nine nuclei (small polygons) around its centre: 10 objects a field. */
function file(): Uint8Array {
  const fields = Math.ceil(OBJECTS / 10);
  const across = Math.ceil(Math.sqrt(fields * (SIZE.width / SIZE.height)));
  const step = Math.floor(SIZE.width / (across + 1));
  const circles: { x: number; y: number; radius: number }[] = [];
  const polygons: { points: [number, number][]; classIndex: number }[] = [];
  for (let i = 0; i < fields && circles.length + polygons.length < OBJECTS; i++) {
    const x = step * (1 + (i % across));
    const y = step * (1 + Math.floor(i / across));
    circles.push({ x, y, radius: 250 });
    for (let k = 0; k < 9 && circles.length + polygons.length < OBJECTS; k++) {
      const cx = x - 120 + (k % 3) * 120;
      const cy = y - 120 + Math.floor(k / 3) * 120;
      polygons.push({
        points: [
          [cx - 6, cy - 4],
          [cx + 6, cy - 4],
          [cx + 7, cy + 3],
          [cx, cy + 7],
          [cx - 7, cy + 3],
        ],
        classIndex: 1 + (k % 2),
      });
    }
  }
  return writePixelMld({
    size: SIZE,
    imagePath: 'D:\\Bench\\BenchSlide.svs',
    classes: [
      { layer: 'ROI', names: [{ name: 'AI HPF' }] },
      { layer: 'Label', names: [{ name: 'Eosinophil' }, { name: 'Other nucleus' }] },
    ],
    circles,
    polygons,
  });
}

async function main(): Promise<void> {
  log(`machine: ${cpuInfo()}; ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}`);
  let t = performance.now();
  const bytes = file();
  log(
    `wrote a ${(bytes.byteLength / 1e6).toFixed(1)} MB .mld of ${OBJECTS} objects in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  t = performance.now();
  const parsed = parseMld(bytes);
  const parseS = (performance.now() - t) / 1000;
  t = performance.now();
  placeMld(parsed);
  log(
    `parse ${parseS.toFixed(2)} s, place ${((performance.now() - t) / 1000).toFixed(2)} s (${parsed.objectCount} objects, ${parsed.vertexCount} vertices)`,
  );

  const dir = mkdtempSync(path.join(tmpdir(), 'lamina-bench-mld-'));
  const db = await database();
  try {
    await migrate(db);
    await syncReferenceData(db.db);
    const storage = new LocalStorage({ root: path.join(dir, 'storage'), secret: 'bench' });
    const study = await db.db
      .insertInto('studies')
      .values({ name: 'Bench MLD', sponsor: 'Bench' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const user = await db.db
      .insertInto('users')
      .values({ username: 'bench-isc@example.org', registered: true })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.db
      .insertInto('study_access')
      .values({ user_id: user.id, study_id: study.id, role_id: roleByName('ISC').id })
      .execute();
    await db.db
      .insertInto('images')
      .values({
        study_id: study.id,
        name: 'BenchSlide.svs',
        s3_key: 'uploads/bench/BenchSlide.svs',
        status: 'CASE_ASSIGNMENT_PENDING',
        processing_status: 'SUCCESS',
        width: SIZE.width,
        height: SIZE.height,
        mpp: 0.25,
      })
      .execute();
    const key = `mld/u${user.id}-bench/bench.mld`;
    await storage.write(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const mld = await db.db
      .insertInto('mld_files')
      .values({ name: 'bench.mld', s3_key: key, size_bytes: bytes.byteLength, uploader_id: user.id, status: 'QUEUED' })
      .returning('id')
      .executeTakeFirstOrThrow();
    t = performance.now();
    await processMldImport({ db: db.db, storage }, mld.id);
    const seconds = (performance.now() - t) / 1000;
    const done = await db.db
      .selectFrom('mld_files')
      .select(['status', 'error_message', 'counts', 'image_id'])
      .where('id', '=', mld.id)
      .executeTakeFirstOrThrow();
    if (done.status !== 'COMPLETE') throw new Error(`import ended ${done.status}: ${done.error_message ?? ''}`);
    log(
      `import job (read, parse, link by name, place, insert, parents, finish): ${seconds.toFixed(1)} s (goal < 30 s); counts ${JSON.stringify(done.counts)}`,
    );
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
