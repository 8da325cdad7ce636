import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_HEADER, MESSAGES, SESSION_COOKIE } from '@lamina/domain';
import { CookieJar, followProvider, startTestProvider, type TestProvider } from '@lamina/test-support/oidcProvider';
import { ConfigError, loadConfig } from '../src/platform/config.js';
import { OIDC_TRANSACTION_COOKIE, safeAppPath } from '../src/platform/auth/oidcTransaction.js';
import { createUser, PASSWORD } from './factories.js';
import { createTestApp, login, type TestContext } from './testApp.js';

/**
 * Single sign-on against a real OpenID Connect provider (oidc-provider, started here on a loopback
 * port): the app is driven through fastify.inject, the provider through plain HTTP, following its
 * redirects and submitting its login form as a browser would.
 */

/** The app's public address (the redirect URI registered at the provider); inject needs no listener. */
const APP = 'http://lamina.test';
const CALLBACK = `${APP}/api/auth/oidc/callback`;

const ADA = 'sso.ada@example.org';
const RETIRED = 'sso.retired@example.org';

let provider: TestProvider;
let t: TestContext;
let adaId: number;
let retiredId: number;

beforeAll(async () => {
  provider = await startTestProvider(APP, {
    ada: { email: 'SSO.Ada@Example.ORG', emailVerified: true },
    stranger: { email: 'nobody@example.org', emailVerified: true },
    retired: { email: RETIRED, emailVerified: true },
    unverified: { email: ADA, emailVerified: false },
    mute: { email: null, emailVerified: false },
  });
  t = await createTestApp(oidcEnv(provider));
  const db = t.database.db;
  adaId = (await createUser(db, { username: ADA })).id;
  // An account created by an administrator still has its one-time password: it must not hold SSO.
  await db.updateTable('users').set({ must_change_password: true }).where('id', '=', adaId).execute();
  retiredId = (await createUser(db, { username: RETIRED, active: false })).id;
});

afterAll(async () => {
  await t?.close();
  await provider?.close();
});

function oidcEnv(p: TestProvider, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PUBLIC_URL: APP,
    OIDC_ISSUER: p.issuer,
    OIDC_CLIENT_ID: p.clientId,
    OIDC_CLIENT_SECRET: p.clientSecret,
    OIDC_NAME: 'Test IdP',
    ...extra,
  };
}

interface SsoAttempt {
  /** The app's answer at the callback. */
  back: LightMyRequestResponse;
  /** The provider's cookies (its session). */
  jar: CookieJar;
  callbackUrl: string;
  transactionCookie: string;
}

/** Starts the login at the app, logs in at the provider as `account`, and brings the answer back. */
async function ssoLogin(
  ctx: TestContext,
  account: string,
  options: { redirect?: string; tamper?: (callback: URL) => void; transactionCookie?: (value: string) => string } = {},
): Promise<SsoAttempt> {
  const query = options.redirect === undefined ? '' : `?redirect=${encodeURIComponent(options.redirect)}`;
  const start = await ctx.app.inject({ url: `/api/auth/oidc/login${query}` });
  expect(start.statusCode, start.body).toBe(302);
  const cookie = start.cookies.find((c) => c.name === OIDC_TRANSACTION_COOKIE);
  expect(cookie).toBeDefined();
  expect(cookie!.httpOnly).toBe(true);
  expect(cookie!.sameSite).toBe('Lax');
  const authorize = new URL(String(start.headers.location));
  expect(authorize.origin).toBe(provider.issuer);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('state')).toBeTruthy();
  expect(authorize.searchParams.get('nonce')).toBeTruthy();
  expect(authorize.searchParams.get('redirect_uri')).toBe(CALLBACK);

  const jar = new CookieJar();
  const callbackUrl = await followProvider(jar, authorize.toString(), CALLBACK, account);
  const callback = new URL(callbackUrl);
  options.tamper?.(callback);
  const transactionCookie = options.transactionCookie?.(cookie!.value) ?? cookie!.value;
  const back = await ctx.app.inject({
    url: `${callback.pathname}${callback.search}`,
    cookies: { [OIDC_TRANSACTION_COOKIE]: transactionCookie },
  });
  return { back, jar, callbackUrl, transactionCookie };
}

async function auditSince(id: number) {
  return t.database.db
    .selectFrom('audit_events')
    .select(['action', 'user_id', 'username', 'entity_id', 'field', 'new_value'])
    .where('id', '>', id)
    .orderBy('id')
    .execute();
}

async function auditHead(): Promise<number> {
  const row = await t.database.db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.max<string | number>('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

async function counts() {
  const db = t.database.db;
  const users = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const sessions = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return { users: Number(users.n), sessions: Number(sessions.n) };
}

async function failures(reason: string): Promise<number> {
  const { body } = await t.app.metrics.scrape();
  const match = new RegExp(`^lamina_login_failures_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(body);
  return Number(match?.[1] ?? NaN);
}

function sessionCookie(response: LightMyRequestResponse): string | undefined {
  return response.cookies.find((c) => c.name === SESSION_COOKIE && c.value !== '')?.value;
}

describe('configuration', () => {
  it('GET /api/config tells the web that password login and single sign-on are on, and its name', async () => {
    const response = await t.app.inject({ url: '/api/config' });
    expect(response.json()).toMatchObject({ localLogin: true, oidcName: 'Test IdP' });
  });

  it('refuses to start with LOCAL_LOGIN=off and no OpenID Connect, or with part of it', () => {
    expect(() => loadConfig({ LOCAL_LOGIN: 'off' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOCAL_LOGIN: 'off' })).toThrow(/LOCAL_LOGIN=off needs single sign-on/);
    expect(() => loadConfig({ OIDC_ISSUER: 'https://idp.example.org' })).toThrow(
      /OIDC_CLIENT_ID and OIDC_CLIENT_SECRET/,
    );
    expect(() =>
      loadConfig({ OIDC_ISSUER: 'http://idp.example.org', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b' }),
    ).toThrow(/https/);
    const config = loadConfig({
      PUBLIC_URL: 'https://lamina.example.org/',
      OIDC_ISSUER: 'https://idp.example.org',
      OIDC_CLIENT_ID: 'a',
      OIDC_CLIENT_SECRET: 'b',
    });
    expect(config.oidc).toMatchObject({
      name: 'single sign-on',
      redirectUri: 'https://lamina.example.org/api/auth/oidc/callback',
      postLogoutRedirectUri: 'https://lamina.example.org/login',
    });
    expect(loadConfig({}).oidc).toBeNull();
  });

  it('after the login, goes only to a path of the app', () => {
    expect(safeAppPath('/studies/3?tab=cases')).toBe('/studies/3?tab=cases');
    for (const evil of ['//evil.example', '/\\evil.example', 'https://evil.example', 'studies', '', '/a\nb', null])
      expect(safeAppPath(evil)).toBe('/');
  });
});

describe('login with OpenID Connect', () => {
  it('logs in the account whose username is the verified e-mail (any letter case): session, audit, no password prompt', async () => {
    const head = await auditHead();
    const { back } = await ssoLogin(t, 'ada', { redirect: '/users?x=1' });
    expect(back.statusCode, back.body).toBe(302);
    expect(back.headers.location).toBe('/users?x=1');
    // The transaction cookie is spent.
    expect(back.cookies.find((c) => c.name === OIDC_TRANSACTION_COOKIE)?.value).toBe('');
    const cookie = sessionCookie(back);
    expect(cookie).toBeDefined();

    const info = await t.app.inject({ url: '/api/users/info', cookies: { [SESSION_COOKIE]: cookie! } });
    expect(info.statusCode).toBe(200);
    expect(info.json()).toMatchObject({ id: adaId, username: ADA, mustChangePassword: false });
    // The account's one-time password does not hold a single sign-on session (403 for a password one).
    const roles = await t.app.inject({ url: '/api/users/availableRoles', cookies: { [SESSION_COOKIE]: cookie! } });
    expect(roles.statusCode).toBe(200);

    const session = await t.database.db
      .selectFrom('sessions')
      .select(['auth_method', 'id_token'])
      .where('user_id', '=', adaId)
      .where('ended_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(session.auth_method).toBe('oidc');
    expect(session.id_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const rows = await auditSince(head);
    expect(rows.map((r) => r.action)).toEqual(['LOGIN', 'LOGIN_SSO']);
    expect(rows[0]).toMatchObject({ user_id: adaId, username: ADA, entity_id: String(adaId), field: null });
    expect(rows[1]).toMatchObject({ user_id: adaId, field: 'method' });
    expect(JSON.parse(rows[1]!.new_value!)).toEqual({ method: 'oidc', issuer: provider.issuer, subject: 'ada' });
    const user = await t.database.db
      .selectFrom('users')
      .select('last_login_at')
      .where('id', '=', adaId)
      .executeTakeFirstOrThrow();
    expect(user.last_login_at).not.toBeNull();
  });

  it('an e-mail no account has lands on /welcome?sso=unknown: no session, no user, audited and counted', async () => {
    const before = await counts();
    const head = await auditHead();
    const failed = await failures('sso_unknown_user');
    const { back } = await ssoLogin(t, 'stranger');
    expect(back.statusCode).toBe(302);
    expect(back.headers.location).toBe('/welcome?sso=unknown');
    expect(sessionCookie(back)).toBeUndefined();
    expect(await counts()).toEqual(before);
    const rows = await auditSince(head);
    expect(rows).toEqual([
      expect.objectContaining({
        action: 'LOGIN_FAILED',
        user_id: null,
        username: 'nobody@example.org',
        new_value: 'single sign-on (OpenID Connect): no account has this e-mail address',
      }),
    ]);
    expect(await failures('sso_unknown_user')).toBe(failed + 1);
  });

  it('a deactivated account, an unverified e-mail and no e-mail are refused alike', async () => {
    for (const [account, why, userId] of [
      ['retired', 'account deactivated', retiredId],
      ['unverified', 'the provider did not verify the e-mail address', null],
      ['mute', 'the provider gave no e-mail address', null],
    ] as const) {
      const before = await counts();
      const head = await auditHead();
      const { back } = await ssoLogin(t, account);
      expect(back.headers.location, account).toBe('/welcome?sso=unknown');
      expect(sessionCookie(back)).toBeUndefined();
      expect(await counts()).toEqual(before);
      const rows = await auditSince(head);
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'LOGIN_FAILED',
          user_id: userId,
          new_value: `single sign-on (OpenID Connect): ${why}`,
        }),
      ]);
    }
  });

  it('a tampered state, an altered or missing transaction cookie, a replayed code: /welcome?sso=failed, nothing created', async () => {
    const failed = await failures('sso_failed');
    const before = await counts();
    const head = await auditHead();

    const tampered = await ssoLogin(t, 'ada', { tamper: (url) => url.searchParams.set('state', 'forged-state') });
    expect(tampered.back.statusCode).toBe(302);
    expect(tampered.back.headers.location).toBe('/welcome?sso=failed');
    expect(sessionCookie(tampered.back)).toBeUndefined();

    const altered = await ssoLogin(t, 'ada', { transactionCookie: (value) => `x${value.slice(1)}` });
    expect(altered.back.headers.location).toBe('/welcome?sso=failed');

    const replayed = await ssoLogin(t, 'ada');
    expect(replayed.back.headers.location).toBe('/');
    const callback = new URL(replayed.callbackUrl);
    const again = await t.app.inject({
      url: `${callback.pathname}${callback.search}`,
      cookies: { [OIDC_TRANSACTION_COOKIE]: replayed.transactionCookie },
    });
    expect(again.statusCode).toBe(302);
    expect(again.headers.location).toBe('/welcome?sso=failed');
    expect(sessionCookie(again)).toBeUndefined();

    for (const url of [
      '/api/auth/oidc/callback',
      '/api/auth/oidc/callback?code=abc&state=def',
      '/api/auth/oidc/callback?error=access_denied&state=x',
    ]) {
      const bare = await t.app.inject({ url });
      expect(bare.statusCode, url).toBe(302);
      expect(bare.headers.location).toBe('/welcome?sso=failed');
    }
    const rows = await auditSince(head);
    const failures_ = rows.filter((r) => r.action === 'LOGIN_FAILED');
    expect(failures_).toHaveLength(6);
    expect(failures_.map((r) => r.new_value)).toEqual([
      "single sign-on (OpenID Connect) failed: the provider's answer did not validate",
      'single sign-on (OpenID Connect) failed: no login under way in this browser (the transaction cookie is missing, altered or expired)',
      "single sign-on (OpenID Connect) failed: the provider's answer did not validate",
      'single sign-on (OpenID Connect) failed: no login under way in this browser (the transaction cookie is missing, altered or expired)',
      'single sign-on (OpenID Connect) failed: no login under way in this browser (the transaction cookie is missing, altered or expired)',
      'single sign-on (OpenID Connect) failed: no login under way in this browser (the transaction cookie is missing, altered or expired)',
    ]);
    expect(await failures('sso_failed')).toBe(failed + 6);
    // Only the one good login made a session.
    expect(await counts()).toEqual({ ...before, sessions: before.sessions + 1 });
  });

  it('a provider that cannot be reached sends the browser to /welcome?sso=unavailable', async () => {
    const closed = await startTestProvider(APP, {});
    await closed.close();
    const ctx = await createTestApp(oidcEnv(closed));
    try {
      const response = await ctx.app.inject({ url: '/api/auth/oidc/login' });
      expect(response.statusCode).toBe(302);
      expect(response.headers.location).toBe('/welcome?sso=unavailable');
      expect(response.cookies.find((c) => c.name === OIDC_TRANSACTION_COOKIE)).toBeUndefined();
    } finally {
      await ctx.close();
    }
  });
});

describe('logout', () => {
  it('ends the local session and sends the browser to the provider, which logs out and comes back to /login', async () => {
    const { back, jar } = await ssoLogin(t, 'ada');
    const cookie = sessionCookie(back)!;
    const { csrfToken } = (await t.app.inject({ url: '/api/auth/csrf', cookies: { [SESSION_COOKIE]: cookie } })).json<{
      csrfToken: string;
    }>();
    const head = await auditHead();
    const logout = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      cookies: { [SESSION_COOKIE]: cookie },
      headers: { [CSRF_HEADER]: csrfToken },
    });
    expect(logout.statusCode).toBe(200);
    const { redirectUrl } = logout.json<{ redirectUrl: string | null }>();
    expect(redirectUrl).not.toBeNull();
    const endSession = new URL(redirectUrl!);
    expect(endSession.origin).toBe(provider.issuer);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${APP}/login`);
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await auditSince(head)).map((r) => r.action)).toEqual(['LOGOUT']);
    expect((await t.app.inject({ url: '/api/users/info', cookies: { [SESSION_COOKIE]: cookie } })).statusCode).toBe(
      401,
    );

    const logouts = provider.logouts();
    const landed = await followProvider(jar, endSession.toString(), `${APP}/login`);
    expect(landed).toBe(`${APP}/login`);
    expect(provider.logouts()).toBe(logouts + 1);
  });

  it('a password session logs out locally only', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    const logout = await session.request({ method: 'POST', url: '/api/auth/logout' });
    expect(logout.json()).toEqual({ success: true, message: 'Logged out', redirectUrl: null });
  });
});

describe('LOCAL_LOGIN=off', () => {
  let off: TestContext;

  beforeAll(async () => {
    off = await createTestApp(oidcEnv(provider, { LOCAL_LOGIN: 'off' }));
    await createUser(off.database.db, { username: ADA });
  });

  afterAll(async () => {
    await off?.close();
  });

  it('refuses the password login and change with a clear message, and tells the web', async () => {
    const user = await createUser(off.database.db);
    const before = await off.database.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const response = await off.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: user.username, password: PASSWORD },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.localLoginOff });
    const after = await off.database.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
    expect((await off.app.inject({ url: '/api/config' })).json()).toMatchObject({
      localLogin: false,
      oidcName: 'Test IdP',
    });
  });

  it('still logs in through single sign-on, and the password cannot be changed', async () => {
    const { back } = await ssoLogin(off, 'ada');
    const cookie = sessionCookie(back)!;
    expect(cookie).toBeDefined();
    const { csrfToken } = (
      await off.app.inject({ url: '/api/auth/csrf', cookies: { [SESSION_COOKIE]: cookie } })
    ).json<{ csrfToken: string }>();
    const change = await off.app.inject({
      method: 'POST',
      url: '/api/auth/password',
      cookies: { [SESSION_COOKIE]: cookie },
      headers: { [CSRF_HEADER]: csrfToken },
      payload: { currentPassword: PASSWORD, newPassword: 'an entirely new passphrase 42' },
    });
    expect(change.statusCode).toBe(403);
    expect(change.json()).toEqual({ success: false, message: MESSAGES.localLoginOff });
  });
});
