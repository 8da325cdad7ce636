/**
 * npm run bench:reports — the audit trail export at trial size (issue 16):
 * - the CSV of BENCH_AUDIT_ROWS events (1 000 000 by default), every study (a system admin's
 *   Global export): rows, megabytes, seconds, and the server's highest resident memory while it
 *   streams (the goal: under 300 MB RSS);
 * - the PDF of one study's BENCH_PDF_ROWS events (100 000 by default): seconds (the goal: under two
 *   minutes), megabytes, pages, the server's highest RSS.
 *
 * Makes its own PostgreSQL database (`lamina_bench_reports` on BENCH_DATABASE_URL's server, default
 * postgres://postgres@127.0.0.1:5432/postgres; dropped and made again on each run), writes the events
 * with a valid hash chain, and starts the real server (ROLES=api) against it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { roleByName } from '@lamina/domain';
import { openDatabase } from '../../packages/server/src/platform/db/database.js';
import { migrate } from '../../packages/server/src/platform/db/migrate.js';
import { syncReferenceData } from '../../packages/server/src/platform/rbac/referenceData.js';
import { seedQueryReasons } from '../../packages/server/src/modules/queries/queryReasonService.js';
import { hashPassword } from '../../packages/server/src/platform/auth/passwords.js';
import {
  GENESIS_HASH,
  hashRow,
  readAuditHead,
  type ChainedRow,
} from '../../packages/server/src/platform/audit/audit.js';
import { cpuInfo, has, log, login, memoryOf, sampleMemory, startServer, type Session } from './lib.js';

const TOTAL = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000);
const PDF_ROWS = Number(process.env.BENCH_PDF_ROWS ?? 100_000);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NAME = 'lamina_bench_reports';
const PASSWORD = 'bench-reports-password';
const USERNAME = 'bench-sysadmin@example.org';

async function freshDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${NAME}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${NAME}`;
  return url.toString();
}

const ACTIONS = [
  [
    'ANNOTATION_CREATED',
    'annotation',
    null,
    '{"annotationType":"POINT","classId":12,"x":10234,"y":8812,"parentId":4411}',
  ],
  [
    'IMAGE_UPLOADED',
    'image',
    null,
    '{"name":"S-1042_V2_colon-ascending_HE.svs","s3Key":"uploads/7/a/slide.svs","size":1842233344}',
  ],
  ['CASE_STATUS_CHANGED', 'case', 'status', 'PENDING_QC'],
  [
    'QUERY_COMMENTED',
    'query',
    'comment',
    '{"commentId":812,"text":"The label reads V3; the requisition says V2. Please check."}',
  ],
  ['IMAGE_EDITED', 'image', 'accessionNumber', 'ACC-2026-118234'],
] as const;

/** Writes `count` events of `studyId` after the chain's head, with valid hashes, 2 000 a statement. */
async function writeEvents(
  db: Awaited<ReturnType<typeof openDatabase>>['db'],
  count: number,
  studyId: number,
  userId: number,
) {
  const head = await readAuditHead(db);
  let prev = head?.hash ?? GENESIS_HASH;
  let id = (head?.id ?? 0) + 1;
  const start = Date.now() - count * 1000;
  for (let done = 0; done < count;) {
    const rows: ChainedRow[] = [];
    const hashes: string[] = [];
    const prevs: string[] = [];
    for (let i = 0; i < 2000 && done < count; i++, done++, id++) {
      const [action, entityType, field, value] = ACTIONS[id % ACTIONS.length] ?? ACTIONS[0];
      const row: ChainedRow = {
        id,
        occurred_at: new Date(start + done * 1000),
        user_id: userId,
        username: USERNAME,
        work_as_role: 'SystemAdmin',
        action,
        entity_type: entityType,
        entity_id: String(1000 + (id % 5000)),
        study_id: studyId,
        field,
        old_value: field === null ? null : 'previous value',
        new_value: value,
        reason: id % 7 === 0 ? 'Corrected after the site’s reply to query 812' : null,
        request_id: `req-${id}`,
        client_ip: '10.0.3.17',
      };
      const hash = hashRow(prev, row);
      rows.push(row);
      prevs.push(prev);
      hashes.push(hash);
      prev = hash;
    }
    const col = <K extends keyof ChainedRow>(k: K) => rows.map((r) => r[k]);
    await sql`
      insert into audit_events (id, occurred_at, user_id, username, work_as_role, action, entity_type, entity_id,
        study_id, field, old_value, new_value, reason, request_id, client_ip, prev_hash, hash)
      select * from unnest(${col('id')}::bigint[], ${col('occurred_at')}::timestamptz[], ${col('user_id')}::int[],
        ${col('username')}::text[], ${col('work_as_role')}::text[], ${col('action')}::text[], ${col('entity_type')}::text[],
        ${col('entity_id')}::text[], ${col('study_id')}::int[], ${col('field')}::text[], ${col('old_value')}::text[],
        ${col('new_value')}::text[], ${col('reason')}::text[], ${col('request_id')}::text[], ${col('client_ip')}::text[],
        ${prevs}::text[], ${hashes}::text[])`.execute(db);
  }
}

async function download(url: string, session: Session, pid: number, route: string) {
  const memory = sampleMemory(pid, 50);
  const started = performance.now();
  const response = await fetch(`${url}${route}`, { headers: { Cookie: session.cookie } });
  if (!response.ok || !response.body) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  let lines = 0;
  const keep = route.includes('pdf');
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    if (keep) chunks.push(Buffer.from(chunk));
    else for (const b of chunk) if (b === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, mb: bytes / 1e6, lines, maxRss: memory.stop().maxRss, body: keep ? Buffer.concat(chunks) : null };
}

async function main(): Promise<void> {
  log(`machine: ${cpuInfo()}`);
  const url = await freshDatabase();
  const database = await openDatabase({ databaseUrl: url });
  let userId: number;
  let pdfStudy: number;
  try {
    await migrate(database);
    await syncReferenceData(database.db);
    await seedQueryReasons(database.db);
    const db = database.db;
    const user = await db
      .insertInto('users')
      .values({
        username: USERNAME,
        first_name: 'Bench',
        last_name: 'Admin',
        registered: true,
        is_system_admin: true,
        password_hash: await hashPassword(PASSWORD),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    userId = user.id;
    await db
      .insertInto('user_roles')
      .values({ user_id: userId, role_id: roleByName('SystemAdmin').id })
      .execute();
    pdfStudy = (
      await db
        .insertInto('studies')
        .values({ name: 'Bench Study A', sponsor: 'Bench' })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const other = (
      await db
        .insertInto('studies')
        .values({ name: 'Bench Study B', sponsor: 'Bench' })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const started = performance.now();
    await writeEvents(db, PDF_ROWS, pdfStudy, userId);
    await writeEvents(db, Math.max(0, TOTAL - PDF_ROWS), other, userId);
    log(`wrote ${TOTAL} audit events with a valid chain in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await database.close();
  }

  const dataDir = mkdtempSync(path.join(tmpdir(), 'lamina-bench-reports-'));
  const server = await startServer({
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    ROLES: 'api',
    DEMO: 'false',
    SESSION_SECRET: 'bench-session-secret',
    LOG_LEVEL: 'warn',
  });
  try {
    const session = await login(server.url, USERNAME, PASSWORD);
    log(`server RSS before the exports: ${(memoryOf(server.pid)?.rss ?? 0).toFixed(0)} MB`);
    const csv = await download(server.url, session, server.pid, '/api/audit-trail?reportFormat=csv');
    log(
      `audit trail CSV, every study: ${csv.lines - 1} rows, ${csv.mb.toFixed(0)} MB in ${csv.seconds.toFixed(1)} s; server RSS peak ${csv.maxRss.toFixed(0)} MB (goal < 300 MB)`,
    );
    const pdf = await download(
      server.url,
      session,
      server.pid,
      `/api/audit-trail?reportFormat=pdf&studyId=${pdfStudy}`,
    );
    let pages = '?';
    if (pdf.body && has('pdfinfo')) {
      const file = path.join(dataDir, 'bench.pdf');
      writeFileSync(file, pdf.body);
      pages = /Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))?.[1] ?? '?';
    }
    log(
      `audit trail PDF, one study: ${PDF_ROWS} events, ${pages} pages, ${pdf.mb.toFixed(1)} MB in ${pdf.seconds.toFixed(1)} s (goal < 120 s); server RSS peak ${pdf.maxRss.toFixed(0)} MB`,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
