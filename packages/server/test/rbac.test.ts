import { acceptedImageExtensions } from '@lamina/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, PERMISSION_NAMES, ROLE_PERMISSIONS, roleByName } from '@lamina/domain';
import { buildApp } from '../src/app.js';
import { policy } from '../src/platform/rbac/policy.js';
import { createTestApp, login, type TestContext } from './testApp.js';
import { createStudy, createUser, PASSWORD } from './factories.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('route policies', () => {
  it('every registered route declares an access policy', () => {
    const routes = t.app.registeredRoutes;
    expect(routes.length).toBeGreaterThan(5);
    const missing = routes.filter((r) => !r.hasPolicy).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
  });

  it('a route without a policy is refused, and the coverage check names it', async () => {
    const app = await buildApp({ config: t.config, database: t.database });
    app.get('/api/forgotten', async () => ({ secret: true }));
    app.get('/api/declared', { config: { policy: policy.public() } }, async () => ({ ok: true }));
    await app.ready();
    const response = await app.inject({ method: 'GET', url: '/api/forgotten' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret');
    expect(app.registeredRoutes.filter((r) => !r.hasPolicy).map((r) => r.url)).toContain('/api/forgotten');
    expect((await app.inject({ method: 'GET', url: '/api/declared' })).statusCode).toBe(200);
    await app.close();
  });

  it('unknown API paths answer 404 with the envelope', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/does-not-exist' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ success: false, message: 'Not found' });
  });
});

describe('role → permission map in the database', () => {
  it('matches the domain map for every role', async () => {
    const rows = await t.database.db.selectFrom('role_permissions').select(['role_id', 'permission']).execute();
    for (const [name, permissions] of Object.entries(ROLE_PERMISSIONS)) {
      const id = roleByName(name as keyof typeof ROLE_PERMISSIONS).id;
      const held = rows
        .filter((r) => r.role_id === id)
        .map((r) => r.permission)
        .sort();
      expect(held, name).toEqual([...new Set(permissions)].sort());
    }
    const known = await t.database.db.selectFrom('permissions').select('name').execute();
    expect(known.map((k) => k.name).sort()).toEqual([...PERMISSION_NAMES].sort());
  });
});

describe('work as', () => {
  it('lists the roles held and switches to one of them, audited', async () => {
    const study = await createStudy(t.database.db);
    const user = await createUser(t.database.db, {
      studyRoles: [
        { studyId: study.id, role: 'DM' },
        { studyId: study.id, role: 'PM' },
      ],
    });
    const session = await login(t.app, user.username, PASSWORD);
    const roles = await session.request({ method: 'GET', url: '/api/users/availableRoles' });
    expect(roles.json()).toEqual([
      { id: 4, displayName: 'Data Manager' },
      { id: 5, displayName: 'Project Manager' },
    ]);
    const before = (await session.request({ method: 'GET', url: '/api/users/info' })).json();
    expect(before.workAsRole.name).toBe('DM');
    expect(before.actions).toContain('AP_CaseData_EditSubjectID');

    const switched = await session.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: 5 } });
    expect(switched.statusCode).toBe(200);
    expect(switched.json()).toMatchObject({ success: true, user: { workAsRole: { id: 5, name: 'PM' } } });
    const after = (await session.request({ method: 'GET', url: '/api/users/info' })).json();
    expect(after.workAsRole.name).toBe('PM');
    expect(after.actions).not.toContain('AP_CaseData_EditSubjectID');
    expect(after.actions).toEqual([...ROLE_PERMISSIONS.PM].sort());

    const audit = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', user.id)
      .where('action', '=', 'WORK_AS_ROLE_CHANGED')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ old_value: 'DM', new_value: 'PM', field: 'workAsRole', work_as_role: 'DM' });
  });

  it('refuses a role the user does not hold with 403, changing nothing', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, user.username, PASSWORD);
    const response = await session.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: 1 } });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.roleNotHeld });
    expect((await session.request({ method: 'GET', url: '/api/users/info' })).json().workAsRole.name).toBe(
      'StudyAdmin',
    );
  });

  it('rejects a malformed role id with 400', async () => {
    const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, user.username, PASSWORD);
    for (const payload of [{}, { roleId: 'two' }, { roleId: -1 }, { roleId: 1.5 }]) {
      const response = await session.request({ method: 'PUT', url: '/api/users/workAs', payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().success).toBe(false);
    }
  });

  it('is 401 without a session', async () => {
    const response = await t.app.inject({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: 2 } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: 'Please log in' });
  });

  it('a system admin holds the SystemAdmin role through the flag', async () => {
    const user = await createUser(t.database.db, { systemAdmin: true });
    const session = await login(t.app, user.username, PASSWORD);
    const info = (await session.request({ method: 'GET', url: '/api/users/info' })).json();
    expect(info).toMatchObject({ isSystemAdmin: true, workAsRole: { name: 'SystemAdmin' } });
    expect(info.actions).toContain('S_Main_ViewAllStudies');
  });
});

describe('study scope', () => {
  it('a user sees only the studies assigned to the role they work as; view-all sees every study', async () => {
    const a = await createStudy(t.database.db);
    const b = await createStudy(t.database.db);
    const reader = await createUser(t.database.db, {
      studyRoles: [
        { studyId: a.id, role: 'CR' },
        { studyId: b.id, role: 'DM' },
      ],
    });
    const admin = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const readerSession = await login(t.app, reader.username, PASSWORD);
    const adminSession = await login(t.app, admin.username, PASSWORD);

    const idsOf = async (s: typeof readerSession) =>
      ((await s.request({ method: 'GET', url: '/api/studies/list' })).json().studies as { id: number }[]).map(
        (x) => x.id,
      );
    // Working as CR (role id 8) … first held role is DM (4): switch explicitly.
    await readerSession.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: 8 } });
    expect(await idsOf(readerSession)).toEqual([a.id]);
    expect((await readerSession.request({ method: 'GET', url: `/api/studies/${a.id}` })).statusCode).toBe(200);
    const hidden = await readerSession.request({ method: 'GET', url: `/api/studies/${b.id}` });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toEqual({ success: false, message: 'Study not found' });

    await readerSession.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: 4 } });
    expect(await idsOf(readerSession)).toEqual([b.id]);

    const all = await idsOf(adminSession);
    expect(all).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it('a missing study is 404 and a malformed id is 400', async () => {
    const admin = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, admin.username, PASSWORD);
    expect((await session.request({ method: 'GET', url: '/api/studies/999999' })).json()).toEqual({
      success: false,
      message: 'Study not found',
    });
    expect((await session.request({ method: 'GET', url: '/api/studies/abc' })).statusCode).toBe(400);
  });

  it('an unregistered user is refused permission routes with 403 but may read their info', async () => {
    const study = await createStudy(t.database.db);
    const user = await createUser(t.database.db, {
      registered: false,
      studyRoles: [{ studyId: study.id, role: 'DM' }],
    });
    const session = await login(t.app, user.username, PASSWORD);
    expect((await session.request({ method: 'GET', url: '/api/users/info' })).json().registered).toBe(false);
    const list = await session.request({ method: 'GET', url: '/api/studies/list' });
    expect(list.statusCode).toBe(403);
    expect(list.json()).toEqual({ success: false, message: MESSAGES.welcome });
  });

  it('a role without the permission gets 403 with the envelope', async () => {
    const study = await createStudy(t.database.db);
    const lis = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role: 'LIS' }] });
    const session = await login(t.app, lis.username, PASSWORD);
    // LIS holds S_Main_ViewAssignedStudies; NOTO holds no study page: use a user with no role at all.
    const nobody = await createUser(t.database.db);
    const nobodySession = await login(t.app, nobody.username, PASSWORD);
    const denied = await nobodySession.request({ method: 'GET', url: '/api/studies/list' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    expect((await session.request({ method: 'GET', url: '/api/studies/list' })).statusCode).toBe(200);
  });
});

describe('public configuration and security headers', () => {
  it('GET /api/config needs no login', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/config' });
    expect(response.json()).toEqual({
      ssoLoginUrl: null,
      ssoLogoutUrl: null,
      tileServerLocation: '',
      localLogin: true,
      oidcName: null,
      // OpenSlide is installed on this machine (.ci/run installs it): its vendor formats are offered.
      imageExtensions: ['.svs', '.tif', '.tiff', '.ndpi', '.scn', '.bif', '.svslide', '.dcm', '.zip'],
    });
  });

  it('sends CSP with frame-ancestors none, nosniff and a referrer policy', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/config' });
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  });
});

describe('embedded (NOTO) deployment', () => {
  let e: TestContext;
  beforeAll(async () => {
    e = await createTestApp({
      FRAME_ANCESTORS: 'https://noto.example.org',
      SSO_LOGIN_URL: 'https://hub.example.org/login',
      SSO_LOGOUT_URL: 'https://hub.example.org/logout',
      TILE_SERVER_LOCATION: 'https://tiles.example.org',
    });
  });
  afterAll(async () => {
    await e.close();
  });

  it('allows the configured frame ancestors and the tile origin', async () => {
    const response = await e.app.inject({ method: 'GET', url: '/api/config' });
    expect(response.json()).toEqual({
      ssoLoginUrl: 'https://hub.example.org/login',
      ssoLogoutUrl: 'https://hub.example.org/logout',
      tileServerLocation: 'https://tiles.example.org',
      localLogin: true,
      oidcName: null,
      imageExtensions: acceptedImageExtensions({ openslide: true }),
    });
    const csp = response.headers['content-security-policy'] as string;
    expect(csp).toContain('frame-ancestors https://noto.example.org');
    expect(csp).toContain("img-src 'self' data: blob: https://tiles.example.org");
  });

  it('sets the session cookie SameSite=None; Secure; Partitioned', async () => {
    const user = await createUser(e.database.db);
    const response = await e.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: user.username, password: PASSWORD },
    });
    const header = String(response.headers['set-cookie']);
    expect(header).toMatch(/SameSite=None/);
    expect(header).toMatch(/Secure/);
    expect(header).toMatch(/Partitioned/);
    expect(header).toMatch(/HttpOnly/);
  });
});
