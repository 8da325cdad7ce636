import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  annotationViewSchema,
  hpfRadiusPx,
  regionMeasures,
  toAnnotationView,
  type AnnotationListResponse,
  type AnnotationView,
} from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { assignReader, createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 29 item 4, server: every region carries its area (µm²) and perimeter (µm), computed once by
 * the domain's regionMeasures when it is written, from the slide's µm per pixel — in the create
 * response, the list, the audit row and the GeoJSON export; null without a pixel size and for
 * annotations that are not regions. The migration fills existing rows with the same values.
 */
let t: TestContext;
let imageId: number;
let noMppImage: number;
let reader: Session;

const MPP = 0.5;

async function create(session: Session, body: Record<string, unknown>): Promise<AnnotationView> {
  const response = await session.request({ method: 'POST', url: '/api/annotations', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return annotationViewSchema.parse(response.json<{ annotation: AnnotationView }>().annotation);
}

async function list(image: number): Promise<AnnotationView[]> {
  const response = await reader.request({ method: 'GET', url: `/api/images/${image}/annotations` });
  expect(response.statusCode, response.body).toBe(200);
  return response
    .json<AnnotationListResponse>()
    .annotations.map((a) => annotationViewSchema.parse(toAnnotationView(a)));
}

/** A 200 × 100 px rectangle: 100 × 50 µm at 0.5 µm per pixel. */
const rectangle = (image: number) => ({
  imageId: image,
  annotationType: 'FREEHAND',
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [1000, 1000],
        [1200, 1000],
        [1200, 1100],
        [1000, 1100],
        [1000, 1000],
      ],
    ],
  },
});
const ellipse = (image: number) => ({
  imageId: image,
  annotationType: 'ELLIPSE',
  geometry: { type: 'Point', coordinates: [3000, 3000] },
  radiusX: 140,
  radiusY: 80,
  tilt: 90,
});
const hpf = (image: number) => ({
  imageId: image,
  annotationType: 'HPF',
  geometry: { type: 'Point', coordinates: [6000, 5000] },
});
const line = (image: number) => ({
  imageId: image,
  annotationType: 'LINE',
  geometry: {
    type: 'LineString',
    coordinates: [
      [100, 100],
      [400, 500],
    ],
  },
});

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  const studyId = (await createStudy(db)).id;
  const caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  const image = (mpp: number | null) =>
    createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 20_000, height: 10_000, mpp }).then(
      (r) => r.id,
    );
  imageId = await image(MPP);
  noMppImage = await image(null);
  const user = await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] });
  await assignReader(db, { caseId, userId: user.id });
  reader = await login(t.app, user.username, PASSWORD);
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('areas and perimeters of regions (issue 29 item 4)', () => {
  it('a 100 × 50 µm rectangle: 5 000 µm², 300 µm — in the create response, the list and the audit row', async () => {
    const a = await create(reader, rectangle(imageId));
    expect(a.area).toBeCloseTo(5000, 9);
    expect(a.perimeter).toBeCloseTo(300, 9);
    expect(a.length).toBeNull();
    const listed = (await list(imageId)).find((v) => v.id === a.id);
    expect([listed?.area, listed?.perimeter]).toEqual([a.area, a.perimeter]);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select('new_value')
      .where('entity_type', '=', 'annotation')
      .where('entity_id', '=', String(a.id))
      .where('action', '=', 'ANNOTATION_CREATED')
      .executeTakeFirstOrThrow();
    const written = JSON.parse(audit.new_value ?? '{}') as { area: number; perimeter: number };
    expect([written.area, written.perimeter]).toEqual([5000, 300]);
  });

  it('an ellipse: π·a·b and Ramanujan’s perimeter; an HPF circle: 0.238 mm², 2πr', async () => {
    const e = await create(reader, ellipse(imageId));
    // 140 × 80 px radii at 0.5 µm/px: a = 70 µm, b = 40 µm.
    expect(e.area).toBeCloseTo(Math.PI * 70 * 40, 6); // 8 796.46 µm²
    expect(e.perimeter).toBeCloseTo(Math.PI * (3 * 110 - Math.sqrt(250 * 190)), 6); // 352.03 µm
    expect(e.perimeter).toBeCloseTo(352.0313, 3);
    const h = await create(reader, hpf(imageId));
    expect(h.area).toBeCloseTo(238_000, 4);
    expect(h.perimeter).toBeCloseTo(2 * Math.PI * hpfRadiusPx(MPP, false) * MPP, 6);
  });

  it('null on a slide with no pixel size, and for lines, points and text', async () => {
    for (const body of [rectangle(noMppImage), ellipse(noMppImage), hpf(noMppImage)]) {
      const a = await create(reader, body);
      expect([a.area, a.perimeter]).toEqual([null, null]);
    }
    const l = await create(reader, line(imageId));
    expect(l.length).toBeCloseTo(250, 9);
    expect([l.area, l.perimeter]).toEqual([null, null]);
    const p = await create(reader, {
      imageId,
      annotationType: 'POINT',
      geometry: { type: 'Point', coordinates: [9, 9] },
    });
    expect([p.area, p.perimeter]).toEqual([null, null]);
  });

  it('the GeoJSON export lists them under properties.lamina', async () => {
    const response = await reader.request({ method: 'GET', url: `/api/images/${imageId}/annotations.geojson` });
    expect(response.statusCode).toBe(200);
    const features = response.json<{
      features: { properties: { lamina: { annotationType: string; area?: number; perimeter?: number } } }[];
    }>().features;
    const freehand = features.find((f) => f.properties.lamina.annotationType === 'FREEHAND');
    expect([freehand?.properties.lamina.area, freehand?.properties.lamina.perimeter]).toEqual([5000, 300]);
    const lineFeature = features.find((f) => f.properties.lamina.annotationType === 'LINE');
    expect(lineFeature?.properties.lamina).not.toHaveProperty('area');
  });

  it('the migration fills rows written before it with the domain’s values', async () => {
    const db = t.database.db;
    const written = [
      await create(reader, rectangle(imageId)),
      await create(reader, ellipse(imageId)),
      await create(reader, hpf(imageId)),
      await create(reader, rectangle(noMppImage)),
    ];
    // A concave ring with a hole (drawn ones have one ring; an imported polygon may have holes).
    const holed: AnnotationView['geometry'] = {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [400, 0],
          [400, 100],
          [100, 100],
          [100, 300],
          [0, 300],
          [0, 0],
        ],
        [
          [20, 20],
          [80, 20],
          [80, 80],
          [20, 80],
          [20, 20],
        ],
      ],
    };
    const inserted = await db
      .insertInto('annotations')
      .values({
        image_id: imageId,
        annotation_type: 'FREEHAND',
        geometry: JSON.stringify(holed),
        created_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    written.push({ ...written[0]!, id: inserted.id, geometry: holed });
    const ids = written.map((a) => a.id);
    await db.updateTable('annotations').set({ area: null, perimeter: null }).where('id', 'in', ids).execute();
    // The migration's statements after its ALTER TABLE and COMMENTs: its UPDATEs.
    const text = readFileSync(new URL('../migrations/0021_annotation_measures.sql', import.meta.url), 'utf8');
    const updates = text.slice(text.indexOf('UPDATE annotations'));
    for (const statement of updates.split(/;\s*\n/).filter((s) => s.trim() && !/^\s*--[^\n]*$/.test(s.trim())))
      await sql.raw(statement).execute(db);
    const rows = await db
      .selectFrom('annotations')
      .select(['id', 'area', 'perimeter'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute();
    for (const [i, a] of written.entries()) {
      const row = rows[i];
      const expected = regionMeasures(a, a.imageId === imageId ? MPP : null);
      if (expected.area === null) expect([row?.area, row?.perimeter]).toEqual([null, null]);
      else {
        expect(row?.area).toBeCloseTo(expected.area, 6);
        expect(row?.perimeter).toBeCloseTo(expected.perimeter ?? NaN, 6);
      }
    }
    // The concave ring with a hole: 60 000 − 3 600 px² at 0.25 µm² per px²; its outer outline 1 400 px.
    expect(rows[4]?.area).toBeCloseTo((60_000 - 3_600) * MPP * MPP, 6);
    expect(rows[4]?.perimeter).toBeCloseTo(1_400 * MPP, 6);
  });
});
