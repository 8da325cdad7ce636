import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANNOTATION_MESSAGES,
  restoreAnnotationResponseSchema,
  toAnnotationView,
  type AnnotationListResponse,
  type AnnotationView,
  type RestoreAnnotationResponse,
} from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  assignReader,
  createAnnotationClass,
  createCase,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';

/**
 * Issue 29 item 5, server: POST /api/annotations/{id}/restore, the undo of a delete (and the redo of
 * a create): the same ids back, an HPF's points deleted with it back with it, parents by the one
 * rule, ANNOTATION_RESTORED rows; refused for a live annotation, another reader's (404, as missing),
 * a deletion by someone else, a locked read, a taken line pair, a disabled class — nothing changed.
 */
let t: TestContext;
let studyId: number;
let celiacStudy: number;
let caseId: number;
let celiacCase: number;
let reader1: Session;
let reader2: Session;
let reader1Id: number;
let sysadmin: Session;
let eos: number;
let unit1: number;

type Image = { id: number };
const MPP = 0.5;

async function newImage(study = studyId, c = caseId): Promise<Image> {
  const { id } = await createStudyImage(t.database.db, {
    studyId: study,
    caseId: c,
    status: 'READY_FOR_READING',
    width: 20_000,
    height: 10_000,
    mpp: MPP,
  });
  return { id };
}

async function create(session: Session, body: Record<string, unknown>): Promise<AnnotationView> {
  const response = await session.request({ method: 'POST', url: '/api/annotations', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ annotation: AnnotationView }>().annotation;
}

const at = (imageId: number, type: string, x: number, y: number, extra: Record<string, unknown> = {}) => ({
  imageId,
  annotationType: type,
  geometry: { type: 'Point', coordinates: [x, y] },
  ...extra,
});

async function remove(session: Session, id: number, deleteNested: boolean) {
  const response = await session.request({
    method: 'DELETE',
    url: `/api/annotations/${id}?deleteNested=${deleteNested}`,
  });
  expect(response.statusCode, response.body).toBe(200);
}

function restore(session: Session, id: number) {
  return session.request({ method: 'POST', url: `/api/annotations/${id}/restore` });
}

async function restored(session: Session, id: number): Promise<RestoreAnnotationResponse> {
  const response = await restore(session, id);
  expect(response.statusCode, response.body).toBe(200);
  return restoreAnnotationResponseSchema.parse(response.json());
}

async function list(session: Session, imageId: number): Promise<AnnotationView[]> {
  const response = await session.request({ method: 'GET', url: `/api/images/${imageId}/annotations` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<AnnotationListResponse>().annotations.map(toAnnotationView);
}

async function auditActions(entityId: number): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('audit_events')
    .select('action')
    .where('entity_type', '=', 'annotation')
    .where('entity_id', '=', String(entityId))
    .orderBy('id')
    .execute();
  return rows.map((r) => r.action);
}

/** The rows of the image as stored (deleted ones too): what a refusal must leave as it was. */
async function stored(imageId: number) {
  return t.database.db
    .selectFrom('annotations')
    .select(['id', 'deleted_at', 'deleted_by', 'status', 'parent_id'])
    .where('image_id', '=', imageId)
    .orderBy('id')
    .execute();
}

function expectRefused(response: { statusCode: number; body: string }, status: number, reason: string) {
  expect(response.statusCode).toBe(status);
  expect((JSON.parse(response.body) as { message: string }).message).toBe(reason);
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  celiacStudy = (await createStudy(db)).id;
  await db
    .updateTable('studies')
    .set({ indications: ['CELIAC_DISEASE'] })
    .where('id', '=', celiacStudy)
    .execute();
  caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  celiacCase = (await createCase(db, { studyId: celiacStudy, status: 'PROCESSED' })).id;
  const r1 = await createUser(db, {
    studyRoles: [
      { studyId, role: 'CR' },
      { studyId: celiacStudy, role: 'CR' },
    ],
  });
  const r2 = await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] });
  reader1Id = r1.id;
  await assignReader(db, { caseId, userId: r1.id });
  await assignReader(db, { caseId: celiacCase, userId: r1.id });
  await assignReader(db, { caseId, userId: r2.id });
  reader1 = await login(t.app, r1.username, PASSWORD);
  reader2 = await login(t.app, r2.username, PASSWORD);
  sysadmin = await login(
    t.app,
    (await createUser(db, { systemAdmin: true, globalRoles: ['SystemAdmin'] })).username,
    PASSWORD,
  );
  eos = (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Eosinophil' })).id;
  unit1 = (await createAnnotationClass(db, { studyId: celiacStudy, type: 'MULTILINE', name: 'Unit 1' })).id;
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('restore', () => {
  it('an HPF deleted with its points comes back with them, the same ids and parent, audited per annotation', async () => {
    const img = await newImage();
    const hpf = await create(reader1, at(img.id, 'HPF', 1000, 1000, { text: 'peak' }));
    const p1 = await create(reader1, at(img.id, 'POINT', 1010, 1010, { annotationClassId: eos }));
    const p2 = await create(reader1, at(img.id, 'POINT', 990, 1000));
    // A point of the HPF deleted on its own before stays deleted.
    const p3 = await create(reader1, at(img.id, 'POINT', 1005, 995));
    await remove(reader1, p3.id, false);
    const before = await list(reader1, img.id);
    await remove(reader1, hpf.id, true);
    expect(await list(reader1, img.id)).toEqual([]);

    const body = await restored(reader1, hpf.id);
    expect(body.message).toBe(ANNOTATION_MESSAGES.restored);
    expect(body.annotations.map((a) => a.id)).toEqual([hpf.id, p1.id, p2.id]);
    expect(body.reparented).toEqual([]);
    expect(await list(reader1, img.id)).toEqual(before);
    expect((await list(reader1, img.id)).map((a) => [a.id, a.parentId])).toEqual([
      [hpf.id, null],
      [p1.id, hpf.id],
      [p2.id, hpf.id],
    ]);
    expect(await auditActions(hpf.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_DELETED', 'ANNOTATION_RESTORED']);
    expect(await auditActions(p1.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_DELETED', 'ANNOTATION_RESTORED']);
    expect(await auditActions(p3.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_DELETED']);
    const rows = await t.database.db
      .selectFrom('annotations')
      .select(['deleted_at', 'deleted_by', 'status'])
      .where('id', 'in', [hpf.id, p1.id, p2.id])
      .execute();
    expect(rows).toEqual(rows.map(() => ({ deleted_at: null, deleted_by: null, status: 'ACTIVE' })));
  });

  it('an HPF deleted alone takes its points back from the Orphan; undo of a create is a delete, redo a restore', async () => {
    const img = await newImage();
    const hpf = await create(reader1, at(img.id, 'HPF', 3000, 3000));
    const p = await create(reader1, at(img.id, 'POINT', 3001, 3001));
    await remove(reader1, hpf.id, false);
    expect((await list(reader1, img.id)).map((a) => [a.id, a.parentId])).toEqual([[p.id, null]]);

    const body = await restored(reader1, hpf.id);
    expect(body.annotations.map((a) => a.id)).toEqual([hpf.id]);
    expect(body.reparented).toEqual([{ id: p.id, parentId: hpf.id }]);
    expect((await list(reader1, img.id)).map((a) => [a.id, a.parentId])).toEqual([
      [hpf.id, null],
      [p.id, hpf.id],
    ]);
    expect(await auditActions(hpf.id)).toEqual([
      'ANNOTATION_CREATED',
      'ANNOTATION_DELETED',
      'ANNOTATION_POINTS_REPARENTED',
      'ANNOTATION_RESTORED',
      'ANNOTATION_POINTS_REPARENTED',
    ]);

    // A restored point takes the HPF that holds it now.
    await remove(reader1, p.id, false);
    const point = await restored(reader1, p.id);
    expect(point.annotations.map((a) => [a.id, a.parentId])).toEqual([[p.id, hpf.id]]);
  });

  it('refuses a live annotation (409), another reader’s (404, as missing), someone else’s deletion (403)', async () => {
    const img = await newImage();
    const live = await create(reader1, at(img.id, 'POINT', 50, 50));
    expectRefused(
      await restore(reader1, live.id),
      409,
      `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.notDeleted}`,
    );

    const mine = await create(reader1, at(img.id, 'POINT', 60, 60));
    await remove(reader1, mine.id, false);
    const before = await stored(img.id);
    expectRefused(await restore(reader2, mine.id), 404, ANNOTATION_MESSAGES.notFound);
    expectRefused(await restore(reader2, 999_999), 404, ANNOTATION_MESSAGES.notFound);

    // The system administrator deleted reader1's point: reader1 cannot bring it back, and the
    // system administrator cannot restore reader1's own deletion.
    const theirs = await create(reader1, at(img.id, 'POINT', 70, 70));
    const del = await sysadmin.request({ method: 'DELETE', url: `/api/annotations/${theirs.id}` });
    expect(del.statusCode, del.body).toBe(200);
    const withTheirs = await stored(img.id);
    expectRefused(
      await restore(reader1, theirs.id),
      403,
      `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.notYourDeletion}`,
    );
    expectRefused(
      await restore(sysadmin, mine.id),
      403,
      `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.notYourDeletion}`,
    );
    expect(await stored(img.id)).toEqual(withTheirs);
    expect(before.length).toBe(withTheirs.length - 1);
    expect(await auditActions(mine.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_DELETED']);
    await restored(sysadmin, theirs.id);
  });

  it('refuses while the read is locked (409) and a class disabled since (400), changing nothing', async () => {
    const db = t.database.db;
    const img = await newImage();
    const p = await create(reader1, at(img.id, 'POINT', 80, 80, { annotationClassId: eos }));
    await remove(reader1, p.id, false);
    const before = await stored(img.id);

    await db
      .updateTable('case_readers')
      .set({ read_at: new Date() })
      .where('case_id', '=', caseId)
      .where('user_id', '=', reader1Id)
      .execute();
    try {
      expectRefused(
        await restore(reader1, p.id),
        409,
        `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.lockedScored}`,
      );
    } finally {
      await db
        .updateTable('case_readers')
        .set({ read_at: null })
        .where('case_id', '=', caseId)
        .where('user_id', '=', reader1Id)
        .execute();
    }

    await db.updateTable('annotation_classes').set({ enabled: false }).where('id', '=', eos).execute();
    try {
      expectRefused(
        await restore(reader1, p.id),
        400,
        `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.classDisabled}`,
      );
    } finally {
      await db.updateTable('annotation_classes').set({ enabled: true }).where('id', '=', eos).execute();
    }
    expect(await stored(img.id)).toEqual(before);
    expect(await auditActions(p.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_DELETED']);
    await restored(reader1, p.id);
  });

  it('refuses a line measurement whose class and category were drawn again since (409)', async () => {
    const img = await newImage(celiacStudy, celiacCase);
    const line = (x: number) => ({
      imageId: img.id,
      annotationType: 'MULTILINE',
      geometry: {
        type: 'LineString',
        coordinates: [
          [x, 100],
          [x, 400],
        ],
      },
      annotationClassId: unit1,
      multilineCategory: 'VILLUS_HEIGHT',
    });
    const first = await create(reader1, line(100));
    await remove(reader1, first.id, false);
    await create(reader1, line(200));
    expectRefused(
      await restore(reader1, first.id),
      409,
      `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.multilineTaken('Unit 1', 'VILLUS_HEIGHT')}`,
    );
  });
});
