import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, USER_MESSAGES } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createOrganization, createUser, PASSWORD } from './factories.js';

let t: TestContext;
let sysadmin: Session;
let sysadminId: number;
beforeAll(async () => {
  t = await createTestApp();
  const user = await createUser(t.database.db, { systemAdmin: true });
  sysadminId = user.id;
  sysadmin = await login(t.app, user.username, PASSWORD);
});
afterAll(async () => {
  await t.close();
});

const email = () => `New.User-${randomBytes(4).toString('hex')}@Example.org`;
const createAccount = (payload: object, session: Session = sysadmin) =>
  session.request({ method: 'POST', url: '/api/users', payload });
const loginRaw = (username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });

describe('POST /api/users: create an account (system admins)', () => {
  it('creates a registered account with a one-time password that logs in, shown once', async () => {
    const org = await createOrganization(t.database.db);
    const address = email();
    const response = await createAccount({
      username: `  ${address} `,
      firstName: 'New',
      lastName: 'User',
      organizationId: org.id,
    });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({
      success: true,
      message: USER_MESSAGES.userCreated,
      user: {
        username: address.toLowerCase(),
        firstName: 'New',
        lastName: 'User',
        organizationId: org.id,
        organizationName: org.name,
        registered: true,
        active: true,
        isSystemAdmin: false,
        studyCount: 0,
      },
    });
    expect(body.initialPassword).toMatch(/^[\w-]{16,}$/);

    const stored = await t.database.db
      .selectFrom('users')
      .select(['password_hash', 'must_change_password'])
      .where('id', '=', body.user.id)
      .executeTakeFirstOrThrow();
    expect(stored.must_change_password).toBe(true);
    expect(stored.password_hash).toMatch(/^\$argon2id\$/);
    expect(stored.password_hash).not.toContain(body.initialPassword);

    expect((await loginRaw(address, body.initialPassword)).statusCode).toBe(200);
    expect((await loginRaw(address, PASSWORD)).statusCode).toBe(401);
    // The profile does not repeat the password.
    expect(
      JSON.stringify((await sysadmin.request({ method: 'GET', url: `/api/users/${body.user.id}` })).json()),
    ).not.toContain(body.initialPassword);

    const rows = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_type', '=', 'user')
      .where('entity_id', '=', String(body.user.id))
      .where('action', 'in', ['USER_CREATED', 'INITIAL_PASSWORD_ISSUED'])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.action, r.field, r.new_value])).toEqual([
      ['USER_CREATED', null, address.toLowerCase()],
      ['USER_CREATED', 'username', address.toLowerCase()],
      ['USER_CREATED', 'firstName', 'New'],
      ['USER_CREATED', 'lastName', 'User'],
      ['USER_CREATED', 'organizationId', String(org.id)],
      ['USER_CREATED', 'registered', 'true'],
      ['INITIAL_PASSWORD_ISSUED', 'password', null],
    ]);
    expect(rows.every((r) => r.user_id === sysadminId)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(body.initialPassword);
  });

  it('gives every account a different password', async () => {
    const a = (await createAccount({ username: email(), firstName: 'A', lastName: 'A', organizationId: null })).json();
    const b = (await createAccount({ username: email(), firstName: 'B', lastName: 'B', organizationId: null })).json();
    expect(a.initialPassword).not.toBe(b.initialPassword);
  });

  it('refuses a taken email address in any letter case (409) and invalid input with the spec’s messages', async () => {
    const address = email();
    expect(
      (await createAccount({ username: address, firstName: 'A', lastName: 'B', organizationId: null })).statusCode,
    ).toBe(201);
    const taken = await createAccount({
      username: address.toUpperCase(),
      firstName: 'A',
      lastName: 'B',
      organizationId: null,
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({ success: false, message: USER_MESSAGES.usernameTaken });
    const cases: [object, string][] = [
      [{ username: ' ', firstName: 'A', lastName: 'B', organizationId: null }, 'Email Required'],
      [{ username: 'not-an-email', firstName: 'A', lastName: 'B', organizationId: null }, USER_MESSAGES.emailInvalid],
      [{ username: email(), firstName: '', lastName: 'B', organizationId: null }, 'First Name Required'],
      [{ username: email(), firstName: 'A', lastName: ' ', organizationId: null }, 'Last Name Required'],
      [
        { username: email(), firstName: 'A', lastName: 'B', organizationId: 999999 },
        USER_MESSAGES.organizationNotFound,
      ],
    ];
    for (const [payload, message] of cases) {
      const response = await createAccount(payload);
      expect(response.json(), JSON.stringify(payload)).toEqual({ success: false, message });
      expect(response.statusCode).toBe(400);
    }
  });

  it('is for a system admin working as SystemAdmin only', async () => {
    const admin = await login(
      t.app,
      (await createUser(t.database.db, { globalRoles: ['StudyAdmin'] })).username,
      PASSWORD,
    );
    const denied = await createAccount(
      { username: email(), firstName: 'A', lastName: 'B', organizationId: null },
      admin,
    );
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    // A system admin who also holds StudyAdmin and works as StudyAdmin is refused too.
    const both = await createUser(t.database.db, { systemAdmin: true, globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, both.username, PASSWORD);
    await session.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: 2 } });
    expect(
      (await createAccount({ username: email(), firstName: 'A', lastName: 'B', organizationId: null }, session))
        .statusCode,
    ).toBe(403);
  });
});

describe('PATCH /api/users/{id}/deactivate and /activate', () => {
  it('deactivation stops the user’s sessions and logins; activation lets them log in again; both audited', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, user.username, PASSWORD);
    expect((await session.request({ method: 'GET', url: '/api/studies/list' })).statusCode).toBe(200);

    const deactivated = await sysadmin.request({
      method: 'PATCH',
      url: `/api/users/${user.id}/deactivate`,
      payload: { reason: 'Left the CRO' },
    });
    expect(deactivated.statusCode, deactivated.body).toBe(200);
    expect(deactivated.json()).toMatchObject({
      success: true,
      message: USER_MESSAGES.userDeactivated,
      user: { id: user.id, active: false },
    });
    const stale = await session.request({ method: 'GET', url: '/api/studies/list' });
    expect(stale.statusCode).toBe(401);
    expect(stale.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
    expect((await loginRaw(user.username, PASSWORD)).statusCode).toBe(401);
    const open = await t.database.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', user.id)
      .where('ended_at', 'is', null)
      .execute();
    expect(open).toEqual([]);

    const again = await sysadmin.request({ method: 'PATCH', url: `/api/users/${user.id}/deactivate` });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ success: false, message: USER_MESSAGES.alreadyDeactivated });

    const activated = await sysadmin.request({ method: 'PATCH', url: `/api/users/${user.id}/activate`, payload: {} });
    expect(activated.json()).toMatchObject({
      success: true,
      message: USER_MESSAGES.userActivated,
      user: { active: true },
    });
    expect((await loginRaw(user.username, PASSWORD)).statusCode).toBe(200);
    // The old session does not come back.
    expect((await session.request({ method: 'GET', url: '/api/studies/list' })).statusCode).toBe(401);

    const rows = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_id', '=', String(user.id))
      .where('action', 'in', ['USER_DEACTIVATED', 'USER_ACTIVATED'])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.action, r.field, r.old_value, r.new_value, r.reason, r.user_id])).toEqual([
      ['USER_DEACTIVATED', 'active', 'true', 'false', 'Left the CRO', sysadminId],
      ['USER_ACTIVATED', 'active', 'false', 'true', null, sysadminId],
    ]);
  });

  it('refuses one’s own account, a missing user and an account already active', async () => {
    const own = await sysadmin.request({ method: 'PATCH', url: `/api/users/${sysadminId}/deactivate` });
    expect(own.statusCode).toBe(403);
    expect(own.json()).toEqual({ success: false, message: USER_MESSAGES.ownAccountStatus });
    const missing = await sysadmin.request({ method: 'PATCH', url: '/api/users/999999/deactivate' });
    expect(missing.json()).toEqual({ success: false, message: USER_MESSAGES.userNotFound });
    const user = await createUser(t.database.db);
    const active = await sysadmin.request({ method: 'PATCH', url: `/api/users/${user.id}/activate` });
    expect(active.statusCode).toBe(409);
    expect(active.json()).toEqual({ success: false, message: USER_MESSAGES.alreadyActive });
  });
});
