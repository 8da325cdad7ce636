import path from 'node:path';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MESSAGES, roleByName } from '@lamina/domain';
import { processImage } from '../src/modules/processing/processImage.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { login, type Session } from './testApp.js';
import {
  createCase,
  createQuery,
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  createUser,
  PASSWORD,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

interface Received {
  from: string;
  to: string[];
  data: string;
}

let t: SlideTestContext;
let smtp: SMTPServer;
const inbox: Received[] = [];
let studyId: number;
let imageId: number;
let labtech: Session;
let reader: Session;
let uploader: Session;
let outsider: Session;
let sponsor: Session;

async function startSmtp(): Promise<number> {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return (smtp.server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const port = await startSmtp();
  t = await createSlideTestApp({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    MAIL_FROM: 'Lamina <lamina@example.org>',
    TILE_SERVER_LOCATION: 'https://tiles.example.org',
  });
  const db = t.database.db;
  studyId = (await createStudy(db, `Images study ${Date.now()}`)).id;
  const otherStudy = (await createStudy(db)).id;
  const users = {
    labtech: await createUser(db, { studyRoles: [{ studyId, role: 'LabTech' }] }),
    reader: await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] }),
    uploader: await createUser(db, { studyRoles: [{ studyId, role: 'UPLOADER' }] }),
    outsider: await createUser(db, { studyRoles: [{ studyId: otherStudy, role: 'LabTech' }] }),
    sponsor: await createUser(db, { studyRoles: [{ studyId, role: 'SPONSOR' }] }),
  };
  labtech = await login(t.app, users.labtech.username, PASSWORD);
  reader = await login(t.app, users.reader.username, PASSWORD);
  uploader = await login(t.app, users.uploader.username, PASSWORD);
  outsider = await login(t.app, users.outsider.username, PASSWORD);
  sponsor = await login(t.app, users.sponsor.username, PASSWORD);

  const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
  imageId = (await createUploadedImage(db, { studyId, s3Key: key, name: 'CMU-1-Small-Region.svs' })).id;
  await processImage({ db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') }, imageId);
}, 60_000);

afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe('GET /api/images/{id}', () => {
  it('401 logged out; 404 for a missing image or an image of a study the user cannot see', async () => {
    expect((await t.app.inject({ method: 'GET', url: `/api/images/${imageId}` })).statusCode).toBe(401);
    for (const [session, id] of [
      [outsider, imageId],
      [labtech, 999_999],
    ] as const) {
      const response = await session.request({ method: 'GET', url: `/api/images/${id}` });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ success: false, message: IMAGE_MESSAGES.imageNotFound });
    }
  });

  it("returns the viewer's Image with geometry, processing state and a tile URL template", async () => {
    // A central reader opens only images of the cases assigned to them (issue 11): not this one.
    expect((await reader.request({ method: 'GET', url: `/api/images/${imageId}` })).statusCode).toBe(404);
    const response = await sponsor.request({ method: 'GET', url: `/api/images/${imageId}` });
    expect(response.statusCode).toBe(200);
    const image = response.json();
    expect(image).toMatchObject({
      id: imageId,
      // Without the file-name permission: a neutral label; and no label images.
      name: `Image ${imageId}`,
      studyId,
      cogKey: `images/${imageId}/pyramid.tif`,
      magnifications: [1.25, 2.5, 5, 10, 20],
      extent: [0, -2967, 2220, 0],
      caseId: null,
      processingStatus: 'SUCCESS',
      processingProgress: 100,
      status: 'CASE_ASSIGNMENT_PENDING',
      statusMessage: null,
      pixelSize: 0.499,
      physicalResolution: 0.499,
      maxTmsZoom: 4,
      zStackSize: 1,
      width: 2220,
      height: 2967,
      ignored: false,
      acceptAiAnnotations: false,
      hasLabel: false,
      hasMacro: false,
    });
    // Blinded: nothing about subject, site or visit, and no storage key.
    for (const field of ['subjectId', 'siteId', 'visitId', 'subject_id', 's3Key'])
      expect(image).not.toHaveProperty(field);
    // A lab technician sees the file name and may fetch label and macro.
    const forLab = (await labtech.request({ method: 'GET', url: `/api/images/${imageId}` })).json();
    expect(forLab).toMatchObject({ name: 'CMU-1-Small-Region.svs', hasLabel: true, hasMacro: true });
    const match = /^https:\/\/tiles\.example\.org\/tiles\/(\d+)\/\{z\}\/\{x\}\/\{y\}\?t=(.+)$/.exec(image.tileUrl);
    expect(match?.[1]).toBe(String(imageId));
    expect(new TileTokens(t.config.sessionSecret).verify(decodeURIComponent(match![2]!), imageId)).not.toBeNull();
    expect(new TileTokens(t.config.sessionSecret).verify(decodeURIComponent(match![2]!), imageId + 1)).toBeNull();
  });

  it('an image still processing has no tile URL and shows its progress', async () => {
    const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'small.svs'));
    const { id } = await createUploadedImage(t.database.db, { studyId, s3Key: key });
    await t.database.db
      .updateTable('images')
      .set({ processing_status: 'SUBMITTED', processing_progress: 42 })
      .where('id', '=', id)
      .execute();
    const image = (await labtech.request({ method: 'GET', url: `/api/images/${id}` })).json();
    expect(image).toMatchObject({
      processingStatus: 'SUBMITTED',
      processingProgress: 42,
      status: 'PROCESSING',
      tileUrl: null,
      extent: null,
      maxTmsZoom: 0,
    });
  });
});

describe('label and macro images', () => {
  it('central readers never get them (403); sponsors neither', async () => {
    for (const session of [reader, sponsor]) {
      for (const kind of ['label', 'macro']) {
        const response = await session.request({ method: 'GET', url: `/api/images/${imageId}/${kind}` });
        expect(response.statusCode).toBe(403);
      }
    }
  });

  it('served to a lab technician of the study as PNG (label) and JPEG (macro)', async () => {
    const label = await labtech.request({ method: 'GET', url: `/api/images/${imageId}/label` });
    expect(label.statusCode).toBe(200);
    expect(label.headers['content-type']).toBe('image/png');
    expect(await sharp(label.rawPayload).metadata()).toMatchObject({ width: 387, height: 463 });
    const macro = await labtech.request({ method: 'GET', url: `/api/images/${imageId}/macro` });
    expect(macro.headers['content-type']).toBe('image/jpeg');
    expect(await sharp(macro.rawPayload).metadata()).toMatchObject({ width: 1280, height: 431 });
  });

  it('404 for another study, and when the slide has none', async () => {
    expect((await outsider.request({ method: 'GET', url: `/api/images/${imageId}/label` })).statusCode).toBe(404);
    const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'boxes.tiff'));
    const { id } = await createUploadedImage(t.database.db, { studyId, s3Key: key });
    await processImage({ db: t.database.db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') }, id);
    const response = await labtech.request({ method: 'GET', url: `/api/images/${id}/label` });
    expect(response.statusCode).toBe(404);
    expect(response.json().message).toBe(IMAGE_MESSAGES.labelNotFound);
  });
});

describe('GET /api/signed-urls/image/{id}', () => {
  it('403 without the download permission, 404 outside the study; a signed URL otherwise, audited', async () => {
    expect((await reader.request({ method: 'GET', url: `/api/signed-urls/image/${imageId}` })).statusCode).toBe(403);
    expect((await outsider.request({ method: 'GET', url: `/api/signed-urls/image/${imageId}` })).statusCode).toBe(404);
    const response = await labtech.request({ method: 'GET', url: `/api/signed-urls/image/${imageId}` });
    expect(response.statusCode).toBe(200);
    const { url } = response.json();
    const download = await t.app.inject({ method: 'GET', url });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.length).toBe(1_938_955);
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'username'])
      .where('entity_type', '=', 'image')
      .where('entity_id', '=', String(imageId))
      .where('action', '=', 'IMAGE_DOWNLOADED')
      .execute();
    expect(events).toHaveLength(1);
  });
});

describe('replace image', () => {
  it('keeps the case assignment, archives the replaced image, links the new one, audited', async () => {
    const db = t.database.db;
    const kase = await createCase(db, { studyId });
    const oldKey = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'small.svs'));
    const old = await createUploadedImage(db, { studyId, s3Key: oldKey, caseId: kase.id });
    await db
      .updateTable('images')
      .set({ status: 'LAB_QC_PENDING', processing_status: 'SUCCESS' })
      .where('id', '=', old.id)
      .execute();
    // Replace is for an image with an open query (doc 2 §2.5) sent to the replacer's role (doc 3 §6,
    // issue 26); the query goes over to the replacement.
    const query = await createQuery(db, { studyId, objectId: old.id });
    await db
      .updateTable('queries')
      .set({ opened_by_role_id: roleByName('ISC').id, with_role_id: roleByName('UPLOADER').id })
      .where('id', '=', query.id)
      .execute();

    const signed = (
      await uploader.request({
        method: 'POST',
        url: '/api/signed-urls',
        payload: { studyId, fileNames: ['small.svs'] },
      })
    ).json();
    const { s3Key, signedUrl } = signed.data.urls[0];
    await t.app.inject({
      method: 'PUT',
      url: signedUrl,
      payload: Buffer.from('not really a slide'),
      headers: { 'content-type': 'application/octet-stream' },
    });

    const response = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'small.svs', s3Key, studyId, imageToReplaceId: old.id },
    });
    expect(response.statusCode).toBe(200);
    const { image } = response.json();
    expect(image).toMatchObject({ caseId: kase.id, replacesImageId: old.id, status: 'PROCESSING' });
    const archived = await db
      .selectFrom('images')
      .select(['status', 'case_id'])
      .where('id', '=', old.id)
      .executeTakeFirstOrThrow();
    expect(archived).toEqual({ status: 'ARCHIVED', case_id: kase.id });
    const audit = await db
      .selectFrom('audit_events')
      .select(['action', 'entity_id', 'old_value', 'new_value'])
      .where('entity_type', '=', 'image')
      .where('entity_id', 'in', [String(old.id), String(image.id)])
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual([
      'IMAGE_UPLOADED',
      'IMAGE_REPLACED',
      'IMAGE_ARCHIVED',
      'IMAGE_CASE_ASSIGNED',
    ]);
    expect(audit[2]).toMatchObject({ entity_id: String(old.id), old_value: 'LAB_QC_PENDING', new_value: 'ARCHIVED' });
    const carried = await db
      .selectFrom('queries')
      .select('object_id')
      .where('id', '=', query.id)
      .executeTakeFirstOrThrow();
    expect(carried.object_id).toBe(image.id);

    // An archived image cannot be replaced again; an image of another study is not found.
    const signed2 = (
      await uploader.request({
        method: 'POST',
        url: '/api/signed-urls',
        payload: { studyId, fileNames: ['again.svs'] },
      })
    ).json();
    const next = signed2.data.urls[0];
    await t.app.inject({
      method: 'PUT',
      url: next.signedUrl,
      payload: Buffer.from('x'),
      headers: { 'content-type': 'application/octet-stream' },
    });
    const twice = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'again.svs', s3Key: next.s3Key, studyId, imageToReplaceId: old.id },
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().message).toBe(IMAGE_MESSAGES.imageToReplaceArchived);
    const missing = await uploader.request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'again.svs', s3Key: next.s3Key, studyId, imageToReplaceId: 999_999 },
    });
    expect(missing.statusCode).toBe(404);
  });
});

describe('POST /api/images/notify-upload', () => {
  it('403 for a reader; writes the outbox for the study admins and e-mails them by SMTP', async () => {
    const db = t.database.db;
    expect(
      (
        await reader.request({
          method: 'POST',
          url: '/api/images/notify-upload',
          payload: { studyId, numFiles: 1, failures: 0 },
        })
      ).statusCode,
    ).toBe(403);
    const studyAdmin = await createUser(db, {
      username: `admin-${Date.now()}@example.org`,
      globalRoles: ['StudyAdmin'],
    });
    const isc = await createUser(db, {
      username: `isc-${Date.now()}@example.org`,
      studyRoles: [{ studyId, role: 'ISC' }],
    });
    const otherIsc = await createUser(db, { username: `isc-other-${Date.now()}@example.org` });

    const before = inbox.length;
    const response = await uploader.request({
      method: 'POST',
      url: '/api/images/notify-upload',
      payload: { studyId, numFiles: 3, failures: ['bad.svs'] },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ success: true, emailConfigured: true, failed: 0 });
    expect(body.sent).toBe(body.recipients);

    const recipients = inbox.slice(before).flatMap((m) => m.to);
    expect(recipients).toContain(studyAdmin.username);
    expect(recipients).toContain(isc.username);
    expect(recipients).not.toContain(otherIsc.username);
    const mail = inbox.slice(before).find((m) => m.to.includes(isc.username))!;
    expect(mail.from).toBe('lamina@example.org');
    expect(mail.data).toContain('3 images uploaded to Images study');
    expect(mail.data).toContain('bad.svs');

    const outbox = await db
      .selectFrom('mail_outbox')
      .select(['to_address', 'status', 'study_id', 'kind'])
      .where('to_address', '=', isc.username)
      .execute();
    expect(outbox).toEqual([
      { to_address: isc.username, status: 'SENT', study_id: studyId, kind: 'UPLOAD_NOTIFICATION' },
    ]);
  });
});
