import { sql, type Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { MESSAGES, SIGNATURE_REAUTH_SECONDS, passwordRuleError, type ChangePasswordRequest } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { hashPassword, verifyPassword } from '../../platform/auth/passwords.js';
import { clearLoginFailures, reservePasswordAttempt } from '../../platform/auth/loginThrottle.js';
import { loadPrincipal, type Principal } from '../../platform/auth/principal.js';
import {
  endUserSessions,
  insertSession,
  type AuthMethod,
  type SessionKeys,
  type SessionOrigin,
  type SessionTokens,
} from '../../platform/auth/session.js';
import type { OidcIdentity } from '../../platform/auth/oidcClient.js';
import type { LoginFailureReason } from '../../platform/metrics/metrics.js';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../../platform/errors.js';

export interface LoginResult {
  tokens: SessionTokens;
  principal: Principal;
}

/** A single sign-on that logged nobody in: `unknown` — no active account for a verified e-mail. */
export class SsoRefusedError extends Error {
  constructor(readonly kind: 'unknown') {
    super('single sign-on refused');
  }
}

type RequestInfo = Omit<Actor, 'userId' | 'username' | 'workAsRole'>;

export class AuthService {
  constructor(
    private readonly db: Db,
    private readonly keys: SessionKeys,
    /** Told each refused login (the login failure metric). */
    private readonly metrics?: { loginFailed(reason: LoginFailureReason): void },
    /** LOCAL_LOGIN: off refuses password logins and password changes (single sign-on only). */
    private readonly localLogin = true,
  ) {}

  private refuseWhenLocalLoginOff(): void {
    if (!this.localLogin) throw new ForbiddenError(MESSAGES.localLoginOff);
  }

  /** One attempt of the account's password from the IP (platform/auth/loginThrottle.ts). */
  private reserveAttempt(username: string, ip: string, actor: Actor, throttled: AuditEvent): Promise<number> {
    return reservePasswordAttempt(this.db, { username, ip, actor, throttled }, () => {
      if (throttled.action === 'LOGIN_THROTTLED') this.metrics?.loginFailed('throttled');
    });
  }

  /**
   * Logs a user in. Wrong username and wrong password get the same answer; after too many failures
   * for one account from one IP within the window, every attempt is refused until the window passes.
   */
  async login(username: string, password: string, request: RequestInfo): Promise<LoginResult> {
    this.refuseWhenLocalLoginOff();
    const ip = request.clientIp ?? 'unknown';
    const attempt: Actor = { ...request, userId: null, username, workAsRole: null };
    await this.reserveAttempt(username, ip, attempt, { action: 'LOGIN_THROTTLED', entityType: 'user', entityId: null });
    const user = await this.db
      .selectFrom('users')
      .select(['id', 'username', 'password_hash', 'active'])
      .where(sql<string>`lower(username)`, '=', username.toLowerCase())
      .executeTakeFirst();
    const ok = await verifyPassword(user?.password_hash, password);
    if (!ok || !user?.active) {
      // The failure itself was recorded when the attempt was reserved.
      await this.db.transaction().execute(async (tx) => {
        await recordAudit(tx, { ...attempt, userId: user?.id ?? null }, [
          {
            action: 'LOGIN_FAILED',
            entityType: 'user',
            entityId: user?.id ?? null,
            newValue: ok && user && !user.active ? 'account deactivated' : 'invalid username or password',
          },
        ]);
      });
      this.metrics?.loginFailed('invalid_credentials');
      throw new UnauthorizedError(MESSAGES.invalidLogin);
    }
    return this.startSession(user, request, { method: 'password' }, [], (tx) => clearLoginFailures(tx, username, ip));
  }

  /**
   * Opens a session for a user whose identity was checked (password or single sign-on): the session
   * row, last login, and the LOGIN audit row (plus `extra` rows), in one transaction.
   */
  private async startSession(
    user: { id: number; username: string },
    request: RequestInfo,
    origin: SessionOrigin,
    extra: AuditEvent[],
    before?: (tx: Transaction<DB>) => Promise<void>,
  ): Promise<LoginResult> {
    const tokens = this.keys.issue();
    await this.db.transaction().execute(async (tx) => {
      await before?.(tx);
      await insertSession(tx, user.id, tokens, origin);
      await tx
        .updateTable('users')
        .set({ last_login_at: sql<Date>`now()` })
        .where('id', '=', user.id)
        .execute();
      const principal = await loadPrincipal(tx, user.id);
      await recordAudit(
        tx,
        { ...request, userId: user.id, username: user.username, workAsRole: principal?.workAsRole?.name ?? null },
        [{ action: 'LOGIN', entityType: 'user', entityId: user.id }, ...extra],
      );
    });
    const principal = await loadPrincipal(this.db, user.id);
    if (!principal) throw new UnauthorizedError(MESSAGES.invalidLogin);
    return { tokens, principal };
  }

  /**
   * Logs in the user the identity provider vouched for: the account whose username is the
   * provider's verified e-mail address (letter case aside), active. Nothing is created: an
   * unverified or unknown address, or a deactivated account, is refused (audited LOGIN_FAILED,
   * counted as sso_unknown_user). Success is audited as a password login is (LOGIN), with a
   * LOGIN_SSO row naming the method, issuer and subject; the session remembers the ID token.
   */
  async loginWithSso(identity: OidcIdentity, request: RequestInfo): Promise<LoginResult> {
    const email = identity.emailVerified ? identity.email : null;
    const user =
      email === null
        ? undefined
        : await this.db
            .selectFrom('users')
            .select(['id', 'username', 'active'])
            .where(sql<string>`lower(username)`, '=', email.toLowerCase())
            .executeTakeFirst();
    if (!user?.active) {
      const why =
        email === null
          ? identity.email === null
            ? 'the provider gave no e-mail address'
            : 'the provider did not verify the e-mail address'
          : user
            ? 'account deactivated'
            : 'no account has this e-mail address';
      await this.db.transaction().execute((tx) =>
        recordAudit(tx, { ...request, userId: user?.id ?? null, username: identity.email, workAsRole: null }, [
          {
            action: 'LOGIN_FAILED',
            entityType: 'user',
            entityId: user?.id ?? null,
            field: 'method',
            newValue: `single sign-on (OpenID Connect): ${why}`,
          },
        ]),
      );
      this.metrics?.loginFailed('sso_unknown_user');
      throw new SsoRefusedError('unknown');
    }
    return this.startSession(user, request, { method: 'oidc', idToken: identity.idToken }, [
      {
        action: 'LOGIN_SSO',
        entityType: 'user',
        entityId: user.id,
        field: 'method',
        newValue: { method: 'oidc', issuer: identity.issuer, subject: identity.subject },
      },
    ]);
  }

  /**
   * A signed-in user signed in again at the identity provider to sign (issue 30; §11.200(a)(1)).
   * The session is stamped (sessions.signature_auth_at) only when the provider vouched for the
   * session's own user (the verified e-mail is their username) and authenticated them within
   * SIGNATURE_REAUTH_SECONDS; anything else is audited SIGNATURE_REAUTH_FAILED and stamps nothing.
   */
  async reauthenticateForSignature(
    session: { sessionId: string; userId: number } | null,
    identity: OidcIdentity,
    request: RequestInfo,
    now = Date.now(),
  ): Promise<boolean> {
    const user = session
      ? await this.db.selectFrom('users').select(['id', 'username']).where('id', '=', session.userId).executeTakeFirst()
      : undefined;
    const sameUser =
      user !== undefined &&
      identity.emailVerified &&
      identity.email !== null &&
      identity.email.toLowerCase() === user.username.toLowerCase();
    const fresh = identity.authTime !== null && now / 1000 - identity.authTime <= SIGNATURE_REAUTH_SECONDS;
    const actor = { ...request, userId: user?.id ?? null, username: user?.username ?? null, workAsRole: null };
    const entity = { entityType: 'user', entityId: user?.id ?? null } as const;
    await this.db.transaction().execute(async (tx) => {
      if (session && sameUser && fresh) {
        await tx
          .updateTable('sessions')
          .set({ signature_auth_at: new Date(now) })
          .where('id', '=', session.sessionId)
          .execute();
        await recordAudit(tx, actor, [
          { action: 'SIGNATURE_REAUTHENTICATED', ...entity, field: 'method', newValue: { issuer: identity.issuer } },
        ]);
      } else {
        const why = !session
          ? 'no session'
          : !sameUser
            ? 'the provider vouched for another user'
            : 'the provider did not authenticate the user afresh';
        await recordAudit(tx, actor, [{ action: 'SIGNATURE_REAUTH_FAILED', ...entity, newValue: why }]);
      }
    });
    return Boolean(session && sameUser && fresh);
  }

  /**
   * A single sign-on whose answer from the provider did not validate, or that the provider refused:
   * audited LOGIN_FAILED (nobody known) and counted as sso_failed. `why` is in fixed words.
   */
  async recordSsoFailure(why: string, request: RequestInfo): Promise<void> {
    await this.db.transaction().execute((tx) =>
      recordAudit(tx, { ...request, userId: null, username: null, workAsRole: null }, [
        {
          action: 'LOGIN_FAILED',
          entityType: 'user',
          entityId: null,
          field: 'method',
          newValue: `single sign-on (OpenID Connect) failed: ${why}`,
        },
      ]),
    );
    this.metrics?.loginFailed('sso_failed');
  }

  /**
   * Changes the user's own password (any logged-in user; the way out of a one-time password).
   * The current password must be given: wrong ones count as login failures of the account from
   * this IP, so a stolen session cannot guess it faster than the login form allows, and the same
   * throttle refuses them. The new one must pass the domain's rules. On success, in one transaction:
   * the new argon2id hash, the must-change flag cleared, every other session of the user ended
   * (this one stays), the failures cleared, and PASSWORD_CHANGED audited without any password value.
   */
  async changePassword(
    principal: Principal,
    sessionId: string,
    change: ChangePasswordRequest,
    actor: Actor,
  ): Promise<void> {
    this.refuseWhenLocalLoginOff();
    const ip = actor.clientIp ?? 'unknown';
    const entity = { entityType: 'user', entityId: principal.id } as const;
    const reserved = await this.reserveAttempt(principal.username, ip, actor, {
      action: 'PASSWORD_CHANGE_THROTTLED',
      ...entity,
    });
    const ruleError = passwordRuleError({ ...change, username: principal.username });
    if (ruleError !== null) {
      // Refused before the current password was checked: not a failure of it.
      await this.db.deleteFrom('login_failures').where('id', '=', reserved).execute();
      throw new BadRequestError(ruleError);
    }

    const stored = await this.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', principal.id)
      .executeTakeFirst();
    const storedHash = stored?.password_hash ?? null;
    if (storedHash === null || !(await verifyPassword(storedHash, change.currentPassword))) {
      // The failure itself was recorded when the attempt was reserved.
      await this.db.transaction().execute(async (tx) => {
        await recordAudit(tx, actor, [
          { action: 'PASSWORD_CHANGE_FAILED', ...entity, newValue: 'current password incorrect' },
        ]);
      });
      throw new BadRequestError(MESSAGES.currentPasswordIncorrect);
    }

    const newHash = await hashPassword(change.newPassword);
    await this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('users')
        .select(['password_hash', 'must_change_password'])
        .where('id', '=', principal.id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      // Changed by a concurrent request since it was verified: the password given is no longer current.
      if (row.password_hash !== storedHash) throw new BadRequestError(MESSAGES.currentPasswordIncorrect);
      await tx
        .updateTable('users')
        .set({ password_hash: newHash, must_change_password: false, updated_at: sql<Date>`now()` })
        .where('id', '=', principal.id)
        .execute();
      const endedSessions = await endUserSessions(tx, principal.id, sessionId);
      await clearLoginFailures(tx, principal.username, ip);
      await recordAudit(tx, actor, [
        { action: 'PASSWORD_CHANGED', ...entity, field: 'password' },
        ...(row.must_change_password
          ? [{ action: 'PASSWORD_CHANGED', ...entity, field: 'mustChangePassword', oldValue: true, newValue: false }]
          : []),
        ...(endedSessions > 0
          ? [
              {
                action: 'SESSIONS_ENDED',
                ...entity,
                field: 'sessions',
                newValue: `${endedSessions} other session(s) ended by the password change`,
              },
            ]
          : []),
      ]);
    });
  }

  /** Ends the session; answers how it was opened (and its ID token), for the logout at the provider. */
  async logout(sessionId: string, actor: Actor): Promise<{ method: AuthMethod; idToken: string | null }> {
    return this.db.transaction().execute(async (tx) => {
      const ended = await tx
        .updateTable('sessions')
        .set({ ended_at: sql<Date>`now()` })
        .where('id', '=', sessionId)
        .returning(['auth_method', 'id_token'])
        .executeTakeFirst();
      await recordAudit(tx, actor, [{ action: 'LOGOUT', entityType: 'user', entityId: actor.userId }]);
      return { method: ended?.auth_method ?? 'password', idToken: ended?.id_token ?? null };
    });
  }
}
