import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roleByName, type QueryView, type RoleName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 29, item 10: a query goes to a role, so at a multi-user site any user of that role in the
 * study sees and answers it — whoever uploaded the image — while the other roles' users do not.
 */
let t: TestContext;
let studyId: number;
let imageId: number;
const users: Record<string, { id: number; username: string; session: Session }> = {};
const as = (key: string) => users[key]!.session;
const role = (name: RoleName) => roleByName(name).id;

async function user(key: string, r: RoleName) {
  const made = await createUser(t.database.db, { studyRoles: [{ studyId, role: r }] });
  users[key] = { ...made, session: await login(t.app, made.username, PASSWORD) };
}

async function imageQueryTo(withRole: RoleName, commentText: string): Promise<QueryView> {
  const reason = await t.database.db
    .selectFrom('query_reasons')
    .select('id')
    .where('object_type', '=', 'IMAGE')
    .where('with_role_id', '=', role(withRole))
    .where('parent_id', 'is', null)
    .where('reason_text', '=', 'Incorrect file name')
    .executeTakeFirstOrThrow();
  const response = await as('isc').request({
    method: 'POST',
    url: '/api/queries/new',
    payload: {
      queryObjectType: 'IMAGE',
      objectId: imageId,
      studyId,
      caseId: null,
      followUpInDays: 3,
      withRoleId: role(withRole),
      responseOptionId: reason.id,
      commentText,
    },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ query: QueryView }>().query;
}

async function imageQueries(key: string): Promise<QueryView[]> {
  const response = await as(key).request({ method: 'GET', url: `/api/queries/image/${imageId}` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ queries: QueryView[] }>().queries;
}

beforeAll(async () => {
  t = await createTestApp();
  studyId = (await createStudy(t.database.db)).id;
  await user('isc', 'ISC');
  await user('site1', 'Site');
  await user('site2', 'Site');
  await user('uploader1', 'UPLOADER');
  await user('uploader2', 'UPLOADER');
  imageId = (await createStudyImage(t.database.db, { studyId, uploaderId: users.site1!.id })).id;
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('a query to a role reaches every user of that role in the study', () => {
  it('site2 sees and answers the query sent to Site on the image site1 uploaded', async () => {
    const q = await imageQueryTo('Site', 'The file name does not match the requisition');
    const image = await as('site2').request({ method: 'GET', url: `/api/images/${imageId}` });
    expect(image.statusCode, image.body).toBe(200);
    for (const key of ['site1', 'site2']) {
      const seen = (await imageQueries(key)).find((x) => x.id === q.id);
      expect(seen?.actions).toContain('resolve');
      expect(seen?.actions).toContain('comment');
    }
    const comment = await as('site2').request({
      method: 'POST',
      url: `/api/queries/${q.id}/comment`,
      payload: { commentText: 'Renamed at the site' },
    });
    expect(comment.statusCode, comment.body).toBe(200);
    const resolve = await as('site2').request({
      method: 'PATCH',
      url: `/api/queries/${q.id}/resolve`,
      payload: { resolutionOption: 'Confirmed as correct' },
    });
    expect(resolve.statusCode, resolve.body).toBe(200);
    const row = await t.database.db
      .selectFrom('queries')
      .select('resolution')
      .where('id', '=', q.id)
      .executeTakeFirstOrThrow();
    expect(row.resolution).toBe('RESOLVED');
  });

  it('an Uploader colleague answers the Uploader query; the other role sees neither', async () => {
    const toUploader = await imageQueryTo('UPLOADER', 'Please upload the missing level');
    const toSite = await imageQueryTo('Site', 'Which block is this?');
    expect((await imageQueries('uploader2')).map((x) => x.id)).toEqual([toUploader.id]);
    expect((await imageQueries('uploader2'))[0]!.actions).toContain('resolve');
    expect((await imageQueries('site2')).map((x) => x.id)).not.toContain(toUploader.id);
    expect((await imageQueries('site2')).map((x) => x.id)).toContain(toSite.id);
    const foreign = await as('uploader2').request({
      method: 'PATCH',
      url: `/api/queries/${toSite.id}/resolve`,
      payload: { resolutionOption: 'Confirmed as correct' },
    });
    expect(foreign.statusCode).toBe(404);
  });
});
