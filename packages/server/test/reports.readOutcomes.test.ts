// engine: postgres — the read-outcomes report's cursor rows carry JSON (float8 values, epoch times)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CSV_BOM,
  ENDPOINT_MESSAGES,
  MESSAGES,
  REPORT_MESSAGES,
  SIGNATURE_MEANINGS,
  ddMmmYyyy,
  roleByName,
  type EndpointDefinition,
} from '@lamina/domain';
import { createTestApp, type Session, type TestContext } from './testApp.js';
import { createAnnotationClass, createStudy, PASSWORD } from './factories.js';
import { readFixtures } from './readFixtures.js';
import { parseCsv } from './support/csv.js';

/**
 * The read-outcomes report (issue 30; docs/REPORTS.md): each reader's values frozen by real Mark as
 * Scored calls on annotations drawn through the real routes, then the case's final values, every
 * column of both kinds of row checked against values worked out by hand from what was drawn; who
 * may download it (the roles that see every reader's values, in their studies; never a reader);
 * Subject and Visit by permission; the date and user filters; the export's audit row.
 */
let t: TestContext;
let study: { id: number; name: string };
let other: { id: number; name: string };
const fx = readFixtures(() => t);
const { users, as, id, user, markScored, lastAuditId } = fx;
const name = (key: string) => users[key]!.username;
let eos: number;
let unit: number;
const cases: Record<string, number> = {};

const SPEC = REPORT_MESSAGES.unableToFetchReport('read-outcomes');
const ENDPOINTS: EndpointDefinition[] = [
  {
    key: 'pec',
    label: 'Peak eos/HPF',
    kind: 'PEAK_COUNT_PER_HPF',
    className: 'Eosinophil',
    threshold: 15,
    positiveWhen: 'GTE',
  },
  // A label that starts like a formula: the report's cells go through the CSV writer's guard.
  { key: 'mean_eos', label: '+Mean eos/HPF', kind: 'MEAN_COUNT_PER_HPF', className: 'Eosinophil' },
  { key: 'vh_cd', label: 'Vh:Cd', kind: 'VH_CD_RATIO', threshold: 2, positiveWhen: 'LT' },
];
const HEADER = [
  'Study',
  'Endo Procedure ID',
  'Histo Procedure ID',
  'Subject ID',
  'Visit ID',
  'Reader',
  'Reader Role',
  'Endpoint',
  'Value',
  'Unit',
  'Positive',
  'Scored At (UTC)',
  'Signature Meaning',
  'Final',
  'Adjudicated',
  'Endpoint Key',
  'Reason (No Value)',
];
/** Endpoint, Value … for each endpoint key: its label cell and unit as the file writes them. */
const LABEL: Record<string, [string, string]> = {
  pec: ['Peak eos/HPF', 'cells/HPF'],
  mean_eos: ["'+Mean eos/HPF", 'cells/HPF'],
  vh_cd: ['Vh:Cd', ''],
};

/** A Processed case with one processed image and its readers, its IDs set. */
async function readCase(proc: string, readers: string[]): Promise<{ caseId: number; imageId: number }> {
  const read = await fx.readCase(study.id, readers, {
    procId: proc,
    histoProcedureId: `H-${proc}`,
    subjectId: `S-${proc}`,
    visitId: `V-${proc}`,
  });
  cases[proc] = read.caseId;
  return read;
}

/** An HPF centred at (x, 2000) holding `n` eosinophils (radius 550 px at MPP 0.5; the points within 100 px). */
const hpfWith = (key: string, imageId: number, x: number, n: number) =>
  fx.hpfWith(key, imageId, eos, n, { x, y: 2000, spread: 100 });

/** A celiac line of `px` pixels (µm = px × MPP). */
const line = (key: string, imageId: number, category: 'VILLUS_HEIGHT' | 'CRYPT_DEPTH', px: number, x: number) =>
  fx.line(key, imageId, unit, category, px, x);

/** When each reader of a case marked it (ISO 8601, UTC). */
async function readAt(caseId: number): Promise<Record<number, string>> {
  const rows = await t.database.db
    .selectFrom('case_readers')
    .select(['user_id', 'read_at'])
    .where('case_id', '=', caseId)
    .execute();
  return Object.fromEntries(rows.map((r) => [r.user_id, r.read_at?.toISOString() ?? '']));
}

async function download(session: Session, query = '') {
  return session.request({ method: 'GET', url: `/api/report/read-outcomes?studyId=${study.id}${query}` });
}

function csvOf(body: string): string[][] {
  expect(body.startsWith(CSV_BOM)).toBe(true);
  return parseCsv(body.slice(1));
}

const reportAudits = (since: number) =>
  fx
    .auditRowsAfter(since, { actions: ['REPORT_EXPORTED'] })
    .select(['action', 'entity_type', 'entity_id', 'field', 'username'])
    .execute();

/** The report's rows as DM gets them, computed once the reads below are made. */
let expected: string[][];

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  study = await createStudy(db, `Outcomes Report ${Date.now()}`);
  other = await createStudy(db);
  await db
    .updateTable('studies')
    .set({ indications: ['EOSINOPHILIC_ESOPHAGITIS', 'CELIAC_DISEASE'], endpoints: JSON.stringify(ENDPOINTS) })
    .where('id', '=', study.id)
    .execute();
  eos = (await createAnnotationClass(db, { studyId: study.id, type: 'POINT', name: 'Eosinophil' })).id;
  unit = (await createAnnotationClass(db, { studyId: study.id, type: 'MULTILINE', name: 'Unit 1' })).id;
  // A deployment whose sponsors do not see subject and visit: the report leaves both columns out for them.
  await db
    .deleteFrom('role_permissions')
    .where('role_id', '=', roleByName('SPONSOR').id)
    .where('permission', 'in', ['AP_CaseData_ViewSubjectID', 'AP_CaseData_ViewVisitID'])
    .execute();
  // A deployment that (wrongly) gives the NOTO reader the outcome permission: still refused, blinded.
  await db
    .insertInto('role_permissions')
    .values({ role_id: roleByName('NOTO').id, permission: 'S_Main_ViewReadOutcomes' })
    .execute();
  for (const key of ['r1', 'r2', 'r3']) await user(key, { studyRoles: [{ studyId: study.id, role: 'CR' }] });
  await user('noto', { studyRoles: [{ studyId: study.id, role: 'NOTO' }] });
  await user('dm', { studyRoles: [{ studyId: study.id, role: 'DM' }] });
  await user('isc', { studyRoles: [{ studyId: study.id, role: 'ISC' }] });
  await user('sponsor', { studyRoles: [{ studyId: study.id, role: 'SPONSOR' }] });
  await user('studyAdmin', { globalRoles: ['StudyAdmin'] });
  await user('pm', { studyRoles: [{ studyId: study.id, role: 'PM' }] });
  await user('uploader', { studyRoles: [{ studyId: study.id, role: 'UPLOADER' }] });
  await user('outsiderIsc', { studyRoles: [{ studyId: other.id, role: 'ISC' }] });

  // ENDO-B, read and agreed on by r1 and r2:
  // r1: HPFs of 16, 3 and 1 eosinophils → peak 16 (≥ 15: positive), mean 20/3; no line → Vh:Cd null.
  // r2: one HPF of 20 → peak 20, mean 20; villus 600 px = 300 µm, crypt 400 px = 200 µm → 1.5 (< 2).
  const b = await readCase('ENDO-B', ['r1', 'r2']);
  await hpfWith('r1', b.imageId, 2000, 16);
  await hpfWith('r1', b.imageId, 6000, 3);
  await hpfWith('r1', b.imageId, 10_000, 1);
  await hpfWith('r2', b.imageId, 2000, 20);
  await line('r2', b.imageId, 'VILLUS_HEIGHT', 600, 100);
  await line('r2', b.imageId, 'CRYPT_DEPTH', 400, 300);
  await markScored('r1', b.caseId);
  await markScored('r2', b.caseId);

  // ENDO-A (first in the file: ordered by Endo Procedure ID), adjudicated: r1 peak 16, r2 peak 3.
  const a = await readCase('ENDO-A', ['r2', 'r1']);
  await hpfWith('r1', a.imageId, 2000, 16);
  await hpfWith('r2', a.imageId, 2000, 3);
  await markScored('r2', a.caseId);
  await markScored('r1', a.caseId);
  // The adjudicator is written here, not through the API: assigning one (PATCH …/adjudicator) is
  // being built at the same time. Their case_readers row and frozen rows are what that read leaves.
  const adjudicatedAt = new Date(Date.now() + 1000);
  await db
    .insertInto('case_readers')
    .values({ case_id: a.caseId, user_id: id('r3'), read_at: adjudicatedAt, role: 'ADJUDICATOR' })
    .execute();
  await db
    .insertInto('read_outcomes')
    .values(
      [
        { key: 'pec', value: 14, positive: false, reason: null },
        { key: 'mean_eos', value: 14, positive: null, reason: null },
        { key: 'vh_cd', value: null, positive: null, reason: ENDPOINT_MESSAGES.noVillusLine },
      ].map((v) => ({
        case_id: a.caseId,
        reader_id: id('r3'),
        endpoint_key: v.key,
        value: v.value,
        positive: v.positive,
        reason: v.reason,
        reader_role: 'ADJUDICATOR',
        scored_at: adjudicatedAt,
      })),
    )
    .execute();

  // ENDO-C, both read (nothing drawn: no HPF), then Pending Adjudication — set here, the rule that
  // moves a case there is being built at the same time: reader rows, no final rows.
  const c = await readCase('ENDO-C', ['r1', 'r2']);
  await markScored('r1', c.caseId);
  await markScored('r2', c.caseId);
  await db.updateTable('cases').set({ status: 'PENDING_ADJUDICATION' }).where('id', '=', c.caseId).execute();

  // ENDO-D: only r1 has read it — their rows, no final rows.
  const d = await readCase('ENDO-D', ['r1', 'r2']);
  await hpfWith('r1', d.imageId, 2000, 2);
  await markScored('r1', d.caseId);

  // ENDO-0 archived and ENDO-1 invalid after their reads: left out (they would sort first).
  for (const [proc, status] of [
    ['ENDO-0', 'ARCHIVED'],
    ['ENDO-1', 'INVALID'],
  ] as const) {
    const x = await readCase(proc, ['r1']);
    await markScored('r1', x.caseId);
    await db.updateTable('cases').set({ status }).where('id', '=', x.caseId).execute();
  }
  // ENDO-E, assigned and not read: no row.
  await readCase('ENDO-E', ['r1']);

  const at = {
    A: await readAt(a.caseId),
    B: await readAt(b.caseId),
    C: await readAt(c.caseId),
    D: await readAt(d.caseId),
  };
  const ids = (proc: string) => [study.name, proc, `H-${proc}`, `S-${proc}`, `V-${proc}`];
  const reader = (
    proc: string,
    key: string,
    role: string,
    endpoint: string,
    value: string,
    positive: string,
    scoredAt: string,
    reason = '',
  ) => [
    ...ids(proc),
    name(key),
    role,
    LABEL[endpoint]![0],
    value,
    LABEL[endpoint]![1],
    positive,
    scoredAt,
    '',
    'No',
    '',
    endpoint,
    reason,
  ];
  const final = (
    proc: string,
    endpoint: string,
    value: string,
    positive: string,
    decidedAt: string,
    adjudicated: string,
  ) => [
    ...ids(proc),
    '',
    '',
    LABEL[endpoint]![0],
    value,
    LABEL[endpoint]![1],
    positive,
    decidedAt,
    '',
    'Yes',
    adjudicated,
    endpoint,
    '',
  ];
  const noHpf = ENDPOINT_MESSAGES.noHpf;
  const noVillus = ENDPOINT_MESSAGES.noVillusLine;
  const last = (times: Record<number, string>) => Object.values(times).sort().at(-1)!;
  expected = [
    // ENDO-A: r2 marked first, then r1; the adjudicator's rows; the final is the adjudicator's.
    reader('ENDO-A', 'r2', 'PRIMARY', 'pec', '3', 'No', at.A[id('r2')]!),
    reader('ENDO-A', 'r2', 'PRIMARY', 'mean_eos', '3', '', at.A[id('r2')]!),
    reader('ENDO-A', 'r2', 'PRIMARY', 'vh_cd', '', '', at.A[id('r2')]!, noVillus),
    reader('ENDO-A', 'r1', 'PRIMARY', 'pec', '16', 'Yes', at.A[id('r1')]!),
    reader('ENDO-A', 'r1', 'PRIMARY', 'mean_eos', '16', '', at.A[id('r1')]!),
    reader('ENDO-A', 'r1', 'PRIMARY', 'vh_cd', '', '', at.A[id('r1')]!, noVillus),
    reader('ENDO-A', 'r3', 'ADJUDICATOR', 'pec', '14', 'No', adjudicatedAt.toISOString()),
    reader('ENDO-A', 'r3', 'ADJUDICATOR', 'mean_eos', '14', '', adjudicatedAt.toISOString()),
    reader('ENDO-A', 'r3', 'ADJUDICATOR', 'vh_cd', '', '', adjudicatedAt.toISOString(), noVillus),
    final('ENDO-A', 'pec', '14', 'No', adjudicatedAt.toISOString(), 'Yes'),
    final('ENDO-A', 'mean_eos', '14', '', adjudicatedAt.toISOString(), 'Yes'),
    final('ENDO-A', 'vh_cd', '', '', adjudicatedAt.toISOString(), 'Yes'),
    // ENDO-B: the readers' mean and common reading, unrounded (20/3 as JavaScript prints it).
    reader('ENDO-B', 'r1', 'PRIMARY', 'pec', '16', 'Yes', at.B[id('r1')]!),
    reader('ENDO-B', 'r1', 'PRIMARY', 'mean_eos', String(20 / 3), '', at.B[id('r1')]!),
    reader('ENDO-B', 'r1', 'PRIMARY', 'vh_cd', '', '', at.B[id('r1')]!, noVillus),
    reader('ENDO-B', 'r2', 'PRIMARY', 'pec', '20', 'Yes', at.B[id('r2')]!),
    reader('ENDO-B', 'r2', 'PRIMARY', 'mean_eos', '20', '', at.B[id('r2')]!),
    reader('ENDO-B', 'r2', 'PRIMARY', 'vh_cd', '1.5', 'Yes', at.B[id('r2')]!),
    final('ENDO-B', 'pec', '18', 'Yes', last(at.B), 'No'),
    final('ENDO-B', 'mean_eos', String((20 / 3 + 20) / 2), '', last(at.B), 'No'),
    // r1 has no Vh:Cd: no final value, no common reading.
    final('ENDO-B', 'vh_cd', '', '', last(at.B), 'No'),
    // ENDO-C: Pending Adjudication — the readers' rows only.
    reader('ENDO-C', 'r1', 'PRIMARY', 'pec', '', '', at.C[id('r1')]!, noHpf),
    reader('ENDO-C', 'r1', 'PRIMARY', 'mean_eos', '', '', at.C[id('r1')]!, noHpf),
    reader('ENDO-C', 'r1', 'PRIMARY', 'vh_cd', '', '', at.C[id('r1')]!, noVillus),
    reader('ENDO-C', 'r2', 'PRIMARY', 'pec', '', '', at.C[id('r2')]!, noHpf),
    reader('ENDO-C', 'r2', 'PRIMARY', 'mean_eos', '', '', at.C[id('r2')]!, noHpf),
    reader('ENDO-C', 'r2', 'PRIMARY', 'vh_cd', '', '', at.C[id('r2')]!, noVillus),
    // ENDO-D: one of two readers — no final yet.
    reader('ENDO-D', 'r1', 'PRIMARY', 'pec', '2', 'No', at.D[id('r1')]!),
    reader('ENDO-D', 'r1', 'PRIMARY', 'mean_eos', '2', '', at.D[id('r1')]!),
    reader('ENDO-D', 'r1', 'PRIMARY', 'vh_cd', '', '', at.D[id('r1')]!, noVillus),
  ];
}, 240_000);

afterAll(async () => {
  await t?.close();
});

describe('GET /api/report/read-outcomes: the rows', () => {
  it('each reader’s frozen values in the order they were frozen, then the final ones, every column', async () => {
    const since = await lastAuditId();
    const response = await download(as('dm'));
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="${study.name.replace(/\s/g, '')}_read-outcomes_${ddMmmYyyy(new Date())}.csv"`,
    );
    const [header, ...rows] = csvOf(response.body);
    expect(header).toEqual(HEADER);
    expect(rows).toEqual(expected);
    expect(await reportAudits(since)).toEqual([
      {
        action: 'REPORT_EXPORTED',
        entity_type: 'study',
        entity_id: String(study.id),
        field: 'read-outcomes',
        username: name('dm'),
      },
    ]);
  });

  it('the same for ISC, a study admin and through /api/report/{studyId}/read-outcomes', async () => {
    for (const key of ['isc', 'studyAdmin']) expect(csvOf((await download(as(key))).body).slice(1)).toEqual(expected);
    const response = await as('dm').request({ method: 'GET', url: `/api/report/${study.id}/read-outcomes` });
    expect(csvOf(response.body).slice(1)).toEqual(expected);
  });

  it('Subject ID and Visit ID only for who may see them (here, not the sponsor)', async () => {
    const response = await download(as('sponsor'));
    expect(response.statusCode, response.body).toBe(200);
    const [header, ...rows] = csvOf(response.body);
    expect(header).toEqual(HEADER.filter((h) => h !== 'Subject ID' && h !== 'Visit ID'));
    expect(rows).toEqual(expected.map((r) => [...r.slice(0, 3), ...r.slice(5)]));
    expect(response.body).not.toContain('S-ENDO');
    expect(response.body).not.toContain('V-ENDO');
  });

  it('the date range keeps the rows scored in it; the user filter a reader’s rows and the finals of their cases', async () => {
    const today = ddMmmYyyy(new Date());
    const yesterday = ddMmmYyyy(new Date(Date.now() - 86_400_000));
    const inRange = await download(as('dm'), `&startDate=${today}&endDate=${today}&tz=UTC`);
    // The adjudicator's read is a second ahead of now: near midnight UTC it could fall tomorrow.
    const tomorrow = new Date(Date.now() + 1000).toISOString().slice(0, 10) !== new Date().toISOString().slice(0, 10);
    if (!tomorrow) expect(csvOf(inRange.body).slice(1)).toEqual(expected);
    const before = await download(as('dm'), `&endDate=${yesterday}&tz=UTC`);
    expect(csvOf(before.body)).toEqual([HEADER]);

    const r2 = csvOf((await download(as('dm'), `&userId=${id('r2')}`)).body).slice(1);
    expect(r2).toEqual(expected.filter((r) => r[5] === name('r2') || (r[13] === 'Yes' && r[1] !== 'ENDO-D')));
    const r3 = csvOf((await download(as('dm'), `&userId=${id('r3')}`)).body).slice(1);
    expect(r3).toEqual(expected.filter((r) => r[1] === 'ENDO-A' && (r[5] === name('r3') || r[13] === 'Yes')));
  });

  it('Signature Meaning: the meaning of the read’s electronic signature where the study signs its reads', async () => {
    const db = t.database.db;
    const signing = await createStudy(db, `Signed Outcomes ${Date.now()}`);
    await db
      .updateTable('studies')
      .set({
        indications: ['EOSINOPHILIC_ESOPHAGITIS', 'CELIAC_DISEASE'],
        endpoints: JSON.stringify(ENDPOINTS),
        signatures: true,
      })
      .where('id', '=', signing.id)
      .execute();
    await createAnnotationClass(db, { studyId: signing.id, type: 'POINT', name: 'Eosinophil' });
    await user('signer', { studyRoles: [{ studyId: signing.id, role: 'CR' }] });
    const { caseId } = await fx.readCase(signing.id, ['signer']);
    await markScored('signer', caseId, { signaturePassword: PASSWORD });
    const response = await as('studyAdmin').request({
      method: 'GET',
      url: `/api/report/read-outcomes?studyId=${signing.id}`,
    });
    const [header, ...rows] = csvOf(response.body);
    const column = header!.indexOf('Signature Meaning');
    const readerRows = rows.filter((r) => r[header!.indexOf('Final')] === 'No');
    expect(readerRows.length).toBe(ENDPOINTS.length);
    expect(readerRows.map((r) => r[column])).toEqual(ENDPOINTS.map(() => SIGNATURE_MEANINGS.READ));
    // The final rows are no one's signature.
    expect(rows.filter((r) => r[header!.indexOf('Final')] === 'Yes').map((r) => r[column])).toEqual(
      ENDPOINTS.map(() => ''),
    );
  });

  it('a study without read cases: the header only', async () => {
    const response = await as('studyAdmin').request({
      method: 'GET',
      url: `/api/report/read-outcomes?studyId=${other.id}`,
    });
    expect(csvOf(response.body)).toEqual([HEADER]);
  });
});

describe('GET /api/report/read-outcomes: who', () => {
  it('refuses, writing no audit row: logged out 401, readers 403, PM and Uploader 403, outside the study 404, no study 400', async () => {
    const since = await lastAuditId();
    const anonymous = await t.app.inject({ method: 'GET', url: `/api/report/read-outcomes?studyId=${study.id}` });
    expect(anonymous.statusCode).toBe(401);
    for (const key of ['r1', 'r2', 'r3', 'uploader']) {
      const response = await download(as(key));
      expect({ key, status: response.statusCode, body: response.json() }).toEqual({
        key,
        status: 403,
        body: { success: false, message: MESSAGES.accessDenied },
      });
    }
    // PM passes the route's guard with the image details permission, then the report's own refuses;
    // the NOTO reader given the outcome permission is refused as a blinded reader.
    for (const key of ['pm', 'noto']) {
      const response = await download(as(key));
      expect({ key, status: response.statusCode, body: response.json() }).toEqual({
        key,
        status: 403,
        body: { success: false, message: SPEC },
      });
    }
    const outside = await download(as('outsiderIsc'));
    expect(outside.statusCode).toBe(404);
    expect(outside.json()).toEqual({ success: false, message: MESSAGES.studyNotFound });
    const noStudy = await as('dm').request({ method: 'GET', url: '/api/report/read-outcomes' });
    expect(noStudy.statusCode).toBe(400);
    expect(noStudy.json()).toEqual({ success: false, message: `${SPEC}: ${REPORT_MESSAGES.studyRequired}` });
    expect(await reportAudits(since)).toEqual([]);
  });
});
