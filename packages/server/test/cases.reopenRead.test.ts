import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_MESSAGES, type AssignedCase, type CaseView, type StudyCaseRow } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { assignReader, createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 29, items 8 and 9: a reader's case rows carry their own read time (myReadAt), and staff
 * reopen one reader's read (PATCH /api/cases/{id}/reads/{readerId}/reopen) — that reader's
 * annotations unlock, the other readers' stay locked, a completed case returns to Processed until
 * that reader marks it again; audited with the reason in the same transaction.
 */
let t: TestContext;
let studyId: number;
let otherStudy: number;
const users: Record<string, { id: number; username: string; session: Session }> = {};
const as = (key: string) => users[key]!.session;
const MPP = 0.5;

async function user(key: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  users[key] = { ...made, session: await login(t.app, made.username, PASSWORD) };
}

/** A Processed case of `studyId` with one image, read by reader1 and reader2, each with a point drawn. */
async function readCase(): Promise<{ caseId: number; imageId: number }> {
  const db = t.database.db;
  const caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await db
    .updateTable('cases')
    .set({ prev_workflow_statuses: ['PENDING_LAB_QC', 'PENDING_QC'] })
    .where('id', '=', caseId)
    .execute();
  const imageId = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING', width: 1000, mpp: MPP }))
    .id;
  for (const key of ['reader1', 'reader2']) {
    await assignReader(db, { caseId, userId: users[key]!.id });
    await point(key, imageId, 200);
  }
  return { caseId, imageId };
}

async function point(key: string, imageId: number, x = 300) {
  return as(key).request({
    method: 'POST',
    url: '/api/annotations',
    payload: { imageId, annotationType: 'POINT', geometry: { type: 'Point', coordinates: [x, 10] } },
  });
}

async function markScored(key: string, caseId: number) {
  const response = await as(key).request({ method: 'PATCH', url: `/api/cases/${caseId}/status/forward`, payload: {} });
  expect(response.statusCode, response.body).toBe(200);
}

async function locked(key: string, imageId: number): Promise<boolean> {
  const response = await as(key).request({ method: 'GET', url: `/api/images/${imageId}/annotations` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ locked: boolean }>().locked;
}

function reopen(session: Session, caseId: number, readerId: number, payload: object = { reasonForChange: 'HPF 2' }) {
  return session.request({ method: 'PATCH', url: `/api/cases/${caseId}/reads/${readerId}/reopen`, payload });
}

async function caseState(caseId: number) {
  const db = t.database.db;
  const row = await db.selectFrom('cases').select(['status']).where('id', '=', caseId).executeTakeFirstOrThrow();
  const reads = await db
    .selectFrom('case_readers')
    .select(['user_id', 'read_at'])
    .where('case_id', '=', caseId)
    .orderBy('user_id')
    .execute();
  const images = await db.selectFrom('images').select('status').where('case_id', '=', caseId).execute();
  return {
    status: row.status,
    read: Object.fromEntries(reads.map((r) => [r.user_id, r.read_at !== null])),
    images: images.map((i) => i.status),
  };
}

async function auditRows(caseId: number, since: number) {
  return t.database.db
    .selectFrom('audit_events')
    .select(['action', 'entity_type', 'entity_id', 'field', 'old_value', 'new_value', 'reason', 'username'])
    .where('id', '>', since)
    .where((eb) =>
      eb.or([
        eb.and([eb('entity_type', '=', 'case'), eb('entity_id', '=', String(caseId))]),
        eb('entity_type', '=', 'image'),
      ]),
    )
    .orderBy('id')
    .execute();
}

async function lastAuditId(): Promise<number> {
  const row = await t.database.db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirstOrThrow();
  return row.id ?? 0;
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  otherStudy = (await createStudy(db)).id;
  await user('reader1', { studyRoles: [{ studyId, role: 'CR' }] });
  await user('reader2', { studyRoles: [{ studyId, role: 'CR' }] });
  await user('labtech', { studyRoles: [{ studyId, role: 'LabTech' }] });
  await user('isc', { studyRoles: [{ studyId, role: 'ISC' }] });
  await user('outsider', { studyRoles: [{ studyId: otherStudy, role: 'LabTech' }] });
  await user('stranger', { studyRoles: [{ studyId, role: 'CR' }] });
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('reopening one reader’s read (item 9)', () => {
  it('unlocks that reader only; the completed case returns to Processed until they mark it again', async () => {
    const { caseId, imageId } = await readCase();
    await markScored('reader1', caseId);
    await markScored('reader2', caseId);
    expect(await caseState(caseId)).toEqual({
      status: 'COMPLETED',
      read: { [users.reader1!.id]: true, [users.reader2!.id]: true },
      images: ['COMPLETE'],
    });
    expect(await locked('reader1', imageId)).toBe(true);
    expect(await locked('reader2', imageId)).toBe(true);
    const readAt = (
      await t.database.db
        .selectFrom('case_readers')
        .select('read_at')
        .where('case_id', '=', caseId)
        .where('user_id', '=', users.reader1!.id)
        .executeTakeFirstOrThrow()
    ).read_at!;

    const since = await lastAuditId();
    const response = await reopen(as('labtech'), caseId, users.reader1!.id, { reasonForChange: ' HPF 2 redrawn ' });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{ message: string; case: CaseView }>();
    expect(body.message).toBe(CASE_MESSAGES.readReopened);
    expect(body.case.status).toBe('PROCESSED');
    expect(body.case.readers.map((r) => [r.id, r.readAt !== null])).toEqual([
      [users.reader1!.id, false],
      [users.reader2!.id, true],
    ]);

    expect(await caseState(caseId)).toEqual({
      status: 'PROCESSED',
      read: { [users.reader1!.id]: false, [users.reader2!.id]: true },
      images: ['READY_FOR_READING'],
    });
    expect(await locked('reader1', imageId)).toBe(false);
    expect(await locked('reader2', imageId)).toBe(true);
    expect((await point('reader1', imageId)).statusCode).toBe(200);
    expect((await point('reader2', imageId)).statusCode).toBe(409);

    const rows = await auditRows(caseId, since);
    expect(rows).toEqual([
      {
        action: 'CASE_READ_REOPENED',
        entity_type: 'case',
        entity_id: String(caseId),
        field: 'read_at',
        old_value: JSON.stringify({ reader: users.reader1!.username, readAt: readAt.toISOString() }),
        new_value: null,
        reason: 'HPF 2 redrawn',
        username: users.labtech!.username,
      },
      {
        action: 'CASE_STATUS_REVERTED',
        entity_type: 'case',
        entity_id: String(caseId),
        field: 'status',
        old_value: 'COMPLETED',
        new_value: 'PROCESSED',
        reason: 'HPF 2 redrawn',
        username: users.labtech!.username,
      },
      {
        action: 'IMAGE_STATUS_CHANGED',
        entity_type: 'image',
        entity_id: String(imageId),
        field: 'status',
        old_value: 'COMPLETE',
        new_value: 'READY_FOR_READING',
        reason: 'HPF 2 redrawn',
        username: users.labtech!.username,
      },
    ]);

    // The reader marks it again: the case completes once more.
    await markScored('reader1', caseId);
    expect((await caseState(caseId)).status).toBe('COMPLETED');
  });

  it('a Processed case stays Processed; only the read is reopened', async () => {
    const { caseId, imageId } = await readCase();
    await markScored('reader2', caseId);
    const since = await lastAuditId();
    const response = await reopen(as('isc'), caseId, users.reader2!.id);
    expect(response.statusCode, response.body).toBe(200);
    expect(await caseState(caseId)).toEqual({
      status: 'PROCESSED',
      read: { [users.reader1!.id]: false, [users.reader2!.id]: false },
      images: ['READY_FOR_READING'],
    });
    expect(await locked('reader2', imageId)).toBe(false);
    expect((await auditRows(caseId, since)).map((r) => r.action)).toEqual(['CASE_READ_REOPENED']);
  });

  it('refuses without a reason, for a user not reading the case, a read not scored, and outside the rules', async () => {
    const { caseId } = await readCase();
    await markScored('reader1', caseId);
    const before = await caseState(caseId);
    const since = await lastAuditId();

    for (const payload of [{}, { reasonForChange: '' }, { reasonForChange: '   ' }, { reasonForChange: null }]) {
      const response = await reopen(as('labtech'), caseId, users.reader1!.id, payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ success: false, message: CASE_MESSAGES.reopenReasonRequired });
    }
    const notReader = await reopen(as('labtech'), caseId, users.stranger!.id);
    expect(notReader.statusCode).toBe(404);
    expect(notReader.json()).toEqual({ success: false, message: CASE_MESSAGES.notReaderOfCase });
    const notScored = await reopen(as('labtech'), caseId, users.reader2!.id);
    expect(notScored.statusCode).toBe(409);
    expect(notScored.json()).toEqual({
      success: false,
      message: `${CASE_MESSAGES.unableToReopenRead} ${CASE_MESSAGES.readNotScored}`,
    });
    // A central reader may not reopen anyone's read, their own included.
    const byReader = await reopen(as('reader1'), caseId, users.reader1!.id);
    expect(byReader.statusCode).toBe(403);
    // Another study's user learns nothing of the case.
    const outsider = await reopen(as('outsider'), caseId, users.reader1!.id);
    expect(outsider.statusCode).toBe(404);
    expect(outsider.json()).toEqual({ success: false, message: CASE_MESSAGES.caseNotFound });

    // On hold, the read stays.
    await t.database.db
      .updateTable('cases')
      .set({ status: 'ON_HOLD', on_hold_from: 'PROCESSED' })
      .where('id', '=', caseId)
      .execute();
    const held = await reopen(as('labtech'), caseId, users.reader1!.id);
    expect(held.statusCode).toBe(409);
    expect(held.json()).toEqual({
      success: false,
      message: `${CASE_MESSAGES.unableToReopenRead} ${CASE_MESSAGES.reopenNotNow}`,
    });
    expect((await caseState(caseId)).read).toEqual(before.read);
    expect(await auditRows(caseId, since)).toEqual([]);
  });
});

describe('myReadAt (item 8): each reader’s rows carry their own read time, never another’s', () => {
  async function studyRows(key: string): Promise<StudyCaseRow[]> {
    const response = await as(key).request({ method: 'GET', url: `/api/studies/${studyId}/cases?pageSize=100` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ cases: StudyCaseRow[] }>().cases;
  }
  async function assigned(key: string): Promise<AssignedCase[]> {
    const response = await as(key).request({ method: 'GET', url: '/api/cases/assigned' });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ cases: AssignedCase[] }>().cases;
  }
  const readAtOf = async (caseId: number, key: string) =>
    (
      await t.database.db
        .selectFrom('case_readers')
        .select('read_at')
        .where('case_id', '=', caseId)
        .where('user_id', '=', users[key]!.id)
        .executeTakeFirstOrThrow()
    ).read_at;

  it('reader1 scored, reader2 not: reader1 sees their time, reader2 and the ISC see none', async () => {
    const { caseId } = await readCase();
    await markScored('reader1', caseId);
    const time = (await readAtOf(caseId, 'reader1'))!.toISOString();

    expect((await studyRows('reader1')).find((c) => c.id === caseId)?.myReadAt).toBe(time);
    expect((await assigned('reader1')).find((c) => c.id === caseId)?.myReadAt).toBe(time);
    expect((await studyRows('reader2')).find((c) => c.id === caseId)?.myReadAt).toBeNull();
    expect((await assigned('reader2')).find((c) => c.id === caseId)?.myReadAt).toBeNull();
    expect((await studyRows('isc')).find((c) => c.id === caseId)?.myReadAt).toBeNull();

    // reader2 marks it too: each sees only their own time.
    await markScored('reader2', caseId);
    const time2 = (await readAtOf(caseId, 'reader2'))!.toISOString();
    expect(time2).not.toBe(time);
    const rows2 = [
      (await studyRows('reader2')).find((c) => c.id === caseId),
      (await assigned('reader2')).find((c) => c.id === caseId),
    ];
    for (const row of rows2) expect(row?.myReadAt).toBe(time2);
    const body = JSON.stringify([await studyRows('reader2'), await assigned('reader2')]);
    expect(body).not.toContain(time);
  });
});
