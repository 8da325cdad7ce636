import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_HEADER, SESSION_COOKIE, SIGNATURE_MEANINGS, SIGNATURE_MESSAGES } from '@lamina/domain';
import { CookieJar, followProvider, startTestProvider, type TestProvider } from '@lamina/test-support/oidcProvider';
import { OIDC_TRANSACTION_COOKIE } from '../src/platform/auth/oidcTransaction.js';
import { assignReader, createCase, createStudy, createStudyImage, createUser } from './factories.js';
import { createTestApp, type TestContext } from './testApp.js';

/**
 * Issue 30, electronic signatures by a single sign-on account (21 CFR Part 11 §11.200(a)(1)): an
 * account without a Lamina password signs by signing in again at its identity provider — the login
 * URL asks for it afresh (prompt=login, max_age=0), the callback stamps the session only for its own
 * user just authenticated, and the next signature uses the stamp once. Against a real OpenID Connect
 * provider (oidc-provider), as oidc.test.ts.
 */
const APP = 'http://lamina.test';
const CALLBACK = `${APP}/api/auth/oidc/callback`;
const SIGNER = 'sso.signer@example.org';

let provider: TestProvider;
let t: TestContext;
let studyId: number;
let signerId: number;

beforeAll(async () => {
  provider = await startTestProvider(APP, {
    signer: { email: SIGNER, emailVerified: true },
    colleague: { email: 'sso.colleague@example.org', emailVerified: true },
  });
  t = await createTestApp({
    PUBLIC_URL: APP,
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_NAME: 'Test IdP',
  });
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  await db.updateTable('studies').set({ signatures: true }).where('id', '=', studyId).execute();
  signerId = (await createUser(db, { username: SIGNER, studyRoles: [{ studyId, role: 'CR' }] })).id;
  await createUser(db, { username: 'sso.colleague@example.org', studyRoles: [{ studyId, role: 'CR' }] });
  // Single sign-on only: no Lamina password.
  await db.updateTable('users').set({ password_hash: null }).where('id', '=', signerId).execute();
});

afterAll(async () => {
  await t?.close();
  await provider?.close();
});

/** Through the provider as `account`: the app's answer at the callback. */
async function throughProvider(jar: CookieJar, start: string, account: string, session?: string) {
  const started = await t.app.inject({ url: start, ...(session && { cookies: { [SESSION_COOKIE]: session } }) });
  expect(started.statusCode, started.body).toBe(302);
  const authorize = new URL(String(started.headers.location));
  const transaction = started.cookies.find((c) => c.name === OIDC_TRANSACTION_COOKIE)!.value;
  const callback = new URL(await followProvider(jar, authorize.toString(), CALLBACK, account));
  const back = await t.app.inject({
    url: `${callback.pathname}${callback.search}`,
    cookies: { [OIDC_TRANSACTION_COOKIE]: transaction, ...(session && { [SESSION_COOKIE]: session }) },
  });
  return { authorize, back };
}

/** Logs the signer in through the provider: the session cookie and its CSRF token. */
async function ssoSession(jar: CookieJar) {
  const { back } = await throughProvider(jar, '/api/auth/oidc/login', 'signer');
  const cookie = back.cookies.find((c) => c.name === SESSION_COOKIE && c.value !== '')!.value;
  const { csrfToken } = (await t.app.inject({ url: '/api/auth/csrf', cookies: { [SESSION_COOKIE]: cookie } })).json<{
    csrfToken: string;
  }>();
  return { cookie, csrfToken };
}

async function readCase() {
  const db = t.database.db;
  const caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING' });
  await assignReader(db, { caseId, userId: signerId });
  return caseId;
}

async function markScored(session: { cookie: string; csrfToken: string }, caseId: number, payload: object = {}) {
  return t.app.inject({
    method: 'PATCH',
    url: `/api/cases/${caseId}/status/forward`,
    cookies: { [SESSION_COOKIE]: session.cookie },
    headers: { [CSRF_HEADER]: session.csrfToken },
    payload,
  });
}

async function stamp(cookie: string) {
  const info = await t.app.inject({ url: '/api/users/info', cookies: { [SESSION_COOKIE]: cookie } });
  expect(info.json()).toMatchObject({ signsWith: 'provider' });
  const rows = await t.database.db
    .selectFrom('sessions')
    .select('signature_auth_at')
    .where('user_id', '=', signerId)
    .where('signature_auth_at', 'is not', null)
    .execute();
  return rows.length;
}

describe('signing by signing in again at the identity provider', () => {
  it('refuses a signature without a fresh sign-in; signs once after one; asks again for the next', async () => {
    const jar = new CookieJar();
    const session = await ssoSession(jar);
    const first = await readCase();
    const refused = await markScored(session, first, { signaturePassword: 'a password is no use here' });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ message: SIGNATURE_MESSAGES.reauthenticate });

    // The provider is asked to authenticate afresh, even though it holds the user's session.
    const { authorize, back } = await throughProvider(
      jar,
      `/api/auth/oidc/login?reauth=1&redirect=${encodeURIComponent(`/cases/${first}`)}`,
      'signer',
      session.cookie,
    );
    expect(authorize.searchParams.get('prompt')).toBe('login');
    expect(authorize.searchParams.get('max_age')).toBe('0');
    expect(back.statusCode).toBe(302);
    expect(back.headers.location).toBe(`/cases/${first}`);
    // The same session, not a new login.
    expect(back.cookies.find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    expect(await stamp(session.cookie)).toBe(1);

    const signed = await markScored(session, first);
    expect(signed.statusCode, signed.body).toBe(200);
    const [signature] = await t.database.db.selectFrom('signatures').selectAll().where('case_id', '=', first).execute();
    expect(signature).toMatchObject({
      user_id: signerId,
      method: 'oidc',
      kind: 'READ',
      meaning: SIGNATURE_MEANINGS.READ,
    });
    expect(await stamp(session.cookie)).toBe(0);

    const second = await readCase();
    expect((await markScored(session, second)).statusCode).toBe(401);
  });

  it('stamps nothing when the provider vouches for another user', async () => {
    const jar = new CookieJar();
    const session = await ssoSession(jar);
    const caseId = await readCase();
    const { back } = await throughProvider(
      jar,
      '/api/auth/oidc/login?reauth=1&redirect=/',
      'colleague',
      session.cookie,
    );
    expect(back.statusCode).toBe(302);
    expect(await stamp(session.cookie)).toBe(0);
    const failed = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'new_value'])
      .where('action', '=', 'SIGNATURE_REAUTH_FAILED')
      .execute();
    expect(failed.map((f) => f.new_value)).toContain('the provider vouched for another user');
    expect((await markScored(session, caseId)).statusCode).toBe(401);
  });
});
