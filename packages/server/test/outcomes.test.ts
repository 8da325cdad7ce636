import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CASE_MESSAGES,
  ENDPOINT_MESSAGES,
  MESSAGES,
  ROLE_PERMISSIONS,
  type CaseOutcomesResponse,
  type EndpointDefinition,
  type RoleName,
} from '@lamina/domain';
import type { Principal } from '../src/platform/auth/principal.js';
import { AuditValueRenderer, HIDDEN_VALUE_LABEL, type AuditValueRow } from '../src/modules/reports/auditTrailValues.js';
import { createTestApp, type Session, type TestContext } from './testApp.js';
import { createAnnotationClass, createStudy, createStudyImage } from './factories.js';
import { PEC, READ_MPP as MPP, readFixtures } from './readFixtures.js';

/**
 * Issue 30, read outcomes: each reader's endpoint values are computed from their own annotations
 * (drawn here through the real annotation routes) and frozen in Mark as Scored's transaction, with
 * their audit row; reopening a read, reverting the case or removing the reader clears them (audited
 * with the values and the reason); marking again recomputes.
 *
 * The expected values are worked out by hand from what each reader drew (µm = px × MPP), not by the
 * domain's functions the server uses.
 */
let t: TestContext;
let studyId: number;
let otherStudy: number;
let bareStudy: number;
const fx = readFixtures(() => t);
const { users, as, id, user, hpf, points, markScored, lastAuditId } = fx;
let eos: number;
let neutrophil: number;
let unit: number;
let bareEos: number;

const ENDPOINTS: EndpointDefinition[] = [
  PEC,
  { key: 'vh_cd', label: 'Villus height : crypt depth', kind: 'VH_CD_RATIO', threshold: 2, positiveWhen: 'LT' },
];

/** A Processed case of `study` with one processed image (MPP µm/px), read by the given readers. */
const readCase = (readers: string[], study = studyId) => fx.readCase(study, readers);

/** A celiac line of `px` pixels (µm = px × MPP). */
const line = (key: string, imageId: number, category: 'VILLUS_HEIGHT' | 'CRYPT_DEPTH', px: number, x = 100) =>
  fx.line(key, imageId, unit, category, px, x);

/** The frozen rows of a case: reader → endpoint → [value, positive, reason]. */
async function frozen(caseId: number) {
  const rows = await t.database.db
    .selectFrom('read_outcomes')
    .select(['reader_id', 'endpoint_key', 'value', 'positive', 'reason', 'reader_role', 'scored_at'])
    .where('case_id', '=', caseId)
    .orderBy('id')
    .execute();
  const out: Record<number, Record<string, [number | null, boolean | null, string | null]>> = {};
  for (const r of rows) {
    expect(r.reader_role).toBe('PRIMARY');
    (out[r.reader_id] ??= {})[r.endpoint_key] = [r.value, r.positive, r.reason];
  }
  return out;
}

/** The case's audit rows since `since`, of the given actions (all when none given). */
const audit = (caseId: number, since: number, actions?: string[]) =>
  fx
    .auditRowsAfter(since, { caseId, actions })
    .select(['action', 'field', 'old_value', 'new_value', 'reason', 'username'])
    .execute();

/**
 * reader1: HPF A with 16 eosinophils and 2 neutrophils, HPF B with 3 eosinophils, 1 eosinophil
 * outside any HPF; villus height 1000 px (500 µm), crypt depth 400 px (200 µm).
 * reader2: one HPF with 20 eosinophils; villus height 600 px (300 µm), crypt depth 400 px (200 µm).
 */
async function drawBoth(imageId: number) {
  await hpf('reader1', imageId, 2000, 2000);
  await points('reader1', imageId, eos, 16, 1800, 2000);
  await points('reader1', imageId, neutrophil, 2, 1800, 2100);
  await hpf('reader1', imageId, 6000, 2000);
  await points('reader1', imageId, eos, 3, 6000, 2000);
  await points('reader1', imageId, eos, 1, 10_000, 9000);
  await line('reader1', imageId, 'VILLUS_HEIGHT', 1000);
  await line('reader1', imageId, 'CRYPT_DEPTH', 400, 300);
  await hpf('reader2', imageId, 2000, 5000);
  await points('reader2', imageId, eos, 20, 1850, 5000);
  await line('reader2', imageId, 'VILLUS_HEIGHT', 600);
  await line('reader2', imageId, 'CRYPT_DEPTH', 400, 300);
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  otherStudy = (await createStudy(db)).id;
  bareStudy = (await createStudy(db)).id;
  await db
    .updateTable('studies')
    .set({ indications: ['EOSINOPHILIC_ESOPHAGITIS', 'CELIAC_DISEASE'], endpoints: JSON.stringify(ENDPOINTS) })
    .where('id', '=', studyId)
    .execute();
  eos = (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Eosinophil' })).id;
  neutrophil = (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Neutrophil' })).id;
  unit = (await createAnnotationClass(db, { studyId, type: 'MULTILINE', name: 'Unit 1' })).id;
  bareEos = (await createAnnotationClass(db, { studyId: bareStudy, type: 'POINT', name: 'Eosinophil' })).id;
  for (const key of ['reader1', 'reader2', 'reader3', 'stranger'])
    await user(key, {
      studyRoles: [
        { studyId, role: 'CR' },
        { studyId: bareStudy, role: 'CR' },
      ],
    });
  await user('noto', { studyRoles: [{ studyId, role: 'NOTO' }] });
  await user('isc', { studyRoles: [{ studyId, role: 'ISC' }] });
  await user('dm', { studyRoles: [{ studyId, role: 'DM' }] });
  await user('sponsor', { studyRoles: [{ studyId, role: 'SPONSOR' }] });
  await user('studyAdmin', { globalRoles: ['StudyAdmin'] });
  await user('pm', { studyRoles: [{ studyId, role: 'PM' }] });
  await user('labtech', { studyRoles: [{ studyId, role: 'LabTech' }] });
  await user('outsiderIsc', { studyRoles: [{ studyId: otherStudy, role: 'ISC' }] });
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('Mark as Scored freezes the reader’s values', () => {
  it('computes each endpoint from the reader’s own annotations, in the mark’s transaction, with its audit row', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await drawBoth(imageId);
    expect(await frozen(caseId)).toEqual({});

    const since = await lastAuditId();
    await markScored('reader1', caseId);
    // reader1 alone: peak 16 (HPF A; the neutrophils, HPF B's 3 and the orphan do not raise it) ≥ 15;
    // 500 µm / 200 µm = 2.5, not < 2.
    expect(await frozen(caseId)).toEqual({
      [id('reader1')]: { pec: [16, true, null], vh_cd: [2.5, false, null] },
    });
    const readAt = await t.database.db
      .selectFrom('case_readers')
      .select('read_at')
      .where('case_id', '=', caseId)
      .where('user_id', '=', id('reader1'))
      .executeTakeFirstOrThrow();
    const scoredAt = await t.database.db
      .selectFrom('read_outcomes')
      .select('scored_at')
      .where('case_id', '=', caseId)
      .executeTakeFirstOrThrow();
    expect(scoredAt.scored_at.toISOString()).toBe(readAt.read_at?.toISOString());
    expect(await audit(caseId, since)).toEqual([
      {
        action: 'CASE_READ_MARKED',
        field: 'read_at',
        old_value: null,
        new_value: JSON.stringify({ reader: users.reader1!.username, includeAiCounts: null }),
        reason: null,
        username: users.reader1!.username,
      },
      {
        action: 'READ_OUTCOMES_FROZEN',
        field: 'outcomes',
        old_value: null,
        new_value: JSON.stringify({ reader: users.reader1!.username, values: { pec: 16, vh_cd: 2.5 } }),
        reason: null,
        username: users.reader1!.username,
      },
    ]);

    await markScored('reader2', caseId);
    // reader2: peak 20; 300 / 200 = 1.5 < 2 (atrophy). reader1's rows are as they were.
    expect(await frozen(caseId)).toEqual({
      [id('reader1')]: { pec: [16, true, null], vh_cd: [2.5, false, null] },
      [id('reader2')]: { pec: [20, true, null], vh_cd: [1.5, true, null] },
    });
    expect((await audit(caseId, since)).map((r) => r.action)).toEqual([
      'CASE_READ_MARKED',
      'READ_OUTCOMES_FROZEN',
      'CASE_READ_MARKED',
      'READ_OUTCOMES_FROZEN',
      'CASE_STATUS_FORWARDED',
    ]);
  });

  it('an empty HPF counts 0; no HPF, no villus or crypt line: null with the reason', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2', 'reader3']);
    // reader1: an HPF holding only neutrophils, and an eosinophil outside it.
    await hpf('reader1', imageId, 2000, 2000);
    await points('reader1', imageId, neutrophil, 4, 1900, 2000);
    await points('reader1', imageId, eos, 1, 9000, 9000);
    await line('reader1', imageId, 'CRYPT_DEPTH', 400);
    // reader2: eosinophils but no HPF; a villus line but no crypt line.
    await points('reader2', imageId, eos, 30, 1000, 1000);
    await line('reader2', imageId, 'VILLUS_HEIGHT', 800);
    // reader3 draws nothing.
    for (const key of ['reader1', 'reader2', 'reader3']) await markScored(key, caseId);
    expect(await frozen(caseId)).toEqual({
      [id('reader1')]: { pec: [0, false, null], vh_cd: [null, null, ENDPOINT_MESSAGES.noVillusLine] },
      [id('reader2')]: {
        pec: [null, null, ENDPOINT_MESSAGES.noHpf],
        vh_cd: [null, null, ENDPOINT_MESSAGES.noCryptLine],
      },
      [id('reader3')]: {
        pec: [null, null, ENDPOINT_MESSAGES.noHpf],
        vh_cd: [null, null, ENDPOINT_MESSAGES.noVillusLine],
      },
    });
    const values = (await audit(caseId, 0, ['READ_OUTCOMES_FROZEN'])).map(
      (r) => JSON.parse(r.new_value ?? 'null') as unknown,
    );
    expect(values).toEqual([
      { reader: users.reader1!.username, values: { pec: 0, vh_cd: null } },
      { reader: users.reader2!.username, values: { pec: null, vh_cd: null } },
      { reader: users.reader3!.username, values: { pec: null, vh_cd: null } },
    ]);
  });

  it('counts the annotations of the case’s live images only, and never deleted ones', async () => {
    const { caseId, imageId } = await readCase(['reader1']);
    const db = t.database.db;
    const second = (
      await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 20_000, mpp: MPP })
    ).id;
    await hpf('reader1', imageId, 2000, 2000);
    await points('reader1', imageId, eos, 5, 1900, 2000);
    // A bigger HPF on the second image, then that image archived: it no longer counts.
    await hpf('reader1', second, 2000, 2000);
    await points('reader1', second, eos, 9, 1900, 2000);
    // A bigger one still, deleted with its points.
    const gone = await hpf('reader1', imageId, 6000, 6000);
    await points('reader1', imageId, eos, 12, 5900, 6000);
    const deleted = await as('reader1').request({
      method: 'DELETE',
      url: `/api/annotations/${gone}?deleteNested=true`,
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    await db.updateTable('images').set({ status: 'ARCHIVED' }).where('id', '=', second).execute();
    await markScored('reader1', caseId);
    expect((await frozen(caseId))[id('reader1')]?.pec).toEqual([5, false, null]);
  });

  it('imported AI objects count only when the reader’s read included AI counts', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await aiImport(imageId);
    // Each reader: an HPF with 4 eosinophils. The AI: an HPF with 17 of its own "Eosinophil" class
    // and 5 "Nuclei", and 2 AI eosinophils outside it.
    for (const [key, y] of [
      ['reader1', 2000],
      ['reader2', 5000],
    ] as const) {
      await hpf(key, imageId, 2000, y);
      await points(key, imageId, eos, 4, 1900, y);
    }
    await markScored('reader1', caseId, { includeAiCounts: true });
    await markScored('reader2', caseId, { includeAiCounts: false });
    expect(await frozen(caseId)).toEqual({
      // The AI's HPF is one of reader1's read: max(4, 17) = 17 ≥ 15.
      [id('reader1')]: { pec: [17, true, null], vh_cd: [null, null, ENDPOINT_MESSAGES.noVillusLine] },
      [id('reader2')]: { pec: [4, false, null], vh_cd: [null, null, ENDPOINT_MESSAGES.noVillusLine] },
    });
  });

  it('a study without endpoints freezes nothing and records no outcome event', async () => {
    const { caseId, imageId } = await readCase(['reader1'], bareStudy);
    await hpf('reader1', imageId, 2000, 2000);
    await points('reader1', imageId, bareEos, 20, 1900, 2000);
    const since = await lastAuditId();
    await markScored('reader1', caseId);
    expect(await frozen(caseId)).toEqual({});
    expect((await audit(caseId, since)).map((r) => r.action)).toEqual(['CASE_READ_MARKED', 'CASE_STATUS_FORWARDED']);
  });
});

/**
 * An .mld import of `imageId` as the import job leaves it (mldImport.ts; docs/MLD.md): a COMPLETE
 * file, AI classes of the study, annotations of source VisioPharm without a user, each point's
 * parent the AI HPF that holds it.
 */
async function aiImport(imageId: number) {
  const db = t.database.db;
  const mld = await db
    .insertInto('mld_files')
    .values({
      name: 'ai.mld',
      s3_key: `mld/test-${imageId}/ai.mld`,
      size_bytes: 4,
      image_id: imageId,
      study_id: studyId,
      status: 'COMPLETE',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const aiClass = async (name: string) =>
    (
      (await db
        .selectFrom('ai_classes')
        .select('id')
        .where('study_id', '=', studyId)
        .where('name', '=', name)
        .executeTakeFirst()) ??
      (await db.insertInto('ai_classes').values({ study_id: studyId, name }).returning('id').executeTakeFirstOrThrow())
    ).id;
  const aiEos = await aiClass('Eosinophil');
  const nuclei = await aiClass('Nuclei');
  const insert = (values: {
    type: 'HPF' | 'POINT';
    classId: number;
    x: number;
    y: number;
    parent?: number;
    radius?: number;
  }) =>
    db
      .insertInto('annotations')
      .values({
        image_id: imageId,
        annotation_type: values.type,
        ai_class_id: values.classId,
        geometry: JSON.stringify({ type: 'Point', coordinates: [values.x, values.y] }),
        radius: values.radius ?? null,
        parent_id: values.parent ?? null,
        source: 'VisioPharm',
        mld_file_id: mld.id,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const field = (await insert({ type: 'HPF', classId: aiEos, x: 8000, y: 8000, radius: 500 })).id;
  for (let i = 0; i < 17; i++)
    await insert({ type: 'POINT', classId: aiEos, x: 7900 + i * 10, y: 8000, parent: field });
  for (let i = 0; i < 5; i++)
    await insert({ type: 'POINT', classId: nuclei, x: 7900 + i * 10, y: 8100, parent: field });
  for (let i = 0; i < 2; i++) await insert({ type: 'POINT', classId: aiEos, x: 15_000 + i * 10, y: 3000 });
}

describe('undoing a read clears its values; marking again recomputes', () => {
  it('reopen one read: that reader’s values go (audited with the values and the reason), the other’s stay', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await drawBoth(imageId);
    await markScored('reader1', caseId);
    await markScored('reader2', caseId);

    const since = await lastAuditId();
    const reopened = await as('isc').request({
      method: 'PATCH',
      url: `/api/cases/${caseId}/reads/${id('reader1')}/reopen`,
      payload: { reasonForChange: 'HPF A was drawn on the wrong fragment' },
    });
    expect(reopened.statusCode, reopened.body).toBe(200);
    expect(await frozen(caseId)).toEqual({
      [id('reader2')]: { pec: [20, true, null], vh_cd: [1.5, true, null] },
    });
    expect(await audit(caseId, since, ['CASE_READ_REOPENED', 'READ_OUTCOMES_CLEARED'])).toEqual([
      expect.objectContaining({ action: 'CASE_READ_REOPENED' }),
      {
        action: 'READ_OUTCOMES_CLEARED',
        field: 'outcomes',
        old_value: JSON.stringify({ reader: users.reader1!.username, values: { pec: 16, vh_cd: 2.5 } }),
        new_value: null,
        reason: 'HPF A was drawn on the wrong fragment',
        username: users.isc!.username,
      },
    ]);

    // reader1's annotations are unlocked: two more eosinophils in HPF A, then the mark again.
    await points('reader1', imageId, eos, 2, 1800, 2050);
    await markScored('reader1', caseId);
    expect(await frozen(caseId)).toEqual({
      [id('reader2')]: { pec: [20, true, null], vh_cd: [1.5, true, null] },
      [id('reader1')]: { pec: [18, true, null], vh_cd: [2.5, false, null] },
    });
  });

  it('revert the case: every reader’s values go, each audited; the marks again recompute them', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await drawBoth(imageId);
    await markScored('reader1', caseId);
    await markScored('reader2', caseId);

    const since = await lastAuditId();
    const back = await as('isc').request({
      method: 'PATCH',
      url: `/api/cases/${caseId}/status/back`,
      payload: { value: 'PROCESSED', reason: 'The slide was rescanned' },
    });
    expect(back.statusCode, back.body).toBe(200);
    expect(await frozen(caseId)).toEqual({});
    const cleared = await audit(caseId, since, ['READ_OUTCOMES_CLEARED']);
    expect(cleared.map((r) => [JSON.parse(r.old_value ?? 'null') as unknown, r.new_value, r.reason])).toEqual([
      [{ reader: users.reader1!.username, values: { pec: 16, vh_cd: 2.5 } }, null, 'The slide was rescanned'],
      [{ reader: users.reader2!.username, values: { pec: 20, vh_cd: 1.5 } }, null, 'The slide was rescanned'],
    ]);

    // reader2 redraws the crypt line longer (300 µm: 300 / 300 = 1, still < 2), then both mark again.
    const lines = await t.database.db
      .selectFrom('annotations')
      .select('id')
      .where('image_id', '=', imageId)
      .where('user_id', '=', id('reader2'))
      .where('multiline_category', '=', 'CRYPT_DEPTH')
      .execute();
    for (const l of lines) {
      const response = await as('reader2').request({ method: 'DELETE', url: `/api/annotations/${l.id}` });
      expect(response.statusCode, response.body).toBe(200);
    }
    await line('reader2', imageId, 'CRYPT_DEPTH', 600, 300);
    await markScored('reader2', caseId);
    await markScored('reader1', caseId);
    expect(await frozen(caseId)).toEqual({
      [id('reader2')]: { pec: [20, true, null], vh_cd: [1, true, null] },
      [id('reader1')]: { pec: [16, true, null], vh_cd: [2.5, false, null] },
    });
  });

  it('a reader removed from the case takes their values with them; the others stay', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2', 'reader3']);
    await drawBoth(imageId);
    await markScored('reader1', caseId);
    await markScored('reader2', caseId);
    const since = await lastAuditId();
    const edited = await as('dm').request({
      method: 'PATCH',
      url: `/api/cases/${caseId}`,
      payload: { readers: { ids: [id('reader2'), id('reader3')], reasonForChange: 'Reader 1 left the study' } },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(await frozen(caseId)).toEqual({
      [id('reader2')]: { pec: [20, true, null], vh_cd: [1.5, true, null] },
    });
    expect(await audit(caseId, since, ['READ_OUTCOMES_CLEARED'])).toEqual([
      {
        action: 'READ_OUTCOMES_CLEARED',
        field: 'outcomes',
        old_value: JSON.stringify({ reader: users.reader1!.username, values: { pec: 16, vh_cd: 2.5 } }),
        new_value: null,
        reason: 'Reader 1 left the study',
        username: users.dm!.username,
      },
    ]);
  });
});

describe('GET /api/cases/{id}/outcomes', () => {
  const get = (session: Session | null, caseId: number) =>
    session
      ? session.request({ method: 'GET', url: `/api/cases/${caseId}/outcomes` })
      : t.app.inject({ method: 'GET', url: `/api/cases/${caseId}/outcomes` });

  async function outcomes(key: string, caseId: number): Promise<CaseOutcomesResponse> {
    const response = await get(as(key), caseId);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<CaseOutcomesResponse>();
  }

  const scoredAt = async (caseId: number, key: string): Promise<string> =>
    (await fx.readAt(caseId, key))!.toISOString();

  /** A reader's rows as the route answers them (written out: name 'Test {username}', the factory's). */
  const rowsOf = (key: string, at: string, values: Record<string, [number | null, boolean | null]>) =>
    Object.entries(values).map(([endpointKey, [value, positive]]) => ({
      readerId: id(key),
      readerName: `Test ${users[key]!.username}`,
      readerRole: 'PRIMARY',
      endpointKey,
      value,
      positive,
      reason: null,
      scoredAt: at,
    }));

  it('the roles that see results get every reader’s values, and the final values once every reader has marked', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await drawBoth(imageId);
    expect(await outcomes('isc', caseId)).toEqual({ success: true, outcomes: [], final: null });

    await markScored('reader1', caseId);
    const at1 = await scoredAt(caseId, 'reader1');
    // reader2 has not marked: no final values yet.
    expect(await outcomes('isc', caseId)).toEqual({
      success: true,
      outcomes: rowsOf('reader1', at1, { pec: [16, true], vh_cd: [2.5, false] }),
      final: null,
    });

    await markScored('reader2', caseId);
    const at2 = await scoredAt(caseId, 'reader2');
    const all = {
      success: true,
      outcomes: [
        ...rowsOf('reader1', at1, { pec: [16, true], vh_cd: [2.5, false] }),
        ...rowsOf('reader2', at2, { pec: [20, true], vh_cd: [1.5, true] }),
      ],
      // pec: (16 + 20) / 2 = 18, both ≥ 15; vh_cd: (2.5 + 1.5) / 2 = 2, the readings differ.
      final: [
        { endpointKey: 'pec', value: 18, positive: true, adjudicated: false },
        { endpointKey: 'vh_cd', value: 2, positive: null, adjudicated: false },
      ],
    };
    for (const key of ['isc', 'dm', 'sponsor', 'studyAdmin']) expect(await outcomes(key, caseId), key).toEqual(all);
  });

  it('a reader gets their own values only, never another reader’s nor the final values', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await drawBoth(imageId);
    expect(await outcomes('reader1', caseId)).toEqual({ success: true, outcomes: [], final: null });

    await markScored('reader1', caseId);
    const at1 = await scoredAt(caseId, 'reader1');
    const own1 = { success: true, outcomes: rowsOf('reader1', at1, { pec: [16, true], vh_cd: [2.5, false] }) };
    expect(await outcomes('reader1', caseId)).toEqual({ ...own1, final: null });
    // reader2, not yet marked, learns nothing of reader1's read.
    expect(await outcomes('reader2', caseId)).toEqual({ success: true, outcomes: [], final: null });

    await markScored('reader2', caseId);
    const at2 = await scoredAt(caseId, 'reader2');
    expect(await outcomes('reader1', caseId)).toEqual({ ...own1, final: null });
    const second = await get(as('reader2'), caseId);
    expect(second.json()).toEqual({
      success: true,
      outcomes: rowsOf('reader2', at2, { pec: [20, true], vh_cd: [1.5, true] }),
      final: null,
    });
    expect(second.body).not.toContain(users.reader1!.username);
  });

  it('a reader not assigned to the case, a user outside the study, a missing case: 404; logged out: 401', async () => {
    const { caseId } = await readCase(['reader1']);
    await markScored('reader1', caseId);
    for (const key of ['stranger', 'noto', 'outsiderIsc']) {
      const response = await get(as(key), caseId);
      expect(response.statusCode, key).toBe(404);
      expect(response.json(), key).toEqual({ success: false, message: CASE_MESSAGES.caseNotFound });
    }
    const missing = await get(as('isc'), 999_999);
    expect(missing.statusCode).toBe(404);
    expect((await get(null, caseId)).statusCode).toBe(401);
  });

  it('403 for a role without the permission (PM, LabTech)', async () => {
    const { caseId } = await readCase(['reader1']);
    await markScored('reader1', caseId);
    for (const key of ['pm', 'labtech']) {
      const response = await get(as(key), caseId);
      expect(response.statusCode, key).toBe(403);
      expect(response.json(), key).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
  });

  it('an endpoint a reader has no value of (added after the marks) has no final value', async () => {
    const { caseId, imageId } = await readCase(['reader1', 'reader2']);
    await drawBoth(imageId);
    await markScored('reader1', caseId);
    await markScored('reader2', caseId);
    const db = t.database.db;
    const added: EndpointDefinition = {
      key: 'total_eos',
      label: 'Eosinophils',
      kind: 'TOTAL_COUNT',
      className: 'Eosinophil',
    };
    await db
      .updateTable('studies')
      .set({ endpoints: JSON.stringify([...ENDPOINTS, added]) })
      .where('id', '=', studyId)
      .execute();
    try {
      const body = await outcomes('isc', caseId);
      expect(body.outcomes.map((o) => o.endpointKey)).toEqual(['pec', 'vh_cd', 'pec', 'vh_cd']);
      expect(body.final?.map((f) => [f.endpointKey, f.value, f.positive])).toEqual([
        ['pec', 18, true],
        ['vh_cd', 2, null],
        ['total_eos', null, null],
      ]);
    } finally {
      await db
        .updateTable('studies')
        .set({ endpoints: JSON.stringify(ENDPOINTS) })
        .where('id', '=', studyId)
        .execute();
    }
  });
});

describe('the audit trail export', () => {
  it('shows a reader’s values to the roles that may see read outcomes, and hides them from the others', () => {
    const values = { pec: 16, vh_cd: 2.5 };
    const frozenRow: AuditValueRow = {
      action: 'READ_OUTCOMES_FROZEN',
      entity_type: 'case',
      entity_id: '7',
      field: 'outcomes',
      old_value: null,
      new_value: JSON.stringify({ reader: 'ada', values }),
      reason: null,
    };
    const clearedRow = {
      ...frozenRow,
      action: 'READ_OUTCOMES_CLEARED',
      old_value: frozenRow.new_value,
      new_value: null,
    };
    const render = (role: RoleName, row: AuditValueRow) =>
      new AuditValueRenderer({
        fileNames: false,
        principal: { actions: new Set(ROLE_PERMISSIONS[role]) } as unknown as Principal,
      }).values(row);
    const hidden = JSON.stringify({ reader: 'ada', values: HIDDEN_VALUE_LABEL });
    for (const role of ['DM', 'ISC', 'StudyAdmin'] as const) {
      expect(render(role, frozenRow), role).toEqual([null, frozenRow.new_value]);
      expect(render(role, clearedRow), role).toEqual([frozenRow.new_value, null]);
    }
    // PM exports the audit trail (PDF) but does not see read outcomes.
    expect(render('PM', frozenRow)).toEqual([null, hidden]);
    expect(render('PM', clearedRow)).toEqual([hidden, null]);
  });
});
