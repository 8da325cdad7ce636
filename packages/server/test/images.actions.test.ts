import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_MESSAGES, IMAGE_ACTION_MESSAGES, MESSAGES } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * The image row actions of the study page (issue 11; doc 2 §2.5, §4, §5): edit with reasons, move
 * to a study or a case (preview of the changed data points, then the move), copy sharing the
 * pyramid, archive — each refusal with its message, changing nothing, each success audited.
 */
let t: TestContext;
let studyId: number;
let studyB: number;
let hiddenStudy: number;
let isc: Session;
let labtech: Session;
let uploader: Session;
let dm: Session;

const db = () => t.database.db;

async function image(over: { status?: string; caseId?: number | null; study?: number } = {}): Promise<number> {
  const { id } = await createStudyImage(db(), {
    studyId: over.study ?? studyId,
    status: over.status ?? 'CASE_ASSIGNMENT_PENDING',
    caseId: over.caseId ?? null,
  });
  await db()
    .updateTable('images')
    .set({ cog_key: `pyramids/${id}.tif`, processing_status: 'SUCCESS', width: 1000, height: 800 })
    .where('id', '=', id)
    .execute();
  return id;
}

async function row(id: number) {
  return db().selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function audit(id: number) {
  return db()
    .selectFrom('audit_events')
    .select(['action', 'field', 'old_value', 'new_value', 'reason', 'study_id'])
    .where('entity_type', '=', 'image')
    .where('entity_id', '=', String(id))
    .orderBy('id')
    .execute();
}

beforeAll(async () => {
  t = await createTestApp();
  studyId = (await createStudy(db(), 'Actions A')).id;
  studyB = (await createStudy(db(), 'Actions B')).id;
  hiddenStudy = (await createStudy(db(), 'Actions hidden')).id;
  await db()
    .updateTable('studies')
    .set({ anatomical_segments: ['Ileum', 'Colon'], segments: 2, sponsor: 'Acme' })
    .where('id', '=', studyId)
    .execute();
  await db().updateTable('studies').set({ sponsor: 'Globex' }).where('id', '=', studyB).execute();
  const user = async (role: 'ISC' | 'LabTech' | 'UPLOADER' | 'DM', studies: number[]) => {
    const u = await createUser(db(), { studyRoles: studies.map((s) => ({ studyId: s, role })) });
    return login(t.app, u.username, PASSWORD);
  };
  isc = await user('ISC', [studyId, studyB]);
  labtech = await user('LabTech', [studyId]);
  uploader = await user('UPLOADER', [studyId]);
  dm = await user('DM', [studyId]);
});

afterAll(async () => {
  await t.close();
});

describe('edit (PATCH /api/images/{id})', () => {
  it('a first value needs no reason; changing a value does; one IMAGE_EDITED row per field', async () => {
    const id = await image();
    const first = await labtech.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { accessionNumber: { value: 'ACC-1' }, biopsyLocation: { value: 'Ileum' } },
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ message: IMAGE_ACTION_MESSAGES.updated });
    const noReason = await labtech.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { accessionNumber: { value: 'ACC-2' } },
    });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(IMAGE_ACTION_MESSAGES.updateReasonRequired);
    expect((await row(id)).accession_number).toBe('ACC-1');
    const ok = await labtech.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { accessionNumber: { value: 'ACC-2', reasonForChange: 'Label misread' } },
    });
    expect(ok.statusCode).toBe(200);
    expect((await audit(id)).filter((r) => r.action === 'IMAGE_EDITED')).toEqual([
      expect.objectContaining({ field: 'accessionNumber', old_value: null, new_value: 'ACC-1', reason: null }),
      expect.objectContaining({ field: 'biopsyLocation', old_value: null, new_value: 'Ileum' }),
      expect.objectContaining({
        field: 'accessionNumber',
        old_value: 'ACC-1',
        new_value: 'ACC-2',
        reason: 'Label misread',
      }),
    ]);
  });

  it('the file name needs the file-name edit and pass-lab-QC permissions, and keeps an accepted extension', async () => {
    const id = await image();
    const asUploader = await uploader.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { imageName: { value: 'renamed.svs', reasonForChange: 'r' } },
    });
    expect(asUploader.statusCode).toBe(403);
    expect(asUploader.json().message).toBe(IMAGE_ACTION_MESSAGES.fileNameReadOnly);
    const badExtension = await labtech.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { imageName: { value: 'renamed.jpg', reasonForChange: 'r' } },
    });
    expect(badExtension.statusCode).toBe(400);
    const ok = await labtech.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { imageName: { value: 'renamed.svs', reasonForChange: 'Site typo' } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await row(id)).name).toBe('renamed.svs');
  });

  it('an anatomical segment outside the study’s segments is refused; DM (no edit permission) gets 403', async () => {
    const id = await image();
    const response = await labtech.request({
      method: 'PATCH',
      url: `/api/images/${id}`,
      payload: { biopsyLocation: { value: 'Stomach' } },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe(IMAGE_ACTION_MESSAGES.segmentNotInStudy(['Ileum', 'Colon']));
    expect(response.json().message).toBe('Anatomical segment must be one of the study’s segments: Ileum, Colon');
    expect(
      (await dm.request({ method: 'PATCH', url: `/api/images/${id}`, payload: { accessionNumber: { value: 'x' } } }))
        .statusCode,
    ).toBe(403);
  });
});

describe('move to another study (PATCH /api/images/{id}/study)', () => {
  it('preview lists what changes; the move needs a reason; the image leaves its case', async () => {
    const caseId = (await createCase(db(), { studyId })).id;
    await db().updateTable('cases').set({ proc_id: 'MOVE-1', subject_id: 'SUBJ-9' }).where('id', '=', caseId).execute();
    const id = await image({ caseId, status: 'LAB_QC_PENDING' });
    const preview = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/study`,
      payload: { value: studyB, preview: true },
    });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().changes).toEqual([
      { label: 'Study Name', from: 'Actions A', to: 'Actions B' },
      { label: 'Case', from: 'MOVE-1', to: null },
      { label: 'Case Subject ID', from: 'SUBJ-9', to: null },
      { label: 'Case Status', from: 'Pending Lab QC', to: null },
      { label: 'Image Status', from: 'Lab QC Pending', to: 'Case Assignment Pending' },
    ]);
    expect((await row(id)).study_id).toBe(studyId);
    const noReason = await isc.request({ method: 'PATCH', url: `/api/images/${id}/study`, payload: { value: studyB } });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(
      `${IMAGE_ACTION_MESSAGES.unableToMoveStudy} ${IMAGE_ACTION_MESSAGES.moveReasonRequired}`,
    );
    const ok = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/study`,
      payload: { value: studyB, reasonForChange: 'Uploaded to the wrong study' },
    });
    expect(ok.json()).toMatchObject({ message: IMAGE_ACTION_MESSAGES.moved });
    expect(await row(id)).toMatchObject({ study_id: studyB, case_id: null, status: 'CASE_ASSIGNMENT_PENDING' });
    const rows = await audit(id);
    expect(rows.filter((r) => r.action === 'IMAGE_MOVED_STUDY').map((r) => r.study_id)).toEqual([studyId, studyB]);
    expect(rows.some((r) => r.action === 'IMAGE_CASE_REMOVED' && r.reason === 'Uploaded to the wrong study')).toBe(
      true,
    );
  });

  it('refused for images in reading, into a study the user cannot see (404), or the same study', async () => {
    const reading = await image({ status: 'READY_FOR_READING' });
    const blocked = await isc.request({
      method: 'PATCH',
      url: `/api/images/${reading}/study`,
      payload: { value: studyB, reasonForChange: 'r' },
    });
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json().message).toBe(
      `${IMAGE_ACTION_MESSAGES.unableToMoveStudy} ${IMAGE_ACTION_MESSAGES.moveBlocked}`,
    );
    const id = await image();
    const hidden = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/study`,
      payload: { value: hiddenStudy, reasonForChange: 'r' },
    });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().message).toBe(MESSAGES.studyNotFound);
    const same = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/study`,
      payload: { value: studyId, reasonForChange: 'r' },
    });
    expect(same.statusCode).toBe(409);
    expect((await row(id)).study_id).toBe(studyId);
    // LabTech has no move permission.
    expect(
      (await labtech.request({ method: 'PATCH', url: `/api/images/${id}/study`, payload: { value: studyB } }))
        .statusCode,
    ).toBe(403);
  });
});

describe('move to another case (PATCH /api/images/{id}/case)', () => {
  it('moves between cases of the study; the image takes the target’s stage', async () => {
    const from = (await createCase(db(), { studyId })).id;
    const to = (await createCase(db(), { studyId, status: 'PENDING_QC' })).id;
    const id = await image({ caseId: from, status: 'LAB_QC_PENDING' });
    const ok = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/case`,
      payload: { value: to, reasonForChange: 'Belongs to the other procedure' },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().changes).toContainEqual({ label: 'Case Status', from: 'Pending Lab QC', to: 'Pending QC' });
    expect(await row(id)).toMatchObject({ case_id: to, status: 'ISC_QC_PENDING' });
    expect((await audit(id)).at(-2)).toMatchObject({
      action: 'IMAGE_CASE_ASSIGNED',
      old_value: String(from),
      new_value: String(to),
    });
  });

  it('refuses a processed case, a case of another study (404) and images in reading', async () => {
    const processed = (await createCase(db(), { studyId, status: 'PROCESSED' })).id;
    const id = await image();
    const late = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/case`,
      payload: { value: processed, reasonForChange: 'r' },
    });
    expect(late.statusCode).toBe(409);
    expect(late.json().message).toBe(`${IMAGE_ACTION_MESSAGES.unableToMoveCase} ${CASE_MESSAGES.notAssignableStatus}`);
    const foreign = (await createCase(db(), { studyId: studyB })).id;
    const other = await isc.request({
      method: 'PATCH',
      url: `/api/images/${id}/case`,
      payload: { value: foreign, reasonForChange: 'r' },
    });
    expect(other.statusCode).toBe(404);
    expect((await row(id)).case_id).toBeNull();
  });
});

describe('copy and archive', () => {
  it('copy: a new row sharing the pyramid, without a case; the name defaults to "(copy)"', async () => {
    const caseId = (await createCase(db(), { studyId })).id;
    const id = await image({ caseId, status: 'LAB_QC_PENDING' });
    const source = await row(id);
    const response = await isc.request({ method: 'POST', url: `/api/images/${id}/copy`, payload: {} });
    expect(response.statusCode, response.body).toBe(200);
    const copyId = response.json<{ imageId: number }>().imageId;
    expect(await row(copyId)).toMatchObject({
      cog_key: source.cog_key,
      s3_key: source.s3_key,
      name: source.name.replace('.svs', ' (copy).svs'),
      case_id: null,
      status: 'CASE_ASSIGNMENT_PENDING',
      processing_status: 'SUCCESS',
      copied_from_image_id: id,
    });
    expect((await audit(copyId))[0]).toMatchObject({ action: 'IMAGE_COPIED' });
    const named = await isc.request({ method: 'POST', url: `/api/images/${id}/copy`, payload: { name: 'B.svs' } });
    expect((await row(named.json<{ imageId: number }>().imageId)).name).toBe('B.svs');
  });

  it('copy refuses an image that is not processed', async () => {
    const { id } = await createStudyImage(db(), { studyId, status: 'PROCESSING' });
    const response = await isc.request({ method: 'POST', url: `/api/images/${id}/copy`, payload: {} });
    expect(response.statusCode).toBe(409);
    expect(response.json().message).toBe(
      `${IMAGE_ACTION_MESSAGES.unableToCopy}. ${IMAGE_ACTION_MESSAGES.notProcessed}`,
    );
  });

  it('archive needs a reason; an archived image is not archived again', async () => {
    const id = await image();
    const noReason = await isc.request({ method: 'POST', url: `/api/images/${id}`, payload: {} });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(IMAGE_ACTION_MESSAGES.archiveReasonRequired);
    const ok = await isc.request({
      method: 'POST',
      url: `/api/images/${id}`,
      payload: { reasonForChange: 'Duplicate scan' },
    });
    expect(ok.json()).toMatchObject({ message: IMAGE_ACTION_MESSAGES.archived });
    expect((await row(id)).status).toBe('ARCHIVED');
    expect((await audit(id)).at(-1)).toMatchObject({ action: 'IMAGE_ARCHIVED', reason: 'Duplicate scan' });
    const again = await isc.request({ method: 'POST', url: `/api/images/${id}`, payload: { reasonForChange: 'x' } });
    expect(again.statusCode).toBe(409);
  });
});
