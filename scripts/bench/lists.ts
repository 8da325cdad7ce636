/**
 * npm run bench:lists — the Image Management lists (issue 12) at trial size: p50 and p95 of
 * `POST /api/imageManagement/images` and `/cases` for a study admin and a lab technician.
 *
 * Needs DATABASE_URL pointing at a database filled by `npm run seed:scale` (1 000 000 images,
 * 100 000 cases, 50 studies). Starts the real server (packages/server/src/main.ts, ROLES=api, no
 * demo data) on a free loopback port against that database, logs in as `scale-studyadmin` and
 * `scale-labtech`, and times, one request at a time, each list with: no filter, search text (a
 * subject ID fragment), a study filter, date filters, a status filter, each sort column the role
 * may view (ascending and descending) and a deep page (page 2000 of 20). Each case is requested
 * BENCH_WARMUP times (not counted), then BENCH_REPS times (3 when a warm-up took over a second).
 * The target is p95 < 100 ms for every case; slower cases are flagged.
 *
 * Environment: DATABASE_URL (required), BENCH_REPS (20), BENCH_WARMUP (2), BENCH_ONLY (a substring
 * of the case names to run, e.g. `cases ` or `sort subjectId`), SCALE_PASSWORD.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  IM_CASE_COLUMNS,
  IM_CASE_SORT_KEYS,
  IM_IMAGE_COLUMNS,
  IM_IMAGE_SORT_KEYS,
  ROLE_PERMISSIONS,
  viewableColumns,
  type RoleName,
} from '@lamina/domain';
import { api, BENCH_DIR, cpuInfo, log, login, startServer, type Session } from './lib.js';

const REPS = Number(process.env.BENCH_REPS ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const ONLY = process.env.BENCH_ONLY ?? '';
const PASSWORD = process.env.SCALE_PASSWORD || 'scale-bench-password';
const TARGET_MS = 100;

interface Case {
  name: string;
  route: '/api/imageManagement/images' | '/api/imageManagement/cases';
  body: Record<string, unknown>;
}

interface Result {
  user: string;
  name: string;
  p50: number;
  p95: number;
  max: number;
  reps: number;
  total: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** The cases of one user: their role's viewable sort keys, both directions. */
function casesFor(role: RoleName, studyId: number): Case[] {
  const actions = ROLE_PERMISSIONS[role];
  const imageViewable = new Set(viewableColumns(IM_IMAGE_COLUMNS, actions).map((c) => c.key));
  const caseViewable = new Set(viewableColumns(IM_CASE_COLUMNS, actions).map((c) => c.key));
  const list: Case[] = [];
  const lists = [
    {
      tab: 'images',
      route: '/api/imageManagement/images',
      sortKeys: IM_IMAGE_SORT_KEYS.filter((k) => imageViewable.has(k)),
      statusFilter: { imageStatusFilter: ['CASE_ASSIGNMENT_PENDING', 'DATA_INCOMPLETE'] },
      rareStatus: { imageStatusFilter: ['FAIL_PROCESSING'] },
    },
    {
      tab: 'cases',
      route: '/api/imageManagement/cases',
      sortKeys: IM_CASE_SORT_KEYS.filter((k) => caseViewable.has(k)),
      statusFilter: { caseStatusFilter: ['PENDING_LAB_QC'] },
      rareStatus: { caseStatusFilter: ['ON_HOLD'] },
    },
  ] as const;
  for (const l of lists) {
    const add = (name: string, body: Record<string, unknown>) =>
      list.push({ name: `${l.tab} ${name}`, route: l.route, body: { page: 1, pageSize: 20, ...body } });
    add('no filter', {});
    add('search subject', { searchText: '1027-03' });
    add('search no match', { searchText: 'zzq' });
    add('study filter', { studyFilter: { selectedIds: [studyId] } });
    add('date Yesterday', { dateFilter: 'Yesterday' });
    add('date Last60', { dateFilter: 'Last60' });
    add('status filter', l.statusFilter);
    add('status rare', l.rareStatus);
    add('study+date+status', { studyFilter: { selectedIds: [studyId] }, dateFilter: 'Last60', ...l.statusFilter });
    add('deep page 2000', { page: 2000 });
    for (const key of l.sortKeys) {
      add(`sort ${key}`, { sort: key });
      add(`sort -${key}`, { sort: `-${key}` });
    }
  }
  return list.filter((c) => c.name.includes(ONLY));
}

async function timeCase(url: string, session: Session, c: Case): Promise<Omit<Result, 'user' | 'name'>> {
  const once = async () => {
    const started = performance.now();
    const response = await api<{ total: number; results: unknown[] }>(url, session, 'POST', c.route, c.body);
    return { ms: performance.now() - started, total: response.total };
  };
  let slow = false;
  let total = 0;
  for (let i = 0; i < WARMUP; i++) {
    const r = await once();
    slow ||= r.ms > 1000;
    total = r.total;
  }
  const reps = slow ? Math.min(REPS, 3) : REPS;
  const times: number[] = [];
  for (let i = 0; i < reps; i++) times.push((await once()).ms);
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), max: times.at(-1) ?? 0, reps, total };
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required (a database filled by npm run seed:scale)');
  log(cpuInfo());
  const dataDir = path.join(BENCH_DIR, 'lists-data');
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ROLES: 'api',
    DEMO: 'false',
    SESSION_SECRET: 'bench-session-secret',
    LOG_LEVEL: 'warn',
  });
  const stop = () => void server.stop().then(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const results: Result[] = [];
  try {
    const users: { username: string; role: RoleName }[] = [
      { username: 'scale-studyadmin', role: 'StudyAdmin' },
      { username: 'scale-labtech', role: 'LabTech' },
    ];
    for (const user of users) {
      const session = await login(server.url, user.username, PASSWORD);
      // The study filter: the study most frequent among the latest 100 images (a large one).
      const studies = await api<{ total: number; results: { studyId: number | null }[] }>(
        server.url,
        session,
        'POST',
        '/api/imageManagement/images',
        { page: 1, pageSize: 100 },
      );
      const seen = new Map<number, number>();
      for (const r of studies.results) if (r.studyId !== null) seen.set(r.studyId, (seen.get(r.studyId) ?? 0) + 1);
      const studyId = [...seen].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1;
      const cases = casesFor(user.role, studyId);
      log(`${user.username} (${user.role}): ${cases.length} cases, ${WARMUP} warm-up + ${REPS} timed requests each`);
      for (const c of cases) {
        const r = await timeCase(server.url, session, c);
        results.push({ user: user.username, name: c.name, ...r });
        const flag = r.p95 >= TARGET_MS ? '  <-- over 100 ms' : '';
        log(
          `${user.username.padEnd(17)} ${c.name.padEnd(32)} p50 ${r.p50.toFixed(1).padStart(7)} ms  p95 ${r.p95.toFixed(1).padStart(7)} ms  total ${r.total}${flag}`,
        );
      }
    }
  } finally {
    await server.stop();
  }

  mkdirSync(BENCH_DIR, { recursive: true });
  const file = path.join(BENCH_DIR, 'lists.json');
  writeFileSync(file, JSON.stringify(results, null, 2));
  console.log('');
  console.log('| User | List, case | p50 ms | p95 ms | Rows (total) |');
  console.log('| ---- | ---------- | -----: | -----: | -----------: |');
  for (const r of results) {
    const p95 = r.p95 >= TARGET_MS ? `**${r.p95.toFixed(1)}**` : r.p95.toFixed(1);
    console.log(`| ${r.user} | ${r.name} | ${r.p50.toFixed(1)} | ${p95} | ${r.total} |`);
  }
  const over = results.filter((r) => r.p95 >= TARGET_MS);
  console.log('');
  console.log(
    over.length === 0
      ? `All ${results.length} cases: p95 < ${TARGET_MS} ms.`
      : `${over.length} of ${results.length} cases at p95 >= ${TARGET_MS} ms: ${over.map((r) => `${r.user} ${r.name}`).join('; ')}`,
  );
  log(`figures written to ${path.relative(process.cwd(), file)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
