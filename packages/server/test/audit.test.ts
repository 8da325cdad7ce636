// engine: postgres — the audit chain under concurrent writers on pooled connections (its advisory lock)
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Database } from '../src/platform/db/database.js';
import { recordAudit, SYSTEM_ACTOR, hashRow, type Actor } from '../src/platform/audit/audit.js';
import { verifyAuditChain } from '../src/platform/audit/verify.js';
import { AuditAnchorWriter, readAnchors, type AuditAnchor } from '../src/platform/audit/anchors.js';
import { changeEvents, requireReasonsForChange } from '../src/platform/audit/changes.js';
import { openTestDatabase } from './testApp.js';

let database: Database;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ database, drop } = await openTestDatabase());
});
afterAll(async () => {
  await database.close();
  await drop();
});

const actor: Actor = { userId: 7, username: 'tester', workAsRole: 'DM', requestId: 'req-1', clientIp: '127.0.0.1' };

async function record(n: number, action = 'TEST_EVENT') {
  await database.db.transaction().execute((tx) =>
    recordAudit(
      tx,
      actor,
      Array.from({ length: n }, (_, i) => ({
        action,
        entityType: 'thing',
        entityId: i,
        field: 'f',
        oldValue: i,
        newValue: { v: i + 1 },
        reason: 'because',
      })),
    ),
  );
}

describe('audit trail', () => {
  it('records events with the actor, in the caller transaction, chained from the previous row', async () => {
    await record(3);
    const rows = await database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'TEST_EVENT')
      .orderBy('id')
      .execute();
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      user_id: 7,
      username: 'tester',
      work_as_role: 'DM',
      request_id: 'req-1',
      client_ip: '127.0.0.1',
      old_value: '0',
      new_value: '{"v":1}',
      reason: 'because',
    });
    expect(rows[1]?.prev_hash).toBe(rows[0]?.hash);
    expect(rows[2]?.id).toBe((rows[0]?.id ?? 0) + 2);
    expect((await verifyAuditChain(database.db)).ok).toBe(true);
  });

  it('writes nothing when the mutation fails', async () => {
    const before = await database.db
      .selectFrom('audit_events')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    await expect(
      database.db.transaction().execute(async (tx) => {
        await recordAudit(tx, actor, [{ action: 'DOOMED', entityType: 'thing' }]);
        throw new Error('the mutation failed');
      }),
    ).rejects.toThrow('the mutation failed');
    const after = await database.db
      .selectFrom('audit_events')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('refuses UPDATE, DELETE and TRUNCATE', async () => {
    await record(1);
    await expect(database.raw.exec(`UPDATE audit_events SET action = 'X'`)).rejects.toThrow(/append-only/);
    await expect(database.raw.exec(`DELETE FROM audit_events`)).rejects.toThrow(/append-only/);
    await expect(database.raw.exec(`TRUNCATE audit_events`)).rejects.toThrow(/append-only/);
    expect((await verifyAuditChain(database.db)).ok).toBe(true);
  });

  it('keeps one unbroken chain under concurrent writers', async () => {
    await Promise.all(Array.from({ length: 12 }, () => record(2, 'CONCURRENT')));
    const result = await verifyAuditChain(database.db);
    expect(result.ok).toBe(true);
    const count = await database.db
      .selectFrom('audit_events')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(result.rowsChecked).toBe(count.n);
  });
});

describe('audit chain verification detects tampering', () => {
  // Each case runs on its own database, so one tampering does not hide another.
  async function withChain(fn: (db: Database) => Promise<void>) {
    const { database: db, drop: dropIt } = await openTestDatabase();
    try {
      await db.db.transaction().execute((tx) =>
        recordAudit(
          tx,
          SYSTEM_ACTOR,
          Array.from({ length: 6 }, (_, i) => ({ action: 'E', entityType: 't', entityId: i, newValue: `v${i}` })),
        ),
      );
      await fn(db);
    } finally {
      await db.close();
      await dropIt();
    }
  }
  /** Tampering needs the append-only trigger out of the way, as a database owner could do. */
  const tamperOn = (db: Database, statement: string) =>
    db.raw.exec(
      `ALTER TABLE audit_events DISABLE TRIGGER USER; ${statement}; ALTER TABLE audit_events ENABLE TRIGGER USER;`,
    );
  const lastId = async (db: Database) =>
    (
      await db.db
        .selectFrom('audit_events')
        .select(sql<number>`max(id)::int`.as('m'))
        .executeTakeFirstOrThrow()
    ).m;

  it('an altered row', async () => {
    await withChain(async (db) => {
      const id = (await lastId(db)) - 2;
      await tamperOn(db, `UPDATE audit_events SET new_value = 'forged' WHERE id = ${id}`);
      const result = await verifyAuditChain(db.db);
      expect(result).toMatchObject({ ok: false, brokenAt: { id } });
      expect(result.brokenAt?.problem).toMatch(/altered/);
    });
  });

  it('a deleted row', async () => {
    await withChain(async (db) => {
      const id = (await lastId(db)) - 3;
      await tamperOn(db, `DELETE FROM audit_events WHERE id = ${id}`);
      expect(await verifyAuditChain(db.db)).toMatchObject({ ok: false, brokenAt: { id } });
    });
  });

  it('a row whose stored hash was replaced', async () => {
    await withChain(async (db) => {
      const id = await lastId(db);
      await tamperOn(db, `UPDATE audit_events SET hash = repeat('a', 64) WHERE id = ${id}`);
      expect(await verifyAuditChain(db.db)).toMatchObject({ ok: false, brokenAt: { id } });
    });
  });

  it('an inserted row, even one whose own hash is consistent', async () => {
    await withChain(async (db) => {
      const id = (await lastId(db)) - 2;
      // Replace row `id` by a forged row that links correctly to its predecessor and hashes
      // correctly: the successor no longer links to it.
      const prev = await db.db
        .selectFrom('audit_events')
        .selectAll()
        .where('id', '=', id - 1)
        .executeTakeFirstOrThrow();
      const forged = {
        id,
        occurred_at: new Date('2026-01-01T00:00:00.000Z'),
        user_id: null,
        username: 'intruder',
        work_as_role: null,
        action: 'FORGED',
        entity_type: 't',
        entity_id: null,
        study_id: null,
        field: null,
        old_value: null,
        new_value: null,
        reason: null,
        request_id: null,
        client_ip: null,
      };
      const hash = hashRow(prev.hash, forged);
      await tamperOn(db, `DELETE FROM audit_events WHERE id = ${id}`);
      await db.db
        .insertInto('audit_events')
        .values({ ...forged, prev_hash: prev.hash, hash })
        .execute();
      expect(await verifyAuditChain(db.db)).toMatchObject({ ok: false, brokenAt: { id: id + 1 } });
    });
  });

  it('a row appended with a hash that does not match', async () => {
    await withChain(async (db) => {
      const id = (await lastId(db)) + 1;
      await db.db
        .insertInto('audit_events')
        .values({
          id,
          occurred_at: new Date(),
          action: 'X',
          entity_type: 't',
          prev_hash: 'f'.repeat(64),
          hash: 'e'.repeat(64),
          user_id: null,
          username: null,
          work_as_role: null,
          entity_id: null,
          study_id: null,
          field: null,
          old_value: null,
          new_value: null,
          reason: null,
          request_id: null,
          client_ip: null,
        })
        .execute();
      expect(await verifyAuditChain(db.db)).toMatchObject({ ok: false, brokenAt: { id } });
    });
  });
});

describe('audit anchors: the chain head copied outside the database', () => {
  async function withAnchoredChain(fn: (db: Database, anchors: AuditAnchor[], file: string) => Promise<void>) {
    const { database: db, drop: dropIt } = await openTestDatabase();
    const dir = await mkdtemp(path.join(tmpdir(), 'lamina-anchors-'));
    const file = path.join(dir, 'nested', 'audit-anchors.jsonl');
    try {
      const writer = new AuditAnchorWriter(db.db, { file, intervalSeconds: 3600 });
      const append = (n: number) =>
        db.db.transaction().execute((tx) =>
          recordAudit(
            tx,
            SYSTEM_ACTOR,
            Array.from({ length: n }, (_, i) => ({ action: 'E', entityType: 't', entityId: i })),
          ),
        );
      await append(4);
      await writer.start();
      await append(3);
      await writer.stop(); // anchors the moved head on the way out
      await fn(db, await readAnchors(file), file);
    } finally {
      await db.close();
      await dropIt();
      await rm(dir, { recursive: true, force: true });
    }
  }
  const tamperOn = (db: Database, statement: string) =>
    db.raw.exec(
      `ALTER TABLE audit_events DISABLE TRIGGER USER; ${statement}; ALTER TABLE audit_events ENABLE TRIGGER USER;`,
    );

  it('writes the head when it moved (at start and at stop), and the intact chain verifies against it', async () => {
    await withAnchoredChain(async (db, anchors, file) => {
      const head = await db.db
        .selectFrom('audit_events')
        .select(['id', 'hash'])
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      expect(anchors.map((a) => a.id)).toEqual([head.id - 3, head.id]);
      expect(anchors.at(-1)?.hash).toBe(head.hash);
      // Nothing new: no new anchor.
      expect(await new AuditAnchorWriter(db.db, { file, intervalSeconds: 3600 }).anchorNow()).not.toBeNull(); // a fresh writer knows no last id
      const writer = new AuditAnchorWriter(db.db, { file, intervalSeconds: 3600 });
      await writer.start();
      expect(await writer.anchorNow()).toBeNull();
      await writer.stop();
      expect(await verifyAuditChain(db.db, { anchors: await readAnchors(file) })).toMatchObject({
        ok: true,
        anchorsChecked: 3,
      });
    });
  });

  it('detects rows cut from the end of the chain, which the chain alone cannot show', async () => {
    await withAnchoredChain(async (db, anchors) => {
      const last = anchors.at(-1)!.id;
      await tamperOn(db, `DELETE FROM audit_events WHERE id >= ${last - 1}`);
      expect((await verifyAuditChain(db.db)).ok).toBe(true);
      const result = await verifyAuditChain(db.db, { anchors });
      expect(result).toMatchObject({ ok: false, brokenAt: { id: last - 1 } });
      expect(result.brokenAt?.problem).toMatch(/rows deleted from the end/);
    });
  });

  it('detects a chain recomputed from some row on (every later hash rewritten consistently)', async () => {
    await withAnchoredChain(async (db, anchors) => {
      const anchored = anchors.at(-1)!.id;
      // Forge the anchored row and recompute its hash so the chain itself stays consistent.
      const prev = await db.db
        .selectFrom('audit_events')
        .selectAll()
        .where('id', '=', anchored - 1)
        .executeTakeFirstOrThrow();
      const row = await db.db
        .selectFrom('audit_events')
        .selectAll()
        .where('id', '=', anchored)
        .executeTakeFirstOrThrow();
      const forged = { ...row, new_value: 'forged' };
      const hash = hashRow(prev.hash, forged);
      await tamperOn(db, `UPDATE audit_events SET new_value = 'forged', hash = '${hash}' WHERE id = ${anchored}`);
      expect((await verifyAuditChain(db.db)).ok).toBe(true);
      const result = await verifyAuditChain(db.db, { anchors });
      expect(result).toMatchObject({ ok: false, brokenAt: { id: anchored } });
      expect(result.brokenAt?.problem).toMatch(/rewritten/);
    });
  });

  it('reads no anchors from a missing file and refuses a damaged one', async () => {
    expect(await readAnchors(path.join(tmpdir(), `no-such-${Date.now()}.jsonl`))).toEqual([]);
    const dir = await mkdtemp(path.join(tmpdir(), 'lamina-anchors-'));
    try {
      const file = path.join(dir, 'bad.jsonl');
      await writeFile(file, '{"id":1,"hash":"a","at":"t"}\n{"id":"x"}\n');
      await expect(readAnchors(file)).rejects.toThrow(/bad.jsonl:2 is not an audit anchor/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('reason for change', () => {
  it('needs a reason when a field with a prior value changes', () => {
    expect(() => requireReasonsForChange([{ field: 'name', before: 'A', after: 'B', reason: ' ' }])).toThrow(
      'Reason for change is required',
    );
    expect(() => requireReasonsForChange([{ field: 'name', before: ['x'], after: [], reason: undefined }])).toThrow(
      'Reason for change is required',
    );
  });

  it('needs no reason when the previous value was empty, or nothing changed', () => {
    expect(requireReasonsForChange([{ field: 'name', before: null, after: 'B' }])).toHaveLength(1);
    expect(requireReasonsForChange([{ field: 'name', before: '', after: 'B' }])).toHaveLength(1);
    expect(requireReasonsForChange([{ field: 'name', before: 'A', after: 'A' }])).toHaveLength(0);
  });

  it('turns changes into one audit row per field with old, new and trimmed reason', () => {
    const events = changeEvents({ action: 'STUDY_UPDATED', entityType: 'study', entityId: 3, studyId: 3 }, [
      { field: 'name', before: 'A', after: 'B', reason: '  typo ' },
    ]);
    expect(events).toEqual([
      {
        action: 'STUDY_UPDATED',
        entityType: 'study',
        entityId: 3,
        studyId: 3,
        field: 'name',
        oldValue: 'A',
        newValue: 'B',
        reason: 'typo',
      },
    ]);
  });
});
