import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { CSRF_HEADER, MESSAGES, SESSION_COOKIE } from '@lamina/domain';
import { createTestApp, login, type TestContext } from './testApp.js';
import { createUser, PASSWORD } from './factories.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const loginAs = (username: string, password: string, remoteAddress = '127.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password }, remoteAddress });

async function auditActions(userId: number): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('audit_events')
    .select('action')
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.action);
}

describe('POST /api/auth/login', () => {
  it('logs in with the right password: 200, session cookie, CSRF token and the user', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const response = await loginAs(user.username, PASSWORD);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ success: true, user: { id: user.id, username: user.username, registered: true } });
    expect(body.csrfToken).toMatch(/^[\w-]{40,}$/);
    const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie?.secure).toBeUndefined();
    expect(await auditActions(user.id)).toContain('LOGIN');
  });

  it('answers wrong password and unknown user with the same 401 body', async () => {
    const user = await createUser(t.database.db);
    const wrong = await loginAs(user.username, 'not the password');
    const unknown = await loginAs('nobody@example.org', PASSWORD);
    for (const response of [wrong, unknown]) {
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ success: false, message: 'Invalid username or password' });
      expect(response.cookies.find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    }
    expect(await auditActions(user.id)).toEqual(['LOGIN_FAILED']);
  });

  it('refuses a deactivated account with the same message', async () => {
    const user = await createUser(t.database.db, { active: false });
    const response = await loginAs(user.username, PASSWORD);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.invalidLogin });
  });

  it('accepts the username in any letter case', async () => {
    const user = await createUser(t.database.db, { username: `Case-${Date.now()}@Example.org` });
    expect((await loginAs(user.username.toUpperCase(), PASSWORD)).statusCode).toBe(200);
  });

  it('rejects a malformed body with 400 and a message naming the field', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'x' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ success: false, message: 'password is required' });
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"username":',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ success: false });
  });

  it('throttles after 10 failures for one account from one IP, until the window passes', async () => {
    const user = await createUser(t.database.db);
    const ip = '10.9.8.7';
    for (let i = 0; i < 10; i++) expect((await loginAs(user.username, 'wrong', ip)).statusCode).toBe(401);
    const blocked = await loginAs(user.username, PASSWORD, ip);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({ success: false, message: 'Too many login attempts. Try again later.' });
    // Another IP for the same account is not blocked.
    expect((await loginAs(user.username, PASSWORD, '10.9.8.6')).statusCode).toBe(200);
    // When the window has passed, the account logs in again from that IP.
    await t.database.db
      .updateTable('login_failures')
      .set({ occurred_at: sql<Date>`now() - interval '16 minutes'` })
      .where('username', '=', user.username)
      .execute();
    expect((await loginAs(user.username, PASSWORD, ip)).statusCode).toBe(200);
    expect(await auditActions(user.id)).toContain('LOGIN_FAILED');
  });

  it('a successful login before the limit clears the failures', async () => {
    const user = await createUser(t.database.db);
    const ip = '10.1.1.1';
    for (let i = 0; i < 9; i++) await loginAs(user.username, 'wrong', ip);
    expect((await loginAs(user.username, PASSWORD, ip)).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) await loginAs(user.username, 'wrong', ip);
    expect((await loginAs(user.username, PASSWORD, ip)).statusCode).toBe(200);
  });
});

describe('session, CSRF and logout', () => {
  it('GET /api/users/info is 401 with the spec body without a session, and with a forged cookie', async () => {
    for (const cookies of [{}, { [SESSION_COOKIE]: 'forged-token-forged-token-forged-token' }] as Record<
      string,
      string
    >[]) {
      const response = await t.app.inject({ method: 'GET', url: '/api/users/info', cookies });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ success: false, message: 'Please log in' });
    }
  });

  it('GET /api/auth/csrf returns the session token', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    const response = await session.request({ method: 'GET', url: '/api/auth/csrf' });
    expect(response.json()).toEqual({ csrfToken: session.csrfToken });
  });

  it('refuses a mutation without or with a wrong CSRF token, changing nothing', async () => {
    const user = await createUser(t.database.db, { studyRoles: [], globalRoles: ['StudyAdmin', 'Site'] });
    const session = await login(t.app, user.username, PASSWORD);
    for (const token of ['', 'wrong']) {
      const response = await session.request({
        method: 'PUT',
        url: '/api/users/workAs',
        payload: { roleId: 10 },
        headers: { [CSRF_HEADER]: token },
      });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ success: false, message: 'Invalid CSRF token' });
    }
    const info = await session.request({ method: 'GET', url: '/api/users/info' });
    expect(info.json()).toMatchObject({ workAsRole: { name: 'StudyAdmin' } });
  });

  it('refuses a cross-site Origin on a mutation', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin', 'Site'] });
    const session = await login(t.app, user.username, PASSWORD);
    const response = await session.request({
      method: 'PUT',
      url: '/api/users/workAs',
      payload: { roleId: 10 },
      headers: { origin: 'https://evil.example', host: 'localhost:8080' },
    });
    expect(response.statusCode).toBe(403);
    const same = await session.request({
      method: 'PUT',
      url: '/api/users/workAs',
      payload: { roleId: 10 },
      headers: { origin: 'http://localhost:8080', host: 'localhost:8080' },
    });
    expect(same.statusCode).toBe(200);
  });

  it('logout ends the session on the server and is audited', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    const out = await session.request({ method: 'POST', url: '/api/auth/logout' });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toMatchObject({ success: true });
    const after = await session.request({ method: 'GET', url: '/api/users/info' });
    expect(after.statusCode).toBe(401);
    expect(await auditActions(user.id)).toEqual(['LOGIN', 'LOGOUT']);
  });

  it('an expired session is not accepted', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    await t.database.db
      .updateTable('sessions')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('user_id', '=', user.id)
      .execute();
    expect((await session.request({ method: 'GET', url: '/api/users/info' })).statusCode).toBe(401);
  });

  it('a deactivated user loses their open sessions', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    await t.database.db.updateTable('users').set({ active: false }).where('id', '=', user.id).execute();
    expect((await session.request({ method: 'GET', url: '/api/users/info' })).statusCode).toBe(401);
  });
});

describe('GET /api/auth/session (issue 20: the login page’s check, without a 401)', () => {
  it('answers 200 authenticated false without a session, true with one, false again after logout', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/auth/session' });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.json()).toEqual({ authenticated: false });
    const forged = await t.app.inject({
      method: 'GET',
      url: '/api/auth/session',
      cookies: { [SESSION_COOKIE]: 'x'.repeat(43) },
    });
    expect(forged.json()).toEqual({ authenticated: false });
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    expect((await session.request({ method: 'GET', url: '/api/auth/session' })).json()).toEqual({
      authenticated: true,
    });
    await session.request({ method: 'POST', url: '/api/auth/logout' });
    expect((await session.request({ method: 'GET', url: '/api/auth/session' })).json()).toEqual({
      authenticated: false,
    });
  });
});

describe('GET /api/users/info', () => {
  it('returns the spec User fields for the work-as role', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, user.username, PASSWORD);
    const response = await session.request({ method: 'GET', url: '/api/users/info' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(
      [
        'actions',
        'firstName',
        'id',
        'isSystemAdmin',
        'lastLoginDt',
        'lastName',
        'mustChangePassword',
        'organizationId',
        'organizationName',
        'registered',
        'roles',
        // Lamina's (issue 30): how the user signs electronically.
        'signsWith',
        'studyCount',
        'username',
        'workAsRole',
      ].sort(),
    );
    expect(body.workAsRole).toEqual({ id: 2, name: 'StudyAdmin', displayName: 'Study Admin' });
    expect(body.actions).toContain('UM_ViewUsersPage');
    expect(body.actions).not.toContain('AP_CaseViewer_MarkCaseasScored');
    expect(body.isSystemAdmin).toBe(false);
    expect(body.mustChangePassword).toBe(false);
    expect(body.signsWith).toBe('password');
    expect(typeof body.lastLoginDt).toBe('string');
  });
});
