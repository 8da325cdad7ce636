import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoleName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  assignReader,
  createCase,
  createOrganization,
  createQuery,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';

/**
 * Image Management lists (issue 12, doc 2 §2.1–2.2, §3, §6): the columns each role may view — and
 * only those — in every response; filters, sorting and paging in SQL over the visible studies.
 */

let t: TestContext;
let studyA: { id: number; name: string };
let studyB: { id: number; name: string };
let imageA1: number;
let imageA2: number;
let archived: number;
let imageB: number;
let caseA: number;
const sessions = new Map<string, Session>();
const db = () => t.database.db;

async function as(role: RoleName | 'sysadmin', study = studyA.id): Promise<Session> {
  const key = `${role}:${study}`;
  const known = sessions.get(key);
  if (known) return known;
  const user =
    role === 'sysadmin'
      ? await createUser(db(), { systemAdmin: true, globalRoles: ['SystemAdmin'] })
      : await createUser(db(), { studyRoles: [{ studyId: study, role }] });
  const session = await login(t.app, user.username, PASSWORD);
  sessions.set(key, session);
  return session;
}

type Row = Record<string, unknown>;

async function images(session: Session, body: object = {}) {
  const response = await session.request({ method: 'POST', url: '/api/imageManagement/images', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Row[]; total: number }>();
}

async function cases(session: Session, body: object = {}) {
  const response = await session.request({ method: 'POST', url: '/api/imageManagement/cases', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Row[]; total: number }>();
}

const keysOf = (row: Row | undefined) => Object.keys(row ?? {}).sort();

beforeAll(async () => {
  t = await createTestApp();
  studyA = await createStudy(db(), `IM study A ${Date.now()}`);
  studyB = await createStudy(db(), `IM study B ${Date.now()}`);
  const org = await createOrganization(db(), 'Gut Lab');
  caseA = (await createCase(db(), { studyId: studyA.id, status: 'PENDING_QC' })).id;
  await db()
    .updateTable('cases')
    .set({
      proc_id: 'ENDO-IM-1',
      histo_procedure_id: 'HISTO-IM-1',
      subject_id: 'SUBJ-IM-1',
      site_id: 'SITE-9',
      visit_id: 'V2',
      images_expected: 3,
    })
    .where('id', '=', caseA)
    .execute();
  const old = new Date(Date.now() - 30 * 86_400_000);
  imageA1 = (await createStudyImage(db(), { studyId: studyA.id, caseId: caseA, status: 'ISC_QC_PENDING' })).id;
  imageA2 = (await createStudyImage(db(), { studyId: studyA.id, uploadedAt: old })).id;
  archived = (await createStudyImage(db(), { studyId: studyA.id, status: 'ARCHIVED' })).id;
  imageB = (await createStudyImage(db(), { studyId: studyB.id })).id;
  await db()
    .updateTable('images')
    .set({
      name: 'COLON-4711.svs',
      accession_number: 'ACC-4711',
      biopsy_location: 'Rectum',
      protocol_id: 'PROTO-1',
      lab_visit_id: 'LV2',
      qa_comments: 'Fold at the edge',
      organization_id: org.id,
    })
    .where('id', '=', imageA1)
    .execute();
  await db()
    .updateTable('images')
    .set({ name: 'ILEUM-0001.svs', accession_number: 'ACC-0001' })
    .where('id', '=', imageA2)
    .execute();
  await createQuery(db(), { studyId: studyA.id, objectId: imageA1 });
});

afterAll(async () => {
  await t.close();
});

describe('POST /api/imageManagement/images: the columns each role may view (doc 2 §6)', () => {
  // Written out from docs/PERMISSIONS.md (the role → permission map), not computed from it.
  const ID = ['caseId', 'id', 'studyId'];
  const EXPECTED: Partial<Record<RoleName | 'sysadmin', string[]>> = {
    sysadmin: [
      'accessionNumber',
      'anatomicalSegment',
      'endoProcedureId',
      'histoProcedureId',
      'imageFilename',
      'inQuery',
      'labVisitId',
      'organizationName',
      'protocolId',
      'qaComments',
      'siteId',
      'specimenCollectionDate',
      'sponsor',
      'status',
      'studyName',
      'subjectId',
      'uploadedAt',
      'visitId',
    ],
    ISC: [
      'accessionNumber',
      'anatomicalSegment',
      'endoProcedureId',
      'histoProcedureId',
      'imageFilename',
      'labVisitId',
      'organizationName',
      'protocolId',
      'siteId',
      'specimenCollectionDate',
      'status',
      'studyName',
      'subjectId',
      'uploadedAt',
      'visitId',
    ],
    DM: [
      'accessionNumber',
      'anatomicalSegment',
      'endoProcedureId',
      'histoProcedureId',
      'inQuery',
      'labVisitId',
      'protocolId',
      'siteId',
      'specimenCollectionDate',
      'sponsor',
      'studyName',
      'subjectId',
      'visitId',
    ],
    PM: [
      'accessionNumber',
      'anatomicalSegment',
      'endoProcedureId',
      'histoProcedureId',
      'inQuery',
      'labVisitId',
      'siteId',
      'specimenCollectionDate',
      'status',
      'studyName',
      'subjectId',
      'uploadedAt',
      'visitId',
    ],
    LabTech: [
      'accessionNumber',
      'anatomicalSegment',
      'imageFilename',
      'inQuery',
      'labVisitId',
      'organizationName',
      'protocolId',
      'qaComments',
      'siteId',
      'specimenCollectionDate',
      'sponsor',
      'studyName',
      'subjectId',
      'uploadedAt',
      'visitId',
    ],
    LIS: [
      'accessionNumber',
      'anatomicalSegment',
      'imageFilename',
      'protocolId',
      'siteId',
      'specimenCollectionDate',
      'studyName',
      'subjectId',
    ],
  };

  /** Roles of the tab that may edit no image column: their rows carry no editRefusals (issue 29 item 17). */
  const EDITS_NOTHING: readonly string[] = ['PM'];

  it('each role with the tab gets its viewable columns and no other key', async () => {
    for (const [role, columns] of Object.entries(EXPECTED)) {
      const { results } = await images(await as(role as RoleName));
      const row = results.find((r) => r.id === imageA1);
      const flags = EDITS_NOTHING.includes(role) ? [] : ['editRefusals'];
      expect(keysOf(row), role).toEqual([...ID, ...flags, ...(columns ?? [])].sort());
    }
  });

  it('a data manager sees no file name (nor searches or sorts by it)', async () => {
    const dm = await as('DM');
    const { results } = await images(dm);
    const row = results.find((r) => r.id === imageA1);
    expect(row).toBeDefined();
    expect(row).not.toHaveProperty('imageFilename');
    expect(JSON.stringify(results)).not.toContain('COLON-4711');
    // The search does not look in a column the user may not view.
    expect((await images(dm, { searchText: 'COLON-4711' })).total).toBe(0);
    expect((await images(dm, { searchText: 'ACC-4711' })).results.map((r) => r.id)).toEqual([imageA1]);
    // Sorting by it falls back to the newest upload first.
    const sorted = await images(dm, { sort: 'imageFilename' });
    expect(sorted.results.map((r) => r.id)).toEqual((await images(dm)).results.map((r) => r.id));
  });

  it('search finds images by their case’s IDs, their study’s and organization’s names (the trigram candidates of each)', async () => {
    const admin = await as('sysadmin');
    // The case's subject and procedure IDs (imageA1 is in caseA).
    expect((await images(admin, { searchText: 'subj-im-1' })).results.map((r) => r.id)).toEqual([imageA1]);
    expect((await images(admin, { searchText: 'HISTO-IM' })).results.map((r) => r.id)).toEqual([imageA1]);
    // The study's name: every live image of study A.
    const byStudy = await images(admin, { searchText: studyA.name });
    expect(new Set(byStudy.results.map((r) => r.id))).toEqual(new Set([imageA1, imageA2]));
    expect((await images(admin, { searchText: 'Gut Lab' })).results.map((r) => r.id)).toEqual([imageA1]);
    // Two characters (no trigram) still find by the exact condition.
    expect((await images(admin, { searchText: 'V2' })).results.map((r) => r.id)).toContain(imageA1);
    // A case's search by its study's name and by its IDs.
    expect((await cases(admin, { searchText: studyA.name })).results.map((r) => r.caseId)).toEqual([caseA]);
    expect((await cases(admin, { searchText: 'endo-im-1' })).results.map((r) => r.caseId)).toEqual([caseA]);
  });

  it('the values: the case’s IDs, the study, the organization, In Query', async () => {
    const { results } = await images(await as('sysadmin'), { searchText: 'ACC-4711' });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      id: imageA1,
      studyId: studyA.id,
      caseId: caseA,
      imageFilename: 'COLON-4711.svs',
      studyName: studyA.name,
      endoProcedureId: 'ENDO-IM-1',
      histoProcedureId: 'HISTO-IM-1',
      subjectId: 'SUBJ-IM-1',
      siteId: 'SITE-9',
      visitId: 'V2',
      labVisitId: 'LV2',
      anatomicalSegment: 'Rectum',
      organizationName: 'Gut Lab',
      qaComments: 'Fold at the edge',
      status: 'ISC_QC_PENDING',
      inQuery: true,
    });
    expect(typeof results[0]?.uploadedAt).toBe('string');
  });

  it('refuses roles without the images tab (403)', async () => {
    for (const role of ['CR', 'SPONSOR', 'UPLOADER'] as const) {
      const response = await (
        await as(role)
      ).request({
        method: 'POST',
        url: '/api/imageManagement/images',
        payload: {},
      });
      expect(response.statusCode, role).toBe(403);
    }
  });
});

describe('POST /api/imageManagement/images: filters, sort, paging, scope', () => {
  it('lists the visible studies’ live images only: not another study’s, not archived ones', async () => {
    const ids = (await images(await as('LabTech'))).results.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining([imageA1, imageA2]));
    expect(ids).not.toContain(imageB);
    expect(ids).not.toContain(archived);
    // A system admin sees every study; archived images only when asked for.
    const all = (await images(await as('sysadmin'))).results.map((r) => r.id);
    expect(all).toEqual(expect.arrayContaining([imageA1, imageA2, imageB]));
    const onlyArchived = await images(await as('sysadmin'), {
      imageStatusFilter: ['ARCHIVED'],
      studyFilter: { selectedIds: [studyA.id] },
    });
    expect(onlyArchived.results.map((r) => r.id)).toEqual([archived]);
  });

  it('a study filter of a study the user cannot see finds nothing', async () => {
    expect((await images(await as('LabTech'), { studyFilter: { selectedIds: [studyB.id] } })).total).toBe(0);
  });

  it('status, date and search filters', async () => {
    const lab = await as('LabTech');
    expect((await images(lab, { imageStatusFilter: ['ISC_QC_PENDING'] })).results.map((r) => r.id)).toEqual([imageA1]);
    const recent = (await images(lab, { dateFilter: 'Last14' })).results.map((r) => r.id);
    expect(recent).toContain(imageA1);
    expect(recent).not.toContain(imageA2);
    expect((await images(lab, { dateFilter: 'Last60' })).results.map((r) => r.id)).toContain(imageA2);
    expect((await images(lab, { searchText: '  ileum-0001 ' })).results.map((r) => r.id)).toEqual([imageA2]);
    // LIKE wildcards are literal.
    expect((await images(lab, { searchText: '%' })).total).toBe(0);
  });

  it('sorts by a column, both ways, and pages with the total of the filtered list', async () => {
    const lab = await as('LabTech');
    const up = (await images(lab, { sort: 'accessionNumber' })).results.map((r) => r.accessionNumber);
    expect(up.slice(0, 2)).toEqual(['ACC-0001', 'ACC-4711']);
    const down = (await images(lab, { sort: '-accessionNumber' })).results.map((r) => r.accessionNumber);
    expect(down.filter((v) => v !== null).slice(0, 2)).toEqual(['ACC-4711', 'ACC-0001']);
    const page = await images(lab, { page: 2, pageSize: 10 });
    expect(page.results).toHaveLength(0);
    expect(page.total).toBe(2);
  });

  it('refuses a bad body with 400 and a message', async () => {
    const lab = await as('LabTech');
    for (const payload of [
      { pageSize: 7 },
      { dateFilter: 'Last3' },
      { imageStatusFilter: ['NOPE'] },
      { sort: 'password' },
    ]) {
      const response = await lab.request({ method: 'POST', url: '/api/imageManagement/images', payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().message).toBeTruthy();
    }
  });
});

describe('POST /api/imageManagement/cases and the one-row refreshes', () => {
  it('lists the cases with the viewable columns: counts, QC users, readers', async () => {
    const reader = await createUser(db(), { studyRoles: [{ studyId: studyA.id, role: 'CR' }] });
    await db()
      .updateTable('users')
      .set({ first_name: 'Rita', last_name: 'Reader' })
      .where('id', '=', reader.id)
      .execute();
    await assignReader(db(), { caseId: caseA, userId: reader.id });
    const { results } = await cases(await as('sysadmin'), { studyFilter: { selectedIds: [studyA.id] } });
    expect(results.find((r) => r.caseId === caseA)).toMatchObject({
      caseId: caseA,
      studyId: studyA.id,
      procId: 'ENDO-IM-1',
      histoProcedureId: 'HISTO-IM-1',
      studyName: studyA.name,
      subjectId: 'SUBJ-IM-1',
      imagesExpected: 3,
      totalImages: 1,
      status: 'PENDING_QC',
      labTech: [],
      iscQc: [],
      crAssignments: ['Rita Reader'],
    });
    const other = await cases(await as('LabTech'), { caseStatusFilter: ['COMPLETED'] });
    expect(other.results.map((r) => r.caseId)).not.toContain(caseA);
  });

  it('GET imageRecord and caseRecord: the row, or 404 outside the user’s studies', async () => {
    const lab = await as('LabTech');
    const image = await lab.request({ method: 'GET', url: `/api/imageManagement/imageRecord/${imageA1}` });
    expect(image.statusCode).toBe(200);
    expect(image.json().results).toMatchObject({ id: imageA1, imageFilename: 'COLON-4711.svs' });
    expect((await lab.request({ method: 'GET', url: `/api/imageManagement/imageRecord/${imageB}` })).statusCode).toBe(
      404,
    );
    const record = await lab.request({ method: 'GET', url: `/api/imageManagement/caseRecord/${caseA}` });
    expect(record.statusCode).toBe(200);
    expect(record.json().results).toMatchObject({ caseId: caseA, status: 'PENDING_QC' });
    const outsider = await as('LabTech', studyB.id);
    expect(
      (await outsider.request({ method: 'GET', url: `/api/imageManagement/caseRecord/${caseA}` })).statusCode,
    ).toBe(404);
  });
});
