import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MESSAGES } from '@lamina/domain';
import { processImage, type ProcessingDeps } from '../src/modules/processing/processImage.js';
import { LocalStorage } from '../src/platform/storage/localStorage.js';
import { S3Storage } from '../src/platform/storage/s3Storage.js';
import { ObjectExistsError } from '../src/platform/storage/storage.js';
import { verifyStoredImages } from '../src/platform/storage/verifyStorage.js';
import { login, type Session } from './testApp.js';
import {
  createSlideTestApp,
  createStudy,
  createUser,
  PASSWORD,
  startS3Server,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

/**
 * Issue 9, defects 2, 7 and 10 (multipart): a registered original cannot be replaced through its
 * upload URL, its SHA-256 is re-checked on download and by storage:verify; file names in any
 * script upload and download; multipart uploads belong to the user who started them.
 */
const CMU = path.join(WSI_DIR, 'CMU-1-Small-Region.svs');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let t: SlideTestContext;
let studyId: number;
let uploader: Session;
let colleague: Session;
let admin: Session;
let cmu: Buffer;
let deps: ProcessingDeps;

beforeAll(async () => {
  t = await createSlideTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  const u = await createUser(db, { studyRoles: [{ studyId, role: 'UPLOADER' }] });
  const c = await createUser(db, { studyRoles: [{ studyId, role: 'UPLOADER' }] });
  const a = await createUser(db, { globalRoles: ['StudyAdmin'] });
  uploader = await login(t.app, u.username, PASSWORD);
  colleague = await login(t.app, c.username, PASSWORD);
  admin = await login(t.app, a.username, PASSWORD);
  cmu = await readFile(CMU);
  deps = { db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') };
});

afterAll(async () => {
  await t.close();
});

/** The browser's upload: a signed URL, the PUT, the registration. */
async function upload(fileName: string, bytes: Buffer, name = fileName) {
  const signed = await uploader.request({
    method: 'POST',
    url: '/api/signed-urls',
    payload: { studyId, fileNames: [fileName] },
  });
  expect(signed.statusCode, signed.body).toBe(200);
  const { signedUrl, s3Key } = signed.json<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>().data.urls[0]!;
  const put = await t.app.inject({
    method: 'PUT',
    url: signedUrl,
    payload: bytes,
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(put.statusCode, put.body).toBe(200);
  const registered = await uploader.request({ method: 'POST', url: '/api/images', payload: { name, s3Key, studyId } });
  return { signedUrl, s3Key, registered };
}

async function download(imageId: number) {
  const response = await admin.request({ method: 'GET', url: `/api/signed-urls/image/${imageId}` });
  if (response.statusCode !== 200) return { response, file: null };
  const file = await t.app.inject({ method: 'GET', url: response.json<{ url: string }>().url });
  return { response, file };
}

async function imageRow(id: number) {
  return t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('a registered original is immutable (defect 2)', () => {
  it('the upload URL, re-used after registration, can neither replace nor alter what is downloaded', async () => {
    const { signedUrl, registered } = await upload('slide.svs', cmu);
    expect(registered.statusCode).toBe(200);
    const imageId = registered.json<{ image: { id: number } }>().image.id;

    // Before processing: the upload exists, and the store refuses to write over it.
    const early = await t.app.inject({ method: 'PUT', url: signedUrl, payload: Buffer.from('attacker bytes') });
    expect(early.statusCode).toBe(412);
    expect(early.json()).toEqual({ success: false, message: IMAGE_MESSAGES.objectExists });

    await processImage(deps, imageId);
    const row = await imageRow(imageId);
    expect(row.processing_status).toBe('SUCCESS');
    expect(row.s3_key).toBe(`originals/${imageId}/slide.svs`);
    expect(row.content_sha256).toBe(sha256(cmu));

    // After: the URL names the old key, which no longer holds the original.
    const late = await t.app.inject({ method: 'PUT', url: signedUrl, payload: Buffer.from('attacker bytes') });
    expect(late.statusCode).toBeLessThan(500);
    const { file } = await download(imageId);
    expect(file?.statusCode).toBe(200);
    expect(sha256(file!.rawPayload)).toBe(sha256(cmu));
    const sealed = await t.database.db
      .selectFrom('audit_events')
      .select(['username', 'old_value', 'new_value'])
      .where('action', '=', 'IMAGE_ORIGINAL_SEALED')
      .where('entity_id', '=', String(imageId))
      .executeTakeFirstOrThrow();
    expect(sealed).toMatchObject({ username: 'worker', new_value: `originals/${imageId}/slide.svs` });
  });

  it('the local store refuses every write over an existing object', async () => {
    const storage = t.app.slides.storage;
    if (!(storage instanceof LocalStorage)) throw new Error('local storage expected');
    const key = `images/999999/test-${Date.now()}.bin`;
    await storage.write(key, Buffer.from('one'));
    await expect(storage.write(key, Buffer.from('two'))).rejects.toBeInstanceOf(ObjectExistsError);
    await expect(storage.write(key, { filePath: CMU })).rejects.toBeInstanceOf(ObjectExistsError);
    const { uploadId } = await storage.createMultipartUpload(key);
    await expect(storage.completeMultipartUpload(key, uploadId, [])).rejects.toBeInstanceOf(ObjectExistsError);
    expect((await storage.readRange(key, 0, 10)).toString()).toBe('one');
  });

  it('an original altered in storage is refused on download (audited) and reported by storage:verify', async () => {
    const { registered } = await upload('tampered.svs', cmu);
    const imageId = registered.json<{ image: { id: number } }>().image.id;
    await processImage(deps, imageId);
    expect((await download(imageId)).response.statusCode).toBe(200);
    const before = await verifyStoredImages(t.database.db, t.app.slides.storage);
    expect(before.problems.filter((p) => p.imageId === imageId)).toEqual([]);

    // Someone with access to the storage itself rewrites the file.
    const row = await imageRow(imageId);
    const file = path.join(t.dataDir, 'storage', row.s3_key);
    const altered = Buffer.from(cmu);
    altered[1000] = (altered[1000]! + 1) % 256;
    await writeFile(file, altered);

    const { response } = await download(imageId);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ success: false, message: IMAGE_MESSAGES.integrityFailed });
    const event = await t.database.db
      .selectFrom('audit_events')
      .select(['old_value', 'new_value'])
      .where('action', '=', 'IMAGE_INTEGRITY_FAILED')
      .where('entity_id', '=', String(imageId))
      .executeTakeFirstOrThrow();
    expect(event).toEqual({ old_value: sha256(cmu), new_value: sha256(altered) });

    const after = await verifyStoredImages(t.database.db, t.app.slides.storage);
    expect(after.problems.filter((p) => p.imageId === imageId)).toEqual([
      {
        imageId,
        kind: 'original',
        key: row.s3_key,
        problem: 'mismatch',
        expected: sha256(cmu),
        actual: sha256(altered),
      },
    ]);
  });

  it('storage:verify also checks pyramids and reports missing objects', async () => {
    const { registered } = await upload('gone.svs', cmu);
    const imageId = registered.json<{ image: { id: number } }>().image.id;
    await processImage(deps, imageId);
    const row = await imageRow(imageId);
    expect(row.pyramid_sha256).toMatch(/^[0-9a-f]{64}$/);
    await t.app.slides.storage.delete(row.cog_key!);
    const result = await verifyStoredImages(t.database.db, t.app.slides.storage);
    expect(result.problems.filter((p) => p.imageId === imageId)).toEqual([
      { imageId, kind: 'pyramid', key: row.cog_key, problem: 'missing', expected: row.pyramid_sha256 },
    ]);
  });
});

describe('file names in any script (defect 7)', () => {
  it.each(['病理.svs', 'ø.tif', '😀.svs'])('%s uploads, keeps its name, and downloads under it', async (name) => {
    const { s3Key, registered } = await upload(name, cmu);
    expect(s3Key.endsWith(`/file${name.slice(name.lastIndexOf('.'))}`)).toBe(true);
    expect(registered.statusCode, registered.body).toBe(200);
    const image = registered.json<{ image: { id: number; name: string } }>().image;
    expect(image.name).toBe(name);
    await processImage(deps, image.id);
    expect((await imageRow(image.id)).processing_status).toBe('SUCCESS');
    const { file } = await download(image.id);
    expect(file?.headers['content-disposition']).toBe(
      `attachment; filename="file${name.slice(name.lastIndexOf('.'))}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    );
  });

  it("the registered name's extension must match the upload's", async () => {
    const { registered } = await upload('slide.svs', cmu, 'slide.tif');
    expect(registered.statusCode).toBe(400);
    expect(registered.json()).toEqual({ success: false, message: IMAGE_MESSAGES.extensionMismatch });
  });
});

describe('multipart uploads belong to the user who started them (defect 10)', () => {
  it('another uploader of the same study can neither list, sign, complete nor abort them', async () => {
    const created = await uploader.request({
      method: 'POST',
      url: '/api/uploads/multipart',
      payload: { studyId, fileName: 'big.svs' },
    });
    expect(created.statusCode).toBe(200);
    const { key, uploadId } = created.json<{ key: string; uploadId: string }>();
    const q = `key=${encodeURIComponent(key)}`;
    const attempts = [
      { method: 'GET', url: `/api/uploads/multipart/${uploadId}/parts?${q}` },
      { method: 'POST', url: `/api/uploads/multipart/${uploadId}/parts/1/url`, payload: { key } },
      { method: 'POST', url: `/api/uploads/multipart/${uploadId}/urls`, payload: { key, partNumbers: [1] } },
      {
        method: 'POST',
        url: `/api/uploads/multipart/${uploadId}/complete`,
        payload: { key, parts: [{ partNumber: 1, etag: 'x' }] },
      },
      { method: 'DELETE', url: `/api/uploads/multipart/${uploadId}?${q}` },
      { method: 'POST', url: '/api/uploads/sign', payload: { studyId, method: 'DELETE', key, uploadId } },
    ] as const;
    for (const attempt of attempts) {
      const response = await colleague.request(attempt);
      expect([attempt.url, response.statusCode, response.json()]).toEqual([
        attempt.url,
        404,
        { success: false, message: 'No such upload' },
      ]);
    }
    // The owner still can (the upload was left intact).
    const parts = await uploader.request({ method: 'GET', url: `/api/uploads/multipart/${uploadId}/parts?${q}` });
    expect(parts.statusCode).toBe(200);
    const aborted = await uploader.request({ method: 'DELETE', url: `/api/uploads/multipart/${uploadId}?${q}` });
    expect(aborted.statusCode).toBe(200);
  });
});

describe('on S3 (s3rver, which ignores If-None-Match)', () => {
  it('the original is sealed by a server-side copy: the presigned PUT cannot reach it; writes never replace', async () => {
    const s3 = await startS3Server();
    const app = await createSlideTestApp(s3.env);
    try {
      const db = app.database.db;
      const study = (await createStudy(db)).id;
      const user = await createUser(db, { studyRoles: [{ studyId: study, role: 'UPLOADER' }] });
      const session = await login(app.app, user.username, PASSWORD);
      const signed = await session.request({
        method: 'POST',
        url: '/api/signed-urls',
        payload: { studyId: study, fileNames: ['病理.svs'] },
      });
      const { signedUrl, s3Key } = signed.json<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>().data
        .urls[0]!;
      expect((await fetch(signedUrl, { method: 'PUT', body: cmu })).status).toBe(200);
      const registered = await session.request({
        method: 'POST',
        url: '/api/images',
        payload: { name: '病理.svs', s3Key, studyId: study },
      });
      const imageId = registered.json<{ image: { id: number } }>().image.id;
      await processImage({ db, storage: app.app.slides.storage, tmpDir: path.join(app.dataDir, 'tmp') }, imageId);
      const row = await db.selectFrom('images').selectAll().where('id', '=', imageId).executeTakeFirstOrThrow();
      expect(row.s3_key).toBe(`originals/${imageId}/file.svs`);
      expect(await app.app.slides.storage.head(s3Key)).toBeNull();

      expect((await fetch(signedUrl, { method: 'PUT', body: Buffer.from('attacker bytes') })).status).toBe(200);
      const storage = app.app.slides.storage;
      if (!(storage instanceof S3Storage)) throw new Error('S3 storage expected');
      const stored = Buffer.concat(await (await storage.createReadStream(row.s3_key)).toArray());
      expect(sha256(stored)).toBe(sha256(cmu));
      await expect(storage.write(row.s3_key, Buffer.from('x'))).rejects.toBeInstanceOf(ObjectExistsError);
      expect((await verifyStoredImages(db, storage)).problems).toEqual([]);
    } finally {
      await app.close();
      await s3.close();
    }
  });
});
