import { sql } from 'kysely';
import { LOGIN_THROTTLE, MESSAGES } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { verifyPassword } from '../../platform/auth/passwords.js';
import { loadPrincipal, type Principal } from '../../platform/auth/principal.js';
import { insertSession, type SessionKeys, type SessionTokens } from '../../platform/auth/session.js';
import { TooManyRequestsError, UnauthorizedError } from '../../platform/errors.js';

export interface LoginResult {
  tokens: SessionTokens;
  principal: Principal;
}

export class AuthService {
  constructor(
    private readonly db: Db,
    private readonly keys: SessionKeys,
  ) {}

  async recentFailures(username: string, ip: string): Promise<number> {
    const row = await this.db
      .selectFrom('login_failures')
      .select(sql<number>`count(*)::int`.as('n'))
      .where(sql<string>`lower(username)`, '=', username.toLowerCase())
      .where('ip', '=', ip)
      .where('occurred_at', '>', sql<Date>`now() - make_interval(mins => ${LOGIN_THROTTLE.windowMinutes})`)
      .executeTakeFirstOrThrow();
    return row.n;
  }

  /**
   * Logs a user in. Wrong username and wrong password get the same answer; after too many failures
   * for one account from one IP within the window, every attempt is refused until the window passes.
   */
  async login(username: string, password: string, request: Omit<Actor, 'userId' | 'username' | 'workAsRole'>): Promise<LoginResult> {
    const ip = request.clientIp ?? 'unknown';
    const attempt: Actor = { ...request, userId: null, username, workAsRole: null };
    if ((await this.recentFailures(username, ip)) >= LOGIN_THROTTLE.maxFailures) {
      await this.db.transaction().execute((tx) =>
        recordAudit(tx, attempt, [{ action: 'LOGIN_THROTTLED', entityType: 'user', entityId: null }]),
      );
      throw new TooManyRequestsError(MESSAGES.tooManyLogins);
    }
    const user = await this.db
      .selectFrom('users')
      .select(['id', 'username', 'password_hash', 'active'])
      .where(sql<string>`lower(username)`, '=', username.toLowerCase())
      .executeTakeFirst();
    const ok = await verifyPassword(user?.password_hash, password);
    if (!ok || !user?.active) {
      await this.db.transaction().execute(async (tx) => {
        await tx.insertInto('login_failures').values({ username, ip }).execute();
        await recordAudit(tx, { ...attempt, userId: user?.id ?? null }, [
          {
            action: 'LOGIN_FAILED',
            entityType: 'user',
            entityId: user?.id ?? null,
            newValue: ok && user && !user.active ? 'account deactivated' : 'invalid username or password',
          },
        ]);
      });
      throw new UnauthorizedError(MESSAGES.invalidLogin);
    }
    const tokens = this.keys.issue();
    await this.db.transaction().execute(async (tx) => {
      await tx
        .deleteFrom('login_failures')
        .where(sql<string>`lower(username)`, '=', username.toLowerCase())
        .where('ip', '=', ip)
        .execute();
      await insertSession(tx, user.id, tokens);
      await tx.updateTable('users').set({ last_login_at: sql<Date>`now()` }).where('id', '=', user.id).execute();
      const principal = await loadPrincipal(tx, user.id);
      await recordAudit(tx, { ...request, userId: user.id, username: user.username, workAsRole: principal?.workAsRole?.name ?? null }, [
        { action: 'LOGIN', entityType: 'user', entityId: user.id },
      ]);
    });
    const principal = await loadPrincipal(this.db, user.id);
    if (!principal) throw new UnauthorizedError(MESSAGES.invalidLogin);
    return { tokens, principal };
  }

  async logout(sessionId: string, actor: Actor): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('sessions').set({ ended_at: sql<Date>`now()` }).where('id', '=', sessionId).execute();
      await recordAudit(tx, actor, [{ action: 'LOGOUT', entityType: 'user', entityId: actor.userId }]);
    });
  }
}
