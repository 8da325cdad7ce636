import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, roleByName, type RoleName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  assignReader,
  createAnnotation,
  createAnnotationClass,
  createCase,
  createOrganization,
  createQuery,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';

let t: TestContext;
let admin: Session;
let sysadmin: Session;
beforeAll(async () => {
  t = await createTestApp();
  admin = await login(t.app, (await createUser(t.database.db, { globalRoles: ['StudyAdmin'] })).username, PASSWORD);
  sysadmin = await login(t.app, (await createUser(t.database.db, { systemAdmin: true })).username, PASSWORD);
});
afterAll(async () => {
  await t.close();
});

const tag = () => randomBytes(4).toString('hex');
const list = (session: Session, query = '') => session.request({ method: 'GET', url: `/api/studies/list${query}` });
const idsOf = async (session: Session, query = '') =>
  ((await list(session, query)).json().studies as { id: number }[]).map((s) => s.id);

async function sessionFor(roles: { studyId: number; role: RoleName }[]): Promise<{ session: Session; id: number }> {
  const user = await createUser(t.database.db, { studyRoles: roles });
  const session = await login(t.app, user.username, PASSWORD);
  const role = roles[0]?.role;
  if (role)
    await session.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: roleByName(role).id } });
  return { session, id: user.id };
}

describe('GET /api/studies/list and /api/studies/{id}: access', () => {
  it('401 when logged out', async () => {
    const study = await createStudy(t.database.db);
    for (const url of ['/api/studies/list', `/api/studies/${study.id}`]) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
    }
  });

  it('403 for a user whose role has no study permission', async () => {
    const study = await createStudy(t.database.db);
    const nobody = await login(t.app, (await createUser(t.database.db)).username, PASSWORD);
    for (const url of ['/api/studies/list', `/api/studies/${study.id}`]) {
      const response = await nobody.request({ method: 'GET', url });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
  });

  it('404 Study not found for a missing study; 400 for a malformed id', async () => {
    expect((await admin.request({ method: 'GET', url: '/api/studies/2147483647' })).json()).toEqual({
      success: false,
      message: 'Study not found',
    });
    expect((await admin.request({ method: 'GET', url: '/api/studies/99999999999' })).statusCode).toBe(400);
    expect((await admin.request({ method: 'GET', url: '/api/studies/new' })).statusCode).toBe(400);
  });
});

describe('study visibility for each kind of user, before and after access is granted and removed', () => {
  const studyRoles: RoleName[] = ['ISC', 'DM', 'PM', 'SPONSOR', 'UPLOADER', 'CR', 'LabTech', 'Site', 'NOTO', 'LIS'];

  it.each(studyRoles)('%s sees only the studies where it holds access with that role', async (role) => {
    const home = await createStudy(t.database.db);
    const target = await createStudy(t.database.db);
    const { session, id } = await sessionFor([{ studyId: home.id, role }]);
    expect(await idsOf(session)).toEqual([home.id]);
    const hidden = await session.request({ method: 'GET', url: `/api/studies/${target.id}` });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toEqual({ success: false, message: 'Study not found' });

    // Site, NOTO and LIS are not assignable: their access is provisioned outside the study-access
    // calls (here: a row, as the demo seed writes it), and a system admin may revoke it.
    const provisioned = ['Site', 'NOTO', 'LIS'].includes(role);
    const granter = provisioned ? sysadmin : admin;
    const change = { studyId: target.id, userId: id, roleId: roleByName(role).id };
    if (provisioned) {
      await t.database.db
        .insertInto('study_access')
        .values({ user_id: id, study_id: target.id, role_id: change.roleId })
        .execute();
    } else {
      const granted = await granter.request({ method: 'PATCH', url: '/api/users/studies/add', payload: change });
      expect(granted.statusCode, granted.body).toBe(200);
    }
    expect((await idsOf(session)).sort()).toEqual([home.id, target.id].sort());
    expect((await session.request({ method: 'GET', url: `/api/studies/${target.id}` })).statusCode).toBe(200);

    const removed = await granter.request({ method: 'PUT', url: '/api/users/studies/remove', payload: change });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(await idsOf(session)).toEqual([home.id]);
    expect((await session.request({ method: 'GET', url: `/api/studies/${target.id}` })).statusCode).toBe(404);
  });

  it('access with another role does not show the study while working as this one', async () => {
    const a = await createStudy(t.database.db);
    const b = await createStudy(t.database.db);
    const { session } = await sessionFor([
      { studyId: a.id, role: 'CR' },
      { studyId: b.id, role: 'PM' },
    ]);
    expect(await idsOf(session)).toEqual([a.id]);
    expect((await session.request({ method: 'GET', url: `/api/studies/${b.id}` })).statusCode).toBe(404);
  });

  it('StudyAdmin and SystemAdmin see every study', async () => {
    const study = await createStudy(t.database.db);
    for (const session of [admin, sysadmin]) expect(await idsOf(session)).toContain(study.id);
  });
});

describe('the counts of spec doc 1 §3, computed per user kind', () => {
  it('counts unassigned images, cases to QC, open and answered queries, and the reader’s read and unread cases', async () => {
    const study = await createStudy(t.database.db);
    const other = await createStudy(t.database.db);
    const { session: reader, id: readerId } = await sessionFor([{ studyId: study.id, role: 'CR' }]);
    const otherReader = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role: 'CR' }] });

    const caseA = await createCase(t.database.db, { studyId: study.id, status: 'PENDING_QC' });
    const caseB = await createCase(t.database.db, { studyId: study.id, status: 'PENDING_LAB_QC' });
    const caseC = await createCase(t.database.db, { studyId: study.id, status: 'PROCESSED' });
    await createCase(t.database.db, { studyId: other.id, status: 'PENDING_QC' });

    const latest = new Date('2031-05-06T07:08:09.000Z');
    await createStudyImage(t.database.db, {
      studyId: study.id,
      status: 'CASE_ASSIGNMENT_PENDING',
      uploadedAt: new Date('2030-01-01T00:00:00Z'),
    });
    await createStudyImage(t.database.db, { studyId: study.id, status: 'LAB_QC_PENDING', uploadedAt: latest });
    await createStudyImage(t.database.db, { studyId: study.id, status: 'PROCESSING' });
    for (const status of ['ARCHIVED', 'FAIL_PROCESSING', 'DUPLICATE_IMAGE'])
      await createStudyImage(t.database.db, { studyId: study.id, status, uploadedAt: new Date('2020-01-01Z') });
    await createStudyImage(t.database.db, {
      studyId: study.id,
      caseId: caseA.id,
      status: 'ISC_QC_PENDING',
      uploadedAt: new Date('2021-01-01Z'),
    });
    await createStudyImage(t.database.db, {
      studyId: other.id,
      status: 'CASE_ASSIGNMENT_PENDING',
      uploadedAt: new Date('2040-01-01Z'),
    });

    await createQuery(t.database.db, { studyId: study.id });
    await createQuery(t.database.db, { studyId: study.id, resolution: 'UNRESOLVABLE' });
    await createQuery(t.database.db, { studyId: study.id, resolution: 'RESOLVED' });
    await createQuery(t.database.db, { studyId: study.id, status: 'CLOSED', resolution: 'RESOLVED' });
    await createQuery(t.database.db, { studyId: other.id });

    await assignReader(t.database.db, { caseId: caseA.id, userId: readerId, read: true });
    await assignReader(t.database.db, { caseId: caseB.id, userId: readerId });
    await assignReader(t.database.db, { caseId: caseC.id, userId: readerId });
    await assignReader(t.database.db, { caseId: caseC.id, userId: otherReader.id, read: true });

    const adminCounts = {
      numberOfUnassignedImages: 3,
      numberOfCasesNeedingQC: 2,
      numberOfQueriesOpen: 2,
      numberOfQueriesAnswered: 1,
      mostRecentUploadAt: latest.toISOString(),
    };
    const adminRow = (await list(admin)).json().studies.find((s: { id: number }) => s.id === study.id);
    expect(adminRow).toMatchObject({
      ...adminCounts,
      numberOfAssignedReadCases: null,
      numberOfAssignedUnreadCases: null,
    });

    // A blinded reader gets its own read and unread cases, and nothing of the study's QC or query load.
    const readerRows = (await list(reader)).json().studies;
    expect(readerRows).toHaveLength(1);
    expect(readerRows[0]).toMatchObject({
      id: study.id,
      numberOfAssignedReadCases: 1,
      numberOfAssignedUnreadCases: 2,
      numberOfUnassignedImages: null,
      numberOfCasesNeedingQC: null,
      numberOfQueriesOpen: null,
      numberOfQueriesAnswered: null,
    });
    const view = (await reader.request({ method: 'GET', url: `/api/studies/${study.id}` })).json();
    expect(view).toMatchObject({
      numberOfAssignedReadCases: 1,
      numberOfAssignedUnreadCases: 2,
      numberOfUnassignedImages: null,
    });

    // An uploader gets the open queries only.
    const { session: uploader } = await sessionFor([{ studyId: study.id, role: 'UPLOADER' }]);
    const uploaderRow = (await list(uploader)).json().studies.find((s: { id: number }) => s.id === study.id);
    expect(uploaderRow).toMatchObject({
      numberOfQueriesOpen: 2,
      numberOfUnassignedImages: null,
      numberOfCasesNeedingQC: null,
      numberOfQueriesAnswered: null,
      numberOfAssignedReadCases: null,
      numberOfAssignedUnreadCases: null,
    });
  });

  it('does not sort a reader by counts it does not see (the order would tell them): newest first instead', async () => {
    const older = await createStudy(t.database.db);
    const newer = await createStudy(t.database.db);
    await createStudyImage(t.database.db, { studyId: older.id, status: 'CASE_ASSIGNMENT_PENDING' });
    await createStudyImage(t.database.db, { studyId: older.id, status: 'CASE_ASSIGNMENT_PENDING' });
    const { session: reader } = await sessionFor([
      { studyId: older.id, role: 'CR' },
      { studyId: newer.id, role: 'CR' },
    ]);
    expect(await idsOf(reader, '?sort=-numberOfUnassignedImages')).toEqual([newer.id, older.id]);
    expect(await idsOf(reader, '?sort=numberOfUnassignedImages')).toEqual([newer.id, older.id]);
    expect(await idsOf(admin, `?sort=-numberOfUnassignedImages&name=${encodeURIComponent(older.name)}`)).toEqual([
      older.id,
    ]);
  });

  it('a study without data has zero counts and no upload date', async () => {
    const study = await createStudy(t.database.db);
    const row = (await list(admin)).json().studies.find((s: { id: number }) => s.id === study.id);
    expect(row).toMatchObject({
      numberOfUnassignedImages: 0,
      numberOfCasesNeedingQC: 0,
      numberOfQueriesOpen: 0,
      numberOfQueriesAnswered: 0,
      mostRecentUploadAt: null,
    });
  });
});

describe('search, sort and paging in SQL', () => {
  it('searches by name, trimmed and case-insensitive, with % and _ taken literally', async () => {
    const key = tag();
    const a = await createStudy(t.database.db, `Alpha ${key} 50% Colon`);
    const b = await createStudy(t.database.db, `Beta ${key} 50X Colon`);
    const c = await createStudy(t.database.db, `Gamma ${key} a_b`);
    await createStudy(t.database.db, `Gamma ${key} axb`);
    expect(await idsOf(admin, `?name=${encodeURIComponent(`  ${key.toUpperCase()}  `)}`)).toHaveLength(4);
    expect(await idsOf(admin, `?name=${encodeURIComponent(`${key} 50%`)}`)).toEqual([a.id]);
    expect(await idsOf(admin, `?name=${encodeURIComponent(`${key} a_b`)}`)).toEqual([c.id]);
    expect(await idsOf(admin, `?name=${encodeURIComponent(`beta ${key}`)}`)).toEqual([b.id]);
    expect(await idsOf(admin, '?name=%20%20')).toEqual(await idsOf(admin));
  });

  it('orders newest first by default; sorts by name either way; pages with a total', async () => {
    const key = tag();
    const made = [];
    for (const name of ['Delta', 'alpha', 'Charlie', 'bravo'])
      made.push(await createStudy(t.database.db, `${key} ${name}`));
    const q = `?name=${key}`;
    expect(await idsOf(admin, q)).toEqual(made.map((s) => s.id).reverse());
    const byName = await idsOf(admin, `${q}&sort=name`);
    expect(byName).toEqual([made[1]!.id, made[3]!.id, made[2]!.id, made[0]!.id]);
    expect(await idsOf(admin, `${q}&sort=-name`)).toEqual([...byName].reverse());

    const page2 = (await list(admin, `${q}&sort=name&page=2&pageSize=10`)).json();
    expect(page2).toEqual({ success: true, studies: [], total: 4 });
    const page1 = (await list(admin, `${q}&sort=name&page=1&pageSize=10`)).json();
    expect(page1.total).toBe(4);
    expect(page1.studies).toHaveLength(4);
  });

  it('pages through more studies than a page holds', async () => {
    const key = tag();
    for (let i = 0; i < 12; i += 1) await createStudy(t.database.db, `${key} ${String(i).padStart(2, '0')}`);
    const first = (await list(admin, `?name=${key}&sort=name&pageSize=10`)).json();
    const second = (await list(admin, `?name=${key}&sort=name&pageSize=10&page=2`)).json();
    expect([first.total, first.studies.length, second.total, second.studies.length]).toEqual([12, 10, 12, 2]);
    expect(second.studies.map((s: { name: string }) => s.name)).toEqual([`${key} 10`, `${key} 11`]);
  });

  it('rejects page sizes other than 10, 20, 50, 100 and unknown sort keys with 400', async () => {
    expect((await list(admin, '?pageSize=15')).json()).toEqual({
      success: false,
      message: 'pageSize must be one of 10, 20, 50, 100',
    });
    expect((await list(admin, '?sort=secret')).json()).toEqual({
      success: false,
      message: 'Cannot decode sort from secret',
    });
    expect((await list(admin, '?page=0')).statusCode).toBe(400);
    for (const sort of [
      'status',
      '-numberOfQueriesOpen',
      'mostRecentUploadAt',
      'sponsor',
      '-numberOfAssignedUnreadCases',
    ]) {
      expect((await list(admin, `?sort=${sort}&pageSize=10`)).statusCode).toBe(200);
    }
  });
});

describe('GET /api/studies/{id}: the study view', () => {
  it('lists uploaders, readers and read-only users, and the classes with their annotation counts', async () => {
    const study = await createStudy(t.database.db);
    const org = await createOrganization(t.database.db);
    const roles: RoleName[] = ['UPLOADER', 'LabTech', 'Site', 'CR', 'NOTO', 'ISC', 'DM', 'PM', 'SPONSOR', 'LIS'];
    const users: Record<string, number> = {};
    for (const role of roles) {
      const user = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role }] });
      await t.database.db.updateTable('users').set({ organization_id: org.id }).where('id', '=', user.id).execute();
      users[role] = user.id;
    }
    await createUser(t.database.db, { active: false, studyRoles: [{ studyId: study.id, role: 'CR' }] });
    const hpf = await createAnnotationClass(t.database.db, {
      studyId: study.id,
      type: 'HPF',
      name: 'Field',
      sortOrder: 0,
    });
    await createAnnotationClass(t.database.db, { studyId: study.id, type: 'HPF', name: 'Zone', sortOrder: 1 });
    const image = await createStudyImage(t.database.db, { studyId: study.id });
    await createAnnotation(t.database.db, { imageId: image.id, classId: hpf.id, type: 'HPF' });
    await createAnnotation(t.database.db, { imageId: image.id, classId: hpf.id, type: 'HPF' });
    await createAnnotation(t.database.db, { imageId: image.id, classId: hpf.id, type: 'HPF', deleted: true });

    const view = (await admin.request({ method: 'GET', url: `/api/studies/${study.id}` })).json();
    const names = (refs: { roleName: string }[]) => refs.map((r) => r.roleName).sort();
    expect(names(view.uploaders)).toEqual(['LabTech', 'Site', 'UPLOADER']);
    expect(names(view.readers)).toEqual(['CR', 'NOTO']);
    expect(names(view.readonlyUsers)).toEqual(['DM', 'ISC', 'LIS', 'PM', 'SPONSOR']);
    expect(view.readers.find((r: { roleName: string }) => r.roleName === 'CR')).toMatchObject({
      id: users.CR,
      roleId: 8,
      organizationName: org.name,
    });
    expect(view.hpfClasses.map((c: { name: string; count: number }) => [c.name, c.count])).toEqual([
      ['Field', 2],
      ['Zone', 0],
    ]);
  });

  it('blinds readers: no visit IDs and no user lists', async () => {
    const created = await admin.request({
      method: 'POST',
      url: '/api/studies',
      payload: {
        name: `Blind ${tag()}`,
        visitIds: ['Week 0'],
        labVisitIds: ['LV0'],
        indications: ['POUCHITIS'],
        segments: 1,
        anatomicalSegments: ['Pouch'],
        modality: ['ENDOSCOPY'],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const study = created.json().study;
    const { session: reader } = await sessionFor([{ studyId: study.id, role: 'CR' }]);
    const { session: uploader } = await sessionFor([{ studyId: study.id, role: 'UPLOADER' }]);
    const asReader = (await reader.request({ method: 'GET', url: `/api/studies/${study.id}` })).json();
    expect(asReader).toMatchObject({ visitIds: [], labVisitIds: [], readers: [], uploaders: [], readonlyUsers: [] });
    expect((await list(reader)).json().studies[0]).toMatchObject({ visitIds: [], labVisitIds: [] });
    const asUploader = (await uploader.request({ method: 'GET', url: `/api/studies/${study.id}` })).json();
    expect(asUploader).toMatchObject({ visitIds: ['Week 0'], labVisitIds: ['LV0'], readers: [] });
    const asAdmin = (await admin.request({ method: 'GET', url: `/api/studies/${study.id}` })).json();
    expect(asAdmin.readers).toHaveLength(1);
    expect(asAdmin.uploaders).toHaveLength(1);
  });
});
