import { sql, type Transaction } from 'kysely';
import { LOGIN_THROTTLE, MESSAGES } from '@lamina/domain';
import type { Db } from '../db/database.js';
import type { DB } from '../db/schema.js';
import { recordAudit, type Actor, type AuditEvent } from '../audit/audit.js';
import { TooManyRequestsError } from '../errors.js';

/** The advisory lock (two-key form: this, and a hash of the account and IP) of an account's attempts. */
const ATTEMPT_LOCK = 727_019;

/**
 * Takes one attempt of an account's password from an IP before the password is checked — a login,
 * a password change, an electronic signature (issue 30): all count toward the same lockout. Under a
 * lock on (account, IP) it counts the failures within the window: at the limit the attempt is
 * refused with 429 (audited as `throttled`); below it, the attempt is recorded as a failure in
 * advance, and a success deletes it with the account's other failures from that IP
 * (clearLoginFailures). Parallel attempts (at one process or at several) therefore cannot slip
 * between one's check and another's record: no more than LOGIN_THROTTLE.maxFailures passwords are
 * checked per account and IP within the window. Answers the reserved row's id (undone when the
 * attempt ends before its password is checked); `onThrottled` is told a refusal.
 */
export async function reservePasswordAttempt(
  db: Db,
  attempt: { username: string; ip: string; actor: Actor; throttled: AuditEvent },
  onThrottled?: () => void,
): Promise<number> {
  const { username, ip } = attempt;
  const reserved = await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${ATTEMPT_LOCK}, hashtext(${`${username.toLowerCase()}|${ip}`}))`.execute(
      tx,
    );
    const { n } = await tx
      .selectFrom('login_failures')
      .select(sql<number>`count(*)::int`.as('n'))
      .where(sql<string>`lower(username)`, '=', username.toLowerCase())
      .where('ip', '=', ip)
      .where('occurred_at', '>', sql<Date>`now() - make_interval(mins => ${LOGIN_THROTTLE.windowMinutes})`)
      .executeTakeFirstOrThrow();
    if (n >= LOGIN_THROTTLE.maxFailures) {
      await recordAudit(tx, attempt.actor, [attempt.throttled]);
      return null;
    }
    const row = await tx
      .insertInto('login_failures')
      .values({ username, ip })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
  if (reserved === null) {
    onThrottled?.();
    throw new TooManyRequestsError(MESSAGES.tooManyLogins);
  }
  return reserved;
}

/** A success forgets the account's failures from that IP. */
export async function clearLoginFailures(tx: Transaction<DB>, username: string, ip: string): Promise<void> {
  await tx
    .deleteFrom('login_failures')
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .where('ip', '=', ip)
    .execute();
}
