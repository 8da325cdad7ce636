// engine: postgres — several pools and api processes on one database: the audit chain's lock, login throttling, pg-boss
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { LOGIN_THROTTLE, SESSION_COOKIE } from '@lamina/domain';
import { openDatabase, type Database, type Db } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { syncReferenceData } from '../src/platform/rbac/referenceData.js';
import { recordAudit, readAuditHead, type Actor } from '../src/platform/audit/audit.js';
import { verifyAuditChain } from '../src/platform/audit/verify.js';
import { AuditAnchorWriter, readAnchors } from '../src/platform/audit/anchors.js';
import { JobQueue, QUEUES } from '../src/platform/jobs/jobQueue.js';
import { seedQueryReasons } from '../src/modules/queries/queryReasonService.js';
import { createUser, PASSWORD } from './factories.js';
import { freePort, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { waitFor } from './support/wait.js';
import { createServerDatabase, openTestDatabase } from './testApp.js';

/**
 * Many processes on one database (issue 19): several api, tiles and worker processes share one
 * PostgreSQL. What must stay correct with concurrent writers, proven here with real concurrency:
 *
 * - the audit chain: hundreds of transactions from separate connection pools (separate PostgreSQL
 *   backends, as separate processes have), some rolled back, some holding the chain lock while
 *   others queue behind it; the chain verifies with no gap or fork, every snapshot of it is a
 *   prefix (no row visible before an earlier one), and its order is the commit order;
 * - anchors written by two writers (and two api processes) into one file stay consistent;
 * - sessions and login throttling across two real api processes;
 * - a pg-boss job is processed exactly once when two workers poll the same queue.
 *
 * On the embedded database (one connection) what can run runs too: transactions queue on its
 * connection instead of on the chain lock. The multi-process parts need TEST_DATABASE_URL.
 */
const url = process.env.TEST_DATABASE_URL;
const onPostgres = Boolean(url);
const skipReason = 'needs TEST_DATABASE_URL (several processes on one PostgreSQL)';
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The chain's advisory lock key (platform/audit/audit.ts). */
const AUDIT_CHAIN_LOCK = 727_002;

const actor: Actor = { userId: null, username: 'concurrency', workAsRole: null, requestId: null, clientIp: null };
const ENTITY = 'concurrency-test';

class Deliberate extends Error {}

let dir: string;
let main: Database;
/** Independent Database instances (each its own pool): on PostgreSQL, as many processes would be. */
let pools: Database[] = [];
let databaseUrl: string | undefined;
let drop: () => Promise<void> = async () => {};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-concurrency-'));
  if (url) {
    const created = await createServerDatabase(url, 'lamina_concurrency');
    databaseUrl = created.url;
    drop = created.drop;
    main = await openDatabase({ databaseUrl, maxConnections: 4 });
    await migrate(main);
    await syncReferenceData(main.db);
    await seedQueryReasons(main.db);
    for (let i = 0; i < 4; i += 1) pools.push(await openDatabase({ databaseUrl, maxConnections: 5 }));
  } else {
    ({ database: main, drop } = await openTestDatabase());
    pools = [main];
  }
}, 120_000);

afterAll(async () => {
  for (const pool of pools) if (pool !== main) await pool.close();
  await main.close();
  await drop();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

/**
 * Time spent on purpose, never a wait for something: work that holds a lock a while, a job that
 * takes time, and the pace of the loops that observe while the writers write (issue 27 keeps these).
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function events(label: string, n: number) {
  return Array.from({ length: n }, (_, k) => ({
    action: 'CONCURRENCY',
    entityType: ENTITY,
    entityId: label,
    field: String(k),
  }));
}

/** The test's rows: label → ids in chain order (and their field, the event's index in its transaction). */
async function rowsByLabel(db: Db): Promise<Map<string, { id: number; index: number }[]>> {
  const rows = await db
    .selectFrom('audit_events')
    .select(['id', 'entity_id', 'field'])
    .where('entity_type', '=', ENTITY)
    .orderBy('id')
    .execute();
  const out = new Map<string, { id: number; index: number }[]>();
  for (const row of rows) {
    const list = out.get(row.entity_id ?? '') ?? [];
    list.push({ id: row.id, index: Number(row.field) });
    out.set(row.entity_id ?? '', list);
  }
  return out;
}

async function chainLockState(db: Db): Promise<{ held: number; waiting: number }> {
  const { rows } = await sql<{ held: number; waiting: number }>`
    select count(*) filter (where granted)::int as held, count(*) filter (where not granted)::int as waiting
    from pg_locks
    where locktype = 'advisory' and objid = ${AUDIT_CHAIN_LOCK}
      and database = (select oid from pg_database where datname = current_database())`.execute(db);
  return rows[0] ?? { held: 0, waiting: 0 };
}

/** `npm run audit:verify` (the project's verifier) on the PostgreSQL test database and an anchor file. */
function auditVerifyCli(anchorFile: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/cli/audit-verify.ts'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DATABASE_URL: databaseUrl, AUDIT_ANCHOR_FILE: anchorFile, DATA_DIR: dir },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('the audit chain under concurrent writers', () => {
  it('hundreds of concurrent transactions, some rolled back, some holding the lock: no gap, no fork, every snapshot a prefix, order = commit order; anchors from two writers agree', async () => {
    const total = onPostgres ? 400 : 150;
    const inFlightPerPool = onPostgres ? 5 : 6;
    const anchorFile = path.join(dir, 'stress-anchors.jsonl');
    // Two anchor writers on two pools, as two api processes writing one anchor file.
    const anchorWriters = [pools[0], pools.at(-1)].map(
      (pool) => new AuditAnchorWriter((pool as Database).db, { file: anchorFile, intervalSeconds: 3600 }),
    );

    interface Tx {
      label: string;
      events: number;
      /** Commits that had returned before this transaction began. */
      startTick: number;
      /** Its place in the order in which COMMITs returned; null when rolled back. */
      commitTick: number | null;
    }
    let ticks = 0;
    const done: Tx[] = [];
    let next = 0;
    let finished = false;

    async function writeOne(db: Db, i: number): Promise<void> {
      const label = `tx-${i}`;
      const n = 1 + (i % 3);
      const kind = i % 10;
      const startTick = ticks;
      try {
        await db.transaction().execute(async (tx) => {
          await recordAudit(tx, actor, events(label, n));
          if (kind === 0) throw new Deliberate('rolled back by the caller after its audit rows');
          // A statement that fails after the audit rows: the transaction aborts and rolls back.
          if (kind === 1) await sql`select 1 / 0`.execute(tx);
          // Holds the chain lock a while: the others queue behind it.
          if (kind === 2) await sleep(20);
        });
        ticks += 1;
        done.push({ label, events: n, startTick, commitTick: ticks });
      } catch (error) {
        if (!(error instanceof Deliberate) && kind !== 1) throw error;
        done.push({ label, events: n, startTick, commitTick: null });
      }
    }

    async function writer(pool: Database): Promise<void> {
      for (;;) {
        const i = next;
        if (i >= total) return;
        next += 1;
        await writeOne(pool.db, i);
      }
    }

    // An observer: each statement is one snapshot, which must hold the rows 1..max and no hole.
    const holes: string[] = [];
    let observations = 0;
    const observer = (async () => {
      const db = (pools[1] ?? main).db;
      while (!finished) {
        const row = await db
          .selectFrom('audit_events')
          .select([sql<number>`count(*)::int`.as('n'), sql<number>`coalesce(max(id), 0)::int`.as('max')])
          .executeTakeFirstOrThrow();
        observations += 1;
        if (row.n !== row.max) holes.push(`a snapshot held ${row.n} rows up to id ${row.max}`);
        await sleep(onPostgres ? 2 : 10); // the observer's pace
      }
    })();
    // The verifier may run while processes write: it walks the chain in batches (several
    // snapshots), and since each snapshot is a prefix it never sees a gap that is not there.
    const verifications: string[] = [];
    const verifier = (async () => {
      const db = (pools[2] ?? main).db;
      while (!finished) {
        const result = await verifyAuditChain(db, { batchSize: 200 });
        verifications.push(result.ok ? 'ok' : JSON.stringify(result.brokenAt));
        await sleep(50); // the verifier's pace
      }
    })();
    const anchoring = (async () => {
      while (!finished) {
        for (const w of anchorWriters) await w.anchorNow();
        await sleep(onPostgres ? 5 : 20); // the anchoring's pace
      }
    })();

    await Promise.all(pools.flatMap((pool) => Array.from({ length: inFlightPerPool }, () => writer(pool))));
    finished = true;
    await Promise.all([observer, verifier, anchoring]);
    for (const w of anchorWriters) await w.anchorNow();

    // The project's verifier: one chain, no gap, no fork, every row's hash, every anchor.
    const anchors = await readAnchors(anchorFile);
    expect(anchors.length).toBeGreaterThan(0);
    const result = await verifyAuditChain(main.db, { anchors });
    expect(result).toMatchObject({ ok: true, anchorsChecked: anchors.length });
    const head = await readAuditHead(main.db);
    expect(result.rowsChecked).toBe(head?.id);
    for (const anchor of anchors) expect(anchor.id).toBeLessThanOrEqual(head?.id ?? 0);

    expect(done).toHaveLength(total);
    const committed = done.filter((t) => t.commitTick !== null);
    const rolledBack = done.filter((t) => t.commitTick === null);
    expect(rolledBack.length).toBe(total / 5);

    // Every committed transaction's rows are there, consecutive and in its order; a rolled back one left none.
    const rows = await rowsByLabel(main.db);
    expect(rows.size).toBe(committed.length);
    for (const t of rolledBack) expect(rows.get(t.label)).toBeUndefined();
    const span = new Map<string, { first: number; last: number }>();
    for (const t of committed) {
      const list = rows.get(t.label) ?? [];
      expect(list.map((r) => r.index)).toEqual(Array.from({ length: t.events }, (_, k) => k));
      const first = list[0]?.id ?? 0;
      expect(list.map((r) => r.id)).toEqual(Array.from({ length: t.events }, (_, k) => first + k));
      span.set(t.label, { first, last: first + t.events - 1 });
    }

    // Order = commit order, as a client can see it: a transaction that began after another's COMMIT
    // had returned comes after it in the chain. (Inside the database, the observer above saw every
    // snapshot hold a prefix of the chain: no row became visible before an earlier one.)
    const byCommit = [...committed].sort((a, b) => (a.commitTick ?? 0) - (b.commitTick ?? 0));
    for (const t of committed) {
      const before = byCommit.slice(0, t.startTick);
      const lastBefore = Math.max(0, ...before.map((b) => span.get(b.label)?.last ?? 0));
      expect(lastBefore).toBeLessThan(span.get(t.label)?.first ?? 0);
    }

    // The time of each row follows the chain (taken under the lock, by the database clock).
    const backwards = await sql<{ n: number }>`
      select count(*)::int as n from (
        select occurred_at < lag(occurred_at) over (order by id) as back from audit_events) t
      where back`.execute(main.db);
    expect(backwards.rows[0]?.n).toBe(0);

    expect(holes).toEqual([]);
    expect(observations).toBeGreaterThan(0);
    expect(verifications.length).toBeGreaterThan(0);
    expect(verifications.filter((v) => v !== 'ok')).toEqual([]);

    if (onPostgres) {
      const cli = await auditVerifyCli(anchorFile);
      expect(cli.output).toMatch(/Audit trail verified: \d+ events, chain intact/);
      expect(cli.code).toBe(0);
    }
  }, 120_000);

  it.skipIf(!onPostgres)(
    `a transaction holding the chain lock makes the others wait; after its rollback or commit they link on without a gap (${onPostgres ? 'PostgreSQL' : skipReason})`,
    async () => {
      const [holderPool, ...waiterPools] = pools as [Database, ...Database[]];
      for (const outcome of ['rollback', 'commit'] as const) {
        const before = await readAuditHead(main.db);
        const base = before?.id ?? 0;
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const holder = holderPool.db
          .transaction()
          .execute(async (tx) => {
            await recordAudit(tx, actor, events(`holder-${outcome}`, 2));
            await gate;
            if (outcome === 'rollback') throw new Deliberate('the holder rolls back');
          })
          .catch((error: unknown) => {
            if (!(error instanceof Deliberate)) throw error;
          });
        await waitFor('the holder to hold the chain lock', async () => (await chainLockState(main.db)).held === 1);
        const waiters = waiterPools.map((pool, k) =>
          pool.db.transaction().execute((tx) => recordAudit(tx, actor, events(`waiter-${outcome}-${k}`, 1))),
        );
        // Every waiter is blocked on the lock, not failed and not linked to the holder's rows.
        await waitFor(
          'the waiters to queue on the chain lock',
          async () => (await chainLockState(main.db)).waiting === waiterPools.length,
        );
        expect((await readAuditHead(main.db))?.id).toBe(base);
        release();
        await holder;
        await Promise.all(waiters);

        const rows = await rowsByLabel(main.db);
        const holderRows = rows.get(`holder-${outcome}`)?.map((r) => r.id);
        const waiterIds = waiterPools
          .map((_, k) => rows.get(`waiter-${outcome}-${k}`)?.[0]?.id ?? 0)
          .sort((a, b) => a - b);
        if (outcome === 'rollback') {
          expect(holderRows).toBeUndefined();
          expect(waiterIds).toEqual(waiterPools.map((_, k) => base + 1 + k));
        } else {
          expect(holderRows).toEqual([base + 1, base + 2]);
          expect(waiterIds).toEqual(waiterPools.map((_, k) => base + 3 + k));
        }
      }

      // A transaction that began first but records last comes after those that committed meanwhile.
      const early = pools[0] as Database;
      let recordNow!: () => void;
      const go = new Promise<void>((resolve) => (recordNow = resolve));
      const earlyTx = early.db.transaction().execute(async (tx) => {
        await sql`select 1`.execute(tx);
        await go;
        await recordAudit(tx, actor, events('began-first', 1));
      });
      for (let k = 0; k < 3; k += 1) {
        await (pools[1 + k] as Database).db
          .transaction()
          .execute((tx) => recordAudit(tx, actor, events(`committed-meanwhile-${k}`, 1)));
      }
      recordNow();
      await earlyTx;
      const rows = await rowsByLabel(main.db);
      const earlyId = rows.get('began-first')?.[0]?.id ?? 0;
      for (let k = 0; k < 3; k += 1) expect(rows.get(`committed-meanwhile-${k}`)?.[0]?.id).toBeLessThan(earlyId);
      expect((await verifyAuditChain(main.db)).ok).toBe(true);
    },
    60_000,
  );

  it('refuses to record in a repeatable-read transaction (its snapshot could hold a stale head)', async () => {
    const head = await readAuditHead(main.db);
    await expect(
      main.db.transaction().execute(async (tx) => {
        await sql`set transaction isolation level repeatable read`.execute(tx);
        await recordAudit(tx, actor, events('repeatable-read', 1));
      }),
    ).rejects.toThrow(/READ COMMITTED transactions only \(this one is repeatable read\)/);
    expect(await readAuditHead(main.db)).toEqual(head);
    expect((await verifyAuditChain(main.db)).ok).toBe(true);
  });
});

describe('pg-boss with several workers on one queue', () => {
  it('starts together on a new database and processes each job exactly once', async () => {
    // Job queues with their own connections (on PostgreSQL: four, each with its own pg-boss pool,
    // as four processes; embedded: two), each polling with two workers, all competing for the same jobs.
    const queues = (onPostgres ? pools : [main, main]).map(
      (pool) =>
        new JobQueue(pool, databaseUrl, {
          pollingIntervalSeconds: 0.5,
          retryDelaySeconds: 1,
          retryLimit: 0,
        }),
    );
    const handled = new Map<string, string[]>();
    try {
      // On PostgreSQL they start at once, as processes starting together on a new database: they
      // create pg-boss's schema and queues together. The embedded database has one connection.
      if (onPostgres) await Promise.all(queues.map((q) => q.start()));
      else for (const q of queues) await q.start();
      const queue = QUEUES.queryReminders;
      const sender = queues[0] as JobQueue;
      const jobIds: string[] = [];
      const count = 40;
      for (let i = 0; i < count; i += 1) {
        const id = await sender.send(queue, { n: i });
        if (id) jobIds.push(id);
      }
      expect(jobIds).toHaveLength(count);
      for (const [q, jobQueue] of queues.entries()) {
        for (let w = 0; w < 2; w += 1) {
          await jobQueue.work<{ n: number }>(queue, async (job) => {
            handled.set(job.id, [...(handled.get(job.id) ?? []), `queue ${q} worker ${w}`]);
            await sleep(5); // a job that takes a moment, so that the jobs spread over the workers
          });
        }
      }
      await waitFor(
        'every job to complete',
        async () => {
          const rows = await main.raw.query<{ n: number }>(
            `select count(*)::int as n from pgboss.job where id = any($1::uuid[]) and state = 'completed'`,
            [jobIds],
          );
          return rows[0]?.n === count;
        },
        { timeoutMs: 60_000 },
      );
      expect([...handled.keys()].sort()).toEqual([...jobIds].sort());
      const twice = [...handled.entries()].filter(([, by]) => by.length !== 1);
      expect(twice).toEqual([]);
    } finally {
      await Promise.all(queues.map((q) => q.stop(1000)));
    }
  }, 90_000);
});

describe.skipIf(!onPostgres)(`two api processes on one PostgreSQL (${onPostgres ? 'PostgreSQL' : skipReason})`, () => {
  const servers: ServerProcess[] = [];
  const anchorFile = () => path.join(dir, 'api-anchors.jsonl');
  let users: { alice: string; bob: string; carol: string };

  beforeAll(async () => {
    users = {
      alice: (await createUser(main.db)).username,
      bob: (await createUser(main.db)).username,
      carol: (await createUser(main.db)).username,
    };
    const common = {
      DATABASE_URL: databaseUrl as string,
      ROLES: 'api',
      DEMO: 'false',
      SESSION_SECRET: 'concurrency-test-secret',
      QUERY_REMINDER_CRON: 'off',
      AUDIT_ANCHOR_FILE: anchorFile(),
      AUDIT_ANCHOR_INTERVAL: '1',
    };
    const started = await Promise.all(
      ['a', 'b'].map(async (name) =>
        startServerProcess(await freePort(), { ...common, DATA_DIR: path.join(dir, `data-${name}`) }),
      ),
    );
    servers.push(...started);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  }, 60_000);

  const [a, b] = [() => servers[0] as ServerProcess, () => servers[1] as ServerProcess];

  async function login(server: ServerProcess, username: string, password: string) {
    const response = await fetch(`${server.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const body = (await response.json()) as { csrfToken?: string };
    return { status: response.status, cookie, csrfToken: body.csrfToken ?? '' };
  }

  async function authenticated(server: ServerProcess, cookie: string): Promise<boolean> {
    const response = await fetch(`${server.baseUrl}/api/auth/session`, { headers: { cookie } });
    expect(response.status).toBe(200);
    return ((await response.json()) as { authenticated: boolean }).authenticated;
  }

  it('a session made by one process is valid in the other, and a logout in one ends it in both at once', async () => {
    const session = await login(a(), users.alice, PASSWORD);
    expect(session.status).toBe(200);
    expect(session.cookie.startsWith(`${SESSION_COOKIE}=`)).toBe(true);
    expect(await authenticated(a(), session.cookie)).toBe(true);
    expect(await authenticated(b(), session.cookie)).toBe(true);
    const csrf = await fetch(`${b().baseUrl}/api/auth/csrf`, { headers: { cookie: session.cookie } });
    expect(((await csrf.json()) as { csrfToken: string }).csrfToken).toBe(session.csrfToken);

    const logout = await fetch(`${b().baseUrl}/api/auth/logout`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken },
    });
    expect(logout.status).toBe(200);
    // No cache of sessions in a process: the very next request to the other one is refused.
    expect(await authenticated(a(), session.cookie)).toBe(false);
    expect(await authenticated(b(), session.cookie)).toBe(false);
    const refused = await fetch(`${a().baseUrl}/api/auth/csrf`, { headers: { cookie: session.cookie } });
    expect(refused.status).toBe(401);
  });

  it(`counts login failures across processes: ${LOGIN_THROTTLE.maxFailures} failures, alternating, throttle the account at both`, async () => {
    for (let i = 0; i < LOGIN_THROTTLE.maxFailures; i += 1) {
      const server = i % 2 === 0 ? a() : b();
      expect((await login(server, users.bob, 'wrong password')).status).toBe(401);
    }
    expect((await login(a(), users.bob, 'wrong password')).status).toBe(429);
    // Refused at the other process too, even with the right password.
    expect((await login(b(), users.bob, PASSWORD)).status).toBe(429);
    expect((await login(a(), users.bob, PASSWORD)).status).toBe(429);
    // Another account from the same IP is not throttled.
    expect((await login(b(), users.alice, PASSWORD)).status).toBe(200);
  });

  it('a burst of failures at both processes checks no more than the limit of passwords: the rest are throttled, then the account is at either', async () => {
    const attempts = await Promise.all(
      Array.from({ length: LOGIN_THROTTLE.maxFailures + 6 }, (_, i) =>
        login(i % 2 === 0 ? a() : b(), users.carol, 'nope'),
      ),
    );
    // Each attempt reserves its place under a lock on (account, IP) before its password is checked,
    // so attempts in flight together cannot pass the limit between one's check and another's record.
    const statuses = attempts.map((attempt) => attempt.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(LOGIN_THROTTLE.maxFailures);
    expect(statuses.filter((status) => status === 429)).toHaveLength(6);
    const failures = await main.db
      .selectFrom('login_failures')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('username', '=', users.carol)
      .executeTakeFirstOrThrow();
    expect(failures.n).toBe(LOGIN_THROTTLE.maxFailures);
    expect((await login(a(), users.carol, PASSWORD)).status).toBe(429);
    expect((await login(b(), users.carol, PASSWORD)).status).toBe(429);
  });

  it('both processes anchor the chain into one file; after they stop, audit:verify checks the chain against every anchor', async () => {
    // Logins at both processes move the head; each process anchors it within its interval.
    for (const server of [a(), b(), a(), b()]) expect((await login(server, users.alice, PASSWORD)).status).toBe(200);
    await Promise.all(servers.map((s) => s.terminate()));
    const anchors = await readAnchors(anchorFile());
    const head = await readAuditHead(main.db);
    expect(anchors.length).toBeGreaterThan(1);
    // The last anchor of the two at stop is the head.
    expect(Math.max(...anchors.map((x) => x.id))).toBe(head?.id);
    const cli = await auditVerifyCli(anchorFile());
    expect(cli.output).toMatch(
      new RegExp(
        `Audit trail verified: ${String(head?.id)} events, chain intact; checked against ${anchors.length} anchors`,
      ),
    );
    expect(cli.code).toBe(0);
  }, 90_000);
});
