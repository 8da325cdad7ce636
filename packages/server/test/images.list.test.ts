import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, roleByName, STUDY_MESSAGES, type RoleName, type StudyImageRow } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  createCase,
  createImage,
  createQuery,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';

let t: TestContext;
let studyId: number;
let otherStudyId: number;
let labtech: Session;
/** Image ids by what they are, in upload order (oldest first). */
const ids = {} as Record<
  'plain' | 'inCase' | 'withOpenQuery' | 'withResolvedQuery' | 'failed' | 'processing' | 'archived' | 'percent',
  number
>;
let caseId: number;

async function sessionAs(role: RoleName, study: number): Promise<Session> {
  const user = await createUser(t.database.db, { studyRoles: [{ studyId: study, role }] });
  const session = await login(t.app, user.username, PASSWORD);
  await session.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: roleByName(role).id } });
  return session;
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);
/** Oldest of the study's images. */
const PLAIN_UPLOADED_AT = new Date('2020-03-04T05:06:07.089Z');

async function setImage(
  id: number,
  values: { name?: string; uploaded_at?: Date; accession_number?: string; biopsy_location?: string },
) {
  await t.database.db.updateTable('images').set(values).where('id', '=', id).execute();
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  otherStudyId = (await createStudy(db)).id;
  caseId = (await createCase(db, { studyId })).id;
  await db.updateTable('cases').set({ proc_id: 'ENDO-7' }).where('id', '=', caseId).execute();

  const make = async (
    key: keyof typeof ids,
    minutes: number,
    spec: Parameters<typeof createStudyImage>[1] = { studyId },
  ) => {
    ids[key] = (await createStudyImage(db, { ...spec, studyId, uploadedAt: minutesAgo(minutes) })).id;
  };
  await make('plain', 80);
  await make('inCase', 70, { studyId, caseId, status: 'LAB_QC_PENDING' });
  await make('withOpenQuery', 60);
  await make('withResolvedQuery', 50);
  await make('failed', 40, { studyId, status: 'FAIL_PROCESSING' });
  ids.processing = (await createImage(db, { studyId, name: 'Biopsy-B.svs' })).id;
  await setImage(ids.processing, { uploaded_at: minutesAgo(30) });
  await make('archived', 20, { studyId, status: 'ARCHIVED' });
  await make('percent', 10);
  await setImage(ids.plain, {
    name: 'alpha.svs',
    accession_number: 'ACC-2',
    biopsy_location: 'Rectum',
    uploaded_at: PLAIN_UPLOADED_AT,
  });
  await setImage(ids.inCase, { name: 'Bravo.tif', accession_number: 'ACC-1' });
  await setImage(ids.percent, { name: '50%_done.svs' });
  await setImage(ids.withOpenQuery, { name: 'query-open.svs' });
  await setImage(ids.withResolvedQuery, { name: 'query-resolved.svs' });
  await setImage(ids.failed, { name: 'failed.tiff' });
  await setImage(ids.archived, { name: 'archived-B.svs' });
  await db
    .updateTable('images')
    .set({ processing_status: 'FAIL', status_message: 'The image data could not be decoded' })
    .where('id', '=', ids.failed)
    .execute();
  await db
    .updateTable('images')
    .set({ processing_status: 'SUBMITTED', processing_progress: 42 })
    .where('id', '=', ids.processing)
    .execute();
  await createQuery(db, { studyId, objectId: ids.withOpenQuery });
  await createQuery(db, { studyId, objectId: ids.withResolvedQuery, status: 'OPEN' });
  await createQuery(db, { studyId, objectId: ids.withResolvedQuery, status: 'CLOSED', resolution: 'RESOLVED' });
  // An image of another study and a query about another image must not leak in.
  await createStudyImage(db, { studyId: otherStudyId, uploadedAt: minutesAgo(5) });
  labtech = await sessionAs('LabTech', studyId);
});
afterAll(async () => {
  await t.close();
});

const url = (study: number, query = '') => `/api/studies/${study}/images${query}`;
async function listed(session: Session, query = ''): Promise<{ images: StudyImageRow[]; total: number }> {
  const response = await session.request({ method: 'GET', url: url(studyId, query) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}
const idsOf = async (query = '') => (await listed(labtech, query)).images.map((i) => i.id);

describe('GET /api/studies/{id}/images: access', () => {
  it('401 when logged out', async () => {
    const response = await t.app.inject({ method: 'GET', url: url(studyId) });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
  });

  it('403 for a central reader (no Images tab permission)', async () => {
    const reader = await sessionAs('CR', studyId);
    const response = await reader.request({ method: 'GET', url: url(studyId) });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
  });

  it("404 'Study not found' for a study the user has no access to, and for a missing one", async () => {
    for (const study of [otherStudyId, 2_000_000_000]) {
      const response = await labtech.request({ method: 'GET', url: url(study) });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ success: false, message: STUDY_MESSAGES.studyNotFound });
    }
  });

  it('400 with a clear message for a bad sort, flag or page size, and changes nothing', async () => {
    for (const query of ['?sort=status', '?hasQueries=yes', '?pageSize=7', '?page=0']) {
      const response = await labtech.request({ method: 'GET', url: url(studyId, query) });
      expect(response.statusCode, query).toBe(400);
      expect(response.json().success).toBe(false);
      expect(response.json().message).toMatch(/\S/);
    }
  });
});

describe('GET /api/studies/{id}/images: rows', () => {
  it('lists the live images of the study, newest upload first, without archived ones', async () => {
    const { images, total } = await listed(labtech);
    expect(images.map((i) => i.id)).toEqual([
      ids.percent,
      ids.processing,
      ids.failed,
      ids.withResolvedQuery,
      ids.withOpenQuery,
      ids.inCase,
      ids.plain,
    ]);
    expect(total).toBe(7);
  });

  it('carries the case, the latest query, the processing state and the study-page fields', async () => {
    const byId = new Map((await listed(labtech)).images.map((i) => [i.id, i]));
    expect(byId.get(ids.inCase)).toMatchObject({
      studyId,
      caseId,
      name: 'Bravo.tif',
      accessionNumber: 'ACC-1',
      status: 'LAB_QC_PENDING',
      simpleCase: { id: caseId, procId: 'ENDO-7' },
      lastLabQuery: null,
    });
    expect(byId.get(ids.plain)).toMatchObject({ biopsyLocation: 'Rectum', simpleCase: null, caseId: null });
    expect(byId.get(ids.withOpenQuery)!.lastLabQuery).toEqual({ queryStatus: 'OPEN', resolution: null });
    // The latest query of the image counts, not the first.
    expect(byId.get(ids.withResolvedQuery)!.lastLabQuery).toEqual({ queryStatus: 'CLOSED', resolution: 'RESOLVED' });
    expect(byId.get(ids.failed)).toMatchObject({
      processingStatus: 'FAIL',
      statusMessage: 'The image data could not be decoded',
    });
    expect(byId.get(ids.processing)).toMatchObject({
      processingStatus: 'SUBMITTED',
      processingProgress: 42,
      cogKey: null,
    });
    expect(byId.get(ids.plain)!.uploadedAt).toBe(PLAIN_UPLOADED_AT.toISOString());
  });

  it('searches the file name, case-insensitive and trimmed, with LIKE wildcards taken literally', async () => {
    expect(await idsOf('?name=%20bravo%20')).toEqual([ids.inCase]);
    expect(await idsOf('?name=B')).toEqual([ids.processing, ids.inCase]);
    expect(await idsOf('?name=50%25')).toEqual([ids.percent]);
    expect(await idsOf('?name=_')).toEqual([ids.percent]);
  });

  it('filters to unassigned images and to images with queries', async () => {
    expect(await idsOf('?isUnassigned=true')).not.toContain(ids.inCase);
    expect((await idsOf('?isUnassigned=true')).length).toBe(6);
    expect(await idsOf('?hasQueries=true')).toEqual([ids.withResolvedQuery, ids.withOpenQuery]);
    expect(await idsOf('?hasQueries=true&isUnassigned=false')).toEqual([ids.withResolvedQuery, ids.withOpenQuery]);
  });

  it('sorts by name and accession number in SQL, and pages with the total of every match', async () => {
    const byName = await idsOf('?sort=name');
    expect(byName.slice(0, 3)).toEqual([ids.percent, ids.plain, ids.processing]);
    expect(byName[3]).toBe(ids.inCase); // 'Bravo' after 'Biopsy', case-insensitive
    expect((await idsOf('?sort=accessionNumber')).slice(0, 2)).toEqual([ids.inCase, ids.plain]);
    const page = await listed(labtech, '?sort=-uploadedAt&page=2&pageSize=10');
    expect(page).toEqual({ success: true, images: [], total: 7 });
    const first = await listed(labtech, '?pageSize=10&page=1');
    expect(first.images).toHaveLength(7);
  });
});
