import type { Db } from '../db/database.js';
import { GENESIS_HASH, hashRow } from './audit.js';

export interface VerifyResult {
  ok: boolean;
  rowsChecked: number;
  /** The first broken link, when the chain does not verify. */
  brokenAt?: { id: number; problem: string };
}

/**
 * Walks the audit chain in order. Detects an altered row (its hash no longer matches its fields),
 * a deleted row (a gap in ids, or the next row's prev_hash no longer matches) and an inserted or
 * re-ordered row (prev_hash does not match the row before it).
 */
export async function verifyAuditChain(db: Db, batchSize = 5000): Promise<VerifyResult> {
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
        return { ok: false, rowsChecked: checked, brokenAt: { id: expectedId, problem: `row ${expectedId} is missing (next row is ${row.id})` } };
      }
      if (row.prev_hash !== prevHash) {
        return { ok: false, rowsChecked: checked, brokenAt: { id: row.id, problem: 'does not link to the row before it' } };
      }
      if (hashRow(prevHash, row) !== row.hash) {
        return { ok: false, rowsChecked: checked, brokenAt: { id: row.id, problem: 'its content does not match its hash (altered)' } };
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
