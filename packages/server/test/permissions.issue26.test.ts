import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MESSAGES,
  ROLE_PERMISSIONS,
  USER_MESSAGES,
  IMAGE_MESSAGES,
  roleByName,
  type Permission,
  type RoleName,
} from '@lamina/domain';
import { login, type Session } from './testApp.js';
import {
  createOrganization,
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  createUser,
  PASSWORD,
  putUpload,
  studyCreateBody,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { changedTables, databaseFingerprint } from './support/fingerprint.js';

/**
 * Issue 26, items 7–10: permissions that did not match docs/PERMISSIONS.md. Each refusal is proven
 * to change nothing (a fingerprint of every table), each allowed change to write its audit rows.
 */

let t: SlideTestContext;
let fingerprint: () => Promise<Record<string, string>>;
let studyId: number;
const sessions = new Map<string, Session>();
const ids = new Map<string, number>();
let counter = 0;

async function account(key: string, spec: Parameters<typeof createUser>[1]): Promise<Session> {
  const user = await createUser(t.database.db, spec);
  ids.set(key, user.id);
  const session = await login(t.app, user.username, PASSWORD);
  sessions.set(key, session);
  return session;
}
const as = (key: string): Session => {
  const session = sessions.get(key);
  if (!session) throw new Error(`no session ${key}`);
  return session;
};
const idOf = (key: string): number => {
  const id = ids.get(key);
  if (id === undefined) throw new Error(`no user ${key}`);
  return id;
};
const role = (name: RoleName) => roleByName(name).id;

beforeAll(async () => {
  t = await createSlideTestApp();
  fingerprint = await databaseFingerprint(t.database.db);
  studyId = (await createStudy(t.database.db, `Issue 26 ${Date.now()}`)).id;
  const inStudy = (r: RoleName) => ({ studyRoles: [{ studyId, role: r }] });
  await account('isc', inStudy('ISC'));
  await account('dm', inStudy('DM'));
  await account('site', inStudy('Site'));
  await account('uploader', inStudy('UPLOADER'));
  await account('labtech', inStudy('LabTech'));
  await account('lis', inStudy('LIS'));
  await account('studyadmin', { globalRoles: ['StudyAdmin'] });
  await account('sysadmin', { systemAdmin: true });
});
afterAll(async () => {
  await t.close();
});

/** Runs `request` and proves it changed no table. */
async function unchanged<T>(request: () => Promise<T>): Promise<T> {
  const before = await fingerprint();
  const result = await request();
  expect(changedTables(before, await fingerprint())).toEqual([]);
  return result;
}

function expectRefusal(
  response: { statusCode: number; json: () => unknown; body: string },
  status: number,
  message: string,
) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.json()).toEqual({ success: false, message });
}

// ---------------------------------------------------------------------------------------------
// Item 7: replacing an image is for the target of an open query on it, in the roles doc 3 §6 names
// ---------------------------------------------------------------------------------------------

/** A processed image of the study (processing SUCCESS), waiting for lab QC. */
async function processedImage(processingStatus = 'SUCCESS'): Promise<number> {
  const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'small.svs'), `orig-${counter++}.svs`);
  const image = await createUploadedImage(t.database.db, { studyId, s3Key: key });
  await t.database.db
    .updateTable('images')
    .set({ status: 'LAB_QC_PENDING', processing_status: processingStatus })
    .where('id', '=', image.id)
    .execute();
  return image.id;
}

/** An image query as POST /api/queries leaves it: opened by `opener` working as `from`, sent to `to`. */
async function imageQuery(
  imageId: number,
  opener: string,
  from: RoleName,
  to: RoleName,
  state: { status?: 'OPEN' | 'CLOSED'; resolution?: 'RESOLVED' | 'UNRESOLVABLE' | null } = {},
): Promise<number> {
  const row = await t.database.db
    .insertInto('queries')
    .values({
      object_type: 'IMAGE',
      object_id: imageId,
      study_id: studyId,
      opened_by: idOf(opener),
      opened_by_role_id: role(from),
      with_role_id: role(to),
      reason_text: 'Blurry / out of focus',
      query_status: state.status ?? 'OPEN',
      resolution: state.resolution ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** An upload of the study's, as the browser's PUT to a signed URL leaves it: its key. */
const upload = () =>
  putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'small.svs'), `rescan-${counter++}.svs`);

async function replace(who: string, imageToReplaceId: number) {
  const s3Key = await upload();
  return as(who).request({
    method: 'POST',
    url: '/api/images',
    payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId },
  });
}

async function statusOf(imageId: number): Promise<string> {
  const row = await t.database.db
    .selectFrom('images')
    .select('status')
    .where('id', '=', imageId)
    .executeTakeFirstOrThrow();
  return row.status;
}

describe('item 7: replace image only through an open query sent to the replacer’s role', () => {
  it('ISC queries DM about an image: Site (who cannot see the query) cannot replace it; nothing changes', async () => {
    const imageId = await processedImage();
    await imageQuery(imageId, 'isc', 'ISC', 'DM');
    const s3Key = await upload();
    const refused = await unchanged(() =>
      as('site').request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: imageId },
      }),
    );
    expectRefusal(refused, 403, IMAGE_MESSAGES.imageToReplaceNotThroughQuery);
    expect(await statusOf(imageId)).toBe('LAB_QC_PENDING');
  });

  it('the Images tab offers Replace (mayReplace) to the query’s target only, as the service decides', async () => {
    const imageId = await processedImage();
    await imageQuery(imageId, 'isc', 'ISC', 'UPLOADER');
    const failed = await processedImage('FAIL');
    const mayReplace = async (who: string) => {
      const response = await as(who).request({ method: 'GET', url: `/api/studies/${studyId}/images?pageSize=100` });
      expect(response.statusCode, response.body).toBe(200);
      const rows = response.json<{ images: { id: number; mayReplace: boolean }[] }>().images;
      return [rows.find((r) => r.id === imageId)?.mayReplace, rows.find((r) => r.id === failed)?.mayReplace];
    };
    expect(await mayReplace('uploader')).toEqual([true, true]);
    expect(await mayReplace('labtech')).toEqual([false, true]);
    expect(await mayReplace('isc')).toEqual([false, true]);
    expect(await mayReplace('site')).toEqual([false, false]);
  });

  it('refuses a replacer role the query was not sent to (Uploader, LabTech, ISC, StudyAdmin) with 403', async () => {
    const imageId = await processedImage();
    await imageQuery(imageId, 'isc', 'ISC', 'DM');
    for (const who of ['uploader', 'labtech', 'studyadmin']) {
      const s3Key = await upload();
      const refused = await unchanged(() =>
        as(who).request({
          method: 'POST',
          url: '/api/images',
          payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: imageId },
        }),
      );
      expectRefusal(refused, 403, IMAGE_MESSAGES.imageToReplaceNotThroughQuery);
    }
    // The opener (ISC) is not the target either.
    const s3Key = await upload();
    const byOpener = await unchanged(() =>
      as('isc').request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: imageId },
      }),
    );
    expectRefusal(byOpener, 403, IMAGE_MESSAGES.imageToReplaceNotThroughQuery);
    expect(await statusOf(imageId)).toBe('LAB_QC_PENDING');
  });

  it('Site cannot replace even when the query is sent to Site (doc 3 §6: StudyAdmin, ISC, LabTech, Uploader only)', async () => {
    const imageId = await processedImage();
    await imageQuery(imageId, 'isc', 'ISC', 'Site');
    const s3Key = await upload();
    const refused = await unchanged(() =>
      as('site').request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: imageId },
      }),
    );
    expectRefusal(refused, 403, IMAGE_MESSAGES.imageToReplaceNotThroughQuery);
  });

  it('an answered or closed query no longer allows it (409), nor does an image without a query', async () => {
    const answered = await processedImage();
    await imageQuery(answered, 'isc', 'ISC', 'UPLOADER', { resolution: 'RESOLVED' });
    const closed = await processedImage();
    await imageQuery(closed, 'isc', 'ISC', 'UPLOADER', { status: 'CLOSED', resolution: 'RESOLVED' });
    const none = await processedImage();
    for (const imageId of [answered, closed, none]) {
      const s3Key = await upload();
      const refused = await unchanged(() =>
        as('uploader').request({
          method: 'POST',
          url: '/api/images',
          payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: imageId },
        }),
      );
      expectRefusal(refused, 409, IMAGE_MESSAGES.imageToReplaceNotReplaceable);
    }
  });

  it('the target role replaces: the original is archived, the query moves over, all audited', async () => {
    const imageId = await processedImage();
    const queryId = await imageQuery(imageId, 'isc', 'ISC', 'UPLOADER');
    // A second open query, to DM, moves over too.
    const other = await imageQuery(imageId, 'isc', 'ISC', 'DM');
    const response = await replace('uploader', imageId);
    expect(response.statusCode, response.body).toBe(200);
    const replacement = response.json<{ image: { id: number; replacesImageId: number } }>().image;
    expect(replacement.replacesImageId).toBe(imageId);
    expect(await statusOf(imageId)).toBe('ARCHIVED');
    const moved = await t.database.db
      .selectFrom('queries')
      .select(['id', 'object_id'])
      .where('id', 'in', [queryId, other])
      .orderBy('id')
      .execute();
    expect(moved).toEqual([
      { id: queryId, object_id: replacement.id },
      { id: other, object_id: replacement.id },
    ]);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'entity_type', 'entity_id', 'user_id'])
      .where('study_id', '=', studyId)
      .where((eb) =>
        eb.or([
          eb.and([eb('entity_type', '=', 'image'), eb('entity_id', 'in', [String(imageId), String(replacement.id)])]),
          eb.and([eb('entity_type', '=', 'query'), eb('entity_id', 'in', [String(queryId), String(other)])]),
        ]),
      )
      .orderBy('id')
      .execute();
    expect(audit.map((a) => [a.action, a.entity_type, a.user_id])).toEqual([
      ['IMAGE_UPLOADED', 'image', idOf('uploader')],
      ['IMAGE_REPLACED', 'image', idOf('uploader')],
      ['IMAGE_ARCHIVED', 'image', idOf('uploader')],
      ['QUERY_IMAGE_REPLACED', 'query', idOf('uploader')],
      ['QUERY_IMAGE_REPLACED', 'query', idOf('uploader')],
    ]);
  });

  it('each of the four roles replaces through a query sent to it (StudyAdmin, ISC, LabTech)', async () => {
    for (const [who, roleName] of [
      ['studyadmin', 'StudyAdmin'],
      ['isc', 'ISC'],
      ['labtech', 'LabTech'],
    ] as const) {
      const imageId = await processedImage();
      await imageQuery(imageId, 'dm', 'DM', roleName);
      const response = await replace(who, imageId);
      expect(response.statusCode, `${who}: ${response.body}`).toBe(200);
      expect(await statusOf(imageId)).toBe('ARCHIVED');
    }
  });

  it('an image whose processing failed: the four roles may upload it again, Site may not', async () => {
    const failed = await processedImage('FAIL');
    const s3Key = await upload();
    const refused = await unchanged(() =>
      as('site').request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: failed },
      }),
    );
    expectRefusal(refused, 403, IMAGE_MESSAGES.imageToReplaceNotThroughQuery);
    const response = await replace('labtech', failed);
    expect(response.statusCode, response.body).toBe(200);
    expect(await statusOf(failed)).toBe('ARCHIVED');
  });
});

// ---------------------------------------------------------------------------------------------
// Item 8: LIS is Image Management only (no viewer, no slide upload)
// ---------------------------------------------------------------------------------------------

describe('item 8: LIS works in Image Management only', () => {
  it('GET /api/images/{id} (the viewer: file name and tile URL) is refused', async () => {
    const imageId = await processedImage();
    const refused = await as('lis').request({ method: 'GET', url: `/api/images/${imageId}` });
    expectRefusal(refused, 403, MESSAGES.accessDenied);
  });

  it('cannot upload or register slides, by any upload route; nothing changes', async () => {
    const s3Key = await upload();
    const calls: [string, string, object][] = [
      ['POST', '/api/signed-urls', { studyId, fileNames: ['a.svs'] }],
      ['POST', '/api/uploads/multipart', { studyId, fileName: 'a.svs' }],
      ['POST', '/api/uploads/sign', { studyId, method: 'PUT', key: 'a.svs', fileName: 'a.svs' }],
      ['POST', '/api/images', { name: 'slide.svs', s3Key, studyId }],
      ['POST', '/api/images/notify-upload', { studyId, numFiles: 1 }],
    ];
    for (const [method, url, payload] of calls) {
      const refused = await unchanged(() => as('lis').request({ method, url, payload }));
      expect(refused.statusCode, `${method} ${url}`).toBe(403);
      expect(refused.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
    // The roles that upload still do.
    const registered = await as('uploader').request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'slide.svs', s3Key, studyId },
    });
    expect(registered.statusCode, registered.body).toBe(200);
  });

  it('keeps its Image Management work: the images list, sample data, image metadata', async () => {
    const list = await as('lis').request({ method: 'POST', url: '/api/imageManagement/images', payload: {} });
    expect(list.statusCode, list.body).toBe(200);
    const sample = await as('lis').request({
      method: 'POST',
      url: '/api/samples/upload',
      payload: { fileName: 'samples.csv' },
    });
    expect(sample.statusCode, sample.body).toBe(200);
    const imageId = await processedImage();
    const edited = await as('lis').request({
      method: 'PATCH',
      url: `/api/images/${imageId}`,
      payload: { accessionNumber: { value: 'ACC-26', reasonForChange: 'From the LIS' } },
    });
    expect(edited.statusCode, edited.body).toBe(200);
  });

  it('reaches by permission only Image Management routes (the role map and the route policies agree)', () => {
    const held = new Set<Permission>(ROLE_PERMISSIONS.LIS);
    const reached = t.app.registeredRoutes
      .filter((r) => r.method !== 'HEAD')
      .filter((r) => r.policy?.kind === 'permission' && r.policy.anyOf.some((p) => held.has(p)))
      .map((r) => `${r.method} ${r.url}`)
      .sort();
    expect(reached).toEqual(LIS_ROUTES);
  });
});

/**
 * The routes a LIS account passes by permission (HEAD mirrors GET): the studies it may see (the
 * Image Management filters and row menus read them), Image Management's images and annotations lists
 * and image record, sample data, and the image metadata edits. No viewer, no upload.
 */
const LIS_ROUTES = [
  'GET /api/imageManagement/imageRecord/:id',
  'GET /api/samples/progress',
  'GET /api/studies/:id',
  'GET /api/studies/list',
  'PATCH /api/images/:id',
  'POST /api/imageManagement/:id/editImageColumn',
  'POST /api/imageManagement/annotations',
  'POST /api/imageManagement/images',
  'POST /api/samples/process',
  'POST /api/samples/upload',
].sort();

// ---------------------------------------------------------------------------------------------
// Item 9: only a system admin changes a system admin
// ---------------------------------------------------------------------------------------------

describe('item 9: a study admin cannot change a system admin’s account', () => {
  it('PUT /api/users/{sysadmin}: names and organization refused with 403, nothing changes', async () => {
    const target = await createUser(t.database.db, { systemAdmin: true });
    const org = await createOrganization(t.database.db);
    for (const payload of [{ firstName: 'Mallory' }, { organizationId: org.id }, { organizationId: null }, {}]) {
      const refused = await unchanged(() =>
        as('studyadmin').request({ method: 'PUT', url: `/api/users/${target.id}`, payload }),
      );
      expectRefusal(refused, 403, USER_MESSAGES.systemAdminAccount);
    }
    // A system admin may, audited.
    const saved = await as('sysadmin').request({
      method: 'PUT',
      url: `/api/users/${target.id}`,
      payload: { firstName: 'Grace', organizationId: org.id },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'field', 'user_id'])
      .where('entity_type', '=', 'user')
      .where('entity_id', '=', String(target.id))
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { action: 'USER_UPDATED', field: 'firstName', user_id: idOf('sysadmin') },
      { action: 'USER_UPDATED', field: 'organizationId', user_id: idOf('sysadmin') },
    ]);
    // A study admin still edits other accounts.
    const plain = await createUser(t.database.db);
    const ok = await as('studyadmin').request({
      method: 'PUT',
      url: `/api/users/${plain.id}`,
      payload: { firstName: 'Plain' },
    });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a system admin working as another role cannot either', async () => {
    const target = await createUser(t.database.db, { systemAdmin: true });
    const dual = await createUser(t.database.db, { systemAdmin: true, globalRoles: ['StudyAdmin'] });
    const session = await login(t.app, dual.username, PASSWORD);
    const switched = await session.request({
      method: 'PUT',
      url: '/api/users/workAs',
      payload: { roleId: role('StudyAdmin') },
    });
    expect(switched.statusCode, switched.body).toBe(200);
    const refused = await unchanged(() =>
      session.request({ method: 'PUT', url: `/api/users/${target.id}`, payload: { lastName: 'X' } }),
    );
    expectRefusal(refused, 403, USER_MESSAGES.systemAdminAccount);
  });

  it('deactivate and activate: system admins only (a study admin gets 403, nothing changes)', async () => {
    const active = await createUser(t.database.db, { systemAdmin: true });
    const inactive = await createUser(t.database.db, { systemAdmin: true, active: false });
    for (const url of [`/api/users/${active.id}/deactivate`, `/api/users/${inactive.id}/activate`]) {
      const refused = await unchanged(() => as('studyadmin').request({ method: 'PATCH', url, payload: {} }));
      expectRefusal(refused, 403, MESSAGES.accessDenied);
    }
    const done = await as('sysadmin').request({
      method: 'PATCH',
      url: `/api/users/${active.id}/deactivate`,
      payload: { reason: 'left' },
    });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('study access of a system admin: a study admin can neither grant nor revoke it; a system admin can', async () => {
    const target = await createUser(t.database.db, {
      systemAdmin: true,
      studyRoles: [{ studyId, role: 'DM' }],
    });
    const grant = { studyId, userId: target.id, roleId: role('CR') };
    const revoke = { studyId, userId: target.id, roleId: role('DM') };
    expectRefusal(
      await unchanged(() =>
        as('studyadmin').request({ method: 'PATCH', url: '/api/users/studies/add', payload: grant }),
      ),
      403,
      USER_MESSAGES.systemAdminAccount,
    );
    expectRefusal(
      await unchanged(() =>
        as('studyadmin').request({ method: 'PUT', url: '/api/users/studies/remove', payload: revoke }),
      ),
      403,
      USER_MESSAGES.systemAdminAccount,
    );
    // Nor through a new study's user lists.
    expectRefusal(
      await unchanged(() =>
        as('studyadmin').request({
          method: 'POST',
          url: '/api/studies',
          payload: studyCreateBody({ readonlyUsers: [target.id] }),
        }),
      ),
      403,
      USER_MESSAGES.systemAdminAccount,
    );
    const granted = await as('sysadmin').request({ method: 'PATCH', url: '/api/users/studies/add', payload: grant });
    expect(granted.statusCode, granted.body).toBe(200);
    const revoked = await as('sysadmin').request({ method: 'PUT', url: '/api/users/studies/remove', payload: revoke });
    expect(revoked.statusCode, revoked.body).toBe(200);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'old_value', 'new_value', 'user_id'])
      .where('entity_type', '=', 'user')
      .where('entity_id', '=', String(target.id))
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { action: 'STUDY_ACCESS_GRANTED', old_value: null, new_value: 'CR', user_id: idOf('sysadmin') },
      { action: 'STUDY_ACCESS_REVOKED', old_value: 'DM', new_value: null, user_id: idOf('sysadmin') },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Item 10: a system admin grants Site, NOTO and LIS study access
// ---------------------------------------------------------------------------------------------

describe('item 10: Site, NOTO and LIS study access is granted by a system admin', () => {
  it('a system admin grants each, audited; the user then works in the study in that role', async () => {
    const study = await createStudy(t.database.db);
    for (const name of ['Site', 'NOTO', 'LIS'] as const) {
      const user = await createUser(t.database.db);
      const change = { studyId: study.id, userId: user.id, roleId: role(name) };
      const granted = await as('sysadmin').request({ method: 'PATCH', url: '/api/users/studies/add', payload: change });
      expect(granted.statusCode, `${name}: ${granted.body}`).toBe(200);
      expect(granted.json().studyAccess).toEqual([
        { studyId: study.id, studyName: study.name, roleId: role(name), roleName: name },
      ]);
      const audit = await t.database.db
        .selectFrom('audit_events')
        .select(['action', 'study_id', 'new_value', 'user_id'])
        .where('entity_type', '=', 'user')
        .where('entity_id', '=', String(user.id))
        .execute();
      expect(audit).toEqual([
        { action: 'STUDY_ACCESS_GRANTED', study_id: study.id, new_value: name, user_id: idOf('sysadmin') },
      ]);
      const session = await login(t.app, user.username, PASSWORD);
      const info = await session.request({ method: 'GET', url: '/api/users/info' });
      expect(info.json().workAsRole).toMatchObject({ name });
      // …and a system admin revokes it again.
      const revoked = await as('sysadmin').request({
        method: 'PUT',
        url: '/api/users/studies/remove',
        payload: change,
      });
      expect(revoked.statusCode, revoked.body).toBe(200);
    }
  });

  it('nobody else grants them (400), a system admin working as another role neither; nothing changes', async () => {
    const user = await createUser(t.database.db);
    const dual = await createUser(t.database.db, { systemAdmin: true, globalRoles: ['StudyAdmin'] });
    const dualSession = await login(t.app, dual.username, PASSWORD);
    await dualSession.request({ method: 'PUT', url: '/api/users/workAs', payload: { roleId: role('StudyAdmin') } });
    for (const name of ['Site', 'NOTO', 'LIS'] as const) {
      const change = { studyId, userId: user.id, roleId: role(name) };
      for (const session of [as('studyadmin'), dualSession]) {
        const refused = await unchanged(() =>
          session.request({ method: 'PATCH', url: '/api/users/studies/add', payload: change }),
        );
        expectRefusal(refused, 400, USER_MESSAGES.roleNotAssignable);
      }
    }
  });

  it('SystemAdmin and StudyAdmin are never study access, even for a system admin', async () => {
    const user = await createUser(t.database.db);
    for (const name of ['SystemAdmin', 'StudyAdmin'] as const) {
      const refused = await unchanged(() =>
        as('sysadmin').request({
          method: 'PATCH',
          url: '/api/users/studies/add',
          payload: { studyId, userId: user.id, roleId: role(name) },
        }),
      );
      expectRefusal(refused, 400, USER_MESSAGES.roleNotAssignable);
    }
  });
});
