import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition, RoleName, StudyAgreementResponse } from '@lamina/domain';
import { endpointAgreement, type PrimaryReading } from '../src/modules/outcomes/studyAgreement.js';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { assignReader, createCase, createStudy, createUser, PASSWORD } from './factories.js';
import { PEC } from './readFixtures.js';

/**
 * Issue 30, inter-reader agreement (GET /api/studies/{id}/agreement): which frozen values enter the
 * statistics (studyAgreement.ts), checked against published worked examples, and who may ask.
 */

const MEAN: EndpointDefinition = { key: 'mean', label: 'Mean', kind: 'MEAN_COUNT_PER_HPF', className: 'Eosinophil' };

/** Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; ICC(2,1) = 0.29. */
const SHROUT_FLEISS = [
  [9, 2, 5, 8],
  [6, 1, 3, 2],
  [8, 4, 6, 8],
  [7, 1, 2, 6],
  [10, 5, 6, 9],
  [6, 2, 4, 7],
];

/** Readings of a cases × readers matrix: case i + 1, reader j + 1 (readers' ids 11, 12, …). */
function readingsOf(matrix: readonly (readonly (number | null)[])[], threshold = 15): PrimaryReading[] {
  return matrix.flatMap((row, i) =>
    row.map((value, j) => ({
      caseId: i + 1,
      readerId: 11 + j,
      value,
      positive: value === null ? null : value >= threshold,
    })),
  );
}

describe('which frozen values enter the agreement', () => {
  it('a case is its readers’ values in the order of their ids, whatever order they come in', () => {
    const readings = readingsOf(SHROUT_FLEISS);
    const shuffled = [...readings].reverse();
    const result = endpointAgreement(PEC, shuffled);
    expect(result).toMatchObject({ cases: 6, readers: 4, valuedCases: 6 });
    expect(result.icc).toBeCloseTo(0.2898, 4);
    expect(endpointAgreement(PEC, readings)).toEqual(result);
    // More than two readers: Fleiss' kappa, no Bland–Altman.
    expect(result.kappaKind).toBeNull(); // every rating < 15: one category, kappa undefined
    expect(result.meanDifference).toBeNull();
  });

  it('two readers: Bland–Altman of the first minus the second by id, and Cohen’s kappa on the reading', () => {
    // Cohen's example (Wikipedia, 'Cohen's kappa'): 50 subjects, yes/yes 20, yes/no 5, no/yes 10, no/no 15 → 0.40.
    const rows = [
      ...Array.from({ length: 20 }, () => [20, 16]),
      ...Array.from({ length: 5 }, () => [20, 3]),
      ...Array.from({ length: 10 }, () => [4, 18]),
      ...Array.from({ length: 15 }, () => [2, 1]),
    ];
    const result = endpointAgreement(PEC, readingsOf(rows));
    expect(result).toMatchObject({ cases: 50, readers: 2, categorisedCases: 50, kappaKind: 'COHEN' });
    expect(result.kappa).toBeCloseTo(0.4, 10);
    expect(result.percentAgreement).toBeCloseTo(35 / 50, 10);
    const differences = rows.map(([a = 0, b = 0]) => a - b);
    const mean = differences.reduce((s, d) => s + d, 0) / differences.length;
    expect(result.meanDifference).toBeCloseTo(mean, 10);
    const sd = Math.sqrt(differences.reduce((s, d) => s + (d - mean) ** 2, 0) / (differences.length - 1));
    expect(result.loaLower).toBeCloseTo(mean - 1.96 * sd, 10);
    expect(result.loaUpper).toBeCloseTo(mean + 1.96 * sd, 10);
  });

  it('leaves out, listwise, a case with a value that could not be computed; counts it as read', () => {
    const rows = [...SHROUT_FLEISS, [null, 3, 4, 5]];
    const result = endpointAgreement(PEC, readingsOf(rows));
    expect(result).toMatchObject({ cases: 7, readers: 4, valuedCases: 6, categorisedCases: 6 });
    expect(result.icc).toBeCloseTo(0.2898, 4);
  });

  it('takes the cases read by the commonest number of readers; a case read once is not a case here', () => {
    const readings = [
      ...readingsOf(SHROUT_FLEISS),
      // Case 20 read by two readers, case 21 by one: neither is one of the four-reader cases.
      { caseId: 20, readerId: 11, value: 100, positive: true },
      { caseId: 20, readerId: 12, value: 0, positive: false },
      { caseId: 21, readerId: 11, value: 50, positive: true },
    ];
    const result = endpointAgreement(PEC, readings);
    expect(result).toMatchObject({ cases: 7, readers: 4, valuedCases: 6 });
    expect(result.icc).toBeCloseTo(0.2898, 4);
  });

  it('Fleiss’ kappa for three readers (Fleiss 1971’s form on a small set) and no categories without a threshold', () => {
    const rows = [
      [20, 20, 20],
      [1, 1, 20],
      [1, 1, 1],
      [20, 1, 20],
    ];
    const result = endpointAgreement(PEC, readingsOf(rows));
    // By hand: P_i = 1, 1/3, 1, 1/3 → P̄ = 2/3; p(yes) = 6/12, p(no) = 6/12 → P̄e = 1/2; κ = (2/3 − 1/2)/(1/2) = 1/3.
    expect(result.kappaKind).toBe('FLEISS');
    expect(result.kappa).toBeCloseTo(1 / 3, 10);
    expect(result.percentAgreement).toBeCloseTo(2 / 4, 10);
    const noThreshold = endpointAgreement(
      MEAN,
      readingsOf(rows).map((r) => ({ ...r, positive: null })),
    );
    expect(noThreshold).toMatchObject({ categorisedCases: 0, kappa: null, kappaKind: null, percentAgreement: null });
    expect(noThreshold.icc).not.toBeNull();
  });

  it('nothing read: zero cases and every statistic null', () => {
    expect(endpointAgreement(PEC, [])).toEqual({
      endpointKey: 'pec',
      label: 'Peak eosinophils per HPF',
      cases: 0,
      readers: 0,
      valuedCases: 0,
      categorisedCases: 0,
      icc: null,
      iccLower95: null,
      iccUpper95: null,
      kappa: null,
      kappaKind: null,
      percentAgreement: null,
      meanDifference: null,
      loaLower: null,
      loaUpper: null,
    });
  });
});

describe('GET /api/studies/{id}/agreement', () => {
  let t: TestContext;
  let studyId: number;
  const sessions: Record<string, Session> = {};
  const readers: number[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    const db = t.database.db;
    studyId = (await createStudy(db)).id;
    const otherStudy = (await createStudy(db)).id;
    await db
      .updateTable('studies')
      .set({ indications: ['EOSINOPHILIC_ESOPHAGITIS'], endpoints: JSON.stringify([PEC]) })
      .where('id', '=', studyId)
      .execute();
    const roles: [string, RoleName, number][] = [
      ['isc', 'ISC', studyId],
      ['reader', 'CR', studyId],
      ['pm', 'PM', studyId],
      ['outsider', 'ISC', otherStudy],
    ];
    for (const [key, role, study] of roles) {
      const made = await createUser(db, { studyRoles: [{ studyId: study, role }] });
      sessions[key] = await login(t.app, made.username, PASSWORD);
    }
    for (let j = 0; j < 4; j++) readers.push((await createUser(db, { studyRoles: [{ studyId, role: 'CR' }] })).id);
    // Shrout & Fleiss's six targets as six completed cases, each read by the same four readers; an
    // archived case with wildly different values stays out.
    const matrix = [...SHROUT_FLEISS, [100, 0, 100, 0]];
    for (const [i, row] of matrix.entries()) {
      const caseId = (await createCase(db, { studyId, status: i < SHROUT_FLEISS.length ? 'COMPLETED' : 'ARCHIVED' }))
        .id;
      for (const [j, value] of row.entries()) {
        const readerId = readers[j] ?? 0;
        await assignReader(db, { caseId, userId: readerId });
        await db
          .insertInto('read_outcomes')
          .values({
            case_id: caseId,
            reader_id: readerId,
            endpoint_key: 'pec',
            value,
            positive: value >= 15,
            reason: null,
            reader_role: 'PRIMARY',
            scored_at: new Date(),
          })
          .execute();
      }
    }
  }, 60_000);

  afterAll(async () => {
    await t.close();
  });

  it('answers each endpoint’s agreement over the study’s live cases to the roles that see every reader', async () => {
    const response = await sessions.isc!.request({ url: `/api/studies/${studyId}/agreement` });
    expect(response.statusCode).toBe(200);
    const body = response.json<StudyAgreementResponse>();
    expect(body.endpoints).toHaveLength(1);
    expect(body.endpoints[0]).toMatchObject({ endpointKey: 'pec', cases: 6, readers: 4, valuedCases: 6 });
    expect(body.endpoints[0]?.icc).toBeCloseTo(0.2898, 4);
  });

  it('refuses a reader and a role without the permission (403), and a study out of scope (404)', async () => {
    expect((await sessions.reader!.request({ url: `/api/studies/${studyId}/agreement` })).statusCode).toBe(403);
    expect((await sessions.pm!.request({ url: `/api/studies/${studyId}/agreement` })).statusCode).toBe(403);
    expect((await sessions.outsider!.request({ url: `/api/studies/${studyId}/agreement` })).statusCode).toBe(404);
  });
});
