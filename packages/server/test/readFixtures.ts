import { expect } from 'vitest';
import type { EndpointDefinition } from '@lamina/domain';
import { assignReader, createCase, createStudyImage, createUser, PASSWORD, type UserSpec } from './factories.js';
import { login, type Session, type TestContext } from './testApp.js';

/**
 * Reads made as readers make them (issue 30): logged-in users by key, a Processed case with an image
 * and its readers, annotations drawn through POST /api/annotations, Mark as Scored through PATCH
 * /api/cases/{id}/status/forward, and the audit rows written since a point. The read-outcomes,
 * adjudication, Reads tab, report and signature tests share them; what each test adds (its case IDs,
 * its class ids, the audit columns it checks) stays in the test.
 */

/** Peak eosinophils per HPF, positive from 15. */
export const PEC: EndpointDefinition = {
  key: 'pec',
  label: 'Peak eosinophils per HPF',
  kind: 'PEAK_COUNT_PER_HPF',
  className: 'Eosinophil',
  threshold: 15,
  positiveWhen: 'GTE',
};

/** The pixel size of a read case's image, µm per pixel: an HPF's radius is then 550 px. */
export const READ_MPP = 0.5;

export interface TestUser {
  id: number;
  username: string;
  session: Session;
}

/** The IDs a read case may be given in place of its generated ones. */
export interface ReadCaseIds {
  procId?: string;
  histoProcedureId?: string;
  subjectId?: string;
  visitId?: string;
}

/** The helpers of one test file, bound to its app: `context` gives it once `beforeAll` has made it. */
export function readFixtures(context: () => TestContext) {
  const users: Record<string, TestUser> = {};
  const known = (key: string): TestUser => {
    const found = users[key];
    if (!found) throw new Error(`no test user '${key}'`);
    return found;
  };
  const as = (key: string) => known(key).session;
  const id = (key: string) => known(key).id;

  /** A user made by `spec` and logged in, kept as `key`. */
  async function user(key: string, spec: UserSpec): Promise<TestUser> {
    const t = context();
    const made = await createUser(t.database.db, spec);
    const loggedIn: TestUser = { ...made, session: await login(t.app, made.username, PASSWORD) };
    users[key] = loggedIn;
    return loggedIn;
  }

  /**
   * A Processed case of `studyId` (through Lab QC and QC) with one processed image, 20 000 px square
   * at READ_MPP, read by the given primary readers; `ids` replace the case's generated IDs.
   */
  async function readCase(
    studyId: number,
    readers: string[],
    ids: ReadCaseIds = {},
  ): Promise<{ caseId: number; imageId: number }> {
    const db = context().database.db;
    const caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
    await db
      .updateTable('cases')
      .set({
        prev_workflow_statuses: ['PENDING_LAB_QC', 'PENDING_QC'],
        ...(ids.procId !== undefined && { proc_id: ids.procId }),
        ...(ids.histoProcedureId !== undefined && { histo_procedure_id: ids.histoProcedureId }),
        ...(ids.subjectId !== undefined && { subject_id: ids.subjectId }),
        ...(ids.visitId !== undefined && { visit_id: ids.visitId }),
      })
      .where('id', '=', caseId)
      .execute();
    const imageId = (
      await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 20_000, mpp: READ_MPP })
    ).id;
    for (const key of readers) await assignReader(db, { caseId, userId: id(key) });
    return { caseId, imageId };
  }

  /** An annotation drawn by `key` (must answer 200): its id. */
  async function draw(key: string, payload: object): Promise<number> {
    const response = await as(key).request({ method: 'POST', url: '/api/annotations', payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ annotation: { id: number } }>().annotation.id;
  }

  /** An HPF centred at (x, y): radius 550 px at READ_MPP, so points within 500 px of the centre are in it. */
  const hpf = (key: string, imageId: number, x: number, y: number) =>
    draw(key, { imageId, annotationType: 'HPF', geometry: { type: 'Point', coordinates: [x, y] } });

  /** `n` points of `classId` (none: unclassified) in a row from (x, y), 10 px apart. */
  async function points(key: string, imageId: number, classId: number | null, n: number, x: number, y: number) {
    for (let i = 0; i < n; i++)
      await draw(key, {
        imageId,
        annotationType: 'POINT',
        geometry: { type: 'Point', coordinates: [x + i * 10, y] },
        ...(classId === null ? {} : { annotationClassId: classId }),
      });
  }

  /** An HPF at (x, y) holding `n` points of `classId`, in a row from `spread` px left of its centre. */
  async function hpfWith(
    key: string,
    imageId: number,
    classId: number,
    n: number,
    { x, y, spread = 200 }: { x: number; y: number; spread?: number },
  ) {
    await hpf(key, imageId, x, y);
    await points(key, imageId, classId, n, x - spread, y);
  }

  /** A celiac line of `classId`, `px` pixels down from (x, 100) (µm = px × READ_MPP). */
  const line = (
    key: string,
    imageId: number,
    classId: number,
    category: 'VILLUS_HEIGHT' | 'CRYPT_DEPTH',
    px: number,
    x = 100,
  ) =>
    draw(key, {
      imageId,
      annotationType: 'MULTILINE',
      annotationClassId: classId,
      multilineCategory: category,
      geometry: {
        type: 'LineString',
        coordinates: [
          [x, 100],
          [x, 100 + px],
        ],
      },
    });

  /** PATCH …/status/forward as `key` (Mark as Scored for a reader), answered as it is. */
  const forwardCase = (key: string, caseId: number, payload: object = {}) =>
    as(key).request({ method: 'PATCH', url: `/api/cases/${caseId}/status/forward`, payload });

  /** Mark as Scored by `key`, which must answer 200. */
  async function markScored(key: string, caseId: number, payload: object = {}) {
    const response = await forwardCase(key, caseId, payload);
    expect(response.statusCode, response.body).toBe(200);
    return response;
  }

  /** PATCH …/adjudicator as `key`, answered as it is. */
  const assignAdjudicator = (key: string, caseId: number, readerId: number, reasonForChange?: string) =>
    as(key).request({
      method: 'PATCH',
      url: `/api/cases/${caseId}/adjudicator`,
      payload: { readerId, ...(reasonForChange !== undefined && { reasonForChange }) },
    });

  /** When `key` marked the case read (null: not marked). */
  async function readAt(caseId: number, key: string): Promise<Date | null> {
    const row = await context()
      .database.db.selectFrom('case_readers')
      .select('read_at')
      .where('case_id', '=', caseId)
      .where('user_id', '=', id(key))
      .executeTakeFirstOrThrow();
    return row.read_at;
  }

  async function caseStatus(caseId: number) {
    const row = await context()
      .database.db.selectFrom('cases')
      .select('status')
      .where('id', '=', caseId)
      .executeTakeFirstOrThrow();
    return row.status;
  }

  /** The newest audit row's id (0 for none): the point to read the next rows from. */
  async function lastAuditId(): Promise<number> {
    const row = await context()
      .database.db.selectFrom('audit_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirstOrThrow();
    return row.id ?? 0;
  }

  /**
   * The audit rows written after `since`, oldest first; of the case and of the actions when given.
   * The caller selects the columns it checks.
   */
  const auditRowsAfter = (since: number, where: { caseId?: number; actions?: string[] } = {}) =>
    context()
      .database.db.selectFrom('audit_events')
      .where('id', '>', since)
      .$if(where.caseId !== undefined, (q) =>
        q.where('entity_type', '=', 'case').where('entity_id', '=', String(where.caseId)),
      )
      .$if(where.actions !== undefined, (q) => q.where('action', 'in', where.actions ?? []))
      .orderBy('id');

  return {
    users,
    as,
    id,
    user,
    readCase,
    draw,
    hpf,
    points,
    hpfWith,
    line,
    forwardCase,
    markScored,
    assignAdjudicator,
    readAt,
    caseStatus,
    lastAuditId,
    auditRowsAfter,
  };
}
