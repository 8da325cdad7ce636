// engine: postgres — every route's allowed request on the pg driver and the server's version (PGlite is 18, CI's 15)
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CSRF_HEADER,
  MESSAGES,
  ROLE_PERMISSIONS,
  roleByName,
  SESSION_COOKIE,
  VIEW_ALL_STUDIES,
  type RoleName,
} from '@lamina/domain';
import type { RegisteredRoute } from '../src/app.js';
import { processImage } from '../src/modules/processing/processImage.js';
import { sampleResultKey, UploadKeys } from '../src/platform/storage/keys.js';
import { login, type Session } from './testApp.js';
import {
  assignReader,
  createCase,
  createQuery,
  createStudyImage,
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
 * The route-walking test (issue 10): every registered route must have a fixture here, and each
 * fixture proves against the real server, from the route's declared policy:
 * - 401 logged out (every route but public and signed-URL ones);
 * - 403 for every role that holds none of the route's permissions, and for an unregistered account
 *   (permission and system-admin routes; for the latter every role but SystemAdmin, and a system
 *   admin working as another role), each refusal changing nothing;
 * - 404 for a user of the allowed role without access to the study (study- and resource-scoped
 *   routes; for roles that see every study, a study or resource that does not exist);
 * - for mutations: refused without the CSRF token, changing nothing; with it, the allowed request
 *   succeeds and writes its audit row (or the fixture says why the route records nothing).
 * A new route cannot land without its fixture.
 */

type Caller = { session: Session; userId: number };

interface Targets {
  studyId: number;
  imageId: number;
  caseId: number;
}

interface Fixture {
  /** The role that may call the route (holding one of its permissions), with access to study A. */
  as: RoleName | 'sysadmin';
  /**
   * Whether the route touches one study (`scoped`: a user without access to it gets 404) or is
   * cross-study (`global`). Written here independently of the route's policy, so a route declared
   * global by mistake fails the 404 check instead of skipping it.
   */
  scope: 'scoped' | 'global';
  /** The request, addressed to `targets` (study A, or a missing study/resource for the 404 check). */
  request: (
    targets: Targets,
    caller: Caller,
  ) => Promise<{ url: string; payload?: object }> | { url: string; payload?: object };
  /** Expected answer of the allowed request. Default 200. */
  ok?: number;
  /** Mutations: the audit action the allowed request writes, or why it writes none. */
  audit?: string | { none: string };
  /** The route ends or changes its caller's session: it runs with a fresh account each time. */
  ownAccount?: boolean;
  /** The route answers bytes (an image, a CSV or PDF file), not JSON: no response schema. */
  binary?: boolean;
  /**
   * The route streams a JSON document the database writes from an explicit field list (too large to
   * encode through a schema): why, and where a test holds its rows to the domain's schema.
   */
  streamed?: string;
}

const MISSING: Targets = { studyId: 999_999, imageId: 999_999, caseId: 999_999 };

let t: SlideTestContext;
let fingerprint: () => Promise<Record<string, string>>;
let keys: UploadKeys;
/** Study A and its processed image. */
let A: Targets;
/** Study B: the outsiders' study. */
let studyB: number;
/** Study C: where images are moved to. */
let studyC: number;
const insiders = new Map<string, Caller>();
const outsiders = new Map<string, Caller>();
let counter = 0;

const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

async function caller(role: RoleName | 'sysadmin', studyId: number): Promise<Caller> {
  const db = t.database.db;
  const user =
    role === 'sysadmin'
      ? await createUser(db, { systemAdmin: true, globalRoles: ['SystemAdmin'] })
      : role === 'StudyAdmin'
        ? await createUser(db, { globalRoles: ['StudyAdmin'] })
        : await createUser(db, { studyRoles: [{ studyId, role }] });
  return { session: await login(t.app, user.username, PASSWORD), userId: user.id };
}

async function insider(role: RoleName | 'sysadmin'): Promise<Caller> {
  const known = insiders.get(role);
  if (known) return known;
  const made = await caller(role, A.studyId);
  insiders.set(role, made);
  return made;
}

async function unregistered(): Promise<Caller> {
  const user = await createUser(t.database.db, { registered: false });
  return { session: await login(t.app, user.username, PASSWORD), userId: user.id };
}

async function outsider(role: RoleName): Promise<Caller> {
  const known = outsiders.get(role);
  if (known) return known;
  const made = await caller(role, studyB);
  outsiders.set(role, made);
  return made;
}

/** An upload in `studyId` issued to `userId`, with bytes stored (as after the browser's PUT). */
async function uploaded(studyId: number, userId: number): Promise<string> {
  const key = keys.issue(studyId, userId, `slide-${unique()}.svs`);
  await t.app.slides.storage.write(key, { filePath: path.join(WSI_DIR, 'small.svs') });
  return key;
}

/** A sample-data file issued to `userId`, stored (as after the browser's PUT): its process request. */
async function sampleFile(userId: number) {
  const key = keys.issueSample(userId, `samples-${unique()}.csv`);
  await t.app.slides.storage.write(key, Buffer.from('File Name,QA Comments\r\nnothing-here.svs,x\r\n'));
  return { s3SampleDataKey: key, fileName: 'samples.csv', resultFileKey: sampleResultKey(key) };
}

async function multipart(studyId: number, userId: number) {
  const key = keys.issue(studyId, userId, `big-${unique()}.svs`);
  const { uploadId } = await t.app.slides.storage.createMultipartUpload(key);
  return { key, uploadId };
}

async function newUser() {
  return createUser(t.database.db, { registered: false });
}

const NO_RECORD = { none: 'signs storage URLs; the upload is audited when it is registered (IMAGE_UPLOADED)' };

const studyBody = () => studyCreateBody({ name: `Route study ${unique()}` });

/** A study made through the API (a complete configuration, as PUT checks the merged one). */
async function configuredStudy(): Promise<number> {
  const admin = await insider('StudyAdmin');
  const response = await send(admin.session, 'POST', { url: '/api/studies', payload: studyBody() });
  return response.json<{ study: { id: number } }>().study.id;
}

/**
 * A new case of study A in `status` (with `prev` as its history and `onHoldFrom`), holding one image
 * at the matching stage — or, for the 404 check, the missing case id.
 */
async function freshCase(
  s: Targets,
  status = 'PENDING_LAB_QC',
  more: { prev?: string[]; onHoldFrom?: string; imageStatus?: string } = {},
): Promise<number> {
  if (s === MISSING) return s.caseId;
  const db = t.database.db;
  const { id } = await createCase(db, { studyId: A.studyId, status });
  await db
    .updateTable('cases')
    .set({ prev_workflow_statuses: more.prev ?? [], on_hold_from: more.onHoldFrom ?? null, proc_id: `RT-${unique()}` })
    .where('id', '=', id)
    .execute();
  await createStudyImage(db, { studyId: A.studyId, caseId: id, status: more.imageStatus ?? 'LAB_QC_PENDING' });
  return id;
}

/** The image of a new case of study A (see freshCase), or the missing image id. */
async function freshCaseImage(s: Targets): Promise<number> {
  if (s === MISSING) return s.imageId;
  const caseId = await freshCase(s);
  const image = await t.database.db
    .selectFrom('images')
    .select('id')
    .where('case_id', '=', caseId)
    .executeTakeFirstOrThrow();
  return image.id;
}

/** A new image of study A in a query chain, or the missing image id. */
async function queriedImage(s: Targets): Promise<number> {
  const id = await freshImage(s);
  if (s !== MISSING) await createQuery(t.database.db, { studyId: A.studyId, objectId: id });
  return id;
}

/**
 * A new query on study A's case, opened by `openedBy` and with `withRole`, in the given state, with
 * its first reminder; or the missing id (404 check).
 */
async function freshQuery(
  s: Targets,
  openedBy: RoleName,
  withRole: RoleName,
  state: { resolution?: 'RESOLVED' | null } = {},
): Promise<{ id: number; reminderId: number }> {
  if (s === MISSING) return { id: 999_999, reminderId: 999_999 };
  const db = t.database.db;
  const query = await db
    .insertInto('queries')
    .values({
      object_type: 'CASE',
      object_id: A.caseId,
      case_id: A.caseId,
      study_id: A.studyId,
      opened_by_role_id: roleByName(openedBy).id,
      with_role_id: roleByName(withRole).id,
      resolution: state.resolution ?? null,
      reason_text: 'Other',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const reminder = await db
    .insertInto('query_reminders')
    .values({ query_id: query.id, follow_up_on: '2030-01-01' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .updateTable('queries')
    .set({ first_reminder_id: reminder.id, last_reminder_id: reminder.id, latest_follow_up_on: '2030-01-01' })
    .where('id', '=', query.id)
    .execute();
  return { id: query.id, reminderId: reminder.id };
}

/** A reason of the catalogue offered for case queries to DM. */
async function caseReasonForDm(): Promise<number> {
  const row = await t.database.db
    .selectFrom('query_reasons')
    .select('id')
    .where('object_type', '=', 'CASE')
    .where('with_role_id', '=', roleByName('DM').id)
    .where('parent_id', 'is', null)
    .where('reason_text', '=', 'Wrong site')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A new top-level reason (sysadmin fixtures), named uniquely. */
async function freshReason(): Promise<number> {
  const row = await t.database.db
    .insertInto('query_reasons')
    .values({ object_type: 'IMAGE', with_role_id: roleByName('LabTech').id, reason_text: `Route reason ${unique()}` })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** An uploaded .mld of `userId` (stored, as after the browser's PUT): its register body. */
async function mldUpload(userId: number, imageId: number | null) {
  const key = keys.issueMld(userId, `import-${unique()}.mld`);
  await t.app.slides.storage.write(key, Buffer.from('LDFF'));
  return { name: 'result.mld', s3Key: key, ...(imageId !== null ? { imageId } : {}) };
}

/** A completed import of study A's image with a heatmap stored, or a missing id. */
async function completedMld(s: Targets, c: Caller): Promise<number> {
  if (s === MISSING) return 999_999;
  const db = t.database.db;
  const key = `mld/imports/route-${unique()}/heatmap.png`;
  await t.app.slides.storage.write(key, Buffer.from('png'));
  const row = await db
    .insertInto('mld_files')
    .values({
      name: 'done.mld',
      s3_key: `mld/u${c.userId}-x-${unique()}/done.mld`,
      size_bytes: 4,
      image_id: A.imageId,
      study_id: A.studyId,
      uploader_id: c.userId,
      status: 'COMPLETE',
      heatmap_key: key,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A new image of study A waiting for a case, or the missing image id for the 404 check. */
async function freshImage(s: Targets): Promise<number> {
  if (s === MISSING) return s.imageId;
  return (await createStudyImage(t.database.db, { studyId: A.studyId })).id;
}

/**
 * An image of a new case of study A read by the caller (a central reader), 1000 px square, or the
 * missing image id. An outsider is assigned too: the study scope alone must refuse them.
 */
async function readerImage(s: Targets, c: Caller): Promise<number> {
  if (s === MISSING) return s.imageId;
  const db = t.database.db;
  const { id: caseId } = await createCase(db, { studyId: A.studyId, status: 'PROCESSED' });
  const { id } = await createStudyImage(db, { studyId: A.studyId, caseId, status: 'READY_FOR_READING', width: 1000 });
  await assignReader(db, { caseId, userId: c.userId });
  return id;
}

/** A point the caller drew on a reader image (see readerImage), or a missing annotation id. */
async function readerAnnotation(s: Targets, c: Caller): Promise<number> {
  if (s === MISSING) return 999_999;
  const imageId = await readerImage(s, c);
  const row = await t.database.db
    .insertInto('annotations')
    .values({
      image_id: imageId,
      annotation_type: 'POINT',
      geometry: JSON.stringify({ type: 'Point', coordinates: [10, 10] }),
      user_id: c.userId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A point the caller drew on a reader image and deleted (for the restore), or a missing id. */
async function readerDeletedAnnotation(s: Targets, c: Caller): Promise<number> {
  const id = await readerAnnotation(s, c);
  if (s === MISSING) return id;
  await t.database.db
    .updateTable('annotations')
    .set({ deleted_at: new Date(), deleted_by: c.userId, status: 'DELETED' })
    .where('id', '=', id)
    .execute();
  return id;
}

/**
 * One fixture per route: `METHOD url` as registered. HEAD routes are covered by their GET.
 * `publicRedirect`: a public page-load route that answers redirects, never JSON (the OpenID Connect
 * login and callback; test/oidc.test.ts drives them against a real provider); without single
 * sign-on configured, as here, it answers 404.
 */
const FIXTURES: Record<string, Fixture | 'public' | 'publicRedirect' | 'signedUrl'> = {
  'GET /api/config': 'public',
  'GET /api/health': 'public',
  'GET /api/ready': 'public',
  'POST /api/auth/login': 'public',
  'GET /api/auth/session': 'public',
  'GET /api/auth/oidc/login': 'publicRedirect',
  'GET /api/auth/oidc/callback': 'publicRedirect',
  'POST /api/auth/logout': {
    scope: 'global',
    as: 'LabTech',
    ownAccount: true,
    request: () => ({ url: '/api/auth/logout' }),
    audit: 'LOGOUT',
  },
  'GET /api/auth/csrf': { as: 'CR', scope: 'global', request: () => ({ url: '/api/auth/csrf' }) },
  'POST /api/auth/password': {
    scope: 'global',
    as: 'LabTech',
    ownAccount: true,
    request: () => ({
      url: '/api/auth/password',
      payload: { currentPassword: PASSWORD, newPassword: 'an entirely new passphrase 42' },
    }),
    audit: 'PASSWORD_CHANGED',
  },
  'GET /api/users/info': { as: 'CR', scope: 'global', request: () => ({ url: '/api/users/info' }) },
  'GET /api/users/availableRoles': { as: 'CR', scope: 'global', request: () => ({ url: '/api/users/availableRoles' }) },
  'PUT /api/users/workAs': {
    scope: 'global',
    as: 'DM',
    ownAccount: true,
    request: async (_t, c) => {
      await t.database.db
        .insertInto('study_access')
        .values({ user_id: c.userId, study_id: A.studyId, role_id: roleByName('PM').id })
        .execute();
      return { url: '/api/users/workAs', payload: { roleId: roleByName('PM').id } };
    },
    audit: 'WORK_AS_ROLE_CHANGED',
  },
  'GET /api/studies/list': { as: 'LabTech', scope: 'global', request: () => ({ url: '/api/studies/list' }) },
  'GET /api/studies/:id': { as: 'LabTech', scope: 'scoped', request: (s) => ({ url: `/api/studies/${s.studyId}` }) },
  'POST /api/studies': {
    scope: 'global',
    as: 'StudyAdmin',
    ok: 201,
    request: () => ({ url: '/api/studies', payload: studyBody() }),
    audit: 'STUDY_CREATED',
  },
  'PUT /api/studies/:id': {
    scope: 'scoped',
    as: 'StudyAdmin',
    request: async (s) => {
      const id = s === MISSING ? s.studyId : await configuredStudy();
      return {
        url: `/api/studies/${id}`,
        payload: { sponsor: { value: `Sponsor ${unique()}`, reasonForChange: 'route test' } },
      };
    },
    audit: 'STUDY_UPDATED',
  },
  'GET /api/storage/*': 'signedUrl',
  'PUT /api/storage/*': 'signedUrl',
  'POST /api/storage/*': 'signedUrl',
  'DELETE /api/storage/*': 'signedUrl',
  'GET /tiles/:imageId/:z/:x/:y': 'signedUrl',
  'POST /api/signed-urls': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: (s) => ({ url: '/api/signed-urls', payload: { studyId: s.studyId, fileNames: ['a.svs'] } }),
    audit: NO_RECORD,
  },
  'POST /api/uploads/multipart': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: (s) => ({ url: '/api/uploads/multipart', payload: { studyId: s.studyId, fileName: 'a.svs' } }),
    audit: NO_RECORD,
  },
  'GET /api/uploads/multipart/:uploadId/parts': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: async (s, c) => {
      const m = await multipart(s === MISSING ? A.studyId : s.studyId, c.userId);
      return { url: `/api/uploads/multipart/${m.uploadId}/parts?key=${encodeURIComponent(m.key)}` };
    },
  },
  'POST /api/uploads/multipart/:uploadId/parts/:partNumber/url': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: async (s, c) => {
      const m = await multipart(s.studyId === MISSING.studyId ? A.studyId : s.studyId, c.userId);
      return { url: `/api/uploads/multipart/${m.uploadId}/parts/1/url`, payload: { key: m.key } };
    },
    audit: NO_RECORD,
  },
  'POST /api/uploads/multipart/:uploadId/urls': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: async (s, c) => {
      const m = await multipart(s.studyId === MISSING.studyId ? A.studyId : s.studyId, c.userId);
      return { url: `/api/uploads/multipart/${m.uploadId}/urls`, payload: { key: m.key, partNumbers: [1, 2] } };
    },
    audit: NO_RECORD,
  },
  'POST /api/uploads/multipart/:uploadId/complete': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: async (s, c) => {
      const m = await multipart(s.studyId === MISSING.studyId ? A.studyId : s.studyId, c.userId);
      const url = await t.app.slides.storage.signedPartUrl(m.key, m.uploadId, 1, 60);
      const part = await t.app.inject({ method: 'PUT', url, payload: Buffer.from('part one') });
      const etag = String(part.headers.etag).replace(/"/g, '');
      return {
        url: `/api/uploads/multipart/${m.uploadId}/complete`,
        payload: { key: m.key, parts: [{ partNumber: 1, etag }] },
      };
    },
    audit: { none: 'assembles an upload; it is audited when registered (IMAGE_UPLOADED)' },
  },
  'DELETE /api/uploads/multipart/:uploadId': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: async (s, c) => {
      const m = await multipart(s.studyId === MISSING.studyId ? A.studyId : s.studyId, c.userId);
      return { url: `/api/uploads/multipart/${m.uploadId}?key=${encodeURIComponent(m.key)}` };
    },
    audit: { none: 'discards parts of an upload nobody registered' },
  },
  'POST /api/uploads/sign': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: (s) => ({
      url: '/api/uploads/sign',
      payload: { studyId: s.studyId, method: 'PUT', key: 'x.svs', fileName: 'x.svs' },
    }),
    audit: NO_RECORD,
  },
  'POST /api/samples/upload': {
    scope: 'global',
    as: 'LabTech',
    request: () => ({ url: '/api/samples/upload', payload: { fileName: 'samples.csv' } }),
    audit: { none: 'signs a storage URL; the import is audited when processed (SAMPLE_DATA_IMPORTED)' },
  },
  'POST /api/samples/process': {
    scope: 'global',
    as: 'LabTech',
    request: async (_s, c) => ({ url: '/api/samples/process', payload: await sampleFile(c.userId) }),
    audit: 'SAMPLE_DATA_IMPORTED',
  },
  'GET /api/samples/progress': {
    scope: 'global',
    as: 'LabTech',
    request: async (_s, c) => {
      const file = await sampleFile(c.userId);
      await t.database.db
        .insertInto('sample_imports')
        .values({
          user_id: c.userId,
          sample_key: file.s3SampleDataKey,
          result_key: file.resultFileKey,
          file_name: 'x.csv',
        })
        .execute();
      return { url: `/api/samples/progress?s3SampleDataKey=${encodeURIComponent(file.s3SampleDataKey)}` };
    },
  },
  'POST /api/images': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: async (s, c) => ({
      url: '/api/images',
      payload: {
        name: 'slide.svs',
        s3Key: await uploaded(s.studyId === MISSING.studyId ? A.studyId : s.studyId, c.userId),
        studyId: s.studyId,
      },
    }),
    audit: 'IMAGE_UPLOADED',
  },
  'POST /api/images/notify-upload': {
    scope: 'scoped',
    as: 'UPLOADER',
    request: (s) => ({ url: '/api/images/notify-upload', payload: { studyId: s.studyId, numFiles: 1 } }),
    audit: 'UPLOAD_NOTIFIED',
  },
  'GET /api/images/:id': { as: 'LabTech', scope: 'scoped', request: (s) => ({ url: `/api/images/${s.imageId}` }) },
  'GET /api/studies/:id/images': {
    as: 'LabTech',
    scope: 'scoped',
    request: (s) => ({ url: `/api/studies/${s.studyId}/images` }),
  },
  'GET /api/images/:id/label': {
    as: 'LabTech',
    scope: 'scoped',
    binary: true,
    request: (s) => ({ url: `/api/images/${s.imageId}/label` }),
  },
  'GET /api/images/:id/macro': {
    as: 'LabTech',
    scope: 'scoped',
    binary: true,
    request: (s) => ({ url: `/api/images/${s.imageId}/macro` }),
  },
  'GET /api/signed-urls/image/:id': {
    scope: 'scoped',
    as: 'LabTech',
    request: (s) => ({ url: `/api/signed-urls/image/${s.imageId}` }),
    audit: 'IMAGE_DOWNLOADED',
  },
  'POST /api/cases': {
    scope: 'scoped',
    as: 'LabTech',
    ok: 201,
    request: (s) => ({
      url: '/api/cases',
      payload: { studyId: s.studyId, procId: `RT-${unique()}`, subjectId: 'S-1' },
    }),
    audit: 'CASE_CREATED',
  },
  'GET /api/cases/assigned': { as: 'CR', scope: 'global', request: () => ({ url: '/api/cases/assigned' }) },
  'POST /api/imageManagement/images': {
    as: 'LabTech',
    scope: 'global',
    request: () => ({ url: '/api/imageManagement/images', payload: {} }),
    audit: { none: 'a list: reads only' },
  },
  'POST /api/imageManagement/cases': {
    as: 'LabTech',
    scope: 'global',
    request: () => ({ url: '/api/imageManagement/cases', payload: {} }),
    audit: { none: 'a list: reads only' },
  },
  'POST /api/imageManagement/:id/editImageColumn': {
    as: 'LabTech',
    scope: 'scoped',
    request: (s) => ({
      url: `/api/imageManagement/${s.imageId}/editImageColumn`,
      // A new value each time (an unchanged value is refused); a reason, since one may exist.
      payload: { tabName: 'images', columnName: 'qaComments', columnValue: `QA ${unique()}`, reasonForChange: 'Walk' },
    }),
    audit: 'IMAGE_EDITED',
  },
  'GET /api/imageManagement/imageRecord/:id': {
    as: 'LabTech',
    scope: 'scoped',
    request: (s) => ({ url: `/api/imageManagement/imageRecord/${s.imageId}` }),
  },
  'GET /api/imageManagement/caseRecord/:id': {
    as: 'LabTech',
    scope: 'scoped',
    request: (s) => ({ url: `/api/imageManagement/caseRecord/${s.caseId}` }),
  },
  'GET /api/cases/:id': { as: 'LabTech', scope: 'scoped', request: (s) => ({ url: `/api/cases/${s.caseId}` }) },
  'GET /api/cases/:id/outcomes': {
    as: 'ISC',
    scope: 'scoped',
    request: (s) => ({ url: `/api/cases/${s.caseId}/outcomes` }),
  },
  'GET /api/studies/:id/agreement': {
    as: 'ISC',
    scope: 'scoped',
    request: (s) => ({ url: `/api/studies/${s.studyId}/agreement` }),
  },
  'GET /api/studies/:id/outcomes': {
    as: 'ISC',
    scope: 'scoped',
    request: (s) => ({ url: `/api/studies/${s.studyId}/outcomes?page=1&pageSize=10` }),
  },
  'GET /api/studies/:id/outcomes/pairs': {
    as: 'ISC',
    scope: 'scoped',
    // A key the study names (any other is 400): study A's first endpoint; until the reader-isolation
    // sequence below gives it one, an endpoint that needs no point class.
    request: async (s) => {
      const db = t.database.db;
      const study = await db.selectFrom('studies').select('endpoints').where('id', '=', s.studyId).executeTakeFirst();
      let key = (study?.endpoints as { key: string }[] | undefined)?.[0]?.key;
      if (study && key === undefined) {
        key = 'walk';
        await db
          .updateTable('studies')
          .set({ endpoints: JSON.stringify([{ key, label: 'Walk', kind: 'VH_CD_RATIO' }]) })
          .where('id', '=', s.studyId)
          .execute();
      }
      return { url: `/api/studies/${s.studyId}/outcomes/pairs?endpointKey=${key ?? 'walk'}` };
    },
  },
  'PATCH /api/cases/:id': {
    scope: 'scoped',
    as: 'LabTech',
    request: (s) => ({
      url: `/api/cases/${s.caseId}`,
      payload: { subjectId: { value: `S-${unique()}`, reasonForChange: 'Corrected from the requisition' } },
    }),
    audit: 'CASE_EDITED',
  },
  'PATCH /api/cases/:id/status/forward': {
    scope: 'scoped',
    as: 'LabTech',
    request: async (s) => ({ url: `/api/cases/${await freshCase(s)}/status/forward` }),
    audit: 'CASE_STATUS_FORWARDED',
  },
  'PATCH /api/cases/:id/status/back': {
    scope: 'scoped',
    as: 'LabTech',
    request: async (s) => ({
      url: `/api/cases/${await freshCase(s, 'PENDING_QC', { prev: ['PENDING_LAB_QC'], imageStatus: 'ISC_QC_PENDING' })}/status/back`,
      payload: { value: 'PENDING_LAB_QC', reason: 'Lab QC must be repeated' },
    }),
    audit: 'CASE_STATUS_REVERTED',
  },
  'PATCH /api/cases/:id/reads/:readerId/reopen': {
    scope: 'scoped',
    as: 'LabTech',
    request: async (s) => {
      if (s === MISSING)
        return { url: `/api/cases/${s.caseId}/reads/999999/reopen`, payload: { reasonForChange: 'x' } };
      const caseId = await freshCase(s, 'PROCESSED', {
        prev: ['PENDING_LAB_QC', 'PENDING_QC'],
        imageStatus: 'READY_FOR_READING',
      });
      const reader = await createUser(t.database.db, { studyRoles: [{ studyId: A.studyId, role: 'CR' }] });
      await assignReader(t.database.db, { caseId, userId: reader.id, read: true });
      return { url: `/api/cases/${caseId}/reads/${reader.id}/reopen`, payload: { reasonForChange: 'HPF 2 redrawn' } };
    },
    audit: 'CASE_READ_REOPENED',
  },
  // Issue 30: a case pending adjudication gets its adjudicator, a central reader of the study.
  'PATCH /api/cases/:id/adjudicator': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => {
      const caseId = await freshCase(s, 'PENDING_ADJUDICATION', {
        prev: ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'],
        imageStatus: 'READY_FOR_READING',
      });
      const adjudicator = await createUser(t.database.db, { studyRoles: [{ studyId: A.studyId, role: 'CR' }] });
      return { url: `/api/cases/${caseId}/adjudicator`, payload: { readerId: adjudicator.id } };
    },
    audit: 'CASE_ADJUDICATOR_CHANGED',
  },
  'PATCH /api/cases/:id/status/on_hold': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/cases/${await freshCase(s)}/status/on_hold`,
      payload: { reasonForChange: 'Waiting for the site' },
    }),
    audit: 'CASE_PUT_ON_HOLD',
  },
  'PATCH /api/cases/:id/status/off_hold': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/cases/${await freshCase(s, 'ON_HOLD', { onHoldFrom: 'PENDING_LAB_QC' })}/status/off_hold`,
      payload: { reasonForChange: 'The site answered' },
    }),
    audit: 'CASE_HOLD_REMOVED',
  },
  'PATCH /api/cases/:id/archive': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/cases/${await freshCase(s)}/archive`,
      payload: { reasonForChange: 'Created twice' },
    }),
    audit: 'CASE_ARCHIVED',
  },
  'PUT /api/cases/:caseId/assign': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/cases/${s.caseId}/assign`,
      payload: {
        imageId: (await createStudyImage(t.database.db, { studyId: A.studyId })).id,
        reasonForChange: 'Belongs to this procedure',
      },
    }),
    audit: 'IMAGE_CASE_ASSIGNED',
  },
  'GET /api/cases': { as: 'LabTech', scope: 'scoped', request: (s) => ({ url: `/api/cases?studyId=${s.studyId}` }) },
  'GET /api/studies/:id/cases': {
    as: 'LabTech',
    scope: 'scoped',
    request: (s) => ({ url: `/api/studies/${s.studyId}/cases` }),
  },
  'GET /api/studies/:id/users': {
    as: 'DM',
    scope: 'scoped',
    request: (s) => ({ url: `/api/studies/${s.studyId}/users` }),
  },
  'GET /api/users/suggest-readers': {
    as: 'DM',
    scope: 'scoped',
    request: (s) => ({ url: `/api/users/suggest-readers?studyId=${s.studyId}&subjectId=S-1` }),
  },
  'GET /api/studies/:id/cases/images': {
    as: 'LabTech',
    scope: 'scoped',
    request: (s) => ({ url: `/api/studies/${s.studyId}/cases/images` }),
  },
  'PATCH /api/images/:id': {
    scope: 'scoped',
    as: 'LabTech',
    request: (s) => ({
      url: `/api/images/${s.imageId}`,
      payload: { accessionNumber: { value: `ACC-${unique()}`, reasonForChange: 'Read from the label' } },
    }),
    audit: 'IMAGE_EDITED',
  },
  'PATCH /api/images/:id/study': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s, c) => {
      // The target study must be visible to an ISC caller too (only ISC callers: a second role
      // would change which role another caller works as).
      const db = t.database.db;
      const isc = roleByName('ISC').id;
      const held = await db
        .selectFrom('study_access')
        .select('study_id')
        .where('user_id', '=', c.userId)
        .where('role_id', '=', isc)
        .execute();
      if (held.length > 0 && !held.some((h) => h.study_id === studyC))
        await db.insertInto('study_access').values({ user_id: c.userId, study_id: studyC, role_id: isc }).execute();
      return {
        url: `/api/images/${await freshImage(s)}/study`,
        payload: { value: studyC, reasonForChange: 'Uploaded to the wrong study' },
      };
    },
    audit: 'IMAGE_MOVED_STUDY',
  },
  'PATCH /api/images/:id/pass-qc': {
    scope: 'scoped',
    as: 'LabTech',
    request: async (s) => ({ url: `/api/images/${await freshCaseImage(s)}/pass-qc` }),
    audit: 'IMAGE_QC_PASSED',
  },
  'GET /api/images/:id/annotations': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/images/${s.imageId}/annotations` }),
    streamed: '200,000 rows; annotations.test.ts parses every row with annotationViewSchema (strict)',
  },
  'GET /api/images/:id/annotations.geojson': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/images/${s.imageId}/annotations.geojson` }),
    streamed: 'a GeoJSON file; annotations.test.ts checks its features and imports them back',
  },
  'POST /api/annotations': {
    scope: 'scoped',
    as: 'CR',
    request: async (s, c) => ({
      url: '/api/annotations',
      payload: {
        imageId: await readerImage(s, c),
        annotationType: 'POINT',
        geometry: { type: 'Point', coordinates: [5, 5] },
      },
    }),
    audit: 'ANNOTATION_CREATED',
  },
  'DELETE /api/annotations/:id': {
    scope: 'scoped',
    as: 'CR',
    request: async (s, c) => ({ url: `/api/annotations/${await readerAnnotation(s, c)}?deleteNested=false` }),
    audit: 'ANNOTATION_DELETED',
  },
  'POST /api/annotations/:id/restore': {
    scope: 'scoped',
    as: 'CR',
    request: async (s, c) => ({ url: `/api/annotations/${await readerDeletedAnnotation(s, c)}/restore` }),
    audit: 'ANNOTATION_RESTORED',
  },
  'POST /api/images/:id/annotations/import': {
    scope: 'scoped',
    as: 'CR',
    request: async (s, c) => ({
      url: `/api/images/${await readerImage(s, c)}/annotations/import`,
      payload: {
        type: 'FeatureCollection',
        features: [{ type: 'Feature', geometry: { type: 'Point', coordinates: [7, 7] }, properties: {} }],
      },
    }),
    audit: 'ANNOTATIONS_IMPORTED',
  },
  'PATCH /api/images/:id/toggle-image-visibility': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({ url: `/api/images/${await queriedImage(s)}/toggle-image-visibility` }),
    audit: 'IMAGE_VISIBILITY_CHANGED',
  },
  // Reports (issue 16): GET downloads that write their own audit row (the export is an event).
  'GET /api/audit-trail': {
    scope: 'scoped',
    as: 'DM',
    request: (s) => ({ url: `/api/audit-trail?reportFormat=csv&studyId=${s.studyId}` }),
    binary: true,
  },
  'GET /api/report/:studyId/:type': {
    scope: 'scoped',
    as: 'DM',
    request: (s) => ({ url: `/api/report/${s.studyId}/query` }),
    binary: true,
  },
  'GET /api/report/:type': {
    scope: 'scoped',
    as: 'DM',
    request: (s) => ({ url: `/api/report/image-details?studyId=${s.studyId}` }),
    binary: true,
  },
  // Imported AI annotations (issue 17)
  'POST /api/mld/get-signed-urls': {
    scope: 'global',
    as: 'ISC',
    request: () => ({ url: '/api/mld/get-signed-urls', payload: { fileNames: ['results.mld'] } }),
    audit: NO_RECORD,
  },
  'POST /api/mld': {
    scope: 'scoped',
    as: 'ISC',
    ok: 201,
    request: async (s, c) => ({
      url: '/api/mld',
      payload: await mldUpload(c.userId, s === MISSING ? s.imageId : A.imageId),
    }),
    audit: 'MLD_UPLOADED',
  },
  'POST /api/imageManagement/annotations': {
    scope: 'global',
    as: 'ISC',
    request: () => ({ url: '/api/imageManagement/annotations', payload: {} }),
    audit: { none: 'a list (POST for its filter body)' },
  },
  'GET /api/images/:id/ai-layers': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/images/${s.imageId}/ai-layers` }),
  },
  'GET /api/images/:id/ai-annotations': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/images/${s.imageId}/ai-annotations` }),
    streamed: 'the AI rows of the annotation list; mld.test.ts reads them',
  },
  'GET /api/mld/:id/heatmap': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s, c) => ({ url: `/api/mld/${await completedMld(s, c)}/heatmap` }),
    binary: true,
  },
  // Queries (issue 15)
  'GET /api/queries/metadata': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/queries/metadata?studyId=${s.studyId}` }),
  },
  'GET /api/queries/case/:caseId': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/queries/case/${s.caseId}` }),
  },
  'GET /api/queries/image/:imageId': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/queries/image/${s.imageId}` }),
  },
  'POST /api/queries/new': {
    scope: 'scoped',
    as: 'ISC',
    ok: 201,
    request: async (s) => ({
      url: '/api/queries/new',
      payload: {
        queryObjectType: 'CASE',
        objectId: s.caseId,
        studyId: s.studyId,
        caseId: null,
        category: 'OTHER',
        followUpInDays: 14,
        withRoleId: roleByName('DM').id,
        responseOptionId: await caseReasonForDm(),
        commentText: 'The site does not match the requisition',
      },
    }),
    audit: 'QUERY_OPENED',
  },
  'POST /api/queries/:id/comment': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/queries/${(await freshQuery(s, 'DM', 'PM')).id}/comment`,
      payload: { commentText: 'Any news?' },
    }),
    audit: 'QUERY_COMMENTED',
  },
  'PATCH /api/queries/:id/resolve': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/queries/${(await freshQuery(s, 'DM', 'ISC')).id}/resolve`,
      payload: { resolutionOption: 'Confirmed as correct' },
    }),
    audit: 'QUERY_RESOLVED',
  },
  'PUT /api/queries/:id/resolve': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/queries/${(await freshQuery(s, 'DM', 'ISC')).id}/resolve`,
      payload: { resolutionOption: 'Case data corrected', commentText: 'Fixed the visit' },
    }),
    audit: 'QUERY_RESOLVED',
  },
  'PATCH /api/queries/:id/close': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/queries/${(await freshQuery(s, 'ISC', 'DM', { resolution: 'RESOLVED' })).id}/close`,
      payload: { detailedResolutionText: 'Thanks' },
    }),
    audit: 'QUERY_CLOSED',
  },
  'PATCH /api/queries/:id/unresolvable': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/queries/${(await freshQuery(s, 'DM', 'ISC')).id}/unresolvable`,
      payload: { unresolvableReasonText: 'The slide was destroyed' },
    }),
    audit: 'QUERY_UNRESOLVABLE',
  },
  'POST /api/queries/:id/reminder': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => {
      const q = await freshQuery(s, 'ISC', 'DM');
      return { url: `/api/queries/${q.id}/reminder`, payload: { queryReminderId: q.reminderId, followUpInDays: 7 } };
    },
    audit: 'QUERY_FOLLOW_UP',
  },
  'POST /api/queries': {
    scope: 'global',
    as: 'ISC',
    request: () => ({ url: '/api/queries', payload: { objectType: 'CASE', includeClosedQueries: true } }),
    audit: { none: 'a list (POST for its filter body)' },
  },
  'GET /api/queries/stats': { scope: 'global', as: 'ISC', request: () => ({ url: '/api/queries/stats' }) },
  'GET /api/query-reasons': { scope: 'global', as: 'sysadmin', request: () => ({ url: '/api/query-reasons' }) },
  'POST /api/query-reasons': {
    scope: 'global',
    as: 'sysadmin',
    ok: 201,
    request: () => ({
      url: '/api/query-reasons',
      payload: { objectType: 'CASE', withRoleId: roleByName('DM').id, reasonText: `Route reason ${unique()}` },
    }),
    audit: 'QUERY_REASON_CREATED',
  },
  'PATCH /api/query-reasons/:id': {
    scope: 'global',
    as: 'sysadmin',
    request: async () => ({
      url: `/api/query-reasons/${await freshReason()}`,
      payload: { reasonText: `Renamed ${unique()}`, reasonForChange: 'clearer' },
    }),
    audit: 'QUERY_REASON_CHANGED',
  },
  'PATCH /api/images/:id/accept-ai-annotations': {
    scope: 'scoped',
    as: 'ISC',
    // Without a value it toggles: each call changes the flag, and records it.
    request: (s) => ({ url: `/api/images/${s.imageId}/accept-ai-annotations` }),
    audit: 'IMAGE_AI_ACCEPTANCE_CHANGED',
  },
  'PATCH /api/cases/:id/comment': {
    scope: 'scoped',
    as: 'LabTech',
    request: (s) => ({ url: `/api/cases/${s.caseId}/comment`, payload: { comment: 'Slide B is folded at the edge' } }),
    audit: 'CASE_COMMENTED',
  },
  'PATCH /api/images/:id/case': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/images/${await freshImage(s)}/case`,
      payload: { value: A.caseId, reasonForChange: 'Belongs to this procedure' },
    }),
    audit: 'IMAGE_CASE_ASSIGNED',
  },
  'POST /api/images/:id/copy': {
    scope: 'scoped',
    as: 'ISC',
    request: (s) => ({ url: `/api/images/${s.imageId}/copy`, payload: {} }),
    audit: 'IMAGE_COPIED',
  },
  'POST /api/images/:id': {
    scope: 'scoped',
    as: 'ISC',
    request: async (s) => ({
      url: `/api/images/${await freshImage(s)}`,
      payload: { reasonForChange: 'Duplicate scan' },
    }),
    audit: 'IMAGE_ARCHIVED',
  },
  'GET /api/users': { as: 'StudyAdmin', scope: 'global', request: () => ({ url: '/api/users' }) },
  'POST /api/users/list': {
    scope: 'scoped',
    as: 'StudyAdmin',
    request: (s) => ({ url: '/api/users/list', payload: { filterByStudyId: s.studyId } }),
    audit: { none: 'a search (POST for its body)' },
  },
  'GET /api/users/:id': {
    as: 'StudyAdmin',
    scope: 'global',
    request: async () => ({ url: `/api/users/${(await newUser()).id}` }),
  },
  'PUT /api/users/:id': {
    scope: 'global',
    as: 'StudyAdmin',
    request: async () => ({ url: `/api/users/${(await newUser()).id}`, payload: { firstName: `Name ${unique()}` } }),
    audit: 'USER_UPDATED',
  },
  'GET /api/users/:id/studyAccess': {
    scope: 'global',
    as: 'StudyAdmin',
    request: async () => ({ url: `/api/users/${(await newUser()).id}/studyAccess` }),
  },
  'POST /api/users': {
    scope: 'global',
    as: 'sysadmin',
    ok: 201,
    request: () => ({
      url: '/api/users',
      payload: { username: `new-${unique()}@example.org`, firstName: 'New', lastName: 'User', organizationId: null },
    }),
    audit: 'USER_CREATED',
  },
  'PATCH /api/users/:id/deactivate': {
    scope: 'global',
    as: 'sysadmin',
    request: async () => ({
      url: `/api/users/${(await createUser(t.database.db)).id}/deactivate`,
      payload: { reason: 'left' },
    }),
    audit: 'USER_DEACTIVATED',
  },
  'PATCH /api/users/:id/activate': {
    scope: 'global',
    as: 'sysadmin',
    request: async () => ({
      url: `/api/users/${(await createUser(t.database.db, { active: false })).id}/activate`,
      payload: {},
    }),
    audit: 'USER_ACTIVATED',
  },
  'PATCH /api/users/studies/add': {
    scope: 'scoped',
    as: 'StudyAdmin',
    request: async (s) => ({
      url: '/api/users/studies/add',
      payload: { studyId: s.studyId, userId: (await createUser(t.database.db)).id, roleId: roleByName('CR').id },
    }),
    audit: 'STUDY_ACCESS_GRANTED',
  },
  'PUT /api/users/studies/remove': {
    scope: 'scoped',
    as: 'StudyAdmin',
    request: async (s) => {
      const user = await createUser(t.database.db, { studyRoles: [{ studyId: A.studyId, role: 'CR' }] });
      return {
        url: '/api/users/studies/remove',
        payload: { studyId: s.studyId, userId: user.id, roleId: roleByName('CR').id },
      };
    },
    audit: 'STUDY_ACCESS_REVOKED',
  },
  'POST /api/users/inStudy/:studyId': {
    scope: 'scoped',
    as: 'StudyAdmin',
    request: (s) => ({ url: `/api/users/inStudy/${s.studyId}`, payload: {} }),
    audit: { none: 'a search (POST for its body)' },
  },
  'GET /api/organizations': { as: 'StudyAdmin', scope: 'global', request: () => ({ url: '/api/organizations' }) },
  'GET /api/permissions/roles': {
    as: 'StudyAdmin',
    scope: 'global',
    request: () => ({ url: '/api/permissions/roles' }),
  },
};

function routeName(route: RegisteredRoute): string {
  return `${route.method} ${route.url}`;
}

/** The routes to walk: every registered route but the HEAD twins of GET routes. */
function routes(): RegisteredRoute[] {
  const all = t.app.registeredRoutes;
  const gets = new Set(all.filter((r) => r.method === 'GET').map((r) => r.url));
  return all.filter((r) => !(r.method === 'HEAD' && gets.has(r.url)));
}

const ROLE_NAMES = Object.keys(ROLE_PERMISSIONS) as RoleName[];

/**
 * A caller the 403 check sends a route as: a role (held in study A; SystemAdmin by a system admin
 * working as it), an unregistered account (no role at all), or a system admin working as another
 * role (StudyAdmin: the flag alone does not pass a system-admin route).
 */
type Refused = RoleName | 'unregistered' | 'sysadmin working as StudyAdmin';

/**
 * Every caller a permission or system-admin policy must refuse: each role holding none of the
 * route's permissions (for a system-admin route, every role but SystemAdmin, and a system admin
 * working as another role), and an unregistered account.
 */
function refusedCallers(policy: { kind: 'permission'; anyOf: readonly string[] } | { kind: 'systemAdmin' }): Refused[] {
  const roles =
    policy.kind === 'systemAdmin'
      ? ROLE_NAMES.filter((role) => role !== 'SystemAdmin')
      : ROLE_NAMES.filter((role) => !ROLE_PERMISSIONS[role].some((p) => policy.anyOf.includes(p)));
  return [
    ...roles,
    ...(policy.kind === 'systemAdmin' ? ['sysadmin working as StudyAdmin' as const] : []),
    'unregistered',
  ];
}

/**
 * A refused caller's session. Cached like the insiders, unless the route changes its caller
 * (`ownAccount`: building its request may, e.g. granting the caller a role): then a fresh account.
 */
async function refused(who: Refused, fresh: boolean): Promise<Caller> {
  const known = fresh ? undefined : insiders.get(who);
  if (known) return known;
  const db = t.database.db;
  let made: Caller;
  if (who === 'unregistered') made = await unregistered();
  else if (who === 'sysadmin working as StudyAdmin') {
    const user = await createUser(db, { systemAdmin: true, globalRoles: ['StudyAdmin'] });
    await db
      .updateTable('users')
      .set({ work_as_role_id: roleByName('StudyAdmin').id })
      .where('id', '=', user.id)
      .execute();
    made = { session: await login(t.app, user.username, PASSWORD), userId: user.id };
  } else {
    const role = who === 'SystemAdmin' ? 'sysadmin' : who;
    made = fresh ? await caller(role, A.studyId) : await insider(role);
  }
  if (!fresh) insiders.set(who, made);
  return made;
}

async function send(session: Session | null, method: string, req: { url: string; payload?: object }, csrf = true) {
  return t.app.inject({
    method: method as 'GET',
    url: req.url,
    ...(req.payload !== undefined ? { payload: req.payload } : {}),
    ...(session
      ? { cookies: { [SESSION_COOKIE]: session.cookie }, headers: csrf ? { [CSRF_HEADER]: session.csrfToken } : {} }
      : {}),
  });
}

async function auditHead(): Promise<number> {
  const row = await t.database.db
    .selectFrom('audit_events')
    .select('id')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? 0;
}

beforeAll(async () => {
  t = await createSlideTestApp();
  const db = t.database.db;
  keys = new UploadKeys(t.config.sessionSecret);
  fingerprint = await databaseFingerprint(db);
  const studyId = (await createStudy(db)).id;
  studyB = (await createStudy(db)).id;
  studyC = (await createStudy(db)).id;
  const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
  const imageId = (await createUploadedImage(db, { studyId, s3Key: key })).id;
  await processImage({ db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') }, imageId);
  const caseId = (await createCase(db, { studyId })).id;
  A = { studyId, imageId, caseId };
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('every route', () => {
  it('has a fixture (add one beside the route: 401, 403, 404, CSRF and audit are then proven for it)', () => {
    const missing = routes()
      .map(routeName)
      .filter((name) => !(name in FIXTURES));
    expect(missing).toEqual([]);
    const stale = Object.keys(FIXTURES).filter((name) => !routes().some((r) => routeName(r) === name));
    expect(stale).toEqual([]);
  });

  it('declares the schema of its JSON answer (the response is encoded by it: nothing undeclared leaves)', () => {
    const missing = routes()
      .filter((route) => {
        const fixture = FIXTURES[routeName(route)];
        if (
          fixture === undefined ||
          fixture === 'signedUrl' ||
          fixture === 'publicRedirect' ||
          (typeof fixture === 'object' && (fixture.binary || fixture.streamed))
        )
          return false;
        const status = typeof fixture === 'object' ? (fixture.ok ?? 200) : 200;
        return route.schema.response?.[String(status)] === undefined;
      })
      .map(routeName);
    expect(missing).toEqual([]);
  });

  it('answers as its policy says: 401, 403, 404 out of scope, CSRF, and an audit row for mutations', async () => {
    const problems: string[] = [];
    for (const route of routes()) {
      const name = routeName(route);
      const fixture = FIXTURES[name];
      const policy = route.policy;
      if (!fixture || !policy) continue;
      const problem = (what: string) => problems.push(`${name}: ${what}`);

      if (fixture === 'public') {
        if (policy.kind !== 'public') problem(`fixture says public, policy is ${policy.kind}`);
        continue;
      }
      if (fixture === 'publicRedirect') {
        if (policy.kind !== 'public') problem(`fixture says publicRedirect, policy is ${policy.kind}`);
        const response = await send(null, route.method, { url: route.url });
        if (response.statusCode !== 404) problem(`without single sign-on configured: ${response.statusCode}, not 404`);
        continue;
      }
      if (fixture === 'signedUrl') {
        if (policy.kind !== 'signedUrl') problem(`fixture says signedUrl, policy is ${policy.kind}`);
        const url = route.url.startsWith('/tiles/')
          ? `/tiles/${A.imageId}/0/0/0?t=forged`
          : `/api/storage/uploads/${A.studyId}/x/slide.svs?op=get&expires=9999999999&sig=forged`;
        const response = await send(null, route.method, { url, ...(route.method === 'GET' ? {} : { payload: {} }) });
        if (response.statusCode !== 403) problem(`a forged signature answered ${response.statusCode}, not 403`);
        continue;
      }

      const mutating = route.method !== 'GET';
      const build = async (targets: Targets, c: Caller) => fixture.request(targets, c);
      const allowed = async () =>
        fixture.ownAccount ? await caller(fixture.as, A.studyId) : await insider(fixture.as);

      // 401 logged out.
      const anyCaller = await insider(fixture.as);
      const anonymous = await send(null, route.method, await build(A, anyCaller));
      if (anonymous.statusCode !== 401) problem(`logged out: ${anonymous.statusCode}, not 401`);

      // 403 for a role without the permission (or, for system-admin routes, a StudyAdmin).
      if (policy.kind === 'permission' || policy.kind === 'systemAdmin') {
        if (
          fixture.as !== 'sysadmin' &&
          !ROLE_PERMISSIONS[fixture.as].some((p) => policy.kind === 'permission' && policy.anyOf.includes(p))
        )
          problem(`fixture role ${fixture.as} holds none of the route's permissions`);
        // Each refused caller's own request, built before any is sent, so that the fingerprint
        // around the sends sees only what the refused requests did.
        const requests: { who: Refused; c: Caller; request: { url: string; payload?: object } }[] = [];
        for (const who of refusedCallers(policy)) {
          const c = await refused(who, fixture.ownAccount === true);
          requests.push({ who, c, request: await build(A, c) });
        }
        const before = mutating ? await fingerprint() : null;
        for (const { who, c, request } of requests) {
          const response = await send(c.session, route.method, request);
          // An unregistered account is told to wait for registration, except by a system-admin route.
          const message =
            who === 'unregistered' && policy.kind === 'permission' ? MESSAGES.welcome : MESSAGES.accessDenied;
          const said = response.statusCode === 403 ? response.json<{ message?: string }>().message : undefined;
          if (said !== message)
            problem(
              `${who} without the permission: ${response.statusCode} ${response.body.slice(0, 120)}, not 403 '${message}'`,
            );
        }
        if (before) {
          const changed = changedTables(before, await fingerprint());
          if (changed.length > 0) problem(`the refused callers' requests changed ${changed.join(', ')}`);
        }
      }

      // 404 out of scope.
      const declared = policy.kind === 'permission' && policy.scope.kind !== 'global' ? 'scoped' : 'global';
      if (declared !== fixture.scope) problem(`the fixture says ${fixture.scope}, the policy ${declared}`);
      if (fixture.scope === 'scoped') {
        if (fixture.as === 'sysadmin' || ROLE_PERMISSIONS[fixture.as].includes(VIEW_ALL_STUDIES)) {
          const c = await allowed();
          const response = await send(c.session, route.method, await build(MISSING, c));
          if (response.statusCode !== 404) problem(`a missing study or resource: ${response.statusCode}, not 404`);
        } else {
          const out = await outsider(fixture.as);
          const response = await send(out.session, route.method, await build(A, out));
          if (response.statusCode !== 404)
            problem(`${fixture.as} without access to the study: ${response.statusCode}, not 404`);
        }
      }

      // CSRF: refused without the token, changing nothing.
      if (mutating) {
        const c = await allowed();
        const request = await build(A, c);
        const before = await fingerprint();
        const response = await send(c.session, route.method, request, false);
        const changed = changedTables(before, await fingerprint());
        if (response.statusCode !== 403 || response.json<{ message: string }>().message !== MESSAGES.invalidCsrf)
          problem(`without the CSRF token: ${response.statusCode}, not 403 '${MESSAGES.invalidCsrf}'`);
        if (changed.length > 0) problem(`refused without the CSRF token, yet changed ${changed.join(', ')}`);
      }

      // The allowed request succeeds; a mutation writes its audit row.
      const c = await allowed();
      const head = await auditHead();
      const response = await send(c.session, route.method, await build(A, c));
      if (response.statusCode !== (fixture.ok ?? 200))
        problem(`allowed request as ${fixture.as}: ${response.statusCode} ${response.body.slice(0, 200)}`);
      const written = await t.database.db.selectFrom('audit_events').select('action').where('id', '>', head).execute();
      if (typeof fixture.audit === 'string' && !written.some((e) => e.action === fixture.audit))
        problem(`no ${fixture.audit} audit row (wrote ${written.map((e) => e.action).join(', ') || 'none'})`);
      if (mutating && fixture.audit === undefined) problem('a mutation without an audit expectation in its fixture');
    }
    expect(problems).toEqual([]);
  }, 240_000);
});

/**
 * Reader-to-reader isolation (issue 26, finding 4). A central read is valid only if readers cannot
 * learn each other's observations: for every read a blinded reader can make — each GET route whose
 * policy a reading role passes, and the read-only POSTs below — a second reader of a case answers
 * the same before and after the first reader did everything a reader can do on it (annotations with
 * text, a GeoJSON import, image and case queries with comments, a case comment, the AI choice, Mark
 * as Scored), and no answer carries the first reader's words or name. A new reader-callable route
 * cannot land without its entry here.
 */
interface IsolationCase {
  studyId: number;
  caseId: number;
  imageId: number;
  mldId: number;
}

/** The request of each reader-callable read for the isolation case, or why it is not compared. */
const READER_READS: Record<string, ((c: IsolationCase) => { url: string; payload?: object }) | { skip: string }> = {
  'GET /api/auth/csrf': { skip: 'answers the caller’s own CSRF token, new for every session' },
  'GET /api/users/info': () => ({ url: '/api/users/info' }),
  'GET /api/users/availableRoles': () => ({ url: '/api/users/availableRoles' }),
  'GET /api/studies/list': () => ({ url: '/api/studies/list' }),
  'GET /api/studies/:id': (c) => ({ url: `/api/studies/${c.studyId}` }),
  'GET /api/images/:id/ai-layers': (c) => ({ url: `/api/images/${c.imageId}/ai-layers` }),
  'GET /api/images/:id/ai-annotations': (c) => ({ url: `/api/images/${c.imageId}/ai-annotations` }),
  'GET /api/mld/:id/heatmap': (c) => ({ url: `/api/mld/${c.mldId}/heatmap` }),
  'GET /api/images/:id': (c) => ({ url: `/api/images/${c.imageId}` }),
  'GET /api/cases/assigned': () => ({ url: '/api/cases/assigned' }),
  'GET /api/cases/:id': (c) => ({ url: `/api/cases/${c.caseId}` }),
  // Issue 30: the first reader's frozen endpoint values (the study has an endpoint, below).
  'GET /api/cases/:id/outcomes': (c) => ({ url: `/api/cases/${c.caseId}/outcomes` }),
  'GET /api/cases': (c) => ({ url: `/api/cases?studyId=${c.studyId}` }),
  'GET /api/studies/:id/cases': (c) => ({ url: `/api/studies/${c.studyId}/cases` }),
  'GET /api/studies/:id/users': (c) => ({ url: `/api/studies/${c.studyId}/users` }),
  'GET /api/images/:id/annotations': (c) => ({ url: `/api/images/${c.imageId}/annotations` }),
  'GET /api/images/:id/annotations.geojson': (c) => ({ url: `/api/images/${c.imageId}/annotations.geojson` }),
  'GET /api/queries/metadata': (c) => ({ url: `/api/queries/metadata?studyId=${c.studyId}` }),
  'GET /api/queries/case/:caseId': (c) => ({ url: `/api/queries/case/${c.caseId}` }),
  'GET /api/queries/image/:imageId': (c) => ({ url: `/api/queries/image/${c.imageId}` }),
  'GET /api/queries/stats': () => ({ url: '/api/queries/stats' }),
  // Reads sent as POST (their filters in the body).
  'POST /api/queries': () => ({ url: '/api/queries', payload: { objectType: 'IMAGE', includeClosedQueries: true } }),
  'POST /api/queries#CASE': () => ({
    url: '/api/queries',
    payload: { objectType: 'CASE', includeClosedQueries: true },
  }),
};

const READING_ROLES: RoleName[] = ['CR', 'NOTO'];

/** The GET routes a reading role may call (public ones answer nobody in particular). */
function readerCallableGets(): string[] {
  return routes()
    .filter((route) => route.method === 'GET' && route.policy)
    .filter((route) => {
      const policy = route.policy!;
      if (policy.kind === 'authenticated') return true;
      return (
        policy.kind === 'permission' &&
        READING_ROLES.some((role) =>
          policy.anyOf.some((p) => (ROLE_PERMISSIONS[role] as readonly string[]).includes(p)),
        )
      );
    })
    .map(routeName);
}

/** An answer with what legitimately differs between two calls (fresh tile tokens) taken out. */
function comparable(body: string): string {
  return body.replace(/([?&]t=)[^"&\\]+/g, '$1…');
}

describe('reader-to-reader isolation (issue 26)', () => {
  const SECRET = 'R1-OBSERVATION-7f3a';
  let c: IsolationCase;
  let reader1: Caller;
  let reader2: Caller;

  async function answers(caller: Caller): Promise<Map<string, { status: number; body: string }>> {
    const out = new Map<string, { status: number; body: string }>();
    for (const [name, read] of Object.entries(READER_READS)) {
      if ('skip' in read) continue;
      const request = read(c);
      const response = await send(caller.session, request.payload ? 'POST' : 'GET', request);
      out.set(name, { status: response.statusCode, body: comparable(response.body) });
    }
    return out;
  }

  beforeAll(async () => {
    const db = t.database.db;
    const studyId = A.studyId;
    // An endpoint, so that reader1's Mark as Scored freezes a value (issue 30): their HPF holds no
    // point of the class, so 0.
    await db
      .updateTable('studies')
      .set({
        endpoints: JSON.stringify([
          {
            key: 'pec',
            label: 'Peak',
            kind: 'PEAK_COUNT_PER_HPF',
            className: 'Eosinophil',
            threshold: 15,
            positiveWhen: 'GTE',
          },
        ]),
      })
      .where('id', '=', studyId)
      .execute();
    reader1 = await caller('CR', studyId);
    reader2 = await caller('CR', studyId);
    const { id: caseId } = await createCase(db, { studyId, status: 'PROCESSED' });
    await db
      .updateTable('cases')
      .set({ proc_id: `ISO-${unique()}` })
      .where('id', '=', caseId)
      .execute();
    const { id: imageId } = await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 1000 });
    await assignReader(db, { caseId, userId: reader1.userId });
    await assignReader(db, { caseId, userId: reader2.userId });
    const heatmap = `mld/imports/iso-${unique()}/heatmap.png`;
    await t.app.slides.storage.write(heatmap, Buffer.from('png'));
    const mld = await db
      .insertInto('mld_files')
      .values({
        name: 'ai.mld',
        s3_key: `mld/u0-x-${unique()}/ai.mld`,
        size_bytes: 4,
        image_id: imageId,
        study_id: studyId,
        uploader_id: (await insider('ISC')).userId,
        status: 'COMPLETE',
        heatmap_key: heatmap,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    c = { studyId, caseId, imageId, mldId: mld.id };
  });

  it('lists every read a reader can make (add a new reader-callable route here)', () => {
    const listed = new Set(Object.keys(READER_READS).map((name) => name.split('#')[0]));
    expect(readerCallableGets().filter((name) => !listed.has(name))).toEqual([]);
    const stale = [...listed].filter((name) => !routes().some((r) => routeName(r) === name));
    expect(stale).toEqual([]);
  });

  it('a second reader of the case learns nothing of what the first did', async () => {
    const before = await answers(reader2);
    // Nothing but time passes: the answers are the same (the comparison is meaningful).
    expect(await answers(reader2)).toEqual(before);

    // reader1 reads the case, with every tool a reader has.
    const as1 = async (method: string, url: string, payload?: object) => {
      const response = await send(reader1.session, method, { url, ...(payload ? { payload } : {}) });
      expect([200, 201], `${method} ${url}: ${response.statusCode} ${response.body}`).toContain(response.statusCode);
      return response;
    };
    await as1('POST', '/api/annotations', {
      imageId: c.imageId,
      annotationType: 'TEXT',
      geometry: { type: 'Point', coordinates: [100, 100] },
      text: `${SECRET} crypt abscess here`,
    });
    const hpf = await as1('POST', '/api/annotations', {
      imageId: c.imageId,
      annotationType: 'HPF',
      geometry: { type: 'Point', coordinates: [300, 300] },
    });
    await as1('POST', '/api/annotations', {
      imageId: c.imageId,
      annotationType: 'POINT',
      geometry: { type: 'Point', coordinates: [301, 301] },
    });
    // Undo and redo (issue 29): the HPF deleted with its point, then restored.
    const hpfId = hpf.json<{ annotation: { id: number } }>().annotation.id;
    await as1('DELETE', `/api/annotations/${hpfId}?deleteNested=true`);
    await as1('POST', `/api/annotations/${hpfId}/restore`);
    await as1('POST', `/api/images/${c.imageId}/annotations/import`, {
      type: 'FeatureCollection',
      features: [{ type: 'Feature', geometry: { type: 'Point', coordinates: [7, 7] }, properties: {} }],
    });
    const blurry = await t.database.db
      .selectFrom('query_reasons')
      .select('id')
      .where('object_type', '=', 'IMAGE')
      .where('with_role_id', '=', roleByName('LabTech').id)
      .where('reason_text', '=', 'Incorrect file name')
      .executeTakeFirstOrThrow();
    await as1('POST', '/api/queries/new', {
      queryObjectType: 'IMAGE',
      objectId: c.imageId,
      studyId: c.studyId,
      withRoleId: roleByName('LabTech').id,
      responseOptionId: blurry.id,
      commentText: `${SECRET}: 37 eosinophils in HPF1 but the slide is blurry`,
    });
    await as1('POST', '/api/queries/new', {
      queryObjectType: 'CASE',
      objectId: c.caseId,
      studyId: c.studyId,
      caseId: c.caseId,
      withRoleId: roleByName('ISC').id,
      responseOptionId: (
        await t.database.db
          .selectFrom('query_reasons')
          .select('id')
          .where('object_type', '=', 'CASE')
          .where('with_role_id', '=', roleByName('ISC').id)
          .where('reason_text', '=', 'Visit ID mismatch')
          .executeTakeFirstOrThrow()
      ).id,
      commentText: `${SECRET}: villous blunting, right visit?`,
    });
    await as1('PATCH', `/api/cases/${c.caseId}/comment`, { comment: `${SECRET}: peak 37 eos` });
    // The AI choice is the reader's own, made at Mark as Scored: the image-wide flag is not theirs.
    const flag = await send(reader1.session, 'PATCH', {
      url: `/api/images/${c.imageId}/accept-ai-annotations`,
      payload: { acceptAiAnnotations: true },
    });
    expect(flag.statusCode).toBe(403);
    await as1('PATCH', `/api/cases/${c.caseId}/status/forward`, { includeAiCounts: true });
    // reader1's values were frozen (issue 30): what GET …/outcomes must not give reader2.
    const frozen = await t.database.db
      .selectFrom('read_outcomes')
      .select(['endpoint_key', 'value'])
      .where('case_id', '=', c.caseId)
      .where('reader_id', '=', reader1.userId)
      .execute();
    expect(frozen).toEqual([{ endpoint_key: 'pec', value: 0 }]);

    const after = await answers(reader2);
    const changed = [...before.keys()].filter(
      (name) => JSON.stringify(before.get(name)) !== JSON.stringify(after.get(name)),
    );
    expect(
      changed,
      changed
        .map(
          (name) =>
            `${name}:\n  before ${before.get(name)?.body.slice(0, 400)}\n  after  ${after.get(name)?.body.slice(0, 400)}`,
        )
        .join('\n'),
    ).toEqual([]);
    const { username } = await t.database.db
      .selectFrom('users')
      .select('username')
      .where('id', '=', reader1.userId)
      .executeTakeFirstOrThrow();
    const leaking = [...after.entries()]
      .filter(([, a]) => a.body.includes(SECRET) || a.body.includes(username))
      .map(([name]) => name);
    expect(leaking).toEqual([]);
  });
});
