import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANNOTATION_MESSAGES,
  annotationViewSchema,
  hpfRadiusPx,
  toAnnotationView,
  type AnnotationListResponse,
  type AnnotationView,
} from '@lamina/domain';
import { ANNOTATION_PAGE } from '../src/modules/annotations/annotationQueries.js';
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
 * Issue 14, server: every create refusal with its message (nothing written), the computed fields
 * (HPF radius, lengths in µm), independent reads (reader1 / reader2 / ISC), the lock after Mark as
 * Scored and its release on revert, the HPF a point belongs to (create, delete with and without its
 * points), audit rows, the streamed list held to the domain's schema, GeoJSON out and back in.
 */
let t: TestContext;
let studyId: number;
let celiacStudy: number;
let nashStudy: number;
let otherStudy: number;
let caseId: number;
let imageId: number;
let secondImage: number;
let noMppImage: number;
let celiacImage: number;
let nashImage: number;
let unprocessed: number;
let reader1: Session;
let reader2: Session;
let reader1Id: number;
let isc: Session;
let sysadmin: Session;
let classes: Record<string, number>;

const MPP = 0.5;

async function post(session: Session, body: Record<string, unknown>) {
  return session.request({ method: 'POST', url: '/api/annotations', payload: body });
}

async function create(session: Session, body: Record<string, unknown>): Promise<AnnotationView> {
  const response = await post(session, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ annotation: AnnotationView }>().annotation;
}

async function list(session: Session, image = imageId): Promise<AnnotationListResponse & { views: AnnotationView[] }> {
  const response = await session.request({ method: 'GET', url: `/api/images/${image}/annotations` });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<AnnotationListResponse>();
  return { ...body, views: body.annotations.map(toAnnotationView) };
}

const point = (x: number, y: number, extra: Record<string, unknown> = {}) => ({
  imageId,
  annotationType: 'POINT',
  geometry: { type: 'Point', coordinates: [x, y] },
  ...extra,
});
const hpf = (x: number, y: number, extra: Record<string, unknown> = {}) => ({
  imageId,
  annotationType: 'HPF',
  geometry: { type: 'Point', coordinates: [x, y] },
  ...extra,
});

async function annotationCount(): Promise<number> {
  const row = await t.database.db
    .selectFrom('annotations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
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

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  celiacStudy = (await createStudy(db)).id;
  nashStudy = (await createStudy(db)).id;
  otherStudy = (await createStudy(db)).id;
  await db
    .updateTable('studies')
    .set({ indications: ['CELIAC_DISEASE'] })
    .where('id', '=', celiacStudy)
    .execute();
  await db
    .updateTable('studies')
    .set({ indications: ['NASH'] })
    .where('id', '=', nashStudy)
    .execute();
  caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  const image = (study: number, c: number | null, extra: { width?: number; mpp?: number | null } = {}) =>
    createStudyImage(db, {
      studyId: study,
      caseId: c,
      status: 'READY_FOR_READING',
      width: extra.width ?? 20_000,
      height: 10_000,
      mpp: extra.mpp === undefined ? MPP : extra.mpp,
    }).then((r) => r.id);
  imageId = await image(studyId, caseId);
  secondImage = await image(studyId, caseId);
  noMppImage = await image(studyId, caseId, { mpp: null });
  const celiacCase = (await createCase(db, { studyId: celiacStudy, status: 'PROCESSED' })).id;
  celiacImage = await image(celiacStudy, celiacCase);
  const nashCase = (await createCase(db, { studyId: nashStudy, status: 'PROCESSED' })).id;
  nashImage = await image(nashStudy, nashCase);
  unprocessed = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING' })).id;

  const r1 = await createUser(db, {
    studyRoles: [
      { studyId, role: 'CR' },
      { studyId: celiacStudy, role: 'CR' },
      { studyId: nashStudy, role: 'CR' },
    ],
  });
  const r2 = await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] });
  reader1Id = r1.id;
  for (const c of [caseId, celiacCase, nashCase]) await assignReader(db, { caseId: c, userId: r1.id });
  await assignReader(db, { caseId, userId: r2.id });
  reader1 = await login(t.app, r1.username, PASSWORD);
  reader2 = await login(t.app, r2.username, PASSWORD);
  isc = await login(t.app, (await createUser(db, { studyRoles: [{ studyId, role: 'ISC' }] })).username, PASSWORD);
  sysadmin = await login(
    t.app,
    (await createUser(db, { systemAdmin: true, globalRoles: ['SystemAdmin'] })).username,
    PASSWORD,
  );

  classes = {
    eos: (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Eosinophil', color: '#FF001E' })).id,
    hpfClass: (await createAnnotationClass(db, { studyId, type: 'HPF', name: 'Peak', color: '#013BFA' })).id,
    freehand: (await createAnnotationClass(db, { studyId, type: 'FREEHAND', name: 'Ulcer' })).id,
    disabled: (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Retired' })).id,
    foreign: (await createAnnotationClass(db, { studyId: otherStudy, type: 'POINT', name: 'Elsewhere' })).id,
    unit1: (await createAnnotationClass(db, { studyId: celiacStudy, type: 'MULTILINE', name: 'Unit 1', sortOrder: 0 }))
      .id,
    studyMultiline: (await createAnnotationClass(db, { studyId, type: 'MULTILINE', name: 'Unit X' })).id,
  };
  await db.updateTable('annotation_classes').set({ enabled: false }).where('id', '=', classes.disabled!).execute();
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('create: what the server computes', () => {
  it('an HPF gets the radius √(0.238 mm²/π)/mpp, doubled for NASH, 100 px without a pixel size; weight 5, green', async () => {
    const a = await create(reader1, hpf(15_000, 5_000));
    expect(a.radius).toBeCloseTo(550.48, 1);
    expect(a.radius).toBeCloseTo(hpfRadiusPx(MPP, false), 9);
    expect(a.weight).toBe(5);
    expect(a.color).toBe('#00FF00');
    const nash = await create(reader1, { ...hpf(500, 500), imageId: nashImage });
    expect(nash.radius).toBeCloseTo(2 * 550.48, 1);
    const none = await create(reader1, { ...hpf(500, 500), imageId: noMppImage });
    expect(none.radius).toBe(100);
  });

  it('a line is measured in µm from the pixel size; a multiline is the sum of its segments', async () => {
    const line = await create(reader1, {
      imageId,
      annotationType: 'LINE',
      geometry: {
        type: 'LineString',
        coordinates: [
          [100, 100],
          [400, 500],
        ],
      },
    });
    expect(line.length).toBeCloseTo(500 * MPP, 9);
    const multi = await create(reader1, {
      imageId: celiacImage,
      annotationType: 'MULTILINE',
      annotationClassId: classes.unit1,
      multilineCategory: 'VILLUS_HEIGHT',
      geometry: {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [300, 400],
          [300, 1400],
        ],
      },
    });
    expect(multi.length).toBeCloseTo((500 + 1000) * MPP, 9);
    expect(multi.multilineCategory).toBe('VILLUS_HEIGHT');
  });

  it('an ellipse keeps its radii and the wire tilt; text is kept trimmed; a class gives its colour', async () => {
    const e = await create(reader1, {
      imageId,
      annotationType: 'ELLIPSE',
      geometry: { type: 'Point', coordinates: [800, 800] },
      radiusX: 40,
      radiusY: 20,
      tilt: 120,
    });
    expect([e.radiusX, e.radiusY, e.tilt]).toEqual([40, 20, 120]);
    const text = await create(reader1, {
      imageId,
      annotationType: 'TEXT',
      geometry: { type: 'Point', coordinates: [900, 900] },
      text: '  crypt abscess ',
    });
    expect(text.text).toBe('crypt abscess');
    const p = await create(reader1, point(50, 50, { annotationClassId: classes.eos }));
    expect(p.color).toBe('#FF001E');
    expect(p.annotationClassId).toBe(classes.eos);
  });
});

describe('create: refusals (400/409 with the reason; nothing written)', () => {
  const closedSquare = [
    [10, 10],
    [20, 10],
    [20, 20],
    [10, 10],
  ];
  const cases: [string, () => Record<string, unknown>, string][] = [
    [
      'point as a line string',
      () => ({
        ...point(1, 1),
        geometry: {
          type: 'LineString',
          coordinates: [
            [1, 1],
            [2, 2],
          ],
        },
      }),
      ANNOTATION_MESSAGES.geometryType('POINT'),
    ],
    ['outside the image', () => point(20_001, 5), ANNOTATION_MESSAGES.outsideImage],
    ['negative coordinate', () => point(5, -1), ANNOTATION_MESSAGES.outsideImage],
    [
      'a line of three points',
      () => ({
        imageId,
        annotationType: 'LINE',
        geometry: {
          type: 'LineString',
          coordinates: [
            [1, 1],
            [2, 2],
            [3, 3],
          ],
        },
      }),
      ANNOTATION_MESSAGES.lineVertices,
    ],
    [
      'an open freehand ring',
      () => ({
        imageId,
        annotationType: 'FREEHAND',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [10, 10],
              [20, 10],
              [20, 20],
              [10, 20],
            ],
          ],
        },
      }),
      ANNOTATION_MESSAGES.freehandNotClosed,
    ],
    [
      'a freehand with a hole',
      () => ({
        imageId,
        annotationType: 'FREEHAND',
        geometry: { type: 'Polygon', coordinates: [closedSquare, closedSquare] },
      }),
      ANNOTATION_MESSAGES.freehandVertices,
    ],
    [
      'text without text',
      () => ({ imageId, annotationType: 'TEXT', geometry: { type: 'Point', coordinates: [5, 5] }, text: '   ' }),
      ANNOTATION_MESSAGES.textRequired,
    ],
    [
      'an ellipse without radii',
      () => ({
        imageId,
        annotationType: 'ELLIPSE',
        geometry: { type: 'Point', coordinates: [5, 5] },
        radiusX: 0,
        radiusY: 4,
      }),
      ANNOTATION_MESSAGES.radiiRequired,
    ],
    [
      'a class of another study',
      () => point(5, 5, { annotationClassId: classes.foreign }),
      ANNOTATION_MESSAGES.classNotInStudy,
    ],
    [
      'a class of another list',
      () => point(5, 5, { annotationClassId: classes.hpfClass }),
      ANNOTATION_MESSAGES.classWrongType('POINT'),
    ],
    ['a disabled class', () => point(5, 5, { annotationClassId: classes.disabled }), ANNOTATION_MESSAGES.classDisabled],
    [
      'a line with a class',
      () => ({
        imageId,
        annotationType: 'LINE',
        annotationClassId: classes.eos,
        geometry: {
          type: 'LineString',
          coordinates: [
            [1, 1],
            [2, 2],
          ],
        },
      }),
      ANNOTATION_MESSAGES.classNotAllowed('LINE'),
    ],
    [
      'a multiline outside a celiac study',
      () => ({
        imageId,
        annotationType: 'MULTILINE',
        annotationClassId: classes.studyMultiline,
        multilineCategory: 'CRYPT_DEPTH',
        geometry: {
          type: 'LineString',
          coordinates: [
            [1, 1],
            [2, 2],
          ],
        },
      }),
      ANNOTATION_MESSAGES.multilineNotCeliac,
    ],
    [
      'a multiline without its category',
      () => ({
        imageId: celiacImage,
        annotationType: 'MULTILINE',
        annotationClassId: classes.unit1,
        geometry: {
          type: 'LineString',
          coordinates: [
            [1, 1],
            [2, 2],
          ],
        },
      }),
      ANNOTATION_MESSAGES.categoryRequired,
    ],
    [
      'an image not processed yet',
      () => ({ ...point(1, 1), imageId: unprocessed }),
      ANNOTATION_MESSAGES.imageHasNoExtent,
    ],
  ];
  it.each(cases)('%s', async (_name, body, reason) => {
    const before = await annotationCount();
    const response = await post(reader1, body());
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ message: string }>().message).toBe(`${ANNOTATION_MESSAGES.unableToCreate}: ${reason}`);
    expect(await annotationCount()).toBe(before);
  });

  it('a second villus height of the same class on the image is refused (409)', async () => {
    const body = {
      imageId: celiacImage,
      annotationType: 'MULTILINE',
      annotationClassId: classes.unit1,
      multilineCategory: 'CRYPT_DEPTH',
      geometry: {
        type: 'LineString',
        coordinates: [
          [10, 10],
          [10, 60],
        ],
      },
    };
    await create(reader1, body);
    const again = await post(reader1, body);
    expect(again.statusCode).toBe(409);
    expect(again.json<{ message: string }>().message).toBe(
      `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.multilineTaken('Unit 1', 'CRYPT_DEPTH')}`,
    );
  });

  it('a non-finite or unknown value is a 400 from the schema', async () => {
    expect((await post(reader1, { ...point(1, 1), annotationType: 'SQUARE' })).statusCode).toBe(400);
    expect(
      (await post(reader1, { ...point(1, 1), geometry: { type: 'Point', coordinates: ['1', 2] } })).statusCode,
    ).toBe(400);
  });
});

describe('independent reads', () => {
  it('reader2 sees none of reader1’s work, ISC sees both with the authors; a reader cannot delete another’s', async () => {
    const mine = await create(reader1, point(3000, 3000));
    const theirs = await create(reader2, point(3100, 3000));
    const r1 = await list(reader1);
    expect(r1.views.map((a) => a.userId).every((u) => u === reader1Id)).toBe(true);
    expect(r1.views.some((a) => a.id === mine.id)).toBe(true);
    const r2 = await list(reader2);
    expect(r2.views.map((a) => a.id)).toEqual([theirs.id]);
    expect(r2.authors.map((a) => a.id)).toHaveLength(1);
    const all = await list(isc);
    expect(all.views.map((a) => a.id)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    expect(all.authors).toHaveLength(2);
    const steal = await reader2.request({ method: 'DELETE', url: `/api/annotations/${mine.id}` });
    expect(steal.statusCode).toBe(404);
    expect(steal.json<{ message: string }>().message).toBe(ANNOTATION_MESSAGES.notFound);
  });

  it('a reader cannot draw on an image of a case they do not read (404), ISC cannot draw at all (403)', async () => {
    const db = t.database.db;
    const otherCase = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
    const foreign = (await createStudyImage(db, { studyId, caseId: otherCase, width: 100 })).id;
    expect((await post(reader1, { ...point(1, 1), imageId: foreign })).statusCode).toBe(404);
    expect((await post(isc, point(1, 1))).statusCode).toBe(403);
  });

  it('the study’s class counts are a reader’s own (no total of the other readers’ work leaks)', async () => {
    const eosCount = async (session: Session) => {
      const response = await session.request({ method: 'GET', url: `/api/studies/${studyId}` });
      expect(response.statusCode, response.body).toBe(200);
      const view = response.json<{ pointClasses: { id: number; count: number }[] }>();
      return view.pointClasses.find((c) => c.id === classes.eos)?.count;
    };
    expect(await eosCount(reader1)).toBeGreaterThan(0);
    expect(await eosCount(reader2)).toBe(0);
    expect(await eosCount(isc)).toBe(await eosCount(reader1));
  });

  it('every streamed row holds to the domain schema, without null fields', async () => {
    const response = await isc.request({ method: 'GET', url: `/api/images/${imageId}/annotations` });
    expect(response.headers['content-type']).toContain('application/json');
    const body = response.json<AnnotationListResponse>();
    expect(body.annotations.length).toBeGreaterThan(5);
    for (const row of body.annotations) {
      expect(Object.values(row)).not.toContain(null);
      expect(() => annotationViewSchema.strict().parse(toAnnotationView(row))).not.toThrow();
    }
  });
});

describe('the HPF a point belongs to', () => {
  it('a point takes the HPF that holds it; an HPF drawn later takes the Orphans it holds', async () => {
    const h = await create(reader1, hpf(5000, 5000, { annotationClassId: classes.hpfClass }));
    const inside = await create(reader1, point(5100, 5000));
    const outside = await create(reader1, point(7000, 5000));
    expect(inside.parentId).toBe(h.id);
    expect(outside.parentId).toBeNull();
    const response = await post(reader1, hpf(7000, 5100));
    const body = response.json<{ annotation: AnnotationView; reparented: { id: number; parentId: number }[] }>();
    expect(body.reparented).toEqual([{ id: outside.id, parentId: body.annotation.id }]);
    // Another reader's HPF never takes reader1's points.
    await create(reader2, hpf(5100, 5000));
    const after = await list(reader1);
    expect(after.views.find((a) => a.id === inside.id)?.parentId).toBe(h.id);
    expect(await auditActions(body.annotation.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_POINTS_REPARENTED']);
  });

  it('a point in two HPFs belongs to the nearer centre; deleting that HPF moves it to the other', async () => {
    const near = await create(reader1, hpf(10_000, 2000));
    const far = await create(reader1, hpf(10_400, 2000));
    const p = await create(reader1, point(10_150, 2000));
    expect(p.parentId).toBe(near.id);
    const del = await reader1.request({ method: 'DELETE', url: `/api/annotations/${near.id}?deleteNested=false` });
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json<{ reparented: unknown[] }>().reparented).toEqual([{ id: p.id, parentId: far.id }]);
  });

  it('delete without deleteNested leaves the points as Orphans; with it the points go too (soft, audited)', async () => {
    const h = await create(reader1, hpf(12_000, 8000));
    const a = await create(reader1, point(12_010, 8000));
    const b = await create(reader1, point(12_020, 8000));
    const keep = await reader1.request({ method: 'DELETE', url: `/api/annotations/${h.id}` });
    expect(keep.json<{ deletedIds: number[] }>().deletedIds).toEqual([h.id]);
    let views = (await list(reader1)).views;
    expect(views.find((v) => v.id === a.id)?.parentId).toBeNull();
    expect(views.some((v) => v.id === h.id)).toBe(false);

    const h2 = await create(reader1, hpf(12_000, 8000));
    const nested = await reader1.request({ method: 'DELETE', url: `/api/annotations/${h2.id}?deleteNested=true` });
    expect(nested.json<{ deletedIds: number[] }>().deletedIds.sort()).toEqual([h2.id, a.id, b.id].sort());
    views = (await list(reader1)).views;
    expect(views.some((v) => v.id === a.id || v.id === b.id)).toBe(false);
    const row = await t.database.db
      .selectFrom('annotations')
      .selectAll()
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
    expect(row.deleted_by).toBe(reader1Id);
    expect(await auditActions(a.id)).toEqual(['ANNOTATION_CREATED', 'ANNOTATION_DELETED']);
    const again = await reader1.request({ method: 'DELETE', url: `/api/annotations/${a.id}` });
    expect(again.statusCode).toBe(404);
  });
});

describe('locked once scored', () => {
  it('refuses create and delete after Mark as Scored; a revert unlocks', async () => {
    const db = t.database.db;
    const scoredCase = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
    const img = (
      await createStudyImage(db, { studyId, caseId: scoredCase, status: 'READY_FOR_READING', width: 1000, mpp: MPP })
    ).id;
    await assignReader(db, { caseId: scoredCase, userId: reader1Id });
    const drawn = await create(reader1, { ...point(5, 5), imageId: img });
    await db
      .updateTable('cases')
      .set({ prev_workflow_statuses: ['PENDING_LAB_QC', 'PENDING_QC'] })
      .where('id', '=', scoredCase)
      .execute();
    const scored = await reader1.request({
      method: 'PATCH',
      url: `/api/cases/${scoredCase}/status/forward`,
      payload: {},
    });
    expect(scored.statusCode, scored.body).toBe(200);
    expect((await list(reader1, img)).locked).toBe(true);

    const refused = await post(reader1, { ...point(6, 6), imageId: img });
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ message: string }>().message).toBe(
      `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.lockedScored}`,
    );
    const del = await reader1.request({ method: 'DELETE', url: `/api/annotations/${drawn.id}` });
    expect(del.statusCode).toBe(409);
    expect(del.json<{ message: string }>().message).toBe(
      `${ANNOTATION_MESSAGES.unableToDelete}: ${ANNOTATION_MESSAGES.lockedScored}`,
    );

    const status = (
      await db.selectFrom('cases').select('status').where('id', '=', scoredCase).executeTakeFirstOrThrow()
    ).status;
    const back = await sysadmin.request({
      method: 'PATCH',
      url: `/api/cases/${scoredCase}/status/back`,
      payload: { value: status === 'COMPLETED' ? 'PROCESSED' : 'PENDING_QC', reason: 'Re-read requested' },
    });
    expect(back.statusCode, back.body).toBe(200);
    expect((await list(reader1, img)).locked).toBe(false);
    await create(reader1, { ...point(6, 6), imageId: img });
  });
});

describe('GeoJSON', () => {
  it('exports the caller’s visible annotations and imports them into another image unchanged', async () => {
    const exported = await reader1.request({ method: 'GET', url: `/api/images/${imageId}/annotations.geojson` });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-disposition']).toContain(`image-${imageId}-annotations.geojson`);
    const file = exported.json<{
      type: string;
      features: {
        geometry: unknown;
        properties: { objectType?: string; classification?: { name: string; color?: number[] } };
      }[];
    }>();
    expect(file.type).toBe('FeatureCollection');
    const mine = (await list(reader1)).views;
    expect(file.features).toHaveLength(mine.length);
    const eos = file.features.find((f) => f.properties.classification?.name === 'Eosinophil');
    expect(eos?.properties.classification?.color).toEqual([255, 0, 30]);
    expect(eos?.properties.objectType).toBe('annotation');

    const imported = await reader1.request({
      method: 'POST',
      url: `/api/images/${secondImage}/annotations/import`,
      payload: file,
    });
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json<{ count: number }>().count).toBe(mine.length);
    const copy = (await list(reader1, secondImage)).views;
    const shape = (a: AnnotationView) =>
      JSON.stringify([
        a.annotationType,
        a.geometry,
        a.annotationClassId,
        a.radius,
        a.radiusX,
        a.radiusY,
        a.tilt,
        a.text,
        a.length,
        a.multilineCategory,
      ]);
    expect(copy.map(shape).sort()).toEqual(mine.map(shape).sort());
  });

  it('is all or nothing: one bad feature names its number and writes nothing', async () => {
    const before = await annotationCount();
    const response = await reader1.request({
      method: 'POST',
      url: `/api/images/${secondImage}/annotations/import`,
      payload: {
        type: 'FeatureCollection',
        features: [
          { type: 'Feature', geometry: { type: 'Point', coordinates: [1, 1] }, properties: {} },
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: [1, 1] },
            properties: { classification: { name: 'Nope' } },
          },
        ],
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ message: string }>().message).toBe(
      `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.importFeature(1, ANNOTATION_MESSAGES.importUnknownClass('Nope', 'POINT'))}`,
    );
    expect(await annotationCount()).toBe(before);
    const junk = await reader1.request({
      method: 'POST',
      url: `/api/images/${secondImage}/annotations/import`,
      payload: { a: 1 },
    });
    expect(junk.statusCode).toBe(400);
    expect(junk.json<{ message: string }>().message).toBe(ANNOTATION_MESSAGES.importInvalid);
  });

  it('an import of many HPFs gives every point, new or already there, the HPF that holds it', async () => {
    const db = t.database.db;
    const img = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 10_000, mpp: null }))
      .id;
    const before = await create(reader1, { ...point(150, 150), imageId: img }); // an Orphan first
    expect(before.parentId).toBeNull();
    const hpfs = Array.from({ length: 30 }, (_, i) => [150 + 300 * i, 150]); // radius 100 px, no mpp
    const file = {
      type: 'FeatureCollection',
      features: [
        ...hpfs.map((c) => ({
          type: 'Feature',
          geometry: { type: 'Point', coordinates: c },
          properties: { lamina: { annotationType: 'HPF' } },
        })),
        ...hpfs.map((c) => ({ type: 'Feature', geometry: { type: 'Point', coordinates: [(c[0] ?? 0) + 50, 150] } })),
        { type: 'Feature', geometry: { type: 'Point', coordinates: [9000, 9000] } },
      ],
    };
    const response = await reader1.request({
      method: 'POST',
      url: `/api/images/${img}/annotations/import`,
      payload: file,
    });
    expect(response.statusCode, response.body).toBe(200);
    const views = (await list(reader1, img)).views;
    const hpfByX = new Map(
      views.filter((v) => v.annotationType === 'HPF').map((v) => [(v.geometry.coordinates as number[])[0], v.id]),
    );
    const points = views.filter((a) => a.annotationType === 'POINT' && a.id !== before.id);
    expect(points).toHaveLength(31);
    for (const v of points) {
      const [x = 0, y = 0] = v.geometry.coordinates as number[];
      // 50 px right of an HPF's centre (radius 100 px), 250 px from the next: that HPF's.
      expect(v.parentId, `point at ${x},${y}`).toBe(y === 9000 ? null : hpfByX.get(x - 50));
    }
    expect(views.find((v) => v.id === before.id)?.parentId).toBe(hpfByX.get(150));
  });

  it('streams lists longer than one page whole, in id order', async () => {
    const db = t.database.db;
    const img = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 1000 })).id;
    await sql`INSERT INTO annotations (image_id, annotation_type, geometry, user_id)
      SELECT ${img}, 'POINT', jsonb_build_object('type', 'Point', 'coordinates', jsonb_build_array(g % 1000, g % 997)), ${reader1Id}
      FROM generate_series(1, ${ANNOTATION_PAGE * 2 + 1}) g`.execute(db);
    const views = (await list(reader1, img)).views;
    expect(views).toHaveLength(ANNOTATION_PAGE * 2 + 1);
    expect(views.every((v, i) => i === 0 || v.id > (views[i - 1]?.id ?? 0))).toBe(true);
    expect(views[7]?.geometry).toEqual({ type: 'Point', coordinates: [8, 8] });
  });

  it('imports QuPath’s points (a MultiPoint per class) and polygons by geometry', async () => {
    const response = await reader1.request({
      method: 'POST',
      url: `/api/images/${noMppImage}/annotations/import`,
      payload: [
        {
          type: 'Feature',
          geometry: {
            type: 'MultiPoint',
            coordinates: [
              [10, 10],
              [20, 20],
              [30, 30],
            ],
          },
          properties: { objectType: 'annotation', classification: { name: 'eosinophil', color: [255, 0, 30] } },
        },
        {
          type: 'Feature',
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [50, 0],
                [50, 50],
                [0, 0],
              ],
            ],
          },
          properties: { objectType: 'annotation', classification: { name: 'Ulcer' } },
        },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const views = (await list(reader1, noMppImage)).views.filter((v) => v.annotationType !== 'HPF');
    expect(views.filter((v) => v.annotationType === 'POINT' && v.annotationClassId === classes.eos)).toHaveLength(3);
    expect(
      views.filter((v) => v.annotationType === 'FREEHAND' && v.annotationClassId === classes.freehand),
    ).toHaveLength(1);
  });
});
