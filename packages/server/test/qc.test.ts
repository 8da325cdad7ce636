import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_MESSAGES, IMAGE_ACTION_MESSAGES, unableToHideImage } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createQuery, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 13, first slice (server): pass QC of one image (the case follows its images), Mark as
 * Scored by each assigned reader (the case completes with the last), show/hide to readers, accept
 * AI counts, case comments — each refusal with its message and nothing changed, each success audited.
 */
let t: TestContext;
let studyId: number;
let labtech: Session;
let isc: Session;
let dm: Session;
let reader1: Session;
let reader2: Session;
let outsiderReader: Session;
let reader1Id: number;
let reader2Id: number;

const db = () => t.database.db;
const patch = (session: Session, url: string, payload?: object) =>
  session.request({ method: 'PATCH', url, ...(payload ? { payload } : {}) });

async function caseWith(status: string, imageStatus: string, images = 2, readers: number[] = []) {
  const { id } = await createCase(db(), { studyId, status });
  const ids: number[] = [];
  for (let i = 0; i < images; i++)
    ids.push((await createStudyImage(db(), { studyId, caseId: id, status: imageStatus })).id);
  for (const userId of readers)
    await db().insertInto('case_readers').values({ case_id: id, user_id: userId }).execute();
  return { caseId: id, images: ids };
}
const caseRow = (id: number) => db().selectFrom('cases').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const imageStatus = async (id: number) =>
  (await db().selectFrom('images').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
const actions = async (type: string, id: number) =>
  (
    await db()
      .selectFrom('audit_events')
      .select('action')
      .where('entity_type', '=', type)
      .where('entity_id', '=', String(id))
      .orderBy('id')
      .execute()
  ).map((r) => r.action);

beforeAll(async () => {
  t = await createTestApp();
  studyId = (await createStudy(db(), 'QC study')).id;
  const as = async (role: 'LabTech' | 'ISC' | 'DM' | 'CR') => {
    const user = await createUser(db(), { studyRoles: [{ studyId, role }] });
    return { id: user.id, session: await login(t.app, user.username, PASSWORD) };
  };
  labtech = (await as('LabTech')).session;
  isc = (await as('ISC')).session;
  dm = (await as('DM')).session;
  const r1 = await as('CR');
  const r2 = await as('CR');
  reader1 = r1.session;
  reader1Id = r1.id;
  reader2 = r2.session;
  reader2Id = r2.id;
  outsiderReader = (await as('CR')).session;
});

afterAll(async () => {
  await t.close();
});

describe('PATCH /api/images/{id}/pass-qc', () => {
  it('lab QC image by image; the case moves to Pending QC with the last one; then ISC QC to Processed', async () => {
    const { caseId, images } = await caseWith('PENDING_LAB_QC', 'LAB_QC_PENDING');
    const [a, b] = images as [number, number];
    const first = await patch(labtech, `/api/images/${a}/pass-qc`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ message: IMAGE_ACTION_MESSAGES.passedQc });
    expect(await imageStatus(a)).toBe('ISC_QC_PENDING');
    expect((await caseRow(caseId)).status).toBe('PENDING_LAB_QC');
    // ISC QC of the first image waits for its case to reach Pending QC.
    const early = await patch(isc, `/api/images/${a}/pass-qc`);
    expect(early.statusCode).toBe(409);
    expect(early.json().message).toBe(
      `${IMAGE_ACTION_MESSAGES.unableToTransitionImageStatus}. ${IMAGE_ACTION_MESSAGES.qcNotNow}`,
    );
    await patch(labtech, `/api/images/${b}/pass-qc`);
    expect(await caseRow(caseId)).toMatchObject({ status: 'PENDING_QC', prev_workflow_statuses: ['PENDING_LAB_QC'] });
    // The lab technician may not pass ISC QC.
    expect((await patch(labtech, `/api/images/${a}/pass-qc`)).statusCode).toBe(403);
    await patch(isc, `/api/images/${a}/pass-qc`);
    await patch(isc, `/api/images/${b}/pass-qc`);
    const row = await caseRow(caseId);
    expect(row.status).toBe('PROCESSED');
    expect(row.qc2_by).not.toBeNull();
    expect(await imageStatus(b)).toBe('READY_FOR_READING');
    expect(await actions('image', a)).toEqual(['IMAGE_QC_PASSED', 'IMAGE_QC_PASSED']);
    expect((await actions('case', caseId)).filter((x) => x === 'CASE_STATUS_FORWARDED')).toHaveLength(2);
  });

  it('refused for an image outside a case, in a held case, and without either permission', async () => {
    const loose = (await createStudyImage(db(), { studyId, status: 'LAB_QC_PENDING' })).id;
    const response = await patch(labtech, `/api/images/${loose}/pass-qc`);
    expect(response.statusCode).toBe(409);
    expect(response.json().message).toBe(
      `${IMAGE_ACTION_MESSAGES.unableToTransitionImageStatus}. ${IMAGE_ACTION_MESSAGES.notInCase}`,
    );
    const held = await caseWith('ON_HOLD', 'LAB_QC_PENDING', 1);
    expect((await patch(labtech, `/api/images/${held.images[0]}/pass-qc`)).statusCode).toBe(409);
    expect(await imageStatus(held.images[0]!)).toBe('LAB_QC_PENDING');
    expect((await patch(dm, `/api/images/${held.images[0]}/pass-qc`)).statusCode).toBe(403);
  });
});

describe('Mark as Scored (forward from Processed)', () => {
  it('each assigned reader marks their own read; the last completes the case and its images', async () => {
    const { caseId, images } = await caseWith('PROCESSED', 'READY_FOR_READING', 2, [reader1Id, reader2Id]);
    const first = await patch(reader1, `/api/cases/${caseId}/status/forward`, { includeAiCounts: false });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ message: CASE_MESSAGES.scored, case: { status: 'PROCESSED' } });
    const again = await patch(reader1, `/api/cases/${caseId}/status/forward`);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('Unable to transition case status. You have already marked this case as scored');
    // A reader of the study not assigned to the case does not even see it.
    expect((await patch(outsiderReader, `/api/cases/${caseId}/status/forward`)).statusCode).toBe(404);
    // An ISC reviewer does not score.
    expect((await patch(isc, `/api/cases/${caseId}/status/forward`)).statusCode).toBe(403);
    const last = await patch(reader2, `/api/cases/${caseId}/status/forward`);
    expect(last.json()).toMatchObject({ message: CASE_MESSAGES.scoredComplete, case: { status: 'COMPLETED' } });
    for (const id of images) expect(await imageStatus(id)).toBe('COMPLETE');
    const row = await caseRow(caseId);
    expect(row.read_by).toBe(reader2Id);
    expect(row.read_completed_at).not.toBeNull();
    const reads = await db().selectFrom('case_readers').select('read_at').where('case_id', '=', caseId).execute();
    expect(reads.every((r) => r.read_at !== null)).toBe(true);
    expect(await actions('case', caseId)).toEqual(['CASE_READ_MARKED', 'CASE_READ_MARKED', 'CASE_STATUS_FORWARDED']);
    // Completed: nothing more to forward.
    expect((await patch(reader2, `/api/cases/${caseId}/status/forward`)).statusCode).toBe(409);
  });
});

describe('show or hide to readers, accept AI counts, comments', () => {
  it('hides an image in a query chain from its readers, and shows it again', async () => {
    const { caseId, images } = await caseWith('PROCESSED', 'READY_FOR_READING', 1, [reader1Id]);
    const id = images[0]!;
    const refused = await patch(isc, `/api/images/${id}/toggle-image-visibility`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(`${unableToHideImage(id)}. ${IMAGE_ACTION_MESSAGES.notInQueryChain}`);
    await createQuery(db(), { studyId, objectId: id });
    expect((await reader1.request({ method: 'GET', url: `/api/images/${id}` })).statusCode).toBe(200);
    const hidden = await patch(isc, `/api/images/${id}/toggle-image-visibility`);
    expect(hidden.json()).toMatchObject({ message: IMAGE_ACTION_MESSAGES.hiddenFromReaders });
    expect((await reader1.request({ method: 'GET', url: `/api/images/${id}` })).statusCode).toBe(404);
    const view = (await reader1.request({ method: 'GET', url: `/api/cases/${caseId}` })).json<{
      case: { images: unknown[] };
    }>();
    expect(view.case.images).toEqual([]);
    const shown = await patch(isc, `/api/images/${id}/toggle-image-visibility`);
    expect(shown.json()).toMatchObject({ message: IMAGE_ACTION_MESSAGES.shownToReaders });
    expect((await reader1.request({ method: 'GET', url: `/api/images/${id}` })).statusCode).toBe(200);
    expect((await patch(labtech, `/api/images/${id}/toggle-image-visibility`)).statusCode).toBe(403);
  });

  it('the case view’s inQueryChain is true exactly for the images toggle-image-visibility accepts', async () => {
    const { caseId, images } = await caseWith('PENDING_QC', 'ISC_QC_PENDING', 5, [reader1Id]);
    const [none, open, closed, caseQueryOnly, archived] = images as [number, number, number, number, number];
    await createQuery(db(), { studyId, objectId: open });
    await createQuery(db(), { studyId, objectId: closed, status: 'CLOSED', resolution: 'RESOLVED' });
    // A query on the case whose object id happens to be this image's id: not the image's chain.
    await db()
      .insertInto('queries')
      .values({ object_type: 'CASE', object_id: caseQueryOnly, study_id: studyId, case_id: caseId })
      .execute();
    await createQuery(db(), { studyId, objectId: archived });
    await db().updateTable('images').set({ status: 'ARCHIVED' }).where('id', '=', archived).execute();

    const flags = async (session: Session) =>
      new Map(
        (await session.request({ method: 'GET', url: `/api/cases/${caseId}` }))
          .json<{ case: { images: { id: number; inQueryChain: boolean }[] } }>()
          .case.images.map((i) => [i.id, i.inQueryChain]),
      );
    const shown = await flags(isc);
    expect(Object.fromEntries(shown)).toEqual({
      [none]: false,
      [open]: true,
      [closed]: true,
      [caseQueryOnly]: false,
    });
    // The flag against the route itself, image by image (the archived one is not in the view and refused).
    for (const id of images) {
      const toggled = await patch(isc, `/api/images/${id}/toggle-image-visibility`);
      expect(toggled.statusCode, `image ${id}`).toBe(shown.get(id) ? 200 : 409);
      if (toggled.statusCode === 200) await patch(isc, `/api/images/${id}/toggle-image-visibility`);
    }
    // A blinded reader learns nothing of queries.
    expect([...(await flags(reader1)).values()]).toEqual([false, false, false, false]);
  });

  it('accepts or rejects AI counts: a value sets it, no value toggles; audited on change only', async () => {
    const id = (await createStudyImage(db(), { studyId })).id;
    const flag = async () =>
      (await db().selectFrom('images').select('accept_ai_annotations').where('id', '=', id).executeTakeFirstOrThrow())
        .accept_ai_annotations;
    expect((await patch(isc, `/api/images/${id}/accept-ai-annotations`)).json()).toMatchObject({
      message: IMAGE_ACTION_MESSAGES.aiAccepted,
    });
    expect(await flag()).toBe(true);
    await patch(isc, `/api/images/${id}/accept-ai-annotations`, { acceptAiAnnotations: true });
    expect(await flag()).toBe(true);
    await patch(isc, `/api/images/${id}/accept-ai-annotations`);
    expect(await flag()).toBe(false);
    expect(await actions('image', id)).toEqual(['IMAGE_AI_ACCEPTANCE_CHANGED', 'IMAGE_AI_ACCEPTANCE_CHANGED']);
    expect((await patch(labtech, `/api/images/${id}/accept-ai-annotations`)).statusCode).toBe(403);
  });

  it('comments on a case (optionally on one of its images); the case shows the latest', async () => {
    const { caseId, images } = await caseWith('PENDING_LAB_QC', 'LAB_QC_PENDING', 1);
    const other = (await createStudyImage(db(), { studyId })).id;
    const blank = await patch(labtech, `/api/cases/${caseId}/comment`, { caseId, comment: '   ' });
    expect(blank.statusCode).toBe(400);
    const foreign = await patch(labtech, `/api/cases/${caseId}/comment`, { caseId, imageId: other, comment: 'x' });
    expect(foreign.statusCode).toBe(400);
    const ok = await patch(labtech, `/api/cases/${caseId}/comment`, {
      caseId,
      imageId: images[0],
      comment: 'Fold at the lower edge',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({
      message: CASE_MESSAGES.commentAdded,
      case: { lastCaseComment: { text: 'Fold at the lower edge', imageId: images[0] } },
    });
    expect(await actions('case', caseId)).toEqual(['CASE_COMMENTED']);
  });
});
