import { createHash } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { asStoredText } from '@lamina/domain';
import type { Db } from '../db/database.js';
import type { DB } from '../db/schema.js';

/** Who did it, and through which request: taken from the authenticated session. */
export interface Actor {
  userId: number | null;
  username: string | null;
  workAsRole: string | null;
  requestId: string | null;
  clientIp: string | null;
}

export interface AuditEvent {
  action: string;
  entityType: string;
  entityId?: string | number | null;
  studyId?: number | null;
  field?: string | null;
  oldValue?: unknown;
  newValue?: unknown;
  reason?: string | null;
}

export const GENESIS_HASH = '0'.repeat(64);
/** Any constant: one transaction at a time extends the chain, so it never forks. */
const AUDIT_CHAIN_LOCK = 727_002;

export interface ChainedRow {
  id: number;
  occurred_at: Date;
  user_id: number | null;
  username: string | null;
  work_as_role: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  study_id: number | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  reason: string | null;
  request_id: string | null;
  client_ip: string | null;
}

/** The hash of a row: sha256 over the previous row's hash and the row's fields in a fixed order. */
export function hashRow(prevHash: string, row: ChainedRow): string {
  const canonical = JSON.stringify([
    row.id,
    row.occurred_at.toISOString(),
    row.user_id,
    row.username,
    row.work_as_role,
    row.action,
    row.entity_type,
    row.entity_id,
    row.study_id,
    row.field,
    row.old_value,
    row.new_value,
    row.reason,
    row.request_id,
    row.client_ip,
  ]);
  return createHash('sha256').update(prevHash).update('\n').update(canonical).digest('hex');
}

/** Audit values are text: strings as they are, everything else as JSON; absent stays null. */
export function auditValue(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

/** Text as the database will store it (lone surrogates and NUL as U+FFFD), so the hash covers exactly that. */
const stored = (text: string | null): string | null => (text === null ? null : asStoredText(text));

/** The text fields of a chained row: the ones whose stored form can differ from a JavaScript string. */
const TEXT_FIELDS = [
  'username',
  'work_as_role',
  'action',
  'entity_type',
  'entity_id',
  'field',
  'old_value',
  'new_value',
  'reason',
  'request_id',
  'client_ip',
] as const;

/** A row's text fields in their stored form. */
export function canonicalRow(row: ChainedRow): ChainedRow {
  const out: ChainedRow = { ...row };
  for (const field of TEXT_FIELDS) (out as unknown as Record<string, string | null>)[field] = stored(row[field]);
  return out;
}

/** The chain's last row (id and hash), or null while the trail is empty. */
export async function readAuditHead(db: Db): Promise<{ id: number; hash: string } | null> {
  const row = await db
    .selectFrom('audit_events')
    .select(['id', 'hash'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Records audit events inside the caller's transaction: they commit with the change they describe,
 * or not at all. Takes the chain lock until the transaction ends.
 */
export async function recordAudit(tx: Transaction<DB>, actor: Actor, events: readonly AuditEvent[]): Promise<void> {
  if (events.length === 0) return;
  const locked = await sql<{ isolation: string }>`
    select pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK}), current_setting('transaction_isolation') as isolation`.execute(
    tx,
  );
  // The head must be read with a snapshot taken after the lock was granted: in READ COMMITTED each
  // statement takes a new one. A repeatable-read or serializable transaction keeps the snapshot of
  // its first statement, so under contention it would read a stale head and fail on the primary key.
  const isolation = locked.rows[0]?.isolation;
  if (isolation !== 'read committed') {
    throw new Error(`Audit events are recorded in READ COMMITTED transactions only (this one is ${String(isolation)})`);
  }
  const last = await readAuditHead(tx);
  const { rows } = await sql<{ now: Date }>`select date_trunc('milliseconds', clock_timestamp()) as now`.execute(tx);
  const occurredAt = rows[0]?.now ?? new Date();
  let prevHash = last?.hash ?? GENESIS_HASH;
  let id = last?.id ?? 0;
  const values = events.map((event) => {
    id += 1;
    const row = canonicalRow({
      id,
      occurred_at: occurredAt,
      user_id: actor.userId,
      username: actor.username,
      work_as_role: actor.workAsRole,
      action: event.action,
      entity_type: event.entityType,
      entity_id: event.entityId === undefined || event.entityId === null ? null : String(event.entityId),
      study_id: event.studyId ?? null,
      field: event.field ?? null,
      old_value: auditValue(event.oldValue),
      new_value: auditValue(event.newValue),
      reason: event.reason ?? null,
      request_id: actor.requestId,
      client_ip: actor.clientIp,
    });
    const hash = hashRow(prevHash, row);
    const value = { ...row, prev_hash: prevHash, hash };
    prevHash = hash;
    return value;
  });
  const written = await tx.insertInto('audit_events').values(values).returningAll().execute();
  // The chain is hashed from what the database holds: read back, every row must verify as
  // `audit:verify` will check it. Anything the database stored differently aborts the change.
  let expectedPrev = values[0]?.prev_hash ?? GENESIS_HASH;
  for (const row of written.sort((a, b) => a.id - b.id)) {
    if (row.prev_hash !== expectedPrev || hashRow(expectedPrev, row) !== row.hash) {
      throw new Error(`Audit row ${row.id} does not verify as stored; the change is refused`);
    }
    expectedPrev = row.hash;
  }
}

/** The actor for work the system does on its own (start-up reference data, jobs). */
export const SYSTEM_ACTOR: Actor = {
  userId: null,
  username: 'system',
  workAsRole: null,
  requestId: null,
  clientIp: null,
};
