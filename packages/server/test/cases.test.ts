import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_MESSAGES, revertRefused } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Cases (issue 11): create, edit with reasons, the workflow of docs/WORKFLOW.md (forward, back,
 * hold, archive), image assignment, the study's case list, reader search and suggestions, and the
 * blinding of central readers — each success with its audit rows, each refusal changing nothing.
 */
let t: TestContext;
let studyId: number;
let otherStudy: number;
let labtech: Session;
let isc: Session;
let dm: Session;
let reader: Session;
let readerId: number;
let reader2Id: number;
let outsider: Session;

type CaseBody = {
  id: number;
  status: string;
  procId: string | null;
  subjectId: string | null;
  siteId: string | null;
  visitId: string | null;
  prevWorkflowStatuses: string[];
  readers: { id: number; numTotalCases: number }[];
  images: { id: number; status: string; name: string }[];
};

const db = () => t.database.db;

async function image(study = studyId, status = 'CASE_ASSIGNMENT_PENDING'): Promise<number> {
  return (await createStudyImage(db(), { studyId: study, status })).id;
}

async function createCase(session: Session, body: Record<string, unknown>) {
  return session.request({ method: 'POST', url: '/api/cases', payload: { studyId, ...body } });
}

async function newCase(body: Record<string, unknown> = {}): Promise<CaseBody> {
  const response = await createCase(labtech, {
    procId: `P-${Math.random().toString(36).slice(2, 9)}`,
    subjectId: 'S-1',
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ case: CaseBody }>().case;
}

async function caseRow(id: number) {
  return db().selectFrom('cases').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function imageStatus(id: number): Promise<{ status: string; case_id: number | null }> {
  return db().selectFrom('images').select(['status', 'case_id']).where('id', '=', id).executeTakeFirstOrThrow();
}

async function audit(entityType: string, entityId: number) {
  return db()
    .selectFrom('audit_events')
    .select(['action', 'field', 'old_value', 'new_value', 'reason', 'username'])
    .where('entity_type', '=', entityType)
    .where('entity_id', '=', String(entityId))
    .orderBy('id')
    .execute();
}

const patch = (session: Session, url: string, payload: object = {}) =>
  session.request({ method: 'PATCH', url, payload });

beforeAll(async () => {
  t = await createTestApp();
  studyId = (await createStudy(db(), 'Cases study')).id;
  otherStudy = (await createStudy(db(), 'Other cases study')).id;
  await db()
    .updateTable('studies')
    .set({ visit_ids: ['V1', 'V2'] })
    .where('id', '=', studyId)
    .execute();
  const as = async (role: 'LabTech' | 'ISC' | 'DM' | 'CR', study = studyId) => {
    const user = await createUser(db(), { studyRoles: [{ studyId: study, role }] });
    return { user, session: await login(t.app, user.username, PASSWORD) };
  };
  labtech = (await as('LabTech')).session;
  isc = (await as('ISC')).session;
  dm = (await as('DM')).session;
  const r1 = await as('CR');
  reader = r1.session;
  readerId = r1.user.id;
  reader2Id = (await as('CR')).user.id;
  outsider = (await as('LabTech', otherStudy)).session;
});

afterAll(async () => {
  await t.close();
});

describe('create (POST /api/cases)', () => {
  it('creates a Pending Lab QC case; its images become Lab QC Pending; audited', async () => {
    const images = [await image(), await image()];
    const response = await createCase(labtech, {
      procId: 'ENDO-1',
      subjectId: 'SUBJ-1',
      siteId: 'SITE 1',
      visitId: 'V1',
      images,
    });
    expect(response.statusCode).toBe(201);
    const body = response.json<{ success: boolean; message: string; case: CaseBody }>();
    expect(body).toMatchObject({ success: true, message: CASE_MESSAGES.created });
    expect(body.case).toMatchObject({ status: 'PENDING_LAB_QC', procId: 'ENDO-1', subjectId: 'SUBJ-1', visitId: 'V1' });
    expect(body.case.images.map((i) => i.status)).toEqual(['LAB_QC_PENDING', 'LAB_QC_PENDING']);
    for (const id of images) expect(await imageStatus(id)).toEqual({ status: 'LAB_QC_PENDING', case_id: body.case.id });
    const rows = await audit('case', body.case.id);
    expect(rows[0]).toMatchObject({ action: 'CASE_CREATED' });
    expect((await audit('image', images[0]!)).map((r) => r.action)).toEqual([
      'IMAGE_CASE_ASSIGNED',
      'IMAGE_STATUS_CHANGED',
    ]);
  });

  it.each([
    [{ procId: 'x'.repeat(51) }, 'Endo Procedure ID must be less than 50 characters'],
    [{ procId: 'ENDO<1>' }, 'Endo Procedure ID must be alphanumeric'],
    [{ subjectId: 's'.repeat(31) }, 'Subject ID must be less than 30 characters'],
    [{ siteId: 'SITE;1' }, 'Site ID must be alphanumeric'],
    [{ visitId: 'v'.repeat(76) }, 'Visit ID must be less than 75 characters'],
    [{ visitId: 'V9' }, 'Visit ID must be one of the study’s visits'],
    [{ procId: '  ' }, 'Endo Procedure ID is required'],
    [{ subjectId: '' }, 'Subject ID is required'],
  ])('refuses %j with its message and creates nothing', async (over, message) => {
    const before = await db().selectFrom('cases').select(db().fn.countAll().as('n')).executeTakeFirstOrThrow();
    const response = await createCase(labtech, { procId: 'OK-1', subjectId: 'S', ...over });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ success: false, message });
    const after = await db().selectFrom('cases').select(db().fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toEqual(before.n);
  });

  it('accepts the allowed punctuation and letters of any script', async () => {
    const response = await createCase(labtech, { procId: `E-1_2.3,'"/()@#%&* ${Date.now()}`, subjectId: 'Sœur-ü 1' });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('refuses a second live case with the same Endo Procedure ID (any case), 409', async () => {
    await newCase({ procId: 'DUP-1' });
    const response = await createCase(labtech, { procId: 'dup-1', subjectId: 'S' });
    expect(response.statusCode).toBe(409);
    expect(response.json().message).toBe(CASE_MESSAGES.duplicateProcId);
  });

  it('assigns readers only with the manual-assignment permission, and only readers of the study', async () => {
    const refused = await createCase(labtech, { procId: 'R-1', subjectId: 'S', readers: [readerId] });
    expect(refused.statusCode).toBe(403);
    const notReader = await createCase(isc, { procId: 'R-2', subjectId: 'S', readers: [readerId, 999_999] });
    expect(notReader.statusCode).toBe(400);
    expect(notReader.json().message).toBe(CASE_MESSAGES.readerNotInStudy);
    const ok = await createCase(isc, { procId: 'R-3', subjectId: 'S', readers: [readerId] });
    expect(ok.statusCode).toBe(201);
    expect(ok.json<{ case: CaseBody }>().case.readers.map((r) => r.id)).toEqual([readerId]);
  });

  it('a NOTO reader of the study (a reader working inside NOTO) is a reader too; a lab technician is not', async () => {
    const noto = await createUser(db(), { studyRoles: [{ studyId, role: 'NOTO' }] });
    const lab = await createUser(db(), { studyRoles: [{ studyId, role: 'LabTech' }] });
    const found = await isc.request({ method: 'GET', url: `/api/studies/${studyId}/users?name=${noto.username}` });
    expect(found.json<{ readers: { id: number }[] }>().readers.map((r) => r.id)).toEqual([noto.id]);
    const ok = await createCase(isc, { procId: 'R-NOTO', subjectId: 'S', readers: [noto.id] });
    expect(ok.statusCode, ok.body).toBe(201);
    const refused = await createCase(isc, { procId: 'R-LAB', subjectId: 'S', readers: [lab.id] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe(CASE_MESSAGES.readerNotInStudy);
  });

  it('refuses images of another study, assigned images and images not waiting for a case', async () => {
    const foreign = await createCase(labtech, { procId: 'I-1', subjectId: 'S', images: [await image(otherStudy)] });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().message).toBe(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.imageInOtherStudy}`);
    const processing = await createCase(labtech, {
      procId: 'I-2',
      subjectId: 'S',
      images: [await image(studyId, 'PROCESSING')],
    });
    expect(processing.statusCode).toBe(409);
    expect(processing.json().message).toBe(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.imageNotAssignable}`);
    // Nothing of the refused cases was kept.
    expect(await db().selectFrom('cases').select('id').where('proc_id', 'in', ['I-1', 'I-2']).execute()).toEqual([]);
  });

  it('a user without access to the study gets 404; without the permission 403', async () => {
    expect((await createCase(outsider, { procId: 'X-1', subjectId: 'S' })).statusCode).toBe(404);
    expect((await createCase(dm, { procId: 'X-2', subjectId: 'S' })).statusCode).toBe(403);
  });
});

describe('edit (PATCH /api/cases/{id})', () => {
  it('changes only what changed, each with its reason; one audit row per field with old and new value', async () => {
    const c = await newCase({ subjectId: 'S-OLD', siteId: 'SITE-A' });
    const response = await patch(labtech, `/api/cases/${c.id}`, {
      subjectId: { value: 'S-NEW', reasonForChange: 'Typo on the requisition' },
      siteId: { value: 'SITE-A', reasonForChange: null },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<{ case: CaseBody }>().case).toMatchObject({ subjectId: 'S-NEW', siteId: 'SITE-A' });
    const rows = (await audit('case', c.id)).filter((r) => r.action === 'CASE_EDITED');
    expect(rows).toEqual([
      expect.objectContaining({
        field: 'subjectId',
        old_value: 'S-OLD',
        new_value: 'S-NEW',
        reason: 'Typo on the requisition',
      }),
    ]);
  });

  it('a changed field without a reason → 400 with the spec message; nothing changes', async () => {
    const c = await newCase({ subjectId: 'S-KEEP' });
    for (const body of [
      { subjectId: { value: 'S-2' } },
      { histoProcedureId: { value: 'H-1', reasonForChange: '  ' } },
      { subjectId: { value: 'S-2', reasonForChange: 'ok' }, visitId: { value: 'V2' } },
    ]) {
      const response = await patch(labtech, `/api/cases/${c.id}`, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toBe(CASE_MESSAGES.editReasonRequired);
    }
    expect((await caseRow(c.id)).subject_id).toBe('S-KEEP');
    expect((await audit('case', c.id)).filter((r) => r.action === 'CASE_EDITED')).toEqual([]);
  });

  it('adds and removes images with one reason: added join the stage, removed go back to Case Assignment Pending', async () => {
    const [a, b] = [await image(), await image()];
    const c = await newCase({ images: [a] });
    const response = await patch(labtech, `/api/cases/${c.id}`, {
      images: { ids: [b], reasonForChange: 'Wrong slide' },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(await imageStatus(a)).toEqual({ status: 'CASE_ASSIGNMENT_PENDING', case_id: null });
    expect(await imageStatus(b)).toEqual({ status: 'LAB_QC_PENDING', case_id: c.id });
    expect((await audit('image', a)).at(-1)).toMatchObject({ action: 'IMAGE_STATUS_CHANGED', reason: 'Wrong slide' });
  });

  it('readers: manual assignment needs its permission and a reason', async () => {
    const c = await newCase();
    expect(
      (await patch(labtech, `/api/cases/${c.id}`, { readers: { ids: [readerId], reasonForChange: 'r' } })).statusCode,
    ).toBe(403);
    const noReason = await patch(dm, `/api/cases/${c.id}`, { readers: { ids: [readerId] } });
    expect(noReason.statusCode).toBe(400);
    const ok = await patch(dm, `/api/cases/${c.id}`, {
      readers: { ids: [readerId, reader2Id], reasonForChange: 'Balance' },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(
      ok
        .json<{ case: CaseBody }>()
        .case.readers.map((r) => r.id)
        .sort(),
    ).toEqual([readerId, reader2Id].sort());
  });

  it('a central reader holds no edit permission: 403', async () => {
    const c = await newCase();
    expect(
      (await patch(reader, `/api/cases/${c.id}`, { subjectId: { value: 'x', reasonForChange: 'r' } })).statusCode,
    ).toBe(403);
  });
});

describe('workflow (docs/WORKFLOW.md)', () => {
  it('forward: Pending Lab QC → Pending QC (lab QC) → Processed (ISC QC); the images follow; audited', async () => {
    const [a, b] = [await image(), await image()];
    const c = await newCase({ images: [a, b] });
    // LabTech passes lab QC, but may not pass ISC QC.
    const first = await patch(labtech, `/api/cases/${c.id}/status/forward`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json<{ case: CaseBody }>().case).toMatchObject({
      status: 'PENDING_QC',
      prevWorkflowStatuses: ['PENDING_LAB_QC'],
    });
    expect((await imageStatus(a)).status).toBe('ISC_QC_PENDING');
    expect((await patch(labtech, `/api/cases/${c.id}/status/forward`)).statusCode).toBe(403);
    const second = await patch(isc, `/api/cases/${c.id}/status/forward`);
    expect(second.json<{ case: CaseBody }>().case.status).toBe('PROCESSED');
    expect((await imageStatus(b)).status).toBe('READY_FOR_READING');
    // Processed → Completed is Mark as Scored, by an assigned reader: not the ISC reviewer (test/qc.test.ts).
    const third = await patch(isc, `/api/cases/${c.id}/status/forward`);
    expect(third.statusCode).toBe(403);
    const rows = (await audit('case', c.id)).filter((r) => r.action === 'CASE_STATUS_FORWARDED');
    expect(rows.map((r) => [r.old_value, r.new_value])).toEqual([
      ['PENDING_LAB_QC', 'PENDING_QC'],
      ['PENDING_QC', 'PROCESSED'],
    ]);
    const row = await caseRow(c.id);
    expect(row.qc1_by).not.toBeNull();
    expect(row.qc2_by).not.toBeNull();
  });

  it('forward is refused while the case has no live image', async () => {
    const c = await newCase();
    const response = await patch(labtech, `/api/cases/${c.id}/status/forward`);
    expect(response.statusCode).toBe(409);
    expect(response.json().message).toBe(`${CASE_MESSAGES.unableToTransition} ${CASE_MESSAGES.noLiveImages}`);
    expect((await caseRow(c.id)).status).toBe('PENDING_LAB_QC');
  });

  it('back: to an earlier status with a reason; the images follow; refused without reason, status or history', async () => {
    const a = await image();
    const c = await newCase({ images: [a] });
    await patch(labtech, `/api/cases/${c.id}/status/forward`);
    await patch(isc, `/api/cases/${c.id}/status/forward`);
    const noReason = await patch(labtech, `/api/cases/${c.id}/status/back`, { value: 'PENDING_LAB_QC' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(revertRefused('Pending Lab QC'));
    const noValue = await patch(labtech, `/api/cases/${c.id}/status/back`, { reason: 'r' });
    expect(noValue.json().message).toBe(revertRefused('a new status'));
    // LabTech (edit-case only) may go back only to an earlier status of this case: never forward.
    const forward = await patch(labtech, `/api/cases/${c.id}/status/back`, { value: 'COMPLETED', reason: 'r' });
    expect(forward.statusCode).toBe(409);
    const ok = await patch(labtech, `/api/cases/${c.id}/status/back`, {
      value: 'PENDING_LAB_QC',
      reason: 'Blurry slide',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json<{ case: CaseBody }>().case).toMatchObject({
      status: 'PENDING_LAB_QC',
      prevWorkflowStatuses: ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'],
    });
    expect((await imageStatus(a)).status).toBe('LAB_QC_PENDING');
    expect((await caseRow(c.id)).case_status_reverted).toBe(true);
    expect((await audit('case', c.id)).at(-1)).toMatchObject({
      action: 'CASE_STATUS_REVERTED',
      old_value: 'PROCESSED',
      new_value: 'PENDING_LAB_QC',
      reason: 'Blurry slide',
    });
    expect((await audit('image', a)).at(-1)).toMatchObject({ new_value: 'LAB_QC_PENDING', reason: 'Blurry slide' });
  });

  it('hold remembers the status it left; off hold returns to it; reasons required; wrong state → 409', async () => {
    const c = await newCase({ images: [await image()] });
    await patch(labtech, `/api/cases/${c.id}/status/forward`);
    const noReason = await patch(isc, `/api/cases/${c.id}/status/on_hold`, { caseId: c.id });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(`${CASE_MESSAGES.couldNotHold} Must include reason for change.`);
    const held = await patch(isc, `/api/cases/${c.id}/status/on_hold`, {
      caseId: c.id,
      reasonForChange: 'Waiting for the site',
    });
    expect(held.json()).toMatchObject({
      message: CASE_MESSAGES.held,
      case: { status: 'ON_HOLD', onHoldFrom: 'PENDING_QC' },
    });
    expect((await patch(isc, `/api/cases/${c.id}/status/on_hold`, { reasonForChange: 'again' })).statusCode).toBe(409);
    // A held case neither moves forward nor back.
    expect((await patch(isc, `/api/cases/${c.id}/status/forward`)).statusCode).toBe(409);
    // Images may still join it, at the stage it left.
    const late = await image();
    const put = await isc.request({
      method: 'PUT',
      url: `/api/cases/${c.id}/assign`,
      payload: { imageId: late, reasonForChange: 'Late slide' },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect((await imageStatus(late)).status).toBe('ISC_QC_PENDING');
    const off = await patch(isc, `/api/cases/${c.id}/status/off_hold`, {
      caseId: c.id,
      reasonForChange: 'Site answered',
    });
    expect(off.json()).toMatchObject({
      message: CASE_MESSAGES.holdRemoved,
      case: { status: 'PENDING_QC', onHoldFrom: null },
    });
    expect((await patch(isc, `/api/cases/${c.id}/status/off_hold`, { reasonForChange: 'again' })).statusCode).toBe(409);
    expect(
      (await audit('case', c.id)).filter((r) => r.action.startsWith('CASE_') && r.reason).map((r) => r.action),
    ).toEqual(['CASE_PUT_ON_HOLD', 'CASE_HOLD_REMOVED']);
    // LabTech has no hold permission.
    expect((await patch(labtech, `/api/cases/${c.id}/status/on_hold`, { reasonForChange: 'x' })).statusCode).toBe(403);
  });

  it('archive: the case and all its images, with a reason; nothing without one', async () => {
    const [a, b] = [await image(), await image()];
    const c = await newCase({ images: [a, b] });
    const noReason = await patch(isc, `/api/cases/${c.id}/archive`, { caseId: c.id, reasonForChange: '' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(CASE_MESSAGES.archiveReasonRequired);
    expect((await caseRow(c.id)).status).toBe('PENDING_LAB_QC');
    const ok = await patch(isc, `/api/cases/${c.id}/archive`, { caseId: c.id, reasonForChange: 'Duplicate case' });
    expect(ok.json()).toMatchObject({ message: CASE_MESSAGES.archived, case: { status: 'ARCHIVED' } });
    for (const id of [a, b]) expect((await imageStatus(id)).status).toBe('ARCHIVED');
    expect((await audit('image', a)).at(-1)).toMatchObject({ action: 'IMAGE_ARCHIVED', reason: 'Duplicate case' });
    // Its Endo Procedure ID is free again.
    expect((await createCase(labtech, { procId: c.procId, subjectId: 'S' })).statusCode).toBe(201);
  });

  it('assign: only to cases that take images, only images waiting for a case, with a reason', async () => {
    const c = await newCase({ images: [await image()] });
    const put = (imageId: number, reasonForChange?: string) =>
      isc.request({ method: 'PUT', url: `/api/cases/${c.id}/assign`, payload: { imageId, reasonForChange } });
    expect((await put(await image())).statusCode).toBe(400);
    const assigned = await image();
    expect((await put(assigned, 'Belongs here')).json()).toMatchObject({ message: CASE_MESSAGES.assigned });
    expect((await put(assigned, 'again')).statusCode).toBe(409);
    await patch(isc, `/api/cases/${c.id}/status/forward`);
    await patch(isc, `/api/cases/${c.id}/status/forward`);
    const late = await put(await image(), 'Too late');
    expect(late.statusCode).toBe(409);
    expect(late.json().message).toBe(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.notAssignableStatus}`);
  });
});

describe('lists and searches', () => {
  it('study case list: filter by procedure ID, status and assignee, sorted, paged, with counts', async () => {
    const study = (await createStudy(db(), 'List study')).id;
    const lt = await createUser(db(), { studyRoles: [{ studyId: study, role: 'ISC' }] });
    const session = await login(t.app, lt.username, PASSWORD);
    const r = await createUser(db(), { studyRoles: [{ studyId: study, role: 'CR' }] });
    for (let i = 1; i <= 5; i++) {
      const response = await session.request({
        method: 'POST',
        url: '/api/cases',
        payload: {
          studyId: study,
          procId: `LIST-${i}`,
          subjectId: `S-${i}`,
          readers: i % 2 === 0 ? [r.id] : [],
          images: [await image(study)],
        },
      });
      expect(response.statusCode, response.body).toBe(201);
    }
    const list = async (query: string) => {
      const response = await session.request({ method: 'GET', url: `/api/studies/${study}/cases?${query}` });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{
        cases: { procId: string; numberOfImages: number; assignedReaders: string[] }[];
        total: number;
      }>();
    };
    const all = await list('pageSize=10&page=1');
    expect(all.total).toBe(5);
    expect(all.cases.map((c) => c.procId)).toEqual(['LIST-5', 'LIST-4', 'LIST-3', 'LIST-2', 'LIST-1']);
    expect(all.cases[1]?.assignedReaders).toHaveLength(1);
    expect(all.cases[0]?.numberOfImages).toBe(1);
    expect((await list('procId=list-3')).cases.map((c) => c.procId)).toEqual(['LIST-3']);
    expect((await list(`assignee=${r.id}&sort=procId`)).cases.map((c) => c.procId)).toEqual(['LIST-2', 'LIST-4']);
    expect((await list('assignee=unassigned&sort=procId')).cases.map((c) => c.procId)).toEqual([
      'LIST-1',
      'LIST-3',
      'LIST-5',
    ]);
    expect((await list('status=PROCESSED')).total).toBe(0);
    const past = await list('page=2&pageSize=10');
    expect(past).toMatchObject({ cases: [], total: 5 });
  });

  it('reader search and suggestions: readers of the study, continuity first, with their counts', async () => {
    const c = await newCase({ subjectId: 'CONT-1' });
    await patch(dm, `/api/cases/${c.id}`, { readers: { ids: [reader2Id], reasonForChange: 'First visit' } });
    const suggested = await dm.request({
      method: 'GET',
      url: `/api/users/suggest-readers?studyId=${studyId}&subjectId=CONT-1`,
    });
    expect(suggested.statusCode, suggested.body).toBe(200);
    const readers = suggested.json<{ readers: { id: number; numTotalCases: number }[] }>().readers;
    expect(readers[0]?.id).toBe(reader2Id);
    expect(readers.map((r) => r.id)).toContain(readerId);
    const search = await dm.request({ method: 'GET', url: `/api/studies/${studyId}/users?name=user-` });
    expect(search.json<{ readers: unknown[] }>().readers.length).toBeGreaterThanOrEqual(2);
    // A blinded reader learns of no other reader: the list holds only themselves.
    const own = await reader.request({ method: 'GET', url: `/api/studies/${studyId}/users` });
    expect(own.json<{ readers: { id: number }[] }>().readers.map((r) => r.id)).toEqual([readerId]);
    // Suggestions are for those who assign readers.
    expect(
      (await labtech.request({ method: 'GET', url: `/api/users/suggest-readers?studyId=${studyId}` })).statusCode,
    ).toBe(403);
  });

  it('case dialog image search lists only images waiting for a case, without the excluded', async () => {
    const [a, b] = [await image(), await image()];
    const response = await labtech.request({ method: 'GET', url: `/api/studies/${studyId}/cases/images?exclude=${a}` });
    const ids = response.json<{ images: { id: number }[] }>().images.map((i) => i.id);
    expect(ids).toContain(b);
    expect(ids).not.toContain(a);
  });
});

describe('blinding of central readers (server side)', () => {
  let assigned: CaseBody;
  let unassigned: CaseBody;
  let hiddenImage: number;

  beforeAll(async () => {
    const images = [await image(), await image()];
    assigned = await newCase({ subjectId: 'SUBJ-SECRET', siteId: 'SITE-SECRET', visitId: 'V2', images });
    hiddenImage = images[1]!;
    await db().updateTable('images').set({ ignored: true }).where('id', '=', hiddenImage).execute();
    await patch(dm, `/api/cases/${assigned.id}`, { readers: { ids: [readerId], reasonForChange: 'Assign' } });
    unassigned = await newCase({ subjectId: 'SUBJ-OTHER', images: [await image()] });
  });

  it('the assigned case: no subject, site or visit ID, no other reader, no hidden image', async () => {
    const response = await reader.request({ method: 'GET', url: `/api/cases/${assigned.id}` });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ case: CaseBody }>().case;
    expect(body).toMatchObject({ subjectId: null, siteId: null, visitId: null });
    // Only their own assignment (whether they have marked it scored), never another reader.
    expect(body.readers.map((r) => r.id)).toEqual([readerId]);
    expect(body.images.map((i) => i.id)).not.toContain(hiddenImage);
    expect(JSON.stringify(response.json())).not.toMatch(/SECRET|slide-/);
  });

  it('a case not assigned to the reader, and its images, answer 404', async () => {
    expect((await reader.request({ method: 'GET', url: `/api/cases/${unassigned.id}` })).statusCode).toBe(404);
    expect((await reader.request({ method: 'GET', url: `/api/images/${unassigned.images[0]!.id}` })).statusCode).toBe(
      404,
    );
    expect((await reader.request({ method: 'GET', url: `/api/images/${hiddenImage}` })).statusCode).toBe(404);
    expect((await reader.request({ method: 'GET', url: `/api/images/${assigned.images[0]!.id}` })).statusCode).toBe(
      200,
    );
  });

  it('the study case list shows the reader only the assigned case, without blinded fields or counts', async () => {
    const response = await reader.request({ method: 'GET', url: `/api/studies/${studyId}/cases?sort=subjectId` });
    const body = response.json<{ cases: Record<string, unknown>[] }>();
    // Only cases assigned to this reader (earlier tests assigned it to others too).
    const mine = await db().selectFrom('case_readers').select('case_id').where('user_id', '=', readerId).execute();
    expect(body.cases.map((c) => c.id).sort()).toEqual(mine.map((m) => m.case_id).sort());
    expect(body.cases.map((c) => c.id)).not.toContain(unassigned.id);
    const row = body.cases.find((c) => c.id === assigned.id);
    expect(row).toMatchObject({
      subjectId: null,
      siteId: null,
      visitId: null,
      assignedReaders: null,
      openQueries: null,
    });
    expect(row?.numberOfImages).toBe(1);
  });

  it('case search, image lists, dialogs and labels: nothing of unassigned cases, no blinded fields', async () => {
    const search = await reader.request({ method: 'GET', url: `/api/cases?studyId=${studyId}&searchText=SUBJ` });
    // Subject IDs are not searched for a reader: the match would reveal them.
    expect(search.json<{ cases: unknown[] }>().cases).toEqual([]);
    const all = await reader.request({ method: 'GET', url: `/api/cases?studyId=${studyId}` });
    const found = all.json<{ cases: Record<string, unknown>[] }>().cases;
    expect(found.map((c) => c.caseId)).toContain(assigned.id);
    expect(found.map((c) => c.caseId)).not.toContain(unassigned.id);
    for (const c of found) expect(c).toMatchObject({ subjectId: null, siteId: null, visitId: null });
    for (const url of [
      `/api/studies/${studyId}/images`,
      `/api/studies/${studyId}/cases/images`,
      `/api/images/${assigned.images[0]!.id}/label`,
      `/api/users/suggest-readers?studyId=${studyId}`,
    ])
      expect((await reader.request({ method: 'GET', url })).statusCode, url).toBe(403);
    // A refusal names nothing either.
    const missing = await reader.request({ method: 'GET', url: `/api/cases/${unassigned.id}` });
    expect(missing.json()).toEqual({ success: false, message: CASE_MESSAGES.caseNotFound });
  });

  it('a reader losing a case or one of its images loses their tile tokens (access generation bumped)', async () => {
    const generation = async (id: number) =>
      (await db().selectFrom('users').select('access_generation').where('id', '=', id).executeTakeFirstOrThrow())
        .access_generation;
    const [a, b] = [await image(), await image()];
    const c = await newCase({ images: [a, b] });
    await patch(dm, `/api/cases/${c.id}`, { readers: { ids: [readerId, reader2Id], reasonForChange: 'Two reads' } });
    const before = { r1: await generation(readerId), r2: await generation(reader2Id) };
    // An image leaves the case: both readers' tokens stop.
    await patch(labtech, `/api/cases/${c.id}`, { images: { ids: [a], reasonForChange: 'Wrong slide' } });
    expect(await generation(readerId)).toBe(before.r1 + 1);
    expect(await generation(reader2Id)).toBe(before.r2 + 1);
    // reader2 is removed: only theirs.
    await patch(dm, `/api/cases/${c.id}`, { readers: { ids: [readerId], reasonForChange: 'One read is enough' } });
    expect(await generation(readerId)).toBe(before.r1 + 1);
    expect(await generation(reader2Id)).toBe(before.r2 + 2);
  });

  it('GET /api/cases/assigned: the reader’s own live cases, with study and image count (the NOTO landing)', async () => {
    const response = await reader.request({ method: 'GET', url: '/api/cases/assigned' });
    expect(response.statusCode).toBe(200);
    const cases = response.json<{ cases: { id: number; studyName: string; numberOfImages: number }[] }>().cases;
    const mine = await db().selectFrom('case_readers').select('case_id').where('user_id', '=', readerId).execute();
    const live = await db()
      .selectFrom('cases')
      .select('id')
      .where(
        'id',
        'in',
        mine.map((m) => m.case_id),
      )
      .where('status', '!=', 'ARCHIVED')
      .execute();
    expect(cases.map((c) => c.id).sort()).toEqual(live.map((c) => c.id).sort());
    expect(cases.find((c) => c.id === assigned.id)).toMatchObject({ studyName: 'Cases study', numberOfImages: 1 });
    expect(JSON.stringify(cases)).not.toMatch(/SUBJ|SITE-SECRET/);
  });

  it('others see the fields', async () => {
    const body = (await dm.request({ method: 'GET', url: `/api/cases/${assigned.id}` })).json<{ case: CaseBody }>()
      .case;
    expect(body).toMatchObject({ subjectId: 'SUBJ-SECRET', siteId: 'SITE-SECRET', visitId: 'V2' });
    expect(body.readers.map((r) => r.id)).toEqual([readerId]);
  });
});
