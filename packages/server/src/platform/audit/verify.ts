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
  options: {
    anchors?: readonly AuditAnchor[];
    batchSize?: number;
    /** Walk only up to this event (an export's last row): the chain from the first event to it. */
    upTo?: number;
  } = {},
): Promise<VerifyResult> {
  const anchors = (options.anchors ?? []).filter((a) => options.upTo === undefined || a.id <= options.upTo);
  const byId = new Map(anchors.map((a) => [a.id, a]));
  const { rewritten, ...walked } = await walkChain(db, options.batchSize ?? 5000, byId, options.upTo);
  if (!walked.ok) return { ...walked, anchorsChecked: 0 };
  if (options.upTo !== undefined && walked.rowsChecked < options.upTo)
    return {
      ok: false,
      rowsChecked: walked.rowsChecked,
      anchorsChecked: 0,
      brokenAt: { id: walked.rowsChecked + 1, problem: `the chain ends at row ${walked.rowsChecked}` },
    };
  if (rewritten) return { ...walked, ok: false, brokenAt: rewritten, anchorsChecked: anchors.length };
  // Anchored rows the walk did not reach: the chain ends before them.
  const beyond = [...byId.values()].filter((a) => a.id > walked.rowsChecked).sort((a, b) => a.id - b.id)[0];
  if (beyond) {
    return {
      ok: false,
      rowsChecked: walked.rowsChecked,
      anchorsChecked: anchors.length,
      brokenAt: {
        id: walked.rowsChecked + 1,
        problem: `the chain ends at row ${walked.rowsChecked}, but row ${beyond.id} existed at ${beyond.at} (rows deleted from the end)`,
      },
    };
  }
  return { ...walked, anchorsChecked: anchors.length };
}

/**
 * The chain walk. It also finds the first anchored row (in id order) whose hash differs from its
 * anchor, returned as `rewritten` beside the walk's own result: a broken link is reported first.
 */
async function walkChain(
  db: Db,
  batchSize: number,
  anchors: ReadonlyMap<number, AuditAnchor>,
  upTo?: number,
): Promise<Omit<VerifyResult, 'anchorsChecked'> & { rewritten?: VerifyResult['brokenAt'] }> {
  let expectedId = 1;
  let prevHash = GENESIS_HASH;
  let checked = 0;
  let rewritten: VerifyResult['brokenAt'];
  for (;;) {
    let query = db.selectFrom('audit_events').selectAll().where('id', '>=', expectedId);
    if (upTo !== undefined) query = query.where('id', '<=', upTo);
    const rows = await query.orderBy('id').limit(batchSize).execute();
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
      const anchor = anchors.get(row.id);
      if (anchor && anchor.hash !== row.hash && rewritten === undefined) {
        rewritten = {
          id: row.id,
          problem: `its hash differs from the one anchored at ${anchor.at} (the chain was rewritten)`,
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
  return { ok: true, rowsChecked: checked, rewritten };
}
