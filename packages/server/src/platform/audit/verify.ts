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
  const anchors = options.anchors ?? [];
  const byId = new Map(anchors.map((a) => [a.id, a]));
  const { rewritten, ...walked } = await walkChain(db, options.batchSize ?? 5000, byId, {
    from: 1,
    prevHash: GENESIS_HASH,
  });
  if (!walked.ok) return { ...walked, anchorsChecked: 0 };
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
 * The chain over a range of events (an export's first to last row): every row from `from` to `to`
 * present, linked to the one before it (the first to the stored hash of event `from` − 1) and
 * matching its own hash. What it proves is the range's integrity relative to the row before it;
 * `npm run audit:verify` walks the whole chain from the first event.
 */
export async function verifyAuditRange(
  db: Db,
  from: number,
  to: number,
  batchSize = 5000,
): Promise<Omit<VerifyResult, 'anchorsChecked'> & { from: number; to: number }> {
  if (to < from) return { ok: true, rowsChecked: 0, from, to };
  let prevHash = GENESIS_HASH;
  if (from > 1) {
    const before = await db
      .selectFrom('audit_events')
      .select('hash')
      .where('id', '=', from - 1)
      .executeTakeFirst();
    if (!before) return { ok: false, rowsChecked: 0, from, to, brokenAt: { id: from - 1, problem: 'is missing' } };
    prevHash = before.hash;
  }
  const walked = await walkChain(db, batchSize, new Map(), { from, prevHash, upTo: to });
  if (walked.ok && walked.rowsChecked < to - from + 1)
    return {
      ok: false,
      rowsChecked: walked.rowsChecked,
      from,
      to,
      brokenAt: { id: from + walked.rowsChecked, problem: `the chain ends at row ${from + walked.rowsChecked - 1}` },
    };
  return {
    ok: walked.ok,
    rowsChecked: walked.rowsChecked,
    ...(walked.brokenAt ? { brokenAt: walked.brokenAt } : {}),
    from,
    to,
  };
}

/**
 * The chain walk. It also finds the first anchored row (in id order) whose hash differs from its
 * anchor, returned as `rewritten` beside the walk's own result: a broken link is reported first.
 */
async function walkChain(
  db: Db,
  batchSize: number,
  anchors: ReadonlyMap<number, AuditAnchor>,
  range: { from: number; prevHash: string; upTo?: number | undefined },
): Promise<Omit<VerifyResult, 'anchorsChecked'> & { rewritten?: VerifyResult['brokenAt'] }> {
  const upTo = range.upTo;
  let expectedId = range.from;
  let prevHash = range.prevHash;
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
