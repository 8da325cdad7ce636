import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_LIMITS, ANNOTATION_MESSAGES } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { assignReader, createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 26 item 11: a GeoJSON import is measured before anything is checked or written. Every
 * position of every geometry counts (a MultiPoint's positions are one annotation each), a geometry
 * holds at most the freehand tool's vertices, and a body holding more objects and arrays than the
 * largest allowed file could is refused while it streams in, before it is parsed. Each refusal is a
 * 400 that names the limit, answered (before, the largest never was), and stores nothing.
 */
let t: TestContext;
let imageId: number;
let reader: Session;

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  const studyId = (await createStudy(db)).id;
  const caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  imageId = (
    await createStudyImage(db, {
      studyId,
      caseId,
      status: 'READY_FOR_READING',
      width: 20_000,
      height: 20_000,
      mpp: 0.5,
    })
  ).id;
  const user = await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] });
  await assignReader(db, { caseId, userId: user.id });
  reader = await login(t.app, user.username, PASSWORD);
}, 60_000);

afterAll(async () => {
  await t.close();
});

async function stored(): Promise<{ annotations: number; imports: number }> {
  const db = t.database.db;
  const a = await db
    .selectFrom('annotations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('image_id', '=', imageId)
    .executeTakeFirstOrThrow();
  const e = await db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('action', '=', 'ANNOTATIONS_IMPORTED')
    .executeTakeFirstOrThrow();
  return { annotations: Number(a.n), imports: Number(e.n) };
}

/** `n` positions as GeoJSON text, inside the image. */
function positions(n: number, offset = 0): string {
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = `[${(i + offset) % 19_000},${(i * 7 + offset) % 19_000}]`;
  return parts.join(',');
}

/** A closed ring of `n` positions (the last equals the first). */
function ring(n: number): string {
  const parts = new Array<string>(n);
  for (let i = 0; i < n - 1; i++) parts[i] = `[${100 + (i % 1000)},${100 + Math.floor(i / 1000)}]`;
  parts[n - 1] = parts[0] ?? '[100,100]';
  return `[${parts.join(',')}]`;
}

const feature = (geometry: string) => `{"type":"Feature","geometry":${geometry},"properties":{}}`;

async function importText(body: string) {
  const response = await reader.request({
    method: 'POST',
    url: `/api/images/${imageId}/annotations/import`,
    headers: { 'content-type': 'application/json' },
    payload: body,
  });
  return { response, message: response.json<{ message: string }>().message };
}

describe('GeoJSON import limits (issue 26 item 11)', () => {
  it('one Feature with a MultiPoint of 2,000,000 positions: 400 naming the limit, nothing stored', async () => {
    const before = await stored();
    const body = feature(`{"type":"MultiPoint","coordinates":[${positions(2_000_000)}]}`);
    expect(body.length).toBeGreaterThan(15_000_000);
    // Before, this request never answered (the test's own timeout is the bound; speed is not timed here).
    const { response, message } = await importText(body);
    expect(response.statusCode, message).toBe(400);
    expect(message).toBe(ANNOTATION_MESSAGES.importTooMany(2_000_000));
    expect(message).toContain(String(ANNOTATION_LIMITS.importMaxFeatures));
    expect(await stored()).toEqual(before);
  }, 120_000);

  it('MultiPoint positions and features add up: one over the limit is refused', async () => {
    const before = await stored();
    const body = `[${feature(`{"type":"Point","coordinates":[5,5]}`)},${feature(
      `{"type":"MultiPoint","coordinates":[${positions(ANNOTATION_LIMITS.importMaxFeatures)}]}`,
    )}]`;
    const { response, message } = await importText(body);
    expect(response.statusCode, message).toBe(400);
    expect(message).toBe(ANNOTATION_MESSAGES.importTooMany(ANNOTATION_LIMITS.importMaxFeatures + 1));
    expect(await stored()).toEqual(before);
  }, 120_000);

  it('a geometry holds at most the freehand tool’s vertices, whatever its type (Polygon, MultiPolygon, GeometryCollection)', async () => {
    const before = await stored();
    const max = ANNOTATION_LIMITS.geometryMaxVertices;
    expect(max).toBe(ANNOTATION_LIMITS.freehandMaxVertices);
    const cases: [string, number][] = [
      [`{"type":"Polygon","coordinates":[${ring(max + 1)}]}`, max + 1],
      [`{"type":"Polygon","coordinates":[${ring(max)},${ring(4)}]}`, max + 4],
      [`{"type":"MultiPolygon","coordinates":[[${ring(max / 2)}],[${ring(max / 2)}],[${ring(4)}]]}`, max + 4],
      [`{"type":"MultiLineString","coordinates":[[${positions(max)}],[${positions(1)}]]}`, max + 1],
      [
        `{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,1]},{"type":"LineString","coordinates":[${positions(max + 1)}]}]}`,
        max + 1,
      ],
    ];
    for (const [geometry, count] of cases) {
      const body = `[${feature(`{"type":"Point","coordinates":[5,5]}`)},${feature(geometry)}]`;
      const { response, message } = await importText(body);
      expect(response.statusCode, message).toBe(400);
      expect(message).toBe(
        `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.importFeature(1, ANNOTATION_MESSAGES.importGeometryTooLarge(count))}`,
      );
      expect(message).toContain(String(max));
    }
    expect(await stored()).toEqual(before);
  }, 120_000);

  it('the vertices of a whole file are bounded', async () => {
    const before = await stored();
    const per = ANNOTATION_LIMITS.geometryMaxVertices;
    const n = Math.floor(ANNOTATION_LIMITS.importMaxVertices / per) + 1;
    const one = feature(`{"type":"Polygon","coordinates":[${ring(per)}]}`);
    const body = `[${new Array<string>(n).fill(one).join(',')}]`;
    const { response, message } = await importText(body);
    expect(response.statusCode, message).toBe(400);
    expect(message).toBe(ANNOTATION_MESSAGES.importTooManyVertices(n * per));
    expect(message).toContain(String(ANNOTATION_LIMITS.importMaxVertices));
    expect(await stored()).toEqual(before);
  }, 120_000);

  it('a body of more objects and arrays than any allowed file holds is refused before it is parsed', async () => {
    const before = await stored();
    // 6,000,000 empty arrays (18 MB): within the body limit, far beyond what 250,000 annotations need.
    const body = `[${new Array<string>(6_000_000).fill('[]').join(',')}]`;
    const { response, message } = await importText(body);
    expect(response.statusCode, message).toBe(400);
    expect(message).toBe(ANNOTATION_MESSAGES.importTooLarge);
    // 15,000,000 numbers (30 MB): values beyond what 250,000 annotations need.
    const numbers = await importText(`[${new Array<string>(15_000_000).fill('0').join(',')}]`);
    expect(numbers.response.statusCode, numbers.message).toBe(400);
    expect(numbers.message).toBe(ANNOTATION_MESSAGES.importTooLarge);
    // Brackets and braces inside strings are text, not structure.
    const texty = `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[7,7]},"properties":{"name":"${'[{'.repeat(200)}\\"[{"}}]}`;
    const ok = await importText(texty);
    expect(ok.response.statusCode, ok.message).toBe(200);
    expect(await stored()).toEqual({ annotations: before.annotations + 1, imports: before.imports + 1 });
  }, 120_000);

  it('within the limits a large MultiPoint still imports', async () => {
    const before = await stored();
    const { response, message } = await importText(
      feature(`{"type":"MultiPoint","coordinates":[${positions(5_000, 3)}]}`),
    );
    expect(response.statusCode, message).toBe(200);
    expect((await stored()).annotations).toBe(before.annotations + 5_000);
  }, 120_000);
});
