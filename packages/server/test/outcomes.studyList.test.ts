import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENDPOINT_MESSAGES,
  MESSAGES,
  endpointKeyUnknown,
  roleByName,
  type EndpointDefinition,
  type OutcomePairsResponse,
  type StudyAgreementResponse,
  type StudyOutcomeCase,
  type StudyOutcomeListResponse,
} from '@lamina/domain';
import { createTestApp, type TestContext } from './testApp.js';
import { createAnnotationClass, createStudy } from './factories.js';
import { PEC, readFixtures } from './readFixtures.js';

/**
 * Issue 30, the study's Reads tab: GET /api/studies/{id}/outcomes (one page of the study's read
 * cases, each read's frozen values and the final ones) and GET /api/studies/{id}/outcomes/pairs (the
 * charts' value pairs). The reads are real: annotations drawn through the annotation routes, the
 * values frozen by Mark as Scored, the study's rule (a difference above 5) sending two cases to
 * adjudication and the adjudicator assigned and reading through their routes. Expected values are
 * worked out by hand from what each reader drew.
 */
let t: TestContext;
let studyId: number;
let otherStudy: number;
let eos: number;
const fx = readFixtures(() => t);
const { users, as, id, user, markScored, caseStatus } = fx;
/** Case ids by name: A agreed, B half read, C adjudicated, D pending adjudication, fillers F1…F8. */
const cases: Record<string, number> = {};
const subjects: Record<string, string> = {};

const ENDPOINTS: EndpointDefinition[] = [
  PEC,
  { key: 'total', label: 'Eosinophils', kind: 'TOTAL_COUNT', className: 'Eosinophil' },
];

/** A Processed case named `name` (Endo Procedure ID `RD-{name}`, Histo `H-{name}`) with one image, for the readers. */
async function readCase(name: string, readers: string[]): Promise<{ caseId: number; imageId: number }> {
  const read = await fx.readCase(studyId, readers, {
    procId: `RD-${name}`,
    histoProcedureId: `H-${name}`,
    visitId: `V-${name}`,
  });
  const row = await t.database.db
    .selectFrom('cases')
    .select('subject_id')
    .where('id', '=', read.caseId)
    .executeTakeFirstOrThrow();
  subjects[name] = row.subject_id ?? '';
  cases[name] = read.caseId;
  return read;
}

/** The reader's HPF at (x, y) holding `n` eosinophils (radius 550 px at MPP 0.5; points 10 px apart). */
const hpfWith = (key: string, imageId: number, n: number, x = 2000, y = 2000) =>
  fx.hpfWith(key, imageId, eos, n, { x, y });

async function assignAdjudicator(caseId: number) {
  const response = await fx.assignAdjudicator('isc', caseId, id('adjudicator'));
  expect(response.statusCode, response.body).toBe(200);
}

async function list(key: string, query = ''): Promise<StudyOutcomeListResponse> {
  const response = await as(key).request({ url: `/api/studies/${studyId}/outcomes${query}` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<StudyOutcomeListResponse>();
}

const procIds = (body: StudyOutcomeListResponse) => body.cases.map((c) => c.procId);
const named = (body: StudyOutcomeListResponse, name: string): StudyOutcomeCase => {
  const found = body.cases.find((c) => c.caseId === cases[name]);
  expect(found, `case ${name} listed`).toBeDefined();
  return found!;
};
const FILLERS = ['F1', 'F2', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8'];

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  otherStudy = (await createStudy(db)).id;
  await db
    .updateTable('studies')
    .set({
      indications: ['EOSINOPHILIC_ESOPHAGITIS'],
      endpoints: JSON.stringify(ENDPOINTS),
      adjudication: JSON.stringify({ endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 5 }),
    })
    .where('id', '=', studyId)
    .execute();
  eos = (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Eosinophil' })).id;
  // reader1 is made first: the smaller id, reader A of the pairs.
  for (const key of ['reader1', 'reader2', 'adjudicator']) await user(key, { studyRoles: [{ studyId, role: 'CR' }] });
  await user('noto', { studyRoles: [{ studyId, role: 'NOTO' }] });
  await user('isc', { studyRoles: [{ studyId, role: 'ISC' }] });
  await user('dm', { studyRoles: [{ studyId, role: 'DM' }] });
  await user('pm', { studyRoles: [{ studyId, role: 'PM' }] });
  await user('outsiderIsc', { studyRoles: [{ studyId: otherStudy, role: 'ISC' }] });
  // A deployment whose sponsors see results but not subjects and visits.
  await db
    .deleteFrom('role_permissions')
    .where('role_id', '=', roleByName('SPONSOR').id)
    .where('permission', 'in', ['AP_CaseData_ViewSubjectID', 'AP_CaseData_ViewVisitID'])
    .execute();
  await user('sponsor', { studyRoles: [{ studyId, role: 'SPONSOR' }] });

  // A: both readers agree it is positive (16 and 20), the case completes.
  const a = await readCase('A', ['reader1', 'reader2']);
  await hpfWith('reader1', a.imageId, 16);
  await hpfWith('reader2', a.imageId, 20, 2000, 6000);
  await markScored('reader1', a.caseId);
  await markScored('reader2', a.caseId);
  // B: reader1 marked without drawing an HPF (pec null with its reason, total 0); reader2 has not.
  const b = await readCase('B', ['reader1', 'reader2']);
  await markScored('reader1', b.caseId);
  // C: 10 and 30, adjudicated at 25 below.
  const c = await readCase('C', ['reader1', 'reader2']);
  await hpfWith('reader1', c.imageId, 10);
  await hpfWith('reader2', c.imageId, 30, 2000, 6000);
  await markScored('reader1', c.caseId);
  await markScored('reader2', c.caseId);
  // D: 12 and 18, disagreeing on the reading; waits for its adjudicator.
  const d = await readCase('D', ['reader1', 'reader2']);
  await hpfWith('reader1', d.imageId, 12);
  await hpfWith('reader2', d.imageId, 18, 2000, 6000);
  await markScored('reader1', d.caseId);
  await markScored('reader2', d.caseId);
  // E: assigned, never marked — not a read case. X: read, then archived — left out.
  await readCase('E', ['reader1', 'reader2']);
  const x = await readCase('X', ['reader1', 'reader2']);
  await hpfWith('reader1', x.imageId, 100);
  await hpfWith('reader2', x.imageId, 1, 2000, 6000);
  await markScored('reader1', x.caseId);
  await markScored('reader2', x.caseId);
  // Fillers for paging: reader1 marks each without drawing (one read of two).
  for (const name of FILLERS) await markScored('reader1', (await readCase(name, ['reader1', 'reader2'])).caseId);

  // C and D went to adjudication (their readers differ by more than 5): C's adjudicator reads it
  // (25) after everything else was marked; D's is assigned and has not marked it yet.
  expect(await caseStatus(c.caseId)).toBe('PENDING_ADJUDICATION');
  expect(await caseStatus(d.caseId)).toBe('PENDING_ADJUDICATION');
  expect(await caseStatus(a.caseId)).toBe('COMPLETED');
  await assignAdjudicator(c.caseId);
  await assignAdjudicator(d.caseId);
  await hpfWith('adjudicator', c.imageId, 25, 6000, 2000);
  await markScored('adjudicator', c.caseId);
  expect(await caseStatus(c.caseId)).toBe('COMPLETED');
  await db.updateTable('cases').set({ status: 'ARCHIVED' }).where('id', '=', x.caseId).execute();
}, 120_000);

afterAll(async () => {
  await t.close();
});

describe('GET /api/studies/{id}/outcomes', () => {
  it('lists the read cases not archived: at least one frozen value, or waiting for adjudication', async () => {
    const body = await list('isc', '?pageSize=100&sort=procId');
    expect(body.total).toBe(4 + FILLERS.length);
    expect(procIds(body)).toEqual(['RD-A', 'RD-B', 'RD-C', 'RD-D', ...FILLERS.map((f) => `RD-${f}`)]);
  });

  it('gives each read’s values side by side and the final values from the one rule', async () => {
    const body = await list('isc', '?pageSize=100&sort=procId');
    const a = named(body, 'A');
    expect(a).toMatchObject({
      procId: 'RD-A',
      histoProcedureId: 'H-A',
      subjectId: subjects.A,
      visitId: 'V-A',
      status: 'COMPLETED',
      adjudicationPending: false,
    });
    expect(
      a.readers.map((r) => [r.readerId, r.readerRole, r.values.map((v) => [v.endpointKey, v.value, v.positive])]),
    ).toEqual([
      [
        id('reader1'),
        'PRIMARY',
        [
          ['pec', 16, true],
          ['total', 16, null],
        ],
      ],
      [
        id('reader2'),
        'PRIMARY',
        [
          ['pec', 20, true],
          ['total', 20, null],
        ],
      ],
    ]);
    expect(a.readers[0]?.readerName).toBe(`Test ${users.reader1!.username}`);
    // The readers' mean, and their common reading where there is a threshold.
    expect(a.final).toEqual([
      { endpointKey: 'pec', value: 18, positive: true, adjudicated: false },
      { endpointKey: 'total', value: 18, positive: null, adjudicated: false },
    ]);

    // B: reader1's null value keeps its reason; reader2 has not marked: no values, no final yet.
    const b = named(body, 'B');
    expect(b.status).toBe('PROCESSED');
    expect(b.readers.map((r) => r.values.map((v) => [v.endpointKey, v.value, v.reason]))).toEqual([
      [
        ['pec', null, ENDPOINT_MESSAGES.noHpf],
        ['total', 0, null],
      ],
      [],
    ]);
    expect(b.final).toBeNull();
    expect(b.adjudicationPending).toBe(false);
  });

  it('an adjudicated case: the adjudicator’s values after the primary reads, and final from them', async () => {
    const c = named(await list('dm', '?pageSize=100'), 'C');
    expect(c.readers.map((r) => [r.readerId, r.readerRole])).toEqual([
      [id('reader1'), 'PRIMARY'],
      [id('reader2'), 'PRIMARY'],
      [id('adjudicator'), 'ADJUDICATOR'],
    ]);
    expect(c.readers[2]?.values.map((v) => v.value)).toEqual([25, 25]);
    expect(c.final).toEqual([
      { endpointKey: 'pec', value: 25, positive: true, adjudicated: true },
      { endpointKey: 'total', value: 25, positive: null, adjudicated: true },
    ]);
    expect(c.adjudicationPending).toBe(false);
  });

  it('a case pending adjudication: flagged, its adjudicator without values, no final values yet', async () => {
    const d = named(await list('dm', '?pageSize=100'), 'D');
    expect(d.status).toBe('PENDING_ADJUDICATION');
    expect(d.adjudicationPending).toBe(true);
    expect(d.final).toBeNull();
    expect(d.readers.map((r) => [r.readerRole, r.values.length])).toEqual([
      ['PRIMARY', 2],
      ['PRIMARY', 2],
      ['ADJUDICATOR', 0],
    ]);
  });

  it('filters by adjudication and by Endo or Histo Procedure ID', async () => {
    expect(procIds(await list('isc', '?adjudicated=yes'))).toEqual(['RD-C']);
    expect(procIds(await list('isc', '?adjudicated=pending'))).toEqual(['RD-D']);
    const none = await list('isc', '?adjudicated=no&pageSize=100&sort=procId');
    expect(procIds(none)).toEqual(['RD-A', 'RD-B', ...FILLERS.map((f) => `RD-${f}`)]);
    expect(none.total).toBe(2 + FILLERS.length);
    expect(procIds(await list('isc', '?procId=rd-a'))).toEqual(['RD-A']);
    expect(procIds(await list('isc', '?procId=H-F3'))).toEqual(['RD-F3']);
    expect(await list('isc', '?procId=nothing-like-it')).toEqual({ success: true, total: 0, cases: [] });
  });

  it('pages and sorts in SQL: the total of every page, the latest read first by default', async () => {
    const first = await list('isc', '?page=1&pageSize=10&sort=procId');
    const second = await list('isc', '?page=2&pageSize=10&sort=procId');
    expect(first.total).toBe(12);
    expect(second.total).toBe(12);
    expect(procIds(first)).toHaveLength(10);
    expect([...procIds(first), ...procIds(second)]).toEqual([
      'RD-A',
      'RD-B',
      'RD-C',
      'RD-D',
      ...FILLERS.map((f) => `RD-${f}`),
    ]);
    // Past the last page: no rows, the total still told.
    expect(await list('isc', '?page=3&pageSize=10')).toEqual({ success: true, total: 12, cases: [] });

    const descending = await list('isc', '?pageSize=100&sort=-procId');
    expect(procIds(descending)).toEqual([...FILLERS.map((f) => `RD-${f}`).reverse(), 'RD-D', 'RD-C', 'RD-B', 'RD-A']);
    const byStatus = await list('isc', '?pageSize=100&sort=status');
    const statuses = byStatus.cases.map((c) => c.status);
    expect(statuses).toEqual([...statuses].sort());

    // Default: the case whose last value was frozen latest first (the adjudicated case C's values
    // were written last, then the fillers in the order they were marked).
    const latest = await list('isc', '?pageSize=100');
    const lastScored = (c: StudyOutcomeCase) =>
      Math.max(...c.readers.flatMap((r) => r.values.map((v) => Date.parse(v.scoredAt))));
    const times = latest.cases.map(lastScored);
    expect(times).toEqual([...times].sort((p, q) => q - p));
    expect(procIds(latest)[0]).toBe('RD-C');
  });

  it('hides subject and visit from a role without their view permissions, and never sorts by them', async () => {
    const sponsor = await list('sponsor', '?pageSize=100&sort=procId');
    expect(sponsor.total).toBe(12);
    expect(sponsor.cases.every((c) => c.subjectId === null && c.visitId === null)).toBe(true);
    // Values and final ones are the sponsor's to see.
    expect(named(sponsor, 'A').final?.[0]?.value).toBe(18);
    // Sorting by a hidden field falls back to the latest read first (the order would tell).
    expect(procIds(await list('sponsor', '?pageSize=100&sort=visitId'))).toEqual(
      procIds(await list('sponsor', '?pageSize=100')),
    );
    const isc = await list('isc', '?pageSize=100&sort=-visitId');
    expect(procIds(isc)).toEqual([...FILLERS.map((f) => `RD-${f}`).reverse(), 'RD-D', 'RD-C', 'RD-B', 'RD-A']);
    expect(named(isc, 'A').subjectId).toBe(subjects.A);
  });

  it('401 logged out; 403 for readers and roles without the permission; 404 for a study out of scope', async () => {
    const url = `/api/studies/${studyId}/outcomes`;
    const anonymous = await t.app.inject({ url });
    expect(anonymous.statusCode).toBe(401);
    for (const key of ['reader1', 'adjudicator', 'noto', 'pm']) {
      const response = await as(key).request({ url });
      expect(response.statusCode, key).toBe(403);
      expect(response.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
    }
    const outside = await as('outsiderIsc').request({ url });
    expect(outside.statusCode).toBe(404);
    expect(outside.json()).toEqual({ success: false, message: MESSAGES.studyNotFound });
    const bad = await as('isc').request({ url: `${url}?adjudicated=maybe` });
    expect(bad.statusCode).toBe(400);
  });
});

describe('GET /api/studies/{id}/outcomes/pairs', () => {
  it('the two primary readers’ values of the cases in the Bland–Altman figures, reader A the smaller id', async () => {
    const response = await as('isc').request({ url: `/api/studies/${studyId}/outcomes/pairs?endpointKey=pec` });
    expect(response.statusCode, response.body).toBe(200);
    const { pairs } = response.json<OutcomePairsResponse>();
    // A, C, D read by both (cases in id order); B and the fillers once; X archived.
    expect(pairs).toEqual([
      { caseId: cases.A, a: 16, b: 20 },
      { caseId: cases.C, a: 10, b: 30 },
      { caseId: cases.D, a: 12, b: 18 },
    ]);
    // The same values as the agreement's figures: its mean difference is theirs.
    const agreement = (
      await as('isc').request({ url: `/api/studies/${studyId}/agreement` })
    ).json<StudyAgreementResponse>();
    const pec = agreement.endpoints.find((e) => e.endpointKey === 'pec');
    expect(pec?.valuedCases).toBe(pairs.length);
    expect(pec?.meanDifference).toBeCloseTo(pairs.reduce((s, p) => s + p.a - p.b, 0) / pairs.length, 12);
  });

  it('400 for a key that is none of the study’s endpoints; readers 403; out of scope 404', async () => {
    const url = `/api/studies/${studyId}/outcomes/pairs`;
    const unknown = await as('isc').request({ url: `${url}?endpointKey=vh_cd` });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({ success: false, message: endpointKeyUnknown('vh_cd', ['pec', 'total']) });
    expect((await t.app.inject({ url: `${url}?endpointKey=pec` })).statusCode).toBe(401);
    for (const key of ['reader2', 'pm']) {
      const refused = await as(key).request({ url: `${url}?endpointKey=pec` });
      expect(refused.statusCode, key).toBe(403);
    }
    expect((await as('outsiderIsc').request({ url: `${url}?endpointKey=pec` })).statusCode).toBe(404);
  });
});
