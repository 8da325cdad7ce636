import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MESSAGES, unsupportedFileType } from '@lamina/domain';
import { LocalStorage } from '../src/platform/storage/localStorage.js';
import { processImage } from '../src/modules/processing/processImage.js';
import { serverImageExtensions } from '../src/platform/openslide/slideFormats.js';
import { login, type Session } from './testApp.js';
import {
  createSlideTestApp,
  createStudy,
  createUser,
  PASSWORD,
  sha256File,
  startS3Server,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

const CMU = path.join(WSI_DIR, 'CMU-1-Small-Region.svs');
const CMU_SHA = 'ed92d5a9f2e86df67640d6f92ce3e231419ce127131697fbbce42ad5e002c8a7';

let t: SlideTestContext;
let studyId: number;
let otherStudyId: number;
let uploader: Session;
let reader: Session;
let outsider: Session;
let cmu: Buffer;

beforeAll(async () => {
  t = await createSlideTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  otherStudyId = (await createStudy(db)).id;
  const u = await createUser(db, { studyRoles: [{ studyId, role: 'UPLOADER' }] });
  const r = await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] });
  const o = await createUser(db, { studyRoles: [{ studyId: otherStudyId, role: 'UPLOADER' }] });
  uploader = await login(t.app, u.username, PASSWORD);
  reader = await login(t.app, r.username, PASSWORD);
  outsider = await login(t.app, o.username, PASSWORD);
  cmu = await readFile(CMU);
});

afterAll(async () => {
  await t.close();
});

function localStorage(): LocalStorage {
  const storage = t.app.slides.storage;
  if (!(storage instanceof LocalStorage)) throw new Error('local storage expected');
  return storage;
}

async function signedUrls(session: Session, body: unknown) {
  return session.request({ method: 'POST', url: '/api/signed-urls', payload: body as Record<string, unknown> });
}

/** Sends bytes to a local signed URL (root-relative) through the app, as the browser would. */
function put(url: string, body: Buffer, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'PUT',
    url,
    payload: body,
    headers: { 'content-type': 'application/octet-stream', ...headers },
  });
}

describe('POST /api/signed-urls', () => {
  it('401 when logged out', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/signed-urls',
      payload: { studyId, fileNames: ['a.svs'] },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: 'Please log in' });
  });

  it('403 for a role without the upload permission (central reader)', async () => {
    const response = await signedUrls(reader, { studyId, fileNames: ['a.svs'] });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: 'You do not have permission to do this' });
  });

  it('404 for a study the user cannot see', async () => {
    const response = await signedUrls(outsider, { studyId, fileNames: ['a.svs'] });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ success: false, message: 'Study not found' });
  });

  it('400 naming the file whose extension is not accepted', async () => {
    const response = await signedUrls(uploader, { studyId, fileNames: ['ok.svs', 'slide-photo.jpg'] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      success: false,
      message: unsupportedFileType('slide-photo.jpg', serverImageExtensions()),
    });
    expect(response.json().message).toContain('.svs, .tif, .tiff, .ndpi'); // OpenSlide is installed here
  });

  it('one signed PUT URL and key per file, extensions case-insensitive', async () => {
    const response = await signedUrls(uploader, { studyId, fileNames: ['A.SVS', 'b.Tif', 'c d.tiff'] });
    expect(response.statusCode).toBe(200);
    const { success, data } = response.json();
    expect(success).toBe(true);
    expect(data.urls).toHaveLength(3);
    for (const [i, name] of ['A.SVS', 'b.Tif', 'c d.tiff'].entries()) {
      expect(data.urls[i].fileName).toBe(name);
      expect(data.urls[i].s3Key).toMatch(
        new RegExp(
          `^uploads/${studyId}/u\\d+-[0-9a-f]{16}-[0-9a-f]{20}/${name.replace(' ', '_').replace('.', '\\.')}$`,
        ),
      );
      expect(data.urls[i].signedUrl).toMatch(/^\/api\/storage\/uploads\/.*\?op=put&expires=\d+&sig=/);
    }
  });
});

describe('local signed URLs and POST /api/images', () => {
  let key: string;
  let url: string;

  beforeAll(async () => {
    const response = await signedUrls(uploader, { studyId, fileNames: ['CMU-1-Small-Region.svs'] });
    ({ s3Key: key, signedUrl: url } = response.json().data.urls[0]);
  });

  it('PUT streams the bytes to storage (with an MD5 ETag), no session needed', async () => {
    const response = await put(url, cmu);
    expect(response.statusCode).toBe(200);
    expect(response.headers.etag).toBe(`"${createHash('md5').update(cmu).digest('hex')}"`);
    expect(await sha256File(t.app.slides.storage.localPath!(key))).toBe(CMU_SHA);
  });

  it('forged, tampered, expired or misused signatures are refused with 403', async () => {
    const forged = url.replace(/sig=[^&]+/, 'sig=AAAA');
    const otherKey = url.replace('CMU-1-Small-Region.svs', 'other.svs');
    const storage = localStorage();
    const expired = storage.signedUrl('put', key, -10);
    for (const bad of [forged, otherKey, expired, url.replace('op=put', 'op=get')]) {
      const response = await put(bad, Buffer.from('x'));
      expect(response.statusCode, bad).toBe(403);
      expect(response.json()).toEqual({ success: false, message: IMAGE_MESSAGES.invalidSignature });
    }
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(403); // a PUT URL cannot read
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/api/storage/uploads/../../etc/passwd?op=get&expires=9999999999&sig=x',
        })
      ).statusCode,
    ).toBe(404);
    expect(await sha256File(storage.localPath(key))).toBe(CMU_SHA); // untouched
  });

  it('GET of a signed download URL supports Range', async () => {
    const storage = localStorage();
    const get = await storage.signedGetUrl(key, 60, 'CMU 1.svs');
    const whole = await t.app.inject({ method: 'GET', url: get });
    expect(whole.statusCode).toBe(200);
    expect(whole.rawPayload.equals(cmu)).toBe(true);
    expect(whole.headers['content-disposition']).toBe(
      'attachment; filename="CMU_1.svs"; filename*=UTF-8\'\'CMU%201.svs',
    );
    const part = await t.app.inject({ method: 'GET', url: get, headers: { range: 'bytes=100-199' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${cmu.length}`);
    expect(part.rawPayload.equals(cmu.subarray(100, 200))).toBe(true);
    const tail = await t.app.inject({ method: 'GET', url: get, headers: { range: 'bytes=-10' } });
    expect(tail.rawPayload.equals(cmu.subarray(-10))).toBe(true);
    expect(
      (await t.app.inject({ method: 'GET', url: get, headers: { range: `bytes=${cmu.length}-` } })).statusCode,
    ).toBe(416);
  });

  it('POST /api/images checks the upload, creates the image and enqueues processing, audited', async () => {
    const missing = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: {
        name: 'x.svs',
        s3Key: key.replace(/\/u\d+-[0-9a-f]{16}-[0-9a-f]{20}\//, '/00000000-0000-0000-0000-000000000000/'),
        studyId,
      },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe(IMAGE_MESSAGES.uploadNotFound);
    const wrongStudy = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'x.svs', s3Key: key.replace(`uploads/${studyId}/`, `uploads/${otherStudyId}/`), studyId },
    });
    expect(wrongStudy.statusCode).toBe(400);
    expect(wrongStudy.json().message).toBe(IMAGE_MESSAGES.uploadNotInStudy);
    const foreign = await outsider.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'x.svs', s3Key: key, studyId },
    });
    expect(foreign.statusCode).toBe(404);

    const response = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'CMU-1-Small-Region.svs', s3Key: key, studyId, imageToReplaceId: null },
    });
    expect(response.statusCode).toBe(200);
    const { success, image } = response.json();
    expect(success).toBe(true);
    expect(image).toMatchObject({
      name: 'CMU-1-Small-Region.svs',
      studyId,
      status: 'PROCESSING',
      processingStatus: 'PENDING',
      processingProgress: 0,
      cogKey: null,
      tileUrl: null,
    });

    const jobs = await t.database.raw.query<{ data: { imageId: number } }>(
      `SELECT data FROM pgboss.job WHERE name = 'image-processing'`,
    );
    expect(jobs.map((j) => j.data.imageId)).toContain(image.id);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'study_id'])
      .where('entity_type', '=', 'image')
      .where('entity_id', '=', String(image.id))
      .execute();
    expect(audit).toEqual([{ action: 'IMAGE_UPLOADED', study_id: studyId }]);

    const again = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'CMU-1-Small-Region.svs', s3Key: key, studyId },
    });
    expect(again.statusCode).toBe(409);
  });
});

describe('resumable multipart upload', () => {
  it('an interrupted upload resumes: list parts, send only the missing ones, same SHA-256', async () => {
    const partSize = 512 * 1024;
    const parts = Array.from({ length: Math.ceil(cmu.length / partSize) }, (_, i) =>
      cmu.subarray(i * partSize, (i + 1) * partSize),
    );
    expect(parts.length).toBe(4);

    const created = await uploader.request({
      method: 'POST',
      url: '/api/uploads/multipart',
      payload: { studyId, fileName: 'CMU-1-Small-Region.svs' },
    });
    expect(created.statusCode).toBe(200);
    const { uploadId, key } = created.json();
    const signed = await uploader.request({
      method: 'POST',
      url: `/api/uploads/multipart/${uploadId}/urls`,
      payload: { key, partNumbers: [1, 2, 3, 4] },
    });
    const urls: { partNumber: number; url: string }[] = signed.json().urls;

    // First session: parts 1 and 2 arrive, then the connection drops.
    for (const { partNumber, url } of urls.slice(0, 2))
      expect((await put(url, parts[partNumber - 1]!)).statusCode).toBe(200);

    // Resume: ask which parts the server has, send only the others.
    const listed = await uploader.request({
      method: 'GET',
      url: `/api/uploads/multipart/${uploadId}/parts?key=${encodeURIComponent(key)}`,
    });
    const have: { partNumber: number; size: number; etag: string }[] = listed.json().parts;
    expect(have.map((p) => [p.partNumber, p.size])).toEqual([
      [1, partSize],
      [2, partSize],
    ]);
    const sent: number[] = [];
    const etags = new Map(have.map((p) => [p.partNumber, p.etag]));
    for (const partNumber of [1, 2, 3, 4].filter((n) => !etags.has(n))) {
      const one = await uploader.request({
        method: 'POST',
        url: `/api/uploads/multipart/${uploadId}/parts/${partNumber}/url`,
        payload: { key },
      });
      const response = await put(one.json().url, parts[partNumber - 1]!);
      etags.set(partNumber, String(response.headers.etag).replace(/"/g, ''));
      sent.push(partNumber);
    }
    expect(sent).toEqual([3, 4]);

    const completed = await uploader.request({
      method: 'POST',
      url: `/api/uploads/multipart/${uploadId}/complete`,
      payload: { key, parts: [...etags].map(([partNumber, etag]) => ({ partNumber, etag })) },
    });
    expect(completed.statusCode).toBe(200);
    expect(completed.json()).toEqual({ success: true, key, size: cmu.length });
    expect(await sha256File(t.app.slides.storage.localPath!(key))).toBe(CMU_SHA);

    const registered = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'CMU-1-Small-Region.svs', s3Key: key, studyId },
    });
    expect(registered.statusCode).toBe(200);
  });

  it('parts of another study’s upload, unknown uploads and bad names are refused', async () => {
    const created = await uploader.request({
      method: 'POST',
      url: '/api/uploads/multipart',
      payload: { studyId, fileName: 'x.svs' },
    });
    const { uploadId, key } = created.json();
    expect(
      (
        await outsider.request({
          method: 'GET',
          url: `/api/uploads/multipart/${uploadId}/parts?key=${encodeURIComponent(key)}`,
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await uploader.request({
          method: 'GET',
          url: `/api/uploads/multipart/${'f'.repeat(32)}/parts?key=${encodeURIComponent(key)}`,
        })
      ).statusCode,
    ).toBe(404);
    const bad = await uploader.request({
      method: 'POST',
      url: '/api/uploads/multipart',
      payload: { studyId, fileName: 'x.jpg' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe(unsupportedFileType('x.jpg', serverImageExtensions()));
    const aborted = await uploader.request({
      method: 'DELETE',
      url: `/api/uploads/multipart/${uploadId}?key=${encodeURIComponent(key)}`,
    });
    expect(aborted.json()).toEqual({ success: true });
    expect(
      (
        await uploader.request({
          method: 'GET',
          url: `/api/uploads/multipart/${uploadId}/parts?key=${encodeURIComponent(key)}`,
        })
      ).statusCode,
    ).toBe(404);
  });

  it('drives the S3 protocol the way @uppy/aws-s3 does (signRequest), on the local storage', async () => {
    const sign = async (body: Record<string, unknown>) => {
      const response = await uploader.request({
        method: 'POST',
        url: '/api/uploads/sign',
        payload: { studyId, ...body },
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ url: string; key?: string }>();
    };
    const create = await sign({ method: 'POST', key: 'uppy-id-slide.svs', fileName: 'slide.svs' });
    expect(create.key).toMatch(new RegExp(`^uploads/${studyId}/u\\d+-[0-9a-f]{16}-[0-9a-f]{20}/slide\\.svs$`));
    const key = create.key!;
    const init = await t.app.inject({
      method: 'POST',
      url: create.url,
      headers: { 'content-type': 'application/octet-stream' },
    });
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.body)?.[1];
    expect(uploadId).toBeDefined();

    const half = Math.ceil(cmu.length / 2);
    const etags: string[] = [];
    for (const [i, chunk] of [cmu.subarray(0, half), cmu.subarray(half)].entries()) {
      const part = await sign({ method: 'PUT', key, uploadId, partNumber: i + 1 });
      etags.push(String((await put(part.url, chunk)).headers.etag));
    }
    const list = await t.app.inject({ method: 'GET', url: (await sign({ method: 'GET', key, uploadId })).url });
    expect(list.headers['content-type']).toContain('application/xml');
    expect([...list.body.matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) => m[1])).toEqual(['1', '2']);

    const xmlBody = `<CompleteMultipartUpload>${etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${e}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    const done = await t.app.inject({
      method: 'POST',
      url: (await sign({ method: 'POST', key, uploadId })).url,
      payload: xmlBody,
      headers: { 'content-type': 'application/xml' },
    });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain(`<Key>${key}</Key>`);
    expect(await sha256File(t.app.slides.storage.localPath!(key))).toBe(CMU_SHA);

    const foreign = await uploader.request({
      method: 'POST',
      url: '/api/uploads/sign',
      payload: {
        studyId,
        method: 'GET',
        key: key.replace(`uploads/${studyId}/`, `uploads/${otherStudyId}/`),
        uploadId,
      },
    });
    expect(foreign.statusCode).toBe(400);
    const jpeg = await uploader.request({
      method: 'POST',
      url: '/api/uploads/sign',
      payload: { studyId, method: 'PUT', key: 'a.jpg' },
    });
    expect(jpeg.json()).toEqual({ success: false, message: unsupportedFileType('a.jpg', serverImageExtensions()) });
  });
});

describe('S3 storage (s3rver)', () => {
  it('the Uppy signRequest path: presigned CreateMultipartUpload, UploadPart and Complete on S3', async () => {
    const s3 = await startS3Server();
    const app = await createSlideTestApp(s3.env);
    try {
      const db = app.database.db;
      const study = (await createStudy(db)).id;
      const user = await createUser(db, { studyRoles: [{ studyId: study, role: 'UPLOADER' }] });
      const session = await login(app.app, user.username, PASSWORD);
      const sign = async (body: Record<string, unknown>) => {
        const response = await session.request({
          method: 'POST',
          url: '/api/uploads/sign',
          payload: { studyId: study, ...body },
        });
        expect(response.statusCode, response.body).toBe(200);
        return response.json<{ url: string; key?: string }>();
      };
      const create = await sign({ method: 'POST', key: 'x-slide.svs', fileName: 'slide.svs' });
      expect(create.url.startsWith(`${s3.endpoint}/${s3.bucket}/uploads/${study}/`)).toBe(true);
      const key = create.key!;
      const init = await (await fetch(create.url, { method: 'POST' })).text();
      const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init)?.[1];
      expect(uploadId).toBeDefined();
      const half = Math.ceil(cmu.length / 2);
      const etags: string[] = [];
      for (const [i, chunk] of [cmu.subarray(0, half), cmu.subarray(half)].entries()) {
        const part = await sign({ method: 'PUT', key, uploadId, partNumber: i + 1 });
        const response = await fetch(part.url, { method: 'PUT', body: chunk });
        expect(response.status).toBe(200);
        etags.push(response.headers.get('etag') ?? '');
      }
      const xmlBody = `<CompleteMultipartUpload>${etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${e}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
      const done = await fetch((await sign({ method: 'POST', key, uploadId })).url, {
        method: 'POST',
        body: xmlBody,
        headers: { 'content-type': 'application/xml' },
      });
      expect(done.status).toBe(200);
      expect(await app.app.slides.storage.head(key)).toMatchObject({ size: cmu.length });
      const registered = await session.request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'slide.svs', s3Key: key, studyId: study },
      });
      expect(registered.statusCode).toBe(200);
    } finally {
      await app.close();
      await s3.close();
    }
  });

  it('signed URL upload, registration, processing and signed download against a real S3 server', async () => {
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
        payload: { studyId: study, fileNames: ['CMU-1-Small-Region.svs'] },
      });
      const { signedUrl, s3Key } = signed.json().data.urls[0];
      expect(signedUrl).toMatch(new RegExp(`^${s3.endpoint}/${s3.bucket}/uploads/`));
      expect((await fetch(signedUrl, { method: 'PUT', body: cmu })).status).toBe(200);

      const created = await session.request({
        method: 'POST',
        url: '/api/images',
        payload: { name: 'CMU-1-Small-Region.svs', s3Key, studyId: study },
      });
      expect(created.statusCode).toBe(200);
      const imageId: number = created.json().image.id;

      await processImage({ db, storage: app.app.slides.storage, tmpDir: path.join(app.dataDir, 'tmp') }, imageId);
      const row = await db.selectFrom('images').selectAll().where('id', '=', imageId).executeTakeFirstOrThrow();
      expect([row.status, row.content_sha256, row.width, row.height]).toEqual([
        'CASE_ASSIGNMENT_PENDING',
        CMU_SHA,
        2220,
        2967,
      ]);
      expect((await app.app.slides.storage.head(row.cog_key!))?.size).toBeGreaterThan(100_000);
      expect(await app.app.slides.storage.head(row.label_key!)).not.toBeNull();

      const download = await session.request({ method: 'GET', url: `/api/signed-urls/image/${imageId}` });
      expect(download.statusCode).toBe(200);
      const got = Buffer.from(await (await fetch(download.json().url)).arrayBuffer());
      expect(createHash('sha256').update(got).digest('hex')).toBe(CMU_SHA);
    } finally {
      await app.close();
      await s3.close();
    }
  });
});
