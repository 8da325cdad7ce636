import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MESSAGES, MESSAGES, NOTIFY_UPLOAD_LIMIT } from '@lamina/domain';
import { processImage } from '../src/modules/processing/processImage.js';
import { login, type Session } from './testApp.js';
import {
  assignReader,
  createCase,
  createOrganization,
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  createUser,
  PASSWORD,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

/**
 * Issue 9, defects 8, 9 and 10 (notify-upload): Site sees labels of its own organization's slides
 * only; central readers (and every role without the file-name or sponsor permission) receive
 * neither file names, storage keys nor the sponsor; upload notifications are escaped and limited.
 */
let t: SlideTestContext;
let studyId: number;
let ownImage: number;
let otherImage: number;
let caseImages: number[];
let site: Session;
let reader: Session;
let dm: Session;
let labtech: Session;

async function slide(name: string, organizationId: number | null, caseId: number | null = null): Promise<number> {
  const db = t.database.db;
  const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'), name);
  const { id } = await createUploadedImage(db, { studyId, s3Key: key, name, caseId });
  await db.updateTable('images').set({ organization_id: organizationId }).where('id', '=', id).execute();
  await processImage({ db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') }, id);
  return id;
}

beforeAll(async () => {
  t = await createSlideTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db, 'Blinding study')).id;
  await db.updateTable('studies').set({ sponsor: 'Acme Pharma' }).where('id', '=', studyId).execute();
  const siteA = await createOrganization(db, 'Site A');
  const siteB = await createOrganization(db, 'Site B');
  const siteUser = await createUser(db, { studyRoles: [{ studyId, role: 'Site' }] });
  await db.updateTable('users').set({ organization_id: siteA.id }).where('id', '=', siteUser.id).execute();
  site = await login(t.app, siteUser.username, PASSWORD);
  const readerUser = await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] });
  reader = await login(t.app, readerUser.username, PASSWORD);
  dm = await login(t.app, (await createUser(db, { studyRoles: [{ studyId, role: 'DM' }] })).username, PASSWORD);
  labtech = await login(
    t.app,
    (await createUser(db, { studyRoles: [{ studyId, role: 'LabTech' }] })).username,
    PASSWORD,
  );

  ownImage = await slide('SUBJ-0001_SITE-01_VISIT-1.svs', siteA.id);
  otherImage = await slide('SUBJ-0042_SITE-07_VISIT-3.svs', siteB.id);
  const caseId = (await createCase(db, { studyId })).id;
  await db.updateTable('cases').set({ proc_id: 'PROC-17' }).where('id', '=', caseId).execute();
  caseImages = [await slide('SUBJ-0042_A.svs', siteB.id, caseId), await slide('SUBJ-0042_B.svs', siteB.id, caseId)];
  await assignReader(db, { caseId, userId: readerUser.id });
}, 120_000);

afterAll(async () => {
  await t.close();
});

describe('labels of other organizations’ slides (defect 8)', () => {
  it('Site fetches the label and macro of its own organization’s slide, not of another’s', async () => {
    for (const kind of ['label', 'macro']) {
      expect((await site.request({ method: 'GET', url: `/api/images/${ownImage}/${kind}` })).statusCode).toBe(200);
      const other = await site.request({ method: 'GET', url: `/api/images/${otherImage}/${kind}` });
      expect(other.statusCode).toBe(403);
      expect(other.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
    // The image view says so too; the lab technician (view-label) sees every label.
    expect((await site.request({ method: 'GET', url: `/api/images/${ownImage}` })).json()).toMatchObject({
      hasLabel: true,
      hasMacro: true,
    });
    expect((await site.request({ method: 'GET', url: `/api/images/${otherImage}` })).json()).toMatchObject({
      hasLabel: false,
      hasMacro: false,
    });
    expect((await labtech.request({ method: 'GET', url: `/api/images/${otherImage}/label` })).statusCode).toBe(200);
  });
});

describe('file names, storage keys and the sponsor (defect 9)', () => {
  it('a central reader receives a neutral label and no storage key; those with the permission, the name', async () => {
    // A reader opens only the images of the cases assigned to them (issue 11): not a loose one.
    expect((await reader.request({ method: 'GET', url: `/api/images/${otherImage}` })).statusCode).toBe(404);
    const loose = (await dm.request({ method: 'GET', url: `/api/images/${otherImage}` })).json<
      Record<string, unknown>
    >();
    expect(loose.name).toBe(`Image ${otherImage}`);
    expect(loose).not.toHaveProperty('s3Key');
    expect(JSON.stringify(loose)).not.toContain('SUBJ-0042');
    const inCase = await Promise.all(
      caseImages.map(async (id) =>
        (await reader.request({ method: 'GET', url: `/api/images/${id}` })).json<{ name: string }>(),
      ),
    );
    expect(inCase.map((i) => i.name)).toEqual(['PROC-17 – image 1', 'PROC-17 – image 2']);
    expect((await labtech.request({ method: 'GET', url: `/api/images/${otherImage}` })).json()).toMatchObject({
      name: 'SUBJ-0042_SITE-07_VISIT-3.svs',
    });
  });

  it('the study’s images list: neutral names, and names are neither searched nor sorted by', async () => {
    const list = async (session: Session, query: string) =>
      (await session.request({ method: 'GET', url: `/api/studies/${studyId}/images?${query}` })).json<{
        images: { id: number; name: string }[];
      }>().images;
    const all = await list(dm, 'sort=name');
    expect(all.map((i) => i.name).sort()).toEqual(
      [`Image ${ownImage}`, `Image ${otherImage}`, 'PROC-17 – image 1', 'PROC-17 – image 2'].sort(),
    );
    expect(JSON.stringify(all)).not.toContain('SUBJ-');
    // Sorted by upload, newest first, whatever was asked: a name order would leak the names.
    expect(all.map((i) => i.id)).toEqual([...caseImages].reverse().concat([otherImage, ownImage]));
    expect(await list(dm, 'name=SUBJ-0042')).toHaveLength(4);
    expect((await list(labtech, 'name=SUBJ-0042')).map((i) => i.name)).toEqual([
      'SUBJ-0042_B.svs',
      'SUBJ-0042_A.svs',
      'SUBJ-0042_SITE-07_VISIT-3.svs',
    ]);
  });

  it('the sponsor goes only to roles that may see it, and is no sort key for the others', async () => {
    const view = (session: Session) => session.request({ method: 'GET', url: `/api/studies/${studyId}` });
    expect((await view(reader)).json()).toMatchObject({ sponsor: null });
    expect(JSON.stringify((await view(reader)).json())).not.toContain('Acme');
    expect((await view(dm)).json()).toMatchObject({ sponsor: 'Acme Pharma' });
    const listed = (await reader.request({ method: 'GET', url: '/api/studies/list?sort=sponsor' })).json<{
      studies: { sponsor: string | null }[];
    }>();
    expect(listed.studies.every((s) => s.sponsor === null)).toBe(true);
  });
});

describe('upload notifications (defect 10)', () => {
  it('user text cannot add lines or headers to the e-mail', async () => {
    const db = t.database.db;
    const evil = await createStudy(db, 'Study\r\nBcc: victim@example.org');
    const uploader = await login(
      t.app,
      (await createUser(db, { studyRoles: [{ studyId: evil.id, role: 'UPLOADER' }] })).username,
      PASSWORD,
    );
    await createUser(db, { username: `admin-${Date.now()}@example.org`, globalRoles: ['StudyAdmin'] });
    const response = await uploader.request({
      method: 'POST',
      url: '/api/images/notify-upload',
      payload: {
        studyId: evil.id,
        numFiles: 2,
        failures: ['a.svs\r\nAll files were uploaded.', 'b.svs\u2028X-Evil: 1'],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const mail = await db
      .selectFrom('mail_outbox')
      .select(['subject', 'body'])
      .where('study_id', '=', evil.id)
      .executeTakeFirstOrThrow();
    expect(mail.subject).toBe('[Lamina] 2 images uploaded to Study Bcc: victim@example.org');
    const lines = mail.body.split('\n');
    expect(lines).toContain('  - a.svs All files were uploaded.');
    expect(lines).toContain('  - b.svs X-Evil: 1');
    expect(lines.filter((l) => l === 'All files were uploaded.')).toEqual([]);
    expect(mail.body).not.toMatch(/[\r\u2028]/);
  });

  it(`is limited to ${NOTIFY_UPLOAD_LIMIT.perUser} per user in ${NOTIFY_UPLOAD_LIMIT.windowMinutes} minutes; the refusal changes nothing`, async () => {
    const db = t.database.db;
    const study = await createStudy(db);
    const user = await createUser(db, { studyRoles: [{ studyId: study.id, role: 'UPLOADER' }] });
    const uploader = await login(t.app, user.username, PASSWORD);
    const notify = () =>
      uploader.request({
        method: 'POST',
        url: '/api/images/notify-upload',
        payload: { studyId: study.id, numFiles: 1 },
      });
    for (let i = 0; i < NOTIFY_UPLOAD_LIMIT.perUser; i++) expect((await notify()).statusCode).toBe(200);
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('audit_events')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', user.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const refused = await notify();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ success: false, message: IMAGE_MESSAGES.tooManyNotifications });
    expect(await count()).toBe(before);
  });
});
