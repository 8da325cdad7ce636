import type { Db } from '../db/database.js';
import type { AuditAnchor } from './anchors.js';
import { GENESIS_HASH, hashRow } from './audit.js';

export interface VerifyResult {
  ok: boolean;
  rowsChecked: number;
  /** The first broken link, when the chain does not verify. */
  brokenAt?: { id: number; problem: string };
  /** Anchors the chain was checked against. */
  anchorsChecked: number;
}

/**
 * Walks the audit chain in order. Detects an altered row (its hash no longer matches its fields),
 * a deleted row (a gap in ids, or the next row's prev_hash no longer matches) and an inserted or
 * re-ordered row (prev_hash does not match the row before it). With anchors (heads copied outside
 * the database, see anchors.ts) it also detects rows cut from the end and a chain recomputed from
 * some row on: an anchored row must still be there with its anchored hash.
 */
export async function verifyAuditChain(
  db: Db,
  options: { anchors?: readonly AuditAnchor[]; batchSize?: number } = {},
): Promise<VerifyResult> {
  const result = await walkChain(db, options.batchSize ?? 5000);
  const anchors = options.anchors ?? [];
  if (!result.ok) return { ...result, anchorsChecked: 0 };
  const byId = new Map(anchors.map((a) => [a.id, a]));
  for (const anchor of [...byId.values()].sort((a, b) => a.id - b.id)) {
    if (anchor.id > result.rowsChecked) {
      return {
        ok: false,
        rowsChecked: result.rowsChecked,
        anchorsChecked: anchors.length,
        brokenAt: {
          id: result.rowsChecked + 1,
          problem: `the chain ends at row ${result.rowsChecked}, but row ${anchor.id} existed at ${anchor.at} (rows deleted from the end)`,
        },
      };
    }
    const row = await db.selectFrom('audit_events').select('hash').where('id', '=', anchor.id).executeTakeFirst();
    if (row?.hash !== anchor.hash) {
      return {
        ok: false,
        rowsChecked: result.rowsChecked,
        anchorsChecked: anchors.length,
        brokenAt: {
          id: anchor.id,
          problem: `its hash differs from the one anchored at ${anchor.at} (the chain was rewritten)`,
        },
      };
    }
  }
  return { ...result, anchorsChecked: anchors.length };
}

async function walkChain(db: Db, batchSize: number): Promise<Omit<VerifyResult, 'anchorsChecked'>> {
  let expectedId = 1;
  let prevHash = GENESIS_HASH;
  let checked = 0;
  for (;;) {
    const rows = await db
      .selectFrom('audit_events')
      .selectAll()
      .where('id', '>=', expectedId)
      .orderBy('id')
      .limit(batchSize)
      .execute();
    for (const row of rows) {
      if (row.id !== expectedId) {
        return {
          ok: false,
          rowsChecked: checked,
          brokenAt: { id: expectedId, problem: `row ${expectedId} is missing (next row is ${row.id})` },
        };
      }
      if (row.prev_hash !== prevHash) {
        return {
          ok: false,
          rowsChecked: checked,
          brokenAt: { id: row.id, problem: 'does not link to the row before it' },
        };
      }
      if (hashRow(prevHash, row) !== row.hash) {
        return {
          ok: false,
          rowsChecked: checked,
          brokenAt: { id: row.id, problem: 'its content does not match its hash (altered)' },
        };
      }
      prevHash = row.hash;
      expectedId += 1;
      checked += 1;
    }
    if (rows.length < batchSize) break;
  }
  const below = await db.selectFrom('audit_events').select('id').where('id', '<', 1).limit(1).executeTakeFirst();
  if (below) return { ok: false, rowsChecked: checked, brokenAt: { id: below.id, problem: 'row outside the chain' } };
  return { ok: true, rowsChecked: checked };
}
