import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, ROLES, USER_MESSAGES, roleByName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createOrganization, createStudy, createUser, PASSWORD } from './factories.js';

let t: TestContext;
let admin: Session;
let adminId: number;
let sysadmin: Session;
beforeAll(async () => {
  t = await createTestApp();
  const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
  adminId = user.id;
  admin = await login(t.app, user.username, PASSWORD);
  sysadmin = await login(t.app, (await createUser(t.database.db, { systemAdmin: true })).username, PASSWORD);
});
afterAll(async () => {
  await t.close();
});

const tag = () => randomBytes(4).toString('hex');
const get = (session: Session, url: string) => session.request({ method: 'GET', url });

async function named(first: string, last: string, spec: Parameters<typeof createUser>[1] = {}) {
  const user = await createUser(t.database.db, { username: `${first.toLowerCase()}.${tag()}@example.org`, ...spec });
  await t.database.db
    .updateTable('users')
    .set({ first_name: first, last_name: last })
    .where('id', '=', user.id)
    .execute();
  return user;
}

describe('every users route: 401 logged out, 403 for a role without permission', () => {
  it('answers with the exact bodies', async () => {
    const study = await createStudy(t.database.db);
    const target = await createUser(t.database.db);
    const reader = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role: 'CR' }] });
    const readerSession = await login(t.app, reader.username, PASSWORD);
    const change = { studyId: study.id, userId: target.id, roleId: 8 };
    const routes: [string, string, object | undefined][] = [
      ['GET', '/api/users', undefined],
      ['POST', '/api/users/list', { name: 'x' }],
      ['POST', `/api/users/inStudy/${study.id}`, {}],
      ['GET', `/api/users/${target.id}`, undefined],
      ['PUT', `/api/users/${target.id}`, { firstName: 'A' }],
      ['GET', `/api/users/${target.id}/studyAccess`, undefined],
      ['PATCH', '/api/users/studies/add', change],
      ['PUT', '/api/users/studies/remove', change],
      ['GET', '/api/organizations', undefined],
      ['GET', '/api/permissions/roles', undefined],
      ['POST', '/api/users', { username: 'new@example.org', firstName: 'N', lastName: 'U', organizationId: null }],
      ['PATCH', `/api/users/${target.id}/deactivate`, {}],
      ['PATCH', `/api/users/${target.id}/activate`, {}],
    ];
    for (const [method, url, payload] of routes) {
      const anonymous = await t.app.inject({ method, url, ...(payload && { payload }) });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
      expect(anonymous.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
      const denied = await readerSession.request({ method, url, ...(payload && { payload }) });
      expect(denied.statusCode, `${method} ${url}`).toBe(403);
      expect(denied.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
    // System-admin routes refuse a study admin too.
    for (const [method, url, payload] of routes.slice(-3)) {
      const denied = await admin.request({ method, url, ...(payload && { payload }) });
      expect(denied.statusCode, `${method} ${url}`).toBe(403);
      expect(denied.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
  });
});

describe('GET /api/users', () => {
  it('lists users with organization, study count and registration, sorted by username', async () => {
    const org = await createOrganization(t.database.db);
    const a = await createStudy(t.database.db);
    const b = await createStudy(t.database.db);
    const key = tag();
    const user = await named('Zed', `Key${key}`, {
      studyRoles: [
        { studyId: a.id, role: 'CR' },
        { studyId: a.id, role: 'PM' },
        { studyId: b.id, role: 'PM' },
      ],
    });
    await t.database.db.updateTable('users').set({ organization_id: org.id }).where('id', '=', user.id).execute();
    const body = (await get(admin, `/api/users?name=key${key}`)).json();
    expect(body).toEqual({
      success: true,
      total: 1,
      users: [
        {
          id: user.id,
          username: user.username,
          firstName: 'Zed',
          lastName: `Key${key}`,
          lastLoginDt: null,
          organizationId: org.id,
          organizationName: org.name,
          studyCount: 2,
          registered: true,
          active: true,
          isSystemAdmin: false,
        },
      ],
    });
  });

  it('filters by role (id or name), name (first, last, full or username), registered and exclude', async () => {
    const study = await createStudy(t.database.db);
    const key = tag();
    const reader = await named('Rita', `R${key}`, { studyRoles: [{ studyId: study.id, role: 'CR' }] });
    const pm = await named('Paula', `P${key}`, { studyRoles: [{ studyId: study.id, role: 'PM' }] });
    const fresh = await named('Nina', `N${key}`, { registered: false });
    const ids = async (query: string) =>
      ((await get(admin, `/api/users?name=${key}&${query}`)).json().users as { id: number }[]).map((u) => u.id);
    expect(await ids('role=8')).toEqual([reader.id]);
    expect(await ids('role=cr')).toEqual([reader.id]);
    expect(await ids('role=PM')).toEqual([pm.id]);
    expect(await ids('registered=false')).toEqual([fresh.id]);
    expect((await ids('registered=true')).sort()).toEqual([reader.id, pm.id].sort());
    expect(await ids(`exclude=${reader.id},${pm.id}`)).toEqual([fresh.id]);
    expect(
      (
        (await get(admin, `/api/users?name=${encodeURIComponent(`rita r${key}`)}`)).json().users as { id: number }[]
      ).map((u) => u.id),
    ).toEqual([reader.id]);
    expect(
      (
        (await get(admin, `/api/users?name=${encodeURIComponent(reader.username.slice(0, 12))}`)).json().users as {
          id: number;
        }[]
      ).map((u) => u.id),
    ).toContain(reader.id);
    const sysadmins = (await get(admin, '/api/users?role=SystemAdmin')).json().users as { isSystemAdmin: boolean }[];
    expect(sysadmins.length).toBeGreaterThan(0);
    expect(sysadmins.every((u) => u.isSystemAdmin)).toBe(true);
  });

  it('pages and sorts in SQL; refuses unknown roles, sort keys, page sizes and exclude lists', async () => {
    const key = tag();
    for (const first of ['b', 'a', 'd', 'c']) await named(first, key);
    const page = (await get(admin, `/api/users?name=${key}&sort=-firstName&pageSize=10&page=1`)).json();
    expect(page.users.map((u: { firstName: string }) => u.firstName)).toEqual(['d', 'c', 'b', 'a']);
    expect(page.total).toBe(4);
    expect((await get(admin, `/api/users?name=${key}&pageSize=10&page=3`)).json()).toEqual({
      success: true,
      users: [],
      total: 4,
    });
    expect((await get(admin, '/api/users?role=Wizard')).json()).toEqual({
      success: false,
      message: 'Cannot decode role from Wizard',
    });
    expect((await get(admin, '/api/users?role=99')).json()).toEqual({
      success: false,
      message: 'Cannot decode role from 99',
    });
    expect((await get(admin, '/api/users?sort=password')).json()).toEqual({
      success: false,
      message: 'Cannot decode sort from password',
    });
    expect((await get(admin, '/api/users?pageSize=7')).statusCode).toBe(400);
    expect((await get(admin, '/api/users?exclude=1;drop')).json()).toEqual({
      success: false,
      message: 'exclude must be a comma-separated list of user ids',
    });
    expect((await get(admin, '/api/users?registered=maybe')).json()).toEqual({
      success: false,
      message: 'Cannot decode registered from maybe',
    });
  });
});

describe('POST /api/users/list and POST /api/users/inStudy/{studyId}', () => {
  it('searches by name, optionally only users with access to one study', async () => {
    const study = await createStudy(t.database.db);
    const key = tag();
    const inside = await named('In', key, { studyRoles: [{ studyId: study.id, role: 'DM' }] });
    await named('Out', key);
    const all = (await admin.request({ method: 'POST', url: '/api/users/list', payload: { name: key } })).json();
    expect(all.total).toBe(2);
    const filtered = (
      await admin.request({ method: 'POST', url: '/api/users/list', payload: { name: key, filterByStudyId: study.id } })
    ).json();
    expect(filtered.users.map((u: { id: number }) => u.id)).toEqual([inside.id]);
    const noBody = (await admin.request({ method: 'POST', url: '/api/users/list' })).json();
    expect(noBody.total).toBeGreaterThanOrEqual(2);
    const missing = await admin.request({
      method: 'POST',
      url: '/api/users/list',
      payload: { filterByStudyId: 999999 },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ success: false, message: 'Study not found' });
  });

  it('lists the active users of a study with their roles, optionally by role; study scope applies', async () => {
    const study = await createStudy(t.database.db);
    const elsewhere = await createStudy(t.database.db);
    const reader = await named('Reader', tag(), { studyRoles: [{ studyId: study.id, role: 'CR' }] });
    const lab = await named('Lab', tag(), { studyRoles: [{ studyId: study.id, role: 'LabTech' }] });
    await named('Gone', tag(), { active: false, studyRoles: [{ studyId: study.id, role: 'CR' }] });
    const url = `/api/users/inStudy/${study.id}`;
    const everyone = (await admin.request({ method: 'POST', url, payload: {} })).json();
    expect(everyone.users.map((u: { id: number; roleName: string }) => [u.id, u.roleName])).toEqual([
      [reader.id, 'CR'],
      [lab.id, 'LabTech'],
    ]);
    expect(everyone.users[0]).toEqual({
      id: reader.id,
      username: reader.username,
      firstName: 'Reader',
      lastName: expect.any(String),
      roleId: 8,
      roleName: 'CR',
      organizationName: null,
    });
    const noBody = await admin.request({ method: 'POST', url });
    expect(noBody.json()).toEqual(everyone);
    const readers = (await admin.request({ method: 'POST', url, payload: { roleIdFilter: 8 } })).json();
    expect(readers.users.map((u: { id: number }) => u.id)).toEqual([reader.id]);
    expect((await admin.request({ method: 'POST', url, payload: { roleIdFilter: [8, 9] } })).json().users).toHaveLength(
      2,
    );

    // A DM edits cases of its own study (S_CaseListTab_EditCase): allowed there, 404 elsewhere.
    const dm = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role: 'DM' }] });
    const dmSession = await login(t.app, dm.username, PASSWORD);
    expect((await dmSession.request({ method: 'POST', url, payload: { roleIdFilter: 8 } })).statusCode).toBe(200);
    const hidden = await dmSession.request({ method: 'POST', url: `/api/users/inStudy/${elsewhere.id}`, payload: {} });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toEqual({ success: false, message: 'Study not found' });
  });
});

describe('GET and PUT /api/users/{id}: the user profile', () => {
  it('answers the profile; 404 User not found', async () => {
    const user = await named('Ada', 'Lovelace');
    expect((await get(admin, `/api/users/${user.id}`)).json()).toMatchObject({
      id: user.id,
      username: user.username,
      firstName: 'Ada',
      lastName: 'Lovelace',
      organizationId: null,
      registered: true,
      active: true,
    });
    const missing = await get(admin, '/api/users/999999');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ success: false, message: USER_MESSAGES.userNotFound });
  });

  it('saving registers the user, changes only the fields sent, and audits each field with old and new values', async () => {
    const org = await createOrganization(t.database.db);
    const user = await createUser(t.database.db, { registered: false });
    const response = await admin.request({
      method: 'PUT',
      url: `/api/users/${user.id}`,
      payload: { firstName: '  Grace ', organizationId: org.id },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      success: true,
      message: USER_MESSAGES.userUpdated,
      user: {
        firstName: 'Grace',
        lastName: user.username,
        organizationId: org.id,
        organizationName: org.name,
        registered: true,
      },
    });
    const rows = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_type', '=', 'user')
      .where('entity_id', '=', String(user.id))
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.action, r.field, r.old_value, r.new_value, r.user_id])).toEqual([
      ['USER_UPDATED', 'firstName', 'Test', 'Grace', adminId],
      ['USER_UPDATED', 'organizationId', null, String(org.id), adminId],
      ['USER_REGISTERED', 'registered', 'false', 'true', adminId],
    ]);
    // The user can now use the product.
    const session = await login(t.app, user.username, PASSWORD);
    expect((await get(session, '/api/users/info')).json().registered).toBe(true);
  });

  it('applies the profile rules with the spec’s messages', async () => {
    const user = await createUser(t.database.db);
    const put = (payload: object) => admin.request({ method: 'PUT', url: `/api/users/${user.id}`, payload });
    expect((await put({ firstName: ' ' })).json()).toEqual({ success: false, message: 'First Name Required' });
    expect((await put({ lastName: '' })).json()).toEqual({ success: false, message: 'Last Name Required' });
    expect((await put({ organizationId: 999999 })).json()).toEqual({
      success: false,
      message: USER_MESSAGES.organizationNotFound,
    });
    expect((await put({ organizationId: 'acme' })).statusCode).toBe(400);
    const missing = await admin.request({ method: 'PUT', url: '/api/users/999999', payload: { firstName: 'X' } });
    expect(missing.json()).toEqual({ success: false, message: USER_MESSAGES.userNotFound });
    // A user without names cannot be registered by a save that leaves them empty.
    const nameless = await createUser(t.database.db, { registered: false });
    await t.database.db.updateTable('users').set({ first_name: null }).where('id', '=', nameless.id).execute();
    const refused = await admin.request({
      method: 'PUT',
      url: `/api/users/${nameless.id}`,
      payload: { lastName: 'Only' },
    });
    expect(refused.json()).toEqual({ success: false, message: 'First Name Required' });
  });
});

describe('study access', () => {
  const add = (session: Session, payload: object) =>
    session.request({ method: 'PATCH', url: '/api/users/studies/add', payload });
  const remove = (session: Session, payload: object) =>
    session.request({ method: 'PUT', url: '/api/users/studies/remove', payload });

  it('adds and removes a role in a study, audited, and lists the user’s access', async () => {
    const study = await createStudy(t.database.db);
    const user = await createUser(t.database.db);
    const change = { studyId: study.id, userId: user.id, roleId: roleByName('CR').id };
    const added = await add(admin, change);
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json()).toEqual({
      success: true,
      message: USER_MESSAGES.studyAccessAdded,
      studyAccess: [{ studyId: study.id, studyName: study.name, roleId: 8, roleName: 'CR' }],
    });
    expect((await get(admin, `/api/users/${user.id}/studyAccess`)).json()).toEqual([
      { studyId: study.id, studyName: study.name, roleId: 8, roleName: 'CR' },
    ]);

    const duplicate = await add(admin, change);
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({ success: false, message: USER_MESSAGES.studyAccessExists });

    const removed = await remove(admin, change);
    expect(removed.json()).toEqual({ success: true, message: USER_MESSAGES.studyAccessRemoved, studyAccess: [] });
    const again = await remove(admin, change);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ success: false, message: USER_MESSAGES.studyAccessNotFound });

    const rows = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_id', '=', String(user.id))
      .where('action', 'like', 'STUDY_ACCESS_%')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.action, r.study_id, r.field, r.old_value, r.new_value, r.user_id])).toEqual([
      ['STUDY_ACCESS_GRANTED', study.id, 'studyAccess', null, 'CR', adminId],
      ['STUDY_ACCESS_REVOKED', study.id, 'studyAccess', 'CR', null, adminId],
    ]);
  });

  it('grants the assignable roles; Site, NOTO and LIS only a system admin grants and revokes (issue 26)', async () => {
    const study = await createStudy(t.database.db);
    const user = await createUser(t.database.db);
    for (const role of ROLES) {
      const change = { studyId: study.id, userId: user.id, roleId: role.id };
      const response = await add(admin, change);
      if (['ISC', 'DM', 'PM', 'SPONSOR', 'LabTech', 'UPLOADER', 'CR'].includes(role.name)) {
        expect(response.statusCode, role.name).toBe(200);
        continue;
      }
      expect(response.statusCode, role.name).toBe(400);
      expect(response.json()).toEqual({ success: false, message: USER_MESSAGES.roleNotAssignable });
      const bySysadmin = await add(sysadmin, change);
      if (['Site', 'NOTO', 'LIS'].includes(role.name)) {
        expect(bySysadmin.statusCode, role.name).toBe(200);
        // A study admin cannot cut it off; a system admin can.
        expect((await remove(admin, change)).statusCode, role.name).toBe(400);
        expect((await remove(sysadmin, change)).statusCode, role.name).toBe(200);
      } else {
        expect(bySysadmin.statusCode, role.name).toBe(400);
        expect(bySysadmin.json()).toEqual({ success: false, message: USER_MESSAGES.roleNotAssignable });
      }
    }
    expect((await add(admin, { studyId: study.id, userId: user.id, roleId: 77 })).json()).toEqual({
      success: false,
      message: USER_MESSAGES.roleNotAssignable,
    });
  });

  it('refuses a missing user or study, a deactivated user, one’s own access and malformed bodies', async () => {
    const study = await createStudy(t.database.db);
    const user = await createUser(t.database.db);
    const inactive = await createUser(t.database.db, { active: false });
    const expectBody = async (
      p: Promise<{ statusCode: number; json: () => unknown }>,
      status: number,
      message: string,
    ) => {
      const response = await p;
      expect(response.json()).toEqual({ success: false, message });
      expect(response.statusCode).toBe(status);
    };
    await expectBody(add(admin, { studyId: study.id, userId: 999999, roleId: 8 }), 404, USER_MESSAGES.userNotFound);
    await expectBody(add(admin, { studyId: 999999, userId: user.id, roleId: 8 }), 404, 'Study not found');
    await expectBody(
      add(admin, { studyId: study.id, userId: inactive.id, roleId: 8 }),
      409,
      USER_MESSAGES.accountDeactivated,
    );
    await expectBody(add(admin, { studyId: study.id, userId: adminId, roleId: 8 }), 403, USER_MESSAGES.ownStudyAccess);
    await expectBody(add(admin, { studyId: study.id, userId: user.id }), 400, USER_MESSAGES.chooseRole);
    // Issue 9: roleId 0 read 'roleId must be at least 0'.
    await expectBody(add(admin, { studyId: study.id, userId: user.id, roleId: 0 }), 400, USER_MESSAGES.chooseRole);
    await expectBody(add(admin, { studyId: 'one', userId: user.id, roleId: 8 }), 400, 'studyId must be number');
  });
});

describe('client input never causes a 500', () => {
  it('answers out-of-range ids and odd bodies with 4xx', async () => {
    const study = await createStudy(t.database.db);
    const user = await createUser(t.database.db);
    const huge = 99_999_999_999;
    const attempts: [string, string, unknown][] = [
      ['PATCH', '/api/users/studies/add', { studyId: huge, userId: user.id, roleId: 8 }],
      ['PATCH', '/api/users/studies/add', { studyId: study.id, userId: huge, roleId: 8 }],
      ['PUT', '/api/users/studies/remove', { studyId: study.id, userId: user.id, roleId: huge }],
      ['PUT', `/api/users/${user.id}`, { organizationId: huge }],
      ['GET', `/api/users/${huge}`, undefined],
      ['GET', `/api/users?exclude=${huge}`, undefined],
      ['POST', '/api/users/list', { filterByStudyId: huge }],
      ['POST', `/api/users/inStudy/${huge}`, {}],
      ['POST', `/api/users/inStudy/${study.id}`, { roleIdFilter: [huge] }],
      [
        'PUT',
        `/api/studies/${study.id}`,
        {
          pointClasses: {
            value: [{ id: huge, name: 'x', color: '#FFFFFF', sortOrder: 0, enabled: true }],
            reasonForChange: 'r',
          },
        },
      ],
      ['PUT', `/api/studies/${study.id}`, '{"name": '],
      ['POST', '/api/studies', { name: 'x', segments: 1e308 }],
    ];
    for (const [method, url, payload] of attempts) {
      const response = await admin.request({
        method,
        url,
        ...(payload !== undefined && {
          payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
          headers: { 'content-type': 'application/json' },
        }),
      });
      expect(response.statusCode, `${method} ${url} ${response.body}`).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, `${method} ${url} ${response.body}`).toBeLessThan(500);
      expect(response.json().success).toBe(false);
    }
  });
});

describe('GET /api/organizations and /api/permissions/roles', () => {
  it('lists organizations and roles', async () => {
    const org = await createOrganization(t.database.db, `Org ${tag()}`);
    const orgs = (await get(admin, '/api/organizations')).json();
    expect(orgs).toContainEqual({ id: org.id, name: org.name, groupEmail: null });
    const roles = (await get(admin, '/api/permissions/roles')).json();
    expect(roles.map((r: { name: string }) => r.name)).toEqual(ROLES.map((r) => r.name));
    expect(roles[7]).toMatchObject({
      id: 8,
      name: 'CR',
      displayName: 'Central Reader',
      roleType: 'STUDY',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });
});
