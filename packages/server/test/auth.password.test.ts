import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { CSRF_HEADER, LOGIN_THROTTLE, MESSAGES, roleByName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createStudy, createUser, PASSWORD } from './factories.js';

let t: TestContext;
let sysadmin: Session;
beforeAll(async () => {
  t = await createTestApp();
  const admin = await createUser(t.database.db, { systemAdmin: true });
  sysadmin = await login(t.app, admin.username, PASSWORD);
});
afterAll(async () => {
  await t.close();
});

const NEW_PASSWORD = 'a brand new passphrase 42';
const forced = { success: false, message: MESSAGES.passwordChangeRequired };

const loginRaw = (username: string, password: string, remoteAddress = '127.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password }, remoteAddress });

const changePassword = (session: Session, payload: object, remoteAddress?: string) =>
  session.request({ method: 'POST', url: '/api/auth/password', payload, ...(remoteAddress && { remoteAddress }) });

/** An account as POST /api/users creates it (one-time password, must change it), with DM access to a study. */
async function createdAccount(): Promise<{ id: number; username: string; initialPassword: string }> {
  const username = `new.user-${randomBytes(4).toString('hex')}@example.org`;
  const response = await sysadmin.request({
    method: 'POST',
    url: '/api/users',
    payload: { username, firstName: 'New', lastName: 'User', organizationId: null },
  });
  expect(response.statusCode, response.body).toBe(201);
  const body = response.json<{ user: { id: number }; initialPassword: string }>();
  const study = await createStudy(t.database.db);
  await t.database.db
    .insertInto('study_access')
    .values({ user_id: body.user.id, study_id: study.id, role_id: roleByName('DM').id })
    .execute();
  return { id: body.user.id, username, initialPassword: body.initialPassword };
}

async function storedUser(id: number) {
  return t.database.db
    .selectFrom('users')
    .select(['password_hash', 'must_change_password', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

async function openSessions(userId: number): Promise<number> {
  const row = await t.database.db
    .selectFrom('sessions')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .executeTakeFirstOrThrow();
  return row.n;
}

async function auditRows(userId: number) {
  return t.database.db
    .selectFrom('audit_events')
    .selectAll()
    .where('entity_type', '=', 'user')
    .where('entity_id', '=', String(userId))
    .orderBy('id')
    .execute();
}

describe('POST /api/auth/password', () => {
  it('is 401 when logged out', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/auth/password',
      payload: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
  });

  it('is refused without the CSRF token, changing nothing', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    const before = await storedUser(user.id);
    const response = await session.request({
      method: 'POST',
      url: '/api/auth/password',
      payload: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      headers: { [CSRF_HEADER]: '' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.invalidCsrf });
    expect(await storedUser(user.id)).toEqual(before);
  });

  it('rejects a malformed body with 400', async () => {
    const user = await createUser(t.database.db);
    const session = await login(t.app, user.username, PASSWORD);
    const missing = await changePassword(session, { newPassword: NEW_PASSWORD });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ success: false, message: 'currentPassword is required' });
    const empty = await changePassword(session, { currentPassword: '', newPassword: NEW_PASSWORD });
    expect(empty.json()).toEqual({ success: false, message: MESSAGES.currentPasswordRequired });
  });
});

describe('an account created with a one-time password', () => {
  it('logs in with mustChangePassword and is refused everything but the password change', async () => {
    const account = await createdAccount();
    const response = await loginRaw(account.username, account.initialPassword);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, user: { id: account.id, mustChangePassword: true } });
    const session = await login(t.app, account.username, account.initialPassword);

    const info = await session.request({ method: 'GET', url: '/api/users/info' });
    expect(info.statusCode).toBe(200);
    expect(info.json()).toMatchObject({ mustChangePassword: true, registered: true });
    expect((await session.request({ method: 'GET', url: '/api/auth/csrf' })).statusCode).toBe(200);
    expect((await session.request({ method: 'GET', url: '/api/config' })).statusCode).toBe(200);

    for (const request of [
      { method: 'GET', url: '/api/studies/list' },
      { method: 'GET', url: '/api/users/availableRoles' },
      { method: 'PUT', url: '/api/users/workAs', payload: { roleId: roleByName('DM').id } },
      { method: 'PUT', url: `/api/users/${account.id}`, payload: { firstName: 'Changed' } },
    ] as const) {
      const refused = await session.request(request);
      expect(refused.statusCode, `${request.method} ${request.url}`).toBe(403);
      expect(refused.json()).toEqual(forced);
    }
    expect((await storedUser(account.id)).must_change_password).toBe(true);
    // Logout stays open.
    expect((await session.request({ method: 'POST', url: '/api/auth/logout' })).statusCode).toBe(200);
  });

  it('refuses even a system admin working as SystemAdmin until the password is changed', async () => {
    const admin = await createUser(t.database.db, { systemAdmin: true });
    await t.database.db.updateTable('users').set({ must_change_password: true }).where('id', '=', admin.id).execute();
    const session = await login(t.app, admin.username, PASSWORD);
    const response = await session.request({ method: 'GET', url: '/api/users' });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(forced);
  });

  it('keeps a wrong current password from changing anything (400)', async () => {
    const account = await createdAccount();
    const session = await login(t.app, account.username, account.initialPassword);
    const other = await login(t.app, account.username, account.initialPassword);
    const before = await storedUser(account.id);
    const response = await changePassword(session, { currentPassword: 'not the password', newPassword: NEW_PASSWORD });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.currentPasswordIncorrect });
    expect(await storedUser(account.id)).toEqual(before);
    expect((await other.request({ method: 'GET', url: '/api/users/info' })).statusCode).toBe(200);
    expect((await session.request({ method: 'GET', url: '/api/studies/list' })).json()).toEqual(forced);
    expect((await loginRaw(account.username, account.initialPassword)).statusCode).toBe(200);
    expect((await loginRaw(account.username, NEW_PASSWORD)).statusCode).toBe(401);
    const failed = (await auditRows(account.id)).filter((r) => r.action === 'PASSWORD_CHANGE_FAILED');
    expect(failed.map((r) => [r.user_id, r.new_value])).toEqual([[account.id, 'current password incorrect']]);
  });

  it('applies each password rule with its message (400), changing nothing', async () => {
    const account = await createdAccount();
    const session = await login(t.app, account.username, account.initialPassword);
    const before = await storedUser(account.id);
    const localPart = account.username.split('@')[0] ?? '';
    const cases: [string, string][] = [
      ['short pw', MESSAGES.passwordTooShort],
      ['', MESSAGES.passwordTooShort],
      ['x'.repeat(1025), MESSAGES.passwordTooLong],
      [account.initialPassword, MESSAGES.passwordUnchanged],
      [`my ${localPart.toUpperCase()} password`, MESSAGES.passwordContainsUsername],
    ];
    for (const [newPassword, message] of cases) {
      const response = await changePassword(session, { currentPassword: account.initialPassword, newPassword });
      expect(response.statusCode, message).toBe(400);
      expect(response.json()).toEqual({ success: false, message });
    }
    expect(await storedUser(account.id)).toEqual(before);
    // Breaking a rule is not a guess at the current password: no failure is counted.
    const failures = await t.database.db
      .selectFrom('login_failures')
      .select('id')
      .where('username', '=', account.username)
      .execute();
    expect(failures).toEqual([]);
  });

  it('changes the password: other sessions end, this one goes on, routes open, only the new password logs in', async () => {
    const account = await createdAccount();
    const session = await login(t.app, account.username, account.initialPassword);
    const other = await login(t.app, account.username, account.initialPassword);
    const before = await storedUser(account.id);
    expect(await openSessions(account.id)).toBe(2);

    const response = await changePassword(session, {
      currentPassword: account.initialPassword,
      newPassword: NEW_PASSWORD,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ success: true, message: MESSAGES.passwordChanged });

    const after = await storedUser(account.id);
    expect(after.must_change_password).toBe(false);
    expect(after.password_hash).toMatch(/^\$argon2id\$/);
    expect(after.password_hash).not.toBe(before.password_hash);
    expect(after.password_hash).not.toContain(NEW_PASSWORD);

    expect((await other.request({ method: 'GET', url: '/api/users/info' })).statusCode).toBe(401);
    expect(await openSessions(account.id)).toBe(1);
    const info = await session.request({ method: 'GET', url: '/api/users/info' });
    expect(info.json()).toMatchObject({ id: account.id, mustChangePassword: false });
    const studies = await session.request({ method: 'GET', url: '/api/studies/list' });
    expect(studies.statusCode, studies.body).toBe(200);
    // The same session's CSRF token still works for mutations.
    const workAs = await session.request({
      method: 'PUT',
      url: '/api/users/workAs',
      payload: { roleId: roleByName('DM').id },
    });
    expect(workAs.statusCode, workAs.body).toBe(200);

    expect((await loginRaw(account.username, account.initialPassword)).statusCode).toBe(401);
    const fresh = await loginRaw(account.username, NEW_PASSWORD);
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json()).toMatchObject({ user: { mustChangePassword: false } });

    const rows = (await auditRows(account.id)).filter((r) => ['PASSWORD_CHANGED', 'SESSIONS_ENDED'].includes(r.action));
    expect(rows.map((r) => [r.action, r.field, r.old_value, r.new_value])).toEqual([
      ['PASSWORD_CHANGED', 'password', null, null],
      ['PASSWORD_CHANGED', 'mustChangePassword', 'true', 'false'],
      ['SESSIONS_ENDED', 'sessions', null, '1 other session(s) ended by the password change'],
    ]);
    expect(rows.every((r) => r.user_id === account.id && r.username === account.username)).toBe(true);
    const everything = JSON.stringify(await t.database.db.selectFrom('audit_events').selectAll().execute());
    expect(everything).not.toContain(NEW_PASSWORD);
    expect(everything).not.toContain(account.initialPassword);
  });

  it('a second change needs the new password as the current one', async () => {
    const account = await createdAccount();
    const session = await login(t.app, account.username, account.initialPassword);
    expect(
      (await changePassword(session, { currentPassword: account.initialPassword, newPassword: NEW_PASSWORD }))
        .statusCode,
    ).toBe(200);
    const again = await changePassword(session, {
      currentPassword: account.initialPassword,
      newPassword: 'yet another passphrase',
    });
    expect(again.json()).toEqual({ success: false, message: MESSAGES.currentPasswordIncorrect });
    const ok = await changePassword(session, { currentPassword: NEW_PASSWORD, newPassword: 'yet another passphrase' });
    expect(ok.statusCode).toBe(200);
  });
});

describe('any user may change their own password', () => {
  it('works without the flag, and leaves it cleared', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, user.username, PASSWORD);
    const response = await changePassword(session, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(response.statusCode, response.body).toBe(200);
    expect((await storedUser(user.id)).must_change_password).toBe(false);
    const rows = (await auditRows(user.id)).filter((r) => r.action === 'PASSWORD_CHANGED');
    expect(rows.map((r) => r.field)).toEqual(['password']);
    expect((await loginRaw(user.username, NEW_PASSWORD)).statusCode).toBe(200);
  });
});

describe('throttling', () => {
  it('counts wrong current passwords as login failures: 429 after the limit, for the change and the login', async () => {
    const account = await createdAccount();
    const ip = '10.20.30.40';
    const session = await login(t.app, account.username, account.initialPassword);
    const before = await storedUser(account.id);
    for (let i = 0; i < LOGIN_THROTTLE.maxFailures; i++) {
      const response = await changePassword(session, { currentPassword: `guess ${i}`, newPassword: NEW_PASSWORD }, ip);
      expect(response.statusCode).toBe(400);
    }
    const blocked = await changePassword(
      session,
      { currentPassword: account.initialPassword, newPassword: NEW_PASSWORD },
      ip,
    );
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({ success: false, message: MESSAGES.tooManyLogins });
    expect(await storedUser(account.id)).toEqual(before);
    // The login from that IP is throttled too; from another IP the change goes through.
    expect((await loginRaw(account.username, account.initialPassword, ip)).statusCode).toBe(429);
    const elsewhere = await changePassword(
      session,
      { currentPassword: account.initialPassword, newPassword: NEW_PASSWORD },
      '10.20.30.41',
    );
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    const actions = (await auditRows(account.id)).map((r) => r.action);
    expect(actions.filter((a) => a === 'PASSWORD_CHANGE_FAILED')).toHaveLength(LOGIN_THROTTLE.maxFailures);
    expect(actions).toContain('PASSWORD_CHANGE_THROTTLED');
  });
});
