import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CASE_MESSAGES,
  IM_EDIT_MESSAGES,
  IMAGE_ACTION_MESSAGES,
  IMAGE_MESSAGES,
  MESSAGES,
  type RoleName,
} from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  createCase,
  createImage,
  createOrganization,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';

/**
 * Edit Column of Image Management (issue 12; doc 2 §5–7): POST /api/imageManagement/{id}/editImageColumn.
 * Every rule of doc 2 §5 and its message; each refusal changes nothing; each change is audited with
 * old value, new value and reason.
 */

let t: TestContext;
let study: { id: number; name: string };
let other: { id: number; name: string };
let bare: { id: number; name: string };
const sessions = new Map<string, Session>();
const db = () => t.database.db;

async function as(role: RoleName | 'sysadmin', studyIds = [study.id, other.id, bare.id]): Promise<Session> {
  const key = `${role}:${studyIds.join(',')}`;
  const known = sessions.get(key);
  if (known) return known;
  const user =
    role === 'sysadmin'
      ? await createUser(db(), { systemAdmin: true, globalRoles: ['SystemAdmin'] })
      : await createUser(db(), { studyRoles: studyIds.map((studyId) => ({ studyId, role })) });
  const session = await login(t.app, user.username, PASSWORD);
  sessions.set(key, session);
  return session;
}

async function edit(session: Session, id: number, body: Record<string, unknown>) {
  const response = await session.request({
    method: 'POST',
    url: `/api/imageManagement/${id}/editImageColumn`,
    payload: { tabName: 'images', ...body },
  });
  return { status: response.statusCode, body: response.json<{ success: boolean; message: string }>() };
}

const image = (id: number) => db().selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const kase = (id: number) => db().selectFrom('cases').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const auditOf = (entityType: string, entityId: number) =>
  db()
    .selectFrom('audit_events')
    .select(['action', 'field', 'old_value', 'new_value', 'reason'])
    .where('entity_type', '=', entityType)
    .where('entity_id', '=', String(entityId))
    .orderBy('id')
    .execute();

/** A fresh image of the study without a case (each test its own, so order does not matter). */
async function freshImage(spec: { studyId?: number; status?: string; caseId?: number } = {}) {
  return (await createStudyImage(db(), { studyId: spec.studyId ?? study.id, status: spec.status, caseId: spec.caseId }))
    .id;
}

beforeAll(async () => {
  t = await createTestApp();
  study = await createStudy(db(), `Edit column study ${Date.now()}`);
  other = await createStudy(db(), `Edit column other ${Date.now()}`);
  bare = await createStudy(db(), `Edit column bare ${Date.now()}`);
  await db()
    .updateTable('studies')
    .set({ visit_ids: ['V1', 'V2'], lab_visit_ids: ['LV1', ''], anatomical_segments: ['Rectum', 'Sigmoid'] })
    .where('id', '=', study.id)
    .execute();
  await createOrganization(db(), 'Gut Lab Edit');
});

afterAll(async () => {
  await t.close();
});

describe('editImageColumn: reasons (doc 2 §5)', () => {
  it('an empty value is set without a reason; audited with old and new', async () => {
    const id = await freshImage();
    const r = await edit(await as('DM'), id, { columnName: 'subjectId', columnValue: 'SUBJ-1' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ success: true, message: IM_EDIT_MESSAGES.updated('Subject ID') });
    expect((await image(id)).subject_id).toBe('SUBJ-1');
    expect(await auditOf('image', id)).toEqual([
      { action: 'IMAGE_EDITED', field: 'subjectId', old_value: null, new_value: 'SUBJ-1', reason: null },
    ]);
  });

  it('a value that exists needs a reason (the spec message); with one it changes and the reason is kept', async () => {
    const id = await freshImage();
    const dm = await as('DM');
    await edit(dm, id, { columnName: 'siteId', columnValue: 'SITE-1' });
    const refused = await edit(dm, id, { columnName: 'siteId', columnValue: 'SITE-2' });
    expect(refused).toEqual({
      status: 400,
      body: expect.objectContaining({ message: IMAGE_ACTION_MESSAGES.updateReasonRequired }),
    });
    const blank = await edit(dm, id, { columnName: 'siteId', columnValue: 'SITE-2', reasonForChange: '   ' });
    expect(blank.status).toBe(400);
    expect((await image(id)).site_id).toBe('SITE-1');
    const ok = await edit(dm, id, { columnName: 'siteId', columnValue: 'SITE-2', reasonForChange: 'Typo at the site' });
    expect(ok.status).toBe(200);
    expect((await image(id)).site_id).toBe('SITE-2');
    const rows = await auditOf('image', id);
    expect(rows.at(-1)).toEqual({
      action: 'IMAGE_EDITED',
      field: 'siteId',
      old_value: 'SITE-1',
      new_value: 'SITE-2',
      reason: 'Typo at the site',
    });
  });

  it('an unchanged value is refused', async () => {
    const id = await freshImage();
    const dm = await as('DM');
    await edit(dm, id, { columnName: 'subjectId', columnValue: 'S-9' });
    const r = await edit(dm, id, { columnName: 'subjectId', columnValue: ' S-9 ', reasonForChange: 'same' });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(IM_EDIT_MESSAGES.unchanged);
    expect(await auditOf('image', id)).toHaveLength(1);
  });

  it('the other form of the body (editingColumnName, newColumnValue) is read the same way', async () => {
    const id = await freshImage();
    const r = await edit(await as('DM'), id, {
      imageId: id,
      editingColumnName: 'subjectId',
      newColumnValue: 'S-OTHER',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await image(id)).subject_id).toBe('S-OTHER');
  });
});

describe('editImageColumn: permissions and scope', () => {
  it("a column the role may not edit is 403 with the column's name; nothing changes", async () => {
    const id = await freshImage();
    // DM may not edit the accession number (doc 2 §6 via docs/PERMISSIONS.md).
    const r = await edit(await as('DM'), id, { columnName: 'accessionNumber', columnValue: 'ACC-1' });
    expect(r.status).toBe(403);
    expect(r.body.message).toBe(IM_EDIT_MESSAGES.notPermitted('Accession Number'));
    expect((await image(id)).accession_number).toBeNull();
  });

  it('a role without any edit permission gets 403 (PM), a reader too (CR)', async () => {
    const id = await freshImage();
    for (const role of ['PM', 'CR'] as const) {
      const r = await edit(await as(role), id, { columnName: 'subjectId', columnValue: 'X' });
      expect(r.status, role).toBe(403);
    }
  });

  it('a lab technician (edit-file-name and pass-lab-QC permissions) renames an image with a reason', async () => {
    const id = await freshImage();
    const lab = await edit(await as('LabTech'), id, {
      columnName: 'imageFilename',
      columnValue: 'renamed.svs',
      reasonForChange: 'Lab name',
    });
    expect(lab.status, JSON.stringify(lab.body)).toBe(200);
    expect((await image(id)).name).toBe('renamed.svs');
  });

  it('derived and counted columns cannot be edited', async () => {
    const id = await freshImage();
    for (const [tabName, columnName, label] of [
      ['images', 'status', 'Status'],
      ['images', 'inQuery', 'In Query'],
      ['images', 'sponsor', 'Sponsor'],
    ] as const) {
      const r = await edit(await as('sysadmin'), id, { tabName, columnName, columnValue: 'x' });
      expect(r.status, columnName).toBe(400);
      expect(r.body.message).toBe(IM_EDIT_MESSAGES.notEditable(label));
    }
    const unknown = await edit(await as('sysadmin'), id, { columnName: 'password', columnValue: 'x' });
    expect(unknown.status).toBe(400);
  });

  it('an image of a study the user cannot see is 404 Image not found; a case, Case not found', async () => {
    const id = await freshImage({ studyId: other.id });
    const dm = await as('DM', [study.id]);
    const r = await edit(dm, id, { columnName: 'subjectId', columnValue: 'X' });
    expect(r.status).toBe(404);
    expect(r.body.message).toBe(IMAGE_MESSAGES.imageNotFound);
    const c = await createCase(db(), { studyId: other.id });
    const rc = await edit(dm, c.id, { tabName: 'cases', columnName: 'subjectId', columnValue: 'X' });
    expect(rc.status).toBe(404);
    expect(rc.body.message).toBe(CASE_MESSAGES.caseNotFound);
    expect((await image(id)).subject_id).toBeNull();
  });

  it('a bad body is a 400 with a message, never a 500', async () => {
    const id = await freshImage();
    const dm = await as('DM');
    for (const payload of [
      { tabName: 'annotations', columnName: 'subjectId', columnValue: 'X' },
      { tabName: 'images', columnValue: 'X' },
      { tabName: 'images', columnName: 'subjectId', columnValue: { nested: true } },
      { tabName: 'images', columnName: 'subjectId', columnValue: 'x'.repeat(3000) },
    ]) {
      const response = await dm.request({
        method: 'POST',
        url: `/api/imageManagement/${id}/editImageColumn`,
        payload,
      });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json<{ message: string }>().message).toBeTruthy();
    }
  });
});

describe('editImageColumn: the field rules of doc 2 §5', () => {
  it('field format and length rules give their messages', async () => {
    const id = await freshImage();
    const dm = await as('DM');
    const long = await edit(dm, id, { columnName: 'subjectId', columnValue: 'S'.repeat(31) });
    expect(long.body.message).toBe('Subject ID must be less than 30 characters');
    const chars = await edit(dm, id, { columnName: 'siteId', columnValue: 'SITE<1>' });
    expect(chars.body.message).toBe('Site ID must be alphanumeric');
  });

  it("Visit ID only from the study configuration's options", async () => {
    const id = await freshImage();
    const dm = await as('DM');
    const wrong = await edit(dm, id, { columnName: 'visitId', columnValue: 'V9' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe(IM_EDIT_MESSAGES.notAnOption('Visit ID'));
    const ok = await edit(dm, id, { columnName: 'visitId', columnValue: 'V2' });
    expect(ok.status).toBe(200);
    // A study with no visits configured: 'No options configured'.
    const bareImage = await freshImage({ studyId: bare.id });
    const none = await edit(dm, bareImage, { columnName: 'visitId', columnValue: 'V1' });
    expect(none.body.message).toBe(IM_EDIT_MESSAGES.noOptionsConfigured);
  });

  it('Lab Visit ID: from the options, only without a case, in a study, in Processing / Case Assignment Pending / Lab QC Pending', async () => {
    const lab = await as('LabTech');
    const ok = await freshImage({ status: 'LAB_QC_PENDING' });
    expect((await edit(lab, ok, { columnName: 'labVisitId', columnValue: 'LV1' })).status).toBe(200);
    expect((await image(ok)).lab_visit_id).toBe('LV1');
    // The empty lab visit of a pair is no option.
    expect(
      (await edit(lab, ok, { columnName: 'labVisitId', columnValue: 'LV9', reasonForChange: 'x' })).body.message,
    ).toBe(IM_EDIT_MESSAGES.notAnOption('Lab Visit ID'));
    const ready = await freshImage({ status: 'READY_FOR_READING' });
    const refused = await edit(lab, ready, { columnName: 'labVisitId', columnValue: 'LV1' });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe(IM_EDIT_MESSAGES.labVisitNotNow);
    const c = await createCase(db(), { studyId: study.id });
    const inCase = await freshImage({ status: 'LAB_QC_PENDING', caseId: c.id });
    expect((await edit(lab, inCase, { columnName: 'labVisitId', columnValue: 'LV1' })).body.message).toBe(
      IM_EDIT_MESSAGES.labVisitNotNow,
    );
    expect((await image(inCase)).lab_visit_id).toBeNull();
  });

  it('Site, Subject and Visit ID of an image in a case are refused (the case holds them)', async () => {
    const c = await createCase(db(), { studyId: study.id });
    const id = await freshImage({ caseId: c.id, status: 'LAB_QC_PENDING' });
    const r = await edit(await as('DM'), id, { columnName: 'subjectId', columnValue: 'S-1' });
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(IM_EDIT_MESSAGES.onlyWithoutCase('Subject ID'));
  });

  it("the procedure IDs of an image edit its case (the case's rules and audit); without a case, refused", async () => {
    const c = await createCase(db(), { studyId: study.id });
    const id = await freshImage({ caseId: c.id, status: 'LAB_QC_PENDING' });
    const dm = await as('DM');
    const r = await edit(dm, id, { columnName: 'histoProcedureId', columnValue: 'HISTO-77' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await kase(c.id)).histo_procedure_id).toBe('HISTO-77');
    expect(await auditOf('case', c.id)).toContainEqual(
      expect.objectContaining({ action: 'CASE_EDITED', field: 'histoProcedureId', new_value: 'HISTO-77' }),
    );
    // Now it has a value: the image's message asks for the reason.
    const again = await edit(dm, id, { columnName: 'histoProcedureId', columnValue: 'HISTO-78' });
    expect(again.body.message).toBe(IMAGE_ACTION_MESSAGES.updateReasonRequired);
    const loose = await freshImage();
    const none = await edit(dm, loose, { columnName: 'endoProcedureId', columnValue: 'ENDO-1' });
    expect(none.status).toBe(409);
    expect(none.body.message).toBe(IM_EDIT_MESSAGES.noCase('Endo Procedure ID'));
  });

  it('Study Name: EditStudyName sets the study of an image without one; changing it needs EditStudyNamePopulated', async () => {
    const orphan = (await createImage(db(), { studyId: null, status: 'STUDY_ASSIGNMENT_PENDING' })).id;
    const isc = await as('ISC');
    // ISC holds EditStudyName but not EditStudyNamePopulated; an image without a study needs view-all.
    const admin = await as('sysadmin');
    const set = await edit(admin, orphan, { columnName: 'studyName', columnValue: study.name });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const moved = await image(orphan);
    expect(moved.study_id).toBe(study.id);
    expect(moved.status).toBe('CASE_ASSIGNMENT_PENDING');
    const populated = await freshImage();
    const refused = await edit(isc, populated, {
      columnName: 'studyName',
      columnValue: other.name,
      reasonForChange: 'x',
    });
    expect(refused.status).toBe(403);
    expect((await image(populated)).study_id).toBe(study.id);
    const noReason = await edit(admin, populated, { columnName: 'studyName', columnValue: other.name });
    expect(noReason.body.message).toBe(IMAGE_ACTION_MESSAGES.updateReasonRequired);
    const change = await edit(admin, populated, {
      columnName: 'studyName',
      columnValue: other.name,
      reasonForChange: 'Wrong study',
    });
    expect(change.status).toBe(200);
    expect((await image(populated)).study_id).toBe(other.id);
    const unknown = await edit(admin, populated, {
      columnName: 'studyName',
      columnValue: 'No such study',
      reasonForChange: 'x',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe(MESSAGES.studyNotFound);
  });

  it('Anatomical Segment must be one of the study segments; Organization must exist; dates are dates', async () => {
    const id = await freshImage();
    const admin = await as('sysadmin');
    expect((await edit(admin, id, { columnName: 'anatomicalSegment', columnValue: 'Ileum' })).body.message).toBe(
      'Anatomical segment must be one of the study’s segments: Rectum, Sigmoid',
    );
    expect((await edit(admin, id, { columnName: 'anatomicalSegment', columnValue: 'Rectum' })).status).toBe(200);
    expect((await edit(admin, id, { columnName: 'organizationName', columnValue: 'Nowhere Lab' })).body.message).toBe(
      IM_EDIT_MESSAGES.organizationNotFound,
    );
    expect((await edit(admin, id, { columnName: 'organizationName', columnValue: 'gut lab edit' })).status).toBe(200);
    expect(
      (await edit(admin, id, { columnName: 'specimenCollectionDate', columnValue: '2026-02-30' })).body.message,
    ).toBe(IM_EDIT_MESSAGES.badDate('Collection Date'));
    expect(
      (await edit(admin, id, { columnName: 'specimenCollectionDate', columnValue: '2999-01-01' })).body.message,
    ).toBe(IM_EDIT_MESSAGES.futureDate('Collection Date'));
    expect((await edit(admin, id, { columnName: 'specimenCollectionDate', columnValue: '2026-01-15' })).status).toBe(
      200,
    );
    const before = (await image(id)).uploaded_at.toISOString();
    const r = await edit(admin, id, { columnName: 'uploadedAt', columnValue: '2026-01-20', reasonForChange: 'Clock' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // The date changes, the time of day stays.
    expect((await image(id)).uploaded_at.toISOString()).toBe(`2026-01-20T${before.slice(11)}`);
  });

  it('a Data Incomplete image whose subject, site and visit become complete waits for a case again', async () => {
    const id = await freshImage({ status: 'DATA_INCOMPLETE' });
    const dm = await as('DM');
    await edit(dm, id, { columnName: 'subjectId', columnValue: 'S-1' });
    await edit(dm, id, { columnName: 'siteId', columnValue: 'SITE-1' });
    expect((await image(id)).status).toBe('DATA_INCOMPLETE');
    await edit(dm, id, { columnName: 'visitId', columnValue: 'V1' });
    expect((await image(id)).status).toBe('CASE_ASSIGNMENT_PENDING');
    expect(await auditOf('image', id)).toContainEqual(
      expect.objectContaining({
        action: 'IMAGE_STATUS_CHANGED',
        old_value: 'DATA_INCOMPLETE',
        new_value: 'CASE_ASSIGNMENT_PENDING',
      }),
    );
  });

  it('an archived image is refused', async () => {
    const id = await freshImage({ status: 'ARCHIVED' });
    const r = await edit(await as('DM'), id, { columnName: 'subjectId', columnValue: 'S' });
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(IMAGE_ACTION_MESSAGES.alreadyArchived);
  });
});

describe('editImageColumn: the cases tab', () => {
  it('case fields with the case rules; the reason only where a value existed (the case message)', async () => {
    const c = await createCase(db(), { studyId: study.id });
    const dm = await as('DM');
    // A fresh case has a subject (the factory's) and no site.
    const first = await edit(dm, c.id, { tabName: 'cases', columnName: 'siteId', columnValue: 'SITE-C' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect((await kase(c.id)).site_id).toBe('SITE-C');
    const noReason = await edit(dm, c.id, { tabName: 'cases', columnName: 'subjectId', columnValue: 'SUBJ-D' });
    expect(noReason.body.message).toBe(CASE_MESSAGES.editReasonRequired);
    const withReason = await edit(dm, c.id, {
      tabName: 'cases',
      columnName: 'subjectId',
      columnValue: 'SUBJ-D',
      reasonForChange: 'Subject mistyped',
    });
    expect(withReason.status).toBe(200);
    const visit = await edit(dm, c.id, { tabName: 'cases', columnName: 'visitId', columnValue: 'V7' });
    expect(visit.body.message).toBe(IM_EDIT_MESSAGES.notAnOption('Visit ID'));
    const expected = await edit(dm, c.id, { tabName: 'cases', columnName: 'imagesExpected', columnValue: 4 });
    expect(expected.status, JSON.stringify(expected.body)).toBe(200);
    expect((await kase(c.id)).images_expected).toBe(4);
    const bad = await edit(dm, c.id, {
      tabName: 'cases',
      columnName: 'imagesExpected',
      columnValue: '-1',
      reasonForChange: 'x',
    });
    expect(bad.body.message).toBe(IM_EDIT_MESSAGES.badCount('Images Expected'));
    const counted = await edit(dm, c.id, { tabName: 'cases', columnName: 'totalImages', columnValue: '9' });
    expect(counted.body.message).toBe(IM_EDIT_MESSAGES.notEditable('Images Received'));
    expect(await auditOf('case', c.id)).toEqual([
      expect.objectContaining({ field: 'siteId', old_value: null, new_value: 'SITE-C', reason: null }),
      expect.objectContaining({ field: 'subjectId', new_value: 'SUBJ-D', reason: 'Subject mistyped' }),
      expect.objectContaining({ field: 'imagesExpected', old_value: null, new_value: '4' }),
    ]);
  });

  it('the cases tab needs its view permission', async () => {
    const c = await createCase(db(), { studyId: study.id });
    // An Uploader holds edit permissions (accession, QA comments, segment) but not the cases tab.
    const r = await edit(await as('UPLOADER'), c.id, { tabName: 'cases', columnName: 'subjectId', columnValue: 'S' });
    expect(r.status).toBe(403);
  });
});

describe('editRefusals: each row says which of its editable columns the server refuses (issue 29 item 17)', () => {
  type Row = { id: number; status?: string; editRefusals?: Record<string, string>; edit_status?: unknown };
  const list = async (session: Session, studyId: number, statuses?: string[]) => {
    const response = await session.request({
      method: 'POST',
      url: '/api/imageManagement/images',
      payload: {
        studyFilter: { selectedIds: [studyId] },
        pageSize: 50,
        ...(statuses && { imageStatusFilter: statuses }),
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    return new Map(response.json<{ results: Row[] }>().results.map((r) => [r.id, r]));
  };

  it('for a lab tech, who does not view the status, the Lab Visit ID is offered only where its edit succeeds', async () => {
    const own = await createStudy(db(), `Edit flags ${Date.now()}`);
    await db()
      .updateTable('studies')
      .set({ lab_visit_ids: ['LV1', 'LV2'] })
      .where('id', '=', own.id)
      .execute();
    const c = await createCase(db(), { studyId: own.id });
    const waiting = await freshImage({ studyId: own.id });
    const incomplete = await freshImage({ studyId: own.id, status: 'DATA_INCOMPLETE' });
    const failed = await freshImage({ studyId: own.id, status: 'FAIL_PROCESSING' });
    const inCase = await freshImage({ studyId: own.id, status: 'LAB_QC_PENDING', caseId: c.id });
    const archived = await freshImage({ studyId: own.id, status: 'ARCHIVED' });
    const lab = await as('LabTech', [own.id]);
    const rows = await list(lab, own.id);
    // The lab tech's columns carry no status, and neither does the flag.
    for (const row of rows.values()) {
      expect(row.status).toBeUndefined();
      expect(row.edit_status).toBeUndefined();
    }
    expect(rows.get(waiting)?.editRefusals).toEqual({});
    expect(rows.get(incomplete)?.editRefusals).toEqual({ labVisitId: IM_EDIT_MESSAGES.labVisitNotNow });
    expect(rows.get(failed)?.editRefusals).toEqual({ labVisitId: IM_EDIT_MESSAGES.labVisitNotNow });
    expect(rows.get(inCase)?.editRefusals).toEqual({
      siteId: IM_EDIT_MESSAGES.onlyWithoutCase('Site ID'),
      subjectId: IM_EDIT_MESSAGES.onlyWithoutCase('Subject ID'),
      visitId: IM_EDIT_MESSAGES.onlyWithoutCase('Visit ID'),
      labVisitId: IM_EDIT_MESSAGES.labVisitNotNow,
    });
    const archivedRow = (await list(lab, own.id, ['ARCHIVED'])).get(archived);
    expect(Object.values(archivedRow?.editRefusals ?? {})).toContain(IMAGE_ACTION_MESSAGES.alreadyArchived);
    expect(archivedRow?.editRefusals?.accessionNumber).toBe(IMAGE_ACTION_MESSAGES.alreadyArchived);

    // The flag is the server's answer: each refused cell is refused with its message, the offered one succeeds.
    for (const id of [incomplete, failed, inCase]) {
      const r = await edit(lab, id, { columnName: 'labVisitId', columnValue: 'LV2' });
      expect(r).toEqual({ status: 409, body: expect.objectContaining({ message: IM_EDIT_MESSAGES.labVisitNotNow }) });
    }
    const ok = await edit(lab, waiting, { columnName: 'labVisitId', columnValue: 'LV2' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);

    // The one-row refresh carries the same.
    const one = await lab.request({ method: 'GET', url: `/api/imageManagement/imageRecord/${inCase}` });
    expect(one.json<{ results: Row }>().results.editRefusals).toEqual(rows.get(inCase)?.editRefusals);
  });

  it('names only the columns the user may edit: none for a role without edit permissions', async () => {
    const own = await createStudy(db(), `Edit flags PM ${Date.now()}`);
    const inCase = await freshImage({
      studyId: own.id,
      status: 'LAB_QC_PENDING',
      caseId: (await createCase(db(), { studyId: own.id })).id,
    });
    const pm = await list(await as('PM', [own.id]), own.id);
    expect(pm.get(inCase)?.status).toBe('LAB_QC_PENDING');
    expect(pm.get(inCase)?.editRefusals).toBeUndefined();
    // The LIS edits the accession number, protocol, segment and collection date: none is the case's.
    const lis = await list(await as('LIS', [own.id]), own.id);
    expect(lis.get(inCase)?.editRefusals).toEqual({});
  });
});
