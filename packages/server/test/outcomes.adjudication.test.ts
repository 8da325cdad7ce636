import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_MESSAGES, type CaseOutcomesResponse, type CaseView } from '@lamina/domain';
import { createTestApp, type TestContext } from './testApp.js';
import { createAnnotationClass, createStudy } from './factories.js';
import { PEC, readFixtures } from './readFixtures.js';

/**
 * Issue 30, adjudication: when every primary reader has marked a case and the study's rule fires on
 * their frozen values, the case waits in Pending Adjudication; ISC or DM assigns an adjudicator (a
 * central reader of the study who is not one of its readers), who reads it blinded and completes it;
 * the final values are then the adjudicator's. The primary readers never learn that their reads
 * disagreed: what they can ask of the case is the same before and after.
 */
let t: TestContext;
let studyId: number;
let eos: number;
const fx = readFixtures(() => t);
const { as, id, user, readCase, caseStatus, assignAdjudicator, lastAuditId } = fx;
/** Mark as Scored answered as it is: the tests read its refusals too. */
const markScored = (key: string, caseId: number) => fx.forwardCase(key, caseId);

/** One HPF at (x, 2000) holding `n` eosinophils: the reader's peak count is n. */
const peak = (key: string, imageId: number, n: number, x = 2000) => fx.hpfWith(key, imageId, eos, n, { x, y: 2000 });

async function caseReaders(caseId: number) {
  return t.database.db
    .selectFrom('case_readers')
    .select(['user_id', 'role'])
    .where('case_id', '=', caseId)
    .orderBy('role')
    .orderBy('user_id')
    .execute();
}

async function outcomes(key: string, caseId: number) {
  const response = await as(key).request({ method: 'GET', url: `/api/cases/${caseId}/outcomes` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<CaseOutcomesResponse>();
}

const audit = (caseId: number, since: number) =>
  fx
    .auditRowsAfter(since, {
      caseId,
      actions: ['CASE_STATUS_FORWARDED', 'CASE_STATUS_REVERTED', 'CASE_ADJUDICATOR_CHANGED'],
    })
    .select(['action', 'field', 'old_value', 'new_value', 'reason'])
    .execute();

/** Everything a reader can ask about a case and its study's list: what must not move when others read. */
async function readerSees(key: string, caseId: number) {
  const view = await as(key).request({ method: 'GET', url: `/api/cases/${caseId}` });
  const list = (status?: string) =>
    as(key)
      .request({ method: 'GET', url: `/api/studies/${studyId}/cases${status ? `?status=${status}` : ''}` })
      .then((r) => r.json<{ cases: { id: number; status: string; prevWorkflowStatuses: string[] }[] }>());
  const own = (await outcomes(key, caseId)).outcomes;
  return {
    view: view.json<{ case: CaseView }>().case,
    list: (await list()).cases.filter((c) => c.id === caseId),
    processed: (await list('PROCESSED')).cases.some((c) => c.id === caseId),
    pending: (await list('PENDING_ADJUDICATION')).cases.some((c) => c.id === caseId),
    sortedByStatus: (
      await as(key)
        .request({ method: 'GET', url: `/api/studies/${studyId}/cases?sort=status` })
        .then((r) => r.json<{ cases: { id: number }[] }>())
    ).cases.map((c) => c.id),
    own,
  };
}

/** A case whose two readers disagree on the category: reader1 16 (positive), reader2 10 (negative). */
async function disagreeingCase() {
  const { caseId, imageId } = await readCase(studyId, ['reader1', 'reader2']);
  await peak('reader1', imageId, 16);
  await peak('reader2', imageId, 10, 6000);
  expect((await markScored('reader1', caseId)).json()).toMatchObject({ message: CASE_MESSAGES.scored });
  expect((await markScored('reader2', caseId)).json()).toMatchObject({ message: CASE_MESSAGES.scored });
  expect(await caseStatus(caseId)).toBe('PENDING_ADJUDICATION');
  return { caseId, imageId };
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  const otherStudy = (await createStudy(db)).id;
  await db
    .updateTable('studies')
    .set({
      indications: ['EOSINOPHILIC_ESOPHAGITIS'],
      endpoints: JSON.stringify([PEC]),
      adjudication: JSON.stringify({ endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' }),
    })
    .where('id', '=', studyId)
    .execute();
  eos = (await createAnnotationClass(db, { studyId, type: 'POINT', name: 'Eosinophil' })).id;
  for (const key of ['reader1', 'reader2', 'adjudicator', 'second'])
    await user(key, { studyRoles: [{ studyId, role: 'CR' }] });
  await user('outsider', { studyRoles: [{ studyId: otherStudy, role: 'CR' }] });
  await user('isc', { studyRoles: [{ studyId, role: 'ISC' }] });
  await user('dm', { studyRoles: [{ studyId, role: 'DM' }] });
  await user('pm', { studyRoles: [{ studyId, role: 'PM' }] });
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('the last primary read asks the adjudication rule', () => {
  it('completes a case whose readers agree, with the readers’ mean as its final value', async () => {
    const { caseId, imageId } = await readCase(studyId, ['reader1', 'reader2']);
    await peak('reader1', imageId, 16);
    await peak('reader2', imageId, 20, 6000);
    await markScored('reader1', caseId);
    expect((await markScored('reader2', caseId)).json()).toMatchObject({ message: CASE_MESSAGES.scoredComplete });
    expect(await caseStatus(caseId)).toBe('COMPLETED');
    expect((await outcomes('isc', caseId)).final).toEqual([
      { endpointKey: 'pec', value: 18, positive: true, adjudicated: false },
    ]);
  });

  it('sends a case whose readers disagree to Pending Adjudication, telling the last reader only that it was scored', async () => {
    const { caseId, imageId } = await readCase(studyId, ['reader1', 'reader2']);
    await peak('reader1', imageId, 16);
    await peak('reader2', imageId, 10, 6000);
    await markScored('reader1', caseId);
    const since = await lastAuditId();
    const last = await markScored('reader2', caseId);
    expect(last.statusCode, last.body).toBe(200);
    // The same message as a read that leaves another open: nothing says the reads disagreed.
    expect(last.json()).toMatchObject({ message: CASE_MESSAGES.scored });
    expect(await caseStatus(caseId)).toBe('PENDING_ADJUDICATION');
    expect(await audit(caseId, since)).toEqual([
      {
        action: 'CASE_STATUS_FORWARDED',
        field: 'status',
        old_value: 'PROCESSED',
        new_value: 'PENDING_ADJUDICATION',
        reason: null,
      },
    ]);
    // No final value while the case waits; the images stay Ready for Reading.
    expect((await outcomes('isc', caseId)).final).toBeNull();
    const images = await t.database.db.selectFrom('images').select('status').where('case_id', '=', caseId).execute();
    expect(images.map((i) => i.status)).toEqual(['READY_FOR_READING']);
  });

  it('fires on a reader without a value (no HPF drawn)', async () => {
    const { caseId, imageId } = await readCase(studyId, ['reader1', 'reader2']);
    await peak('reader1', imageId, 3);
    await markScored('reader1', caseId);
    await markScored('reader2', caseId);
    expect(await caseStatus(caseId)).toBe('PENDING_ADJUDICATION');
  });

  it('shows a primary reader nothing of the adjudication: their case, list, filters, order and values are the same before and after', async () => {
    const { caseId, imageId } = await readCase(studyId, ['reader1', 'reader2']);
    await peak('reader1', imageId, 16);
    await peak('reader2', imageId, 10, 6000);
    await markScored('reader1', caseId);
    const before = await readerSees('reader1', caseId);
    await markScored('reader2', caseId);
    expect(await caseStatus(caseId)).toBe('PENDING_ADJUDICATION');
    const after = await readerSees('reader1', caseId);
    expect(after).toEqual(before);
    expect(after.view.status).toBe('PROCESSED');
    expect(after.processed).toBe(true);
    expect(after.pending).toBe(false);

    // Completed by its adjudicator, the case's history shows no adjudication to the primary reader.
    expect((await assignAdjudicator('isc', caseId, id('adjudicator'))).statusCode).toBe(200);
    await peak('adjudicator', imageId, 15, 10_000);
    await markScored('adjudicator', caseId);
    const done = (await readerSees('reader1', caseId)).view;
    expect(done.status).toBe('COMPLETED');
    expect(done.prevWorkflowStatuses).toEqual(['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED']);
    const stored = await t.database.db
      .selectFrom('cases')
      .select('prev_workflow_statuses')
      .where('id', '=', caseId)
      .executeTakeFirstOrThrow();
    expect(stored.prev_workflow_statuses).toContain('PENDING_ADJUDICATION');
  });
});

describe('PATCH /api/cases/{id}/adjudicator', () => {
  it('refuses readers, PM, a case not pending, one of the case’s readers and a user who is no reader of the study', async () => {
    const { caseId } = await disagreeingCase();
    expect((await assignAdjudicator('reader1', caseId, id('adjudicator'))).statusCode).toBe(403);
    expect((await assignAdjudicator('pm', caseId, id('adjudicator'))).statusCode).toBe(403);
    const reader = await assignAdjudicator('isc', caseId, id('reader2'));
    expect(reader.statusCode).toBe(400);
    expect(reader.json()).toMatchObject({
      message: `${CASE_MESSAGES.unableToAssignAdjudicator} ${CASE_MESSAGES.adjudicatorIsReader}`,
    });
    for (const readerId of [id('outsider'), id('isc')]) {
      const refused = await assignAdjudicator('isc', caseId, readerId);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({
        message: `${CASE_MESSAGES.unableToAssignAdjudicator} ${CASE_MESSAGES.adjudicatorNotInStudy}`,
      });
    }
    const { caseId: processed } = await readCase(studyId, ['reader1', 'reader2']);
    const notPending = await assignAdjudicator('isc', processed, id('adjudicator'));
    expect(notPending.statusCode).toBe(409);
    expect(notPending.json()).toMatchObject({
      message: `${CASE_MESSAGES.unableToAssignAdjudicator} ${CASE_MESSAGES.notPendingAdjudication}`,
    });
    expect(await caseReaders(caseId)).toEqual([
      { user_id: id('reader1'), role: 'PRIMARY' },
      { user_id: id('reader2'), role: 'PRIMARY' },
    ]);
  });

  it('gives the adjudicator sight of the case from then on; a replacement needs a reason and takes it from the one replaced', async () => {
    const { caseId } = await disagreeingCase();
    expect((await as('adjudicator').request({ method: 'GET', url: `/api/cases/${caseId}` })).statusCode).toBe(404);
    const since = await lastAuditId();
    const assigned = await assignAdjudicator('dm', caseId, id('adjudicator'));
    expect(assigned.statusCode, assigned.body).toBe(200);
    expect(assigned.json()).toMatchObject({ message: CASE_MESSAGES.adjudicatorAssigned });
    const view = await as('adjudicator').request({ method: 'GET', url: `/api/cases/${caseId}` });
    expect(view.statusCode).toBe(200);
    // The adjudicator sees the case as it is, and only their own assignment.
    expect(view.json<{ case: CaseView }>().case).toMatchObject({
      status: 'PENDING_ADJUDICATION',
      readers: [expect.objectContaining({ id: id('adjudicator'), role: 'ADJUDICATOR', readAt: null })],
    });
    // Staff see the adjudicator after the primary readers.
    const staffView = await as('isc').request({ method: 'GET', url: `/api/cases/${caseId}` });
    expect(staffView.json<{ case: CaseView }>().case.readers.map((r) => [r.id, r.role])).toEqual([
      [id('reader1'), 'PRIMARY'],
      [id('reader2'), 'PRIMARY'],
      [id('adjudicator'), 'ADJUDICATOR'],
    ]);
    // Not blind to their own values only: nothing of the primary reads reaches them.
    expect((await outcomes('adjudicator', caseId)).outcomes).toEqual([]);

    const same = await assignAdjudicator('isc', caseId, id('adjudicator'));
    expect(same.statusCode).toBe(409);
    const noReason = await assignAdjudicator('isc', caseId, id('second'));
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json()).toMatchObject({ message: CASE_MESSAGES.adjudicatorReasonRequired });
    expect((await assignAdjudicator('isc', caseId, id('second'), 'On leave')).statusCode).toBe(200);
    expect((await as('adjudicator').request({ method: 'GET', url: `/api/cases/${caseId}` })).statusCode).toBe(404);
    expect((await as('second').request({ method: 'GET', url: `/api/cases/${caseId}` })).statusCode).toBe(200);
    expect(await audit(caseId, since)).toEqual([
      {
        action: 'CASE_ADJUDICATOR_CHANGED',
        field: 'adjudicator',
        old_value: null,
        new_value: String(id('adjudicator')),
        reason: null,
      },
      {
        action: 'CASE_ADJUDICATOR_CHANGED',
        field: 'adjudicator',
        old_value: String(id('adjudicator')),
        new_value: String(id('second')),
        reason: 'On leave',
      },
    ]);
  });
});

describe('the adjudicator’s read', () => {
  it('only the adjudicator may mark the case; their read completes it and decides its final value', async () => {
    const { caseId, imageId } = await disagreeingCase();
    const early = await markScored('adjudicator', caseId);
    expect(early.statusCode).toBe(404);
    await assignAdjudicator('isc', caseId, id('adjudicator'));
    const primary = await markScored('reader1', caseId);
    expect(primary.statusCode).toBe(403);
    expect(primary.json()).toMatchObject({
      message: `${CASE_MESSAGES.unableToTransition} ${CASE_MESSAGES.notAdjudicator}`,
    });
    await peak('adjudicator', imageId, 12, 10_000);
    const since = await lastAuditId();
    const done = await markScored('adjudicator', caseId);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ message: CASE_MESSAGES.scoredComplete });
    expect(await caseStatus(caseId)).toBe('COMPLETED');
    expect(await audit(caseId, since)).toEqual([
      {
        action: 'CASE_STATUS_FORWARDED',
        field: 'status',
        old_value: 'PENDING_ADJUDICATION',
        new_value: 'COMPLETED',
        reason: null,
      },
    ]);

    const staff = await outcomes('isc', caseId);
    expect(staff.outcomes.map((o) => [o.readerId, o.readerRole, o.value])).toEqual([
      [id('reader1'), 'PRIMARY', 16],
      [id('reader2'), 'PRIMARY', 10],
      [id('adjudicator'), 'ADJUDICATOR', 12],
    ]);
    expect(staff.final).toEqual([{ endpointKey: 'pec', value: 12, positive: false, adjudicated: true }]);
    // Each reader — the adjudicator too — sees their own values only, and no final value.
    const own = await outcomes('adjudicator', caseId);
    expect(own.outcomes.map((o) => [o.readerId, o.readerRole])).toEqual([[id('adjudicator'), 'ADJUDICATOR']]);
    expect(own.final).toBeNull();
    expect((await outcomes('reader2', caseId)).outcomes.map((o) => o.readerId)).toEqual([id('reader2')]);
  });

  it('reopening the adjudicator’s read returns the case to Pending Adjudication; reopening a primary read takes it out of adjudication', async () => {
    const { caseId, imageId } = await disagreeingCase();
    await assignAdjudicator('isc', caseId, id('adjudicator'));
    await peak('adjudicator', imageId, 12, 10_000);
    await markScored('adjudicator', caseId);
    const reopen = (readerId: number) =>
      as('isc').request({
        method: 'PATCH',
        url: `/api/cases/${caseId}/reads/${readerId}/reopen`,
        payload: { reasonForChange: 'Recount' },
      });

    expect((await reopen(id('adjudicator'))).statusCode).toBe(200);
    expect(await caseStatus(caseId)).toBe('PENDING_ADJUDICATION');
    expect((await outcomes('isc', caseId)).outcomes.map((o) => o.readerRole)).toEqual(['PRIMARY', 'PRIMARY']);
    const images = await t.database.db.selectFrom('images').select('status').where('case_id', '=', caseId).execute();
    expect(images.map((i) => i.status)).toEqual(['READY_FOR_READING']);

    const since = await lastAuditId();
    expect((await reopen(id('reader2'))).statusCode).toBe(200);
    expect(await caseStatus(caseId)).toBe('PROCESSED');
    expect(await caseReaders(caseId)).toEqual([
      { user_id: id('reader1'), role: 'PRIMARY' },
      { user_id: id('reader2'), role: 'PRIMARY' },
    ]);
    expect(await audit(caseId, since)).toEqual([
      {
        action: 'CASE_ADJUDICATOR_CHANGED',
        field: 'adjudicator',
        old_value: String(id('adjudicator')),
        new_value: null,
        reason: 'Recount',
      },
      {
        action: 'CASE_STATUS_REVERTED',
        field: 'status',
        old_value: 'PENDING_ADJUDICATION',
        new_value: 'PROCESSED',
        reason: 'Recount',
      },
    ]);
    // reader2 reads again and now agrees: the case completes without adjudication.
    await peak('reader2', imageId, 17, 14_000);
    expect((await markScored('reader2', caseId)).json()).toMatchObject({ message: CASE_MESSAGES.scoredComplete });
    expect((await outcomes('isc', caseId)).final).toEqual([
      { endpointKey: 'pec', value: 16.5, positive: true, adjudicated: false },
    ]);
  });

  it('setting the case back removes its adjudicator and reopens every read', async () => {
    const { caseId } = await disagreeingCase();
    await assignAdjudicator('isc', caseId, id('adjudicator'));
    const back = await as('isc').request({
      method: 'PATCH',
      url: `/api/cases/${caseId}/status/back`,
      payload: { value: 'PENDING_QC', reason: 'Rescan' },
    });
    expect(back.statusCode, back.body).toBe(200);
    expect(await caseStatus(caseId)).toBe('PENDING_QC');
    expect(await caseReaders(caseId)).toEqual([
      { user_id: id('reader1'), role: 'PRIMARY' },
      { user_id: id('reader2'), role: 'PRIMARY' },
    ]);
    const reads = await t.database.db
      .selectFrom('case_readers')
      .select('read_at')
      .where('case_id', '=', caseId)
      .execute();
    expect(reads.every((r) => r.read_at === null)).toBe(true);
    expect((await outcomes('isc', caseId)).outcomes).toEqual([]);
  });

  it('refuses the adjudicator as a primary reader of the same case', async () => {
    const { caseId } = await disagreeingCase();
    await assignAdjudicator('isc', caseId, id('adjudicator'));
    const edit = await as('isc').request({
      method: 'PATCH',
      url: `/api/cases/${caseId}`,
      payload: { readers: { ids: [id('reader1'), id('reader2'), id('adjudicator')], reasonForChange: 'More' } },
    });
    expect(edit.statusCode).toBe(400);
    expect(edit.json()).toMatchObject({ message: CASE_MESSAGES.adjudicatorIsReader });
  });
});
