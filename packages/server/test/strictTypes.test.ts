import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roleByName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 26 item 13: a JSON body is taken with its JSON types — a number must be a JSON number, not
 * `true`, `[]` or "5" (z.coerce accepted all three) — and refused with a 400 naming the field,
 * nothing written. Query strings and path parameters are text: there a plain decimal is read as the
 * number its schema asks for, and only there.
 */
let t: TestContext;
let studyId: number;
let caseId: number;
let isc: Session;

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING' });
  isc = await login(t.app, (await createUser(db, { studyRoles: [{ studyId, role: 'ISC' }] })).username, PASSWORD);
}, 60_000);

afterAll(async () => {
  await t.close();
});

async function reasonId(): Promise<number> {
  const row = await t.database.db
    .selectFrom('query_reasons')
    .select('id')
    .where('object_type', '=', 'CASE')
    .where('with_role_id', '=', roleByName('LabTech').id)
    .where('reason_text', '=', 'Visit ID mismatch')
    .where('parent_id', 'is', null)
    .executeTakeFirstOrThrow();
  return row.id;
}

async function countQueries(): Promise<number> {
  const row = await t.database.db
    .selectFrom('queries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function newQuery(over: Record<string, unknown>) {
  return isc.request({
    method: 'POST',
    url: '/api/queries/new',
    payload: {
      queryObjectType: 'CASE',
      objectId: caseId,
      studyId,
      caseId,
      category: 'OTHER',
      followUpInDays: 14,
      withRoleId: roleByName('LabTech').id,
      responseOptionId: await reasonId(),
      commentText: 'Strict types',
      ...over,
    },
  });
}

const message = (response: { json: () => unknown }) => (response.json() as { message: string }).message;

describe('JSON bodies take JSON types (issue 26 item 13)', () => {
  it.each([
    ['objectId', true],
    ['studyId', true],
    ['followUpInDays', []],
    ['objectId', String(1)],
    ['studyId', '7'],
    ['followUpInDays', '14'],
    ['withRoleId', false],
    ['caseId', '3'],
    ['responseOptionId', [1]],
  ])('POST /api/queries/new with %s: %j is a 400 naming the field; nothing is written', async (field, value) => {
    const before = await countQueries();
    const response = await newQuery({ [field]: value });
    expect(response.statusCode, response.body).toBe(400);
    expect(message(response)).toBe(`${field} must be number`);
    expect(await countQueries()).toBe(before);
  });

  it('the same request with JSON numbers opens the query', async () => {
    const before = await countQueries();
    const response = await newQuery({});
    expect(response.statusCode, response.body).toBe(201);
    expect(await countQueries()).toBe(before + 1);
  });

  it('list bodies: page and pageSize must be JSON numbers', async () => {
    for (const [url, body, field] of [
      ['/api/queries', { page: '1' }, 'page'],
      ['/api/queries', { pageSize: true }, 'pageSize'],
      ['/api/imageManagement/images', { pageSize: '20' }, 'pageSize'],
      ['/api/imageManagement/cases', { page: [] }, 'page'],
      ['/api/imageManagement/annotations', { page: '2' }, 'page'],
    ] as const) {
      const response = await isc.request({ method: 'POST', url, payload: body });
      expect(response.statusCode, `${url} ${response.body}`).toBe(400);
      expect(message(response)).toBe(`${field} must be number`);
      const ok = await isc.request({ method: 'POST', url, payload: { [field]: field === 'page' ? 1 : 20 } });
      expect(ok.statusCode, `${url} ${ok.body}`).toBe(200);
    }
  });

  it('POST /api/mld: imageId must be a JSON number', async () => {
    const response = await isc.request({
      method: 'POST',
      url: '/api/mld',
      payload: { name: 'x.mld', s3Key: 'mld/uploads/x.mld', imageId: '5' },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(message(response)).toBe('imageId must be number');
  });
});

describe('query strings and path parameters are read as numbers where the schema asks', () => {
  it('numbers in query strings still work, and text that looks like a number stays text', async () => {
    const metadata = await isc.request({ method: 'GET', url: `/api/queries/metadata?studyId=${studyId}` });
    expect(metadata.statusCode, metadata.body).toBe(200);
    const studies = await isc.request({ method: 'GET', url: '/api/studies/list?page=1&pageSize=50' });
    expect(studies.statusCode, studies.body).toBe(200);
    const cases = await isc.request({ method: 'GET', url: `/api/cases?studyId=${studyId}&searchText=123` });
    expect(cases.statusCode, cases.body).toBe(200);
  });

  it('what is not a plain decimal is refused, naming the field', async () => {
    for (const [url, field] of [
      ['/api/studies/list?pageSize=abc', 'pageSize'],
      ['/api/studies/list?page=true', 'page'],
      ['/api/studies/list?page=0x10', 'page'],
      [`/api/queries/metadata?studyId=${studyId}&studyId=${studyId}`, 'studyId'],
      ['/api/queries/metadata?studyId=', 'studyId'],
    ] as const) {
      const response = await isc.request({ method: 'GET', url });
      expect(response.statusCode, `${url} ${response.body}`).toBe(400);
      expect(message(response)).toBe(`${field} must be number`);
    }
    const path = await isc.request({ method: 'GET', url: '/api/cases/abc' });
    expect(path.statusCode).toBe(400);
    expect(message(path)).toBe('id must be number');
  });
});
