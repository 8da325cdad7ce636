import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { SESSION_TTL_HOURS } from '@lamina/domain';
import type { Db } from '../db/database.js';

/** A session ends after this long without a request (and always SESSION_TTL_HOURS after login). */
export const SESSION_IDLE_MINUTES = 60;
/** last_seen_at is written at most this often, to keep reads cheap. */
const TOUCH_EVERY_MS = 60_000;

export interface SessionTokens {
  /** Goes into the cookie; only its keyed hash is stored. */
  token: string;
  csrfToken: string;
  sessionId: string;
}

export type AuthMethod = 'password' | 'oidc';

export interface LoadedSession {
  sessionId: string;
  userId: number;
  csrfToken: string;
  /** How the session was opened: a password, or single sign-on (OpenID Connect). */
  authMethod: AuthMethod;
}

/** How a new session was opened; an OpenID Connect session keeps the provider's ID token. */
export interface SessionOrigin {
  method: AuthMethod;
  idToken?: string | null;
}

export class SessionKeys {
  constructor(private readonly secret: string) {}

  /** Sessions are stored under a keyed hash of the cookie token: a copy of the table cannot log anyone in. */
  idOf(token: string): string {
    return createHmac('sha256', this.secret).update(token).digest('hex');
  }

  issue(): SessionTokens {
    const token = randomBytes(32).toString('base64url');
    return { token, csrfToken: randomBytes(32).toString('base64url'), sessionId: this.idOf(token) };
  }
}

export async function insertSession(
  db: Db,
  userId: number,
  tokens: SessionTokens,
  origin: SessionOrigin = { method: 'password' },
): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      id: tokens.sessionId,
      user_id: userId,
      csrf_token: tokens.csrfToken,
      auth_method: origin.method,
      id_token: origin.idToken ?? null,
      expires_at: sql<Date>`now() + make_interval(mins => ${SESSION_IDLE_MINUTES})`,
    })
    .execute();
}

/** Ends a user's open sessions (all, or all but one); answers how many were ended. */
export async function endUserSessions(db: Db, userId: number, except?: string): Promise<number> {
  let query = db
    .updateTable('sessions')
    .set({ ended_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null);
  if (except !== undefined) query = query.where('id', '<>', except);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function loadSession(db: Db, keys: SessionKeys, token: string): Promise<LoadedSession | null> {
  if (token.length < 20 || token.length > 100) return null;
  const id = keys.idOf(token);
  const row = await db
    .selectFrom('sessions')
    .select(['id', 'user_id', 'csrf_token', 'last_seen_at', 'auth_method'])
    .where('id', '=', id)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  if (!row) return null;
  if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) {
    await db
      .updateTable('sessions')
      .set({
        last_seen_at: sql<Date>`now()`,
        expires_at: sql<Date>`least(created_at + make_interval(hours => ${SESSION_TTL_HOURS}), now() + make_interval(mins => ${SESSION_IDLE_MINUTES}))`,
      })
      .where('id', '=', id)
      .execute();
  }
  return { sessionId: row.id, userId: row.user_id, csrfToken: row.csrf_token, authMethod: row.auth_method };
}

export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
