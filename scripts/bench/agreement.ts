/**
 * npm run bench:agreement — issue 30's goal: `GET /api/studies/{id}/agreement` answers in < 500 ms
 * for a study of 10 000 cases × 2 readers.
 *
 * 1. The statistics alone (no database): what the route computes per endpoint — ICC(2,1) with its
 *    interval, kappa on the binary reading (Cohen's for 2 readers, Fleiss' for 3), percent agreement
 *    and Bland–Altman of the first two readers — on seeded random ratings, × 2 and × 3 readers.
 * 2. The route with its database: a study with two endpoints (a peak count with a threshold, a mean
 *    count without), BENCH_AGREEMENT_CASES cases (10 000 by default) read by 2 primary readers
 *    (case_readers and frozen read_outcomes, ~1 % of the values null with their reason), written in
 *    a few INSERT … SELECT generate_series statements with MD5-derived numbers (the same data on
 *    every run and engine); then the real route through app.inject as an ISC of the study, and apart
 *    the service (query and statistics, no HTTP) and its query of the frozen values alone.
 *
 * Embedded PGlite by default; PostgreSQL when BENCH_DATABASE_URL is set (a server's URL: the
 * database lamina_bench_agreement is made anew on it). Prints the median, p95 and slowest of
 * BENCH_ROUNDS (21) runs after BENCH_WARMUP (5). Figures, not a test: docs/BENCHMARKS.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql, type RawBuilder } from 'kysely';
import { endpointsSchema, roleByName, type EndpointDefinition, type StudyAgreementResponse } from '@lamina/domain';
import { buildApp } from '../../packages/server/src/app.js';
import { loadConfig } from '../../packages/server/src/platform/config.js';
import { openDatabase, type Database } from '../../packages/server/src/platform/db/database.js';
import { migrate } from '../../packages/server/src/platform/db/migrate.js';
import { syncReferenceData } from '../../packages/server/src/platform/rbac/referenceData.js';
import { hashPassword } from '../../packages/server/src/platform/auth/passwords.js';
import { studyPrimaryReadings } from '../../packages/server/src/modules/outcomes/outcomeQueries.js';
import { OutcomeService } from '../../packages/server/src/modules/outcomes/outcomeService.js';
import {
  blandAltman,
  cohenKappa,
  fleissKappa,
  icc21,
  percentAgreement,
} from '../../packages/server/src/modules/outcomes/agreementStatistics.js';
import { cpuInfo, log } from './lib.js';

const CASES = Number(process.env.BENCH_AGREEMENT_CASES ?? 10_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const SERVER_URL = process.env.BENCH_DATABASE_URL;
const DB_NAME = 'lamina_bench_agreement';
const THRESHOLD = 15;
const PASSWORD = 'bench-agreement-password';
const ENDPOINTS: EndpointDefinition[] = [
  {
    key: 'pec',
    label: 'Peak eosinophils per HPF',
    kind: 'PEAK_COUNT_PER_HPF',
    className: 'Eosinophil',
    threshold: THRESHOLD,
    positiveWhen: 'GTE',
  },
  { key: 'mean_eos', label: 'Mean eosinophils per HPF', kind: 'MEAN_COUNT_PER_HPF', className: 'Eosinophil' },
];

// ---------------------------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------------------------

interface Figures {
  median: number;
  p95: number;
  max: number;
  /** The median CPU time of this process per run (user + system): on a shared machine, less moved by load than wall time. */
  cpu: number;
}

/** Nearest-rank percentile of sorted times. */
const rank = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;

async function timeIt(run: () => unknown): Promise<Figures> {
  for (let i = 0; i < WARMUP; i++) await run();
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = process.hrtime.bigint();
    const used = process.cpuUsage();
    await run();
    const spent = process.cpuUsage(used);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    cpu.push((spent.user + spent.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { median: rank(times, 0.5), p95: rank(times, 0.95), max: times.at(-1) ?? 0, cpu: rank(cpu, 0.5) };
}

const shown = (f: Figures) =>
  `median ${f.median.toFixed(1)} ms, p95 ${f.p95.toFixed(1)} ms, slowest ${f.max.toFixed(1)} ms (CPU ${f.cpu.toFixed(1)} ms)`;

// ---------------------------------------------------------------------------------------------
// 1. The statistics alone
// ---------------------------------------------------------------------------------------------

/** Mulberry32: a small seeded generator, so the data is the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Peak eosinophil counts per case: a true value per case, each reader off by some noise. */
function ratings(cases: number, readers: number): number[][] {
  const next = random(30 + readers);
  return Array.from({ length: cases }, () => {
    const truth = Math.floor(next() * 60);
    return Array.from({ length: readers }, () => Math.max(0, truth + Math.round((next() - 0.5) * 12)));
  });
}

/** What the route computes for one endpoint over the study's cases. */
function statistics(matrix: number[][]): number {
  const icc = icc21(matrix);
  const positive = matrix.map((row) => row.map((value) => value >= THRESHOLD));
  const kappa =
    positive[0]?.length === 2
      ? cohenKappa(
          positive.map((row) => row[0] ?? false),
          positive.map((row) => row[1] ?? false),
        )
      : fleissKappa(positive);
  const agreeing = percentAgreement(positive);
  const ba = blandAltman(
    matrix.map((row) => row[0] ?? 0),
    matrix.map((row) => row[1] ?? 0),
  );
  return (icc.icc ?? 0) + (kappa ?? 0) + (agreeing ?? 0) + (ba.meanDifference ?? 0);
}

async function benchStatistics(): Promise<void> {
  for (const readers of [2, 3]) {
    const matrix = ratings(CASES, readers);
    const figures = await timeIt(() => statistics(matrix));
    const icc = icc21(matrix);
    log(
      `statistics alone, ${CASES} cases x ${readers} readers: ${shown(figures)} (ICC ${icc.icc?.toFixed(3) ?? 'null'})`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 2. The route with its database
// ---------------------------------------------------------------------------------------------

/** A new database on BENCH_DATABASE_URL's server, or embedded PGlite; migrated, roles synced. */
async function openBenchDatabase(): Promise<{ database: Database; engine: string }> {
  if (!SERVER_URL) {
    const database = await openDatabase({});
    await migrate(database);
    await syncReferenceData(database.db);
    return { database, engine: 'PGlite (embedded, in memory)' };
  }
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]?.server_version;
  await admin.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${DB_NAME}`;
  const database = await openDatabase({ databaseUrl: url.toString(), maxConnections: 5 });
  await migrate(database);
  await syncReferenceData(database.db);
  return { database, engine: `PostgreSQL ${version ?? '?'}` };
}

/**
 * The study, its ISC (who asks) and two readers, CASES completed cases each read by both, and their
 * frozen values: per case a true peak count in [0, 60), each reader's peak the truth ± 6, their mean
 * per HPF a third of it ± 1; 1 % of the values not computable (null, 'The reader drew no HPF').
 * The numbers come from MD5s of the case's and reader's names: the same data on every run and engine.
 */
async function buildStudy(database: Database): Promise<{ studyId: number; username: string }> {
  const db = database.db;
  const started = performance.now();
  const passwordHash = await hashPassword(PASSWORD);
  const result = await db.transaction().execute(async (tx) => {
    const studyId = (
      await tx
        .insertInto('studies')
        .values({
          name: 'Bench Agreement Study',
          sponsor: 'Bench',
          indications: ['EOSINOPHILIC_ESOPHAGITIS'],
          endpoints: JSON.stringify(endpointsSchema.parse(ENDPOINTS)),
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const user = async (username: string, role: 'ISC' | 'CR') => {
      const id = (
        await tx
          .insertInto('users')
          .values({ username, first_name: 'Bench', last_name: role, registered: true, password_hash: passwordHash })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      await tx
        .insertInto('study_access')
        .values({ user_id: id, study_id: studyId, role_id: roleByName(role).id })
        .execute();
      return id;
    };
    const username = 'bench-isc@example.org';
    await user(username, 'ISC');
    const readerA = await user('bench-reader-a@example.org', 'CR');
    const readerB = await user('bench-reader-b@example.org', 'CR');
    await sql`insert into cases (study_id, status, proc_id, subject_id, read_completed_at)
      select ${studyId}, 'COMPLETED', 'BENCH-' || lpad(i::text, 6, '0'), 'S-' || i, now()
      from generate_series(1, ${CASES}) as i`.execute(tx);
    await sql`insert into case_readers (case_id, user_id, read_at, role)
      select c.id, r.id, now(), 'PRIMARY' from cases c cross join (values (${readerA}::int), (${readerB}::int)) as r(id)
      where c.study_id = ${studyId}`.execute(tx);
    // u(text): a uniform number in [0, 1) from the text's MD5, the same on every engine and run.
    const u = (text: RawBuilder<string>) => sql`(('x' || substr(md5(${text}), 1, 8))::bit(32)::bigint / 4294967296.0)`;
    const peak = sql`floor(${u(sql`'truth:' || c.proc_id`)} * 60)`;
    await sql`with reads as (
        select c.id as case_id, r.id as reader_id,
          greatest(0, ${peak} + round((${u(sql`'peak:' || c.proc_id || ':' || r.slot`)} - 0.5) * 12)) as peak,
          ${u(sql`'missing:' || c.proc_id || ':' || r.slot`)} < 0.01 as missing,
          ${u(sql`'noise:' || c.proc_id || ':' || r.slot`)} as noise
        from cases c cross join (values (${readerA}::int, 'a'), (${readerB}::int, 'b')) as r(id, slot)
        where c.study_id = ${studyId}
      )
      insert into read_outcomes (case_id, reader_id, endpoint_key, value, positive, reason, reader_role, scored_at)
      select x.case_id, x.reader_id, e.key,
        case when x.missing then null when e.key = 'pec' then x.peak else x.peak / 3 + (x.noise - 0.5) * 2 end,
        case when x.missing or e.key <> 'pec' then null else x.peak >= ${THRESHOLD} end,
        case when x.missing then 'The reader drew no HPF' end,
        'PRIMARY', now()
      from reads x cross join (values ('pec'), ('mean_eos')) as e(key)`.execute(tx);
    return { studyId, username };
  });
  await sql`analyze`.execute(db);
  const counts = await sql<{ cases: number; reads: number; frozen: number }>`select
      (select count(*)::int from cases where study_id = ${result.studyId}) as cases,
      (select count(*)::int from case_readers) as reads,
      (select count(*)::int from read_outcomes) as frozen`.execute(db);
  const c = counts.rows[0];
  log(
    `built the study: ${c?.cases} cases, ${c?.reads} reads, ${c?.frozen} frozen values in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return result;
}

async function benchRoute(): Promise<void> {
  const { database, engine } = await openBenchDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lamina-bench-agreement-'));
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET: 'bench-agreement-secret',
    WEB_DIST: '/nonexistent',
    QUERY_REMINDER_CRON: 'off',
    DATA_DIR: dataDir,
  });
  const app = await buildApp({ config, database });
  try {
    await app.ready();
    log(`database: ${engine}`);
    const { studyId, username } = await buildStudy(database);
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: PASSWORD },
    });
    if (login.statusCode !== 200) throw new Error(`login failed: ${login.statusCode} ${login.body}`);
    const cookie = login.cookies.map((k) => `${k.name}=${k.value}`).join('; ');
    const ask = async () => {
      const response = await app.inject({
        method: 'GET',
        url: `/api/studies/${studyId}/agreement`,
        headers: { cookie },
      });
      if (response.statusCode !== 200) throw new Error(`agreement: ${response.statusCode} ${response.body}`);
      return response;
    };
    const answer = (await ask()).json<StudyAgreementResponse>();
    for (const e of answer.endpoints)
      log(
        `  ${e.endpointKey}: ${e.cases} cases x ${e.readers} readers, ${e.valuedCases} valued, ICC ${e.icc?.toFixed(3) ?? 'null'} (${e.iccLower95?.toFixed(3) ?? 'null'}–${e.iccUpper95?.toFixed(3) ?? 'null'}), kappa ${e.kappa?.toFixed(3) ?? 'null'}, mean difference ${e.meanDifference?.toFixed(3) ?? 'null'}`,
      );

    const route = await timeIt(ask);
    // Without HTTP, session and JSON: the service (the query and the statistics), and the query alone.
    const service = new OutcomeService(database.db);
    const serviceTimes = await timeIt(() => service.studyAgreement(studyId));
    const query = await timeIt(() => studyPrimaryReadings(database.db, studyId));
    log(
      `GET /api/studies/${studyId}/agreement (${CASES} cases x 2 readers, ${ENDPOINTS.length} endpoints): ${shown(route)}`,
    );
    log(`  the service (query and statistics): ${shown(serviceTimes)}`);
    log(`  its query of the frozen values: ${shown(query)}`);
    // For comparison, the same readings as one row each (the route's query until it grouped them).
    const rowEach = await timeIt(() =>
      database.db
        .selectFrom('read_outcomes as o')
        .innerJoin('cases as c', 'c.id', 'o.case_id')
        .select(['o.case_id', 'o.reader_id', 'o.endpoint_key', 'o.value', 'o.positive'])
        .where('c.study_id', '=', studyId)
        .where('c.status', 'not in', ['ARCHIVED', 'INVALID'])
        .where('o.reader_role', '=', 'PRIMARY')
        .execute(),
    );
    log(`  the same readings as a row each: ${shown(rowEach)}`);
    log(`  goal < 500 ms: ${route.median < 500 && route.p95 < 500 ? 'met' : 'NOT met'}`);
  } finally {
    await app.close();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

log(
  `machine: ${cpuInfo()}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
await benchStatistics();
await benchRoute();
log(
  `load after: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
