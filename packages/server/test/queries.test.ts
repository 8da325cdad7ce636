import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IMAGE_MESSAGES,
  QUERY_MESSAGES,
  followUpDate,
  queryListResponseSchema,
  queryViewSchema,
  roleByName,
  type QueryView,
  type RoleName,
} from '@lamina/domain';
import { sendDueReminders, startQueryReminders } from '../src/modules/queries/queryReminders.js';
import { QUEUES } from '../src/platform/jobs/jobQueue.js';
import { login, type Session } from './testApp.js';
import {
  assignReader,
  createCase,
  createSlideTestApp,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

/**
 * Queries (issue 15): every call's success and refusal with its message for opener, target, other
 * and reader; the list's filters and the stats; blinding; the reminder job against a real SMTP
 * listener; the replacement carrying a query over; the reason catalogue.
 */

interface Received {
  to: string[];
  data: string;
}

let t: SlideTestContext;
let smtp: SMTPServer;
const inbox: Received[] = [];
let studyId: number;
let otherStudyId: number;
let caseId: number;
let imageId: number;
let reader2CaseId: number;
let reader2ImageId: number;
const users: Record<string, { id: number; username: string; session: Session }> = {};

const role = (name: RoleName) => roleByName(name).id;

async function startSmtp(): Promise<number> {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return (smtp.server.address() as AddressInfo).port;
}

async function user(key: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  users[key] = { ...made, session: await login(t.app, made.username, PASSWORD) };
}

const as = (key: string) => users[key]!.session;

async function reasonId(type: 'CASE' | 'IMAGE', withRole: RoleName, text: string, parent?: number): Promise<number> {
  let q = t.database.db
    .selectFrom('query_reasons')
    .select('id')
    .where('object_type', '=', type)
    .where('with_role_id', '=', role(withRole))
    .where('reason_text', '=', text);
  q = parent === undefined ? q.where('parent_id', 'is', null) : q.where('parent_id', '=', parent);
  return (await q.executeTakeFirstOrThrow()).id;
}

async function openImageQuery(session: Session, over: Record<string, unknown> = {}) {
  const blurry = await reasonId('IMAGE', 'LabTech', 'Blurry / out of focus');
  return session.request({
    method: 'POST',
    url: '/api/queries/new',
    payload: {
      queryObjectType: 'IMAGE',
      objectId: imageId,
      studyId,
      caseId: null,
      organizationId: null,
      category: 'OTHER',
      categoryOtherText: '',
      followUpInDays: 14,
      withRoleId: role('LabTech'),
      responseOptionId: blurry,
      childResponseOptionId: await reasonId('IMAGE', 'LabTech', 'Whole slide', blurry),
      commentText: 'The whole slide is out of focus',
      ...over,
    },
  });
}

async function openCaseQuery(session: Session, withRole: RoleName, over: Record<string, unknown> = {}) {
  return session.request({
    method: 'POST',
    url: '/api/queries/new',
    payload: {
      queryObjectType: 'CASE',
      objectId: caseId,
      studyId,
      caseId,
      category: 'OTHER',
      followUpInDays: 14,
      withRoleId: role(withRole),
      responseOptionId: await reasonId('CASE', withRole, 'Visit ID mismatch'),
      commentText: 'The visit on the requisition is V3',
      ...over,
    },
  });
}

function queryOf(response: { json: () => unknown; statusCode: number; body: string }): QueryView {
  if (response.statusCode >= 300) throw new Error(`${response.statusCode} ${response.body}`);
  return queryViewSchema.parse((response.json() as { query: unknown }).query);
}

async function queriesOfImage(session: Session, id = imageId) {
  const response = await session.request({ method: 'GET', url: `/api/queries/image/${id}` });
  return { response, queries: response.statusCode === 200 ? response.json<{ queries: QueryView[] }>().queries : [] };
}

async function list(session: Session, body: Record<string, unknown>) {
  const response = await session.request({ method: 'POST', url: '/api/queries', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return queryListResponseSchema.parse(response.json());
}

async function stats(session: Session, objectType?: 'CASE' | 'IMAGE') {
  const response = await session.request({
    method: 'GET',
    url: `/api/queries/stats${objectType ? `?objectType=${objectType}` : ''}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ stats: Record<string, number> }>().stats;
}

async function auditOf(queryId: number): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('audit_events')
    .select('action')
    .where('entity_type', '=', 'query')
    .where('entity_id', '=', String(queryId))
    .orderBy('id')
    .execute();
  return rows.map((r) => r.action);
}

async function countQueries(): Promise<number> {
  const row = await t.database.db
    .selectFrom('queries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

beforeAll(async () => {
  const port = await startSmtp();
  t = await createSlideTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Lamina <lamina@example.org>' });
  const db = t.database.db;
  studyId = (await createStudy(db, `Queries study ${Date.now()}`)).id;
  otherStudyId = (await createStudy(db)).id;
  const inStudy = (r: RoleName) => ({ studyRoles: [{ studyId, role: r }] });
  await user('reader1', inStudy('CR'));
  await user('reader2', inStudy('CR'));
  await user('labtech', inStudy('LabTech'));
  await user('labtech2', inStudy('LabTech'));
  await user('isc', inStudy('ISC'));
  await user('dm', inStudy('DM'));
  await user('pm', inStudy('PM'));
  await user('sponsor', inStudy('SPONSOR'));
  await user('outsiderIsc', { studyRoles: [{ studyId: otherStudyId, role: 'ISC' }] });
  await user('otherLabtech', { studyRoles: [{ studyId: otherStudyId, role: 'LabTech' }] });
  await user('sysadmin', { systemAdmin: true, globalRoles: ['SystemAdmin'] });
  caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await db.updateTable('cases').set({ proc_id: 'ENDO-Q1' }).where('id', '=', caseId).execute();
  imageId = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING' })).id;
  await db.updateTable('images').set({ processing_status: 'SUCCESS' }).where('id', '=', imageId).execute();
  await assignReader(db, { caseId, userId: users.reader1!.id });
  reader2CaseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  reader2ImageId = (await createStudyImage(db, { studyId, caseId: reader2CaseId, status: 'READY_FOR_READING' })).id;
  await assignReader(db, { caseId: reader2CaseId, userId: users.reader2!.id });
}, 60_000);

afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe('GET /api/queries/metadata', () => {
  it('offers the roles of the caller’s QP_* permissions with their active reasons', async () => {
    const response = await as('reader1').request({ method: 'GET', url: `/api/queries/metadata?studyId=${studyId}` });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      roles: { name: string }[];
      imageReasons: { withRoleId: number; values: { reasonText: string; children: { reasonText: string }[] }[] }[];
      resolutionOptions: { IMAGE: string[] };
    }>();
    expect(body.roles.map((r) => r.name)).toEqual(['ISC', 'DM', 'PM', 'LabTech']);
    const lab = body.imageReasons.find((r) => r.withRoleId === role('LabTech'))!;
    expect(lab.values.map((v) => v.reasonText)).toContain('Blurry / out of focus');
    expect(lab.values.find((v) => v.reasonText === 'Blurry / out of focus')!.children.map((c) => c.reasonText)).toEqual(
      ['Whole slide', 'Part of the tissue'],
    );
    expect(body.resolutionOptions.IMAGE).toContain('Image replaced');
    const labtech = await as('labtech').request({ method: 'GET', url: `/api/queries/metadata?studyId=${studyId}` });
    expect(labtech.json<{ roles: unknown[] }>().roles).toEqual([]);
    const outside = await as('outsiderIsc').request({ method: 'GET', url: `/api/queries/metadata?studyId=${studyId}` });
    expect(outside.statusCode).toBe(404);
  });
});

describe('the lifecycle of an image query: reader1 → LabTech', () => {
  let q: QueryView;

  it('reader1 opens it through POST /api/queries/new; refusals change nothing', async () => {
    const before = await countQueries();
    const noComment = await openImageQuery(as('reader1'), { commentText: '  ' });
    expect(noComment.statusCode).toBe(400);
    expect(noComment.json().message).toBe('Comments are mandatory.');
    const toSponsor = await openImageQuery(as('reader1'), { withRoleId: role('SPONSOR') });
    expect(toSponsor.statusCode).toBe(403);
    expect(toSponsor.json().message).toBe(
      `Unable to create query for object type IMAGE object id ${imageId}: ${QUERY_MESSAGES.roleNotQueryable}`,
    );
    const noChild = await openImageQuery(as('reader1'), { childResponseOptionId: null });
    expect(noChild.statusCode).toBe(400);
    expect(noChild.json().message).toContain(QUERY_MESSAGES.childReasonRequired);
    const caseReason = await openImageQuery(as('reader1'), {
      responseOptionId: await reasonId('CASE', 'LabTech', 'Wrong site'),
      childResponseOptionId: null,
    });
    expect(caseReason.statusCode).toBe(400);
    expect(caseReason.json().message).toContain(QUERY_MESSAGES.reasonNotFound);
    const badCategory = await openImageQuery(as('reader1'), { category: 'INTERNAL_WITH_OTHER' });
    expect(badCategory.statusCode).toBe(400);
    const notTheirs = await openImageQuery(as('reader1'), { objectId: reader2ImageId });
    expect(notTheirs.statusCode).toBe(404);
    expect(notTheirs.json().message).toContain(QUERY_MESSAGES.objectNotFound);
    const wrongCase = await openImageQuery(as('reader1'), { caseId: reader2CaseId });
    expect(wrongCase.statusCode).toBe(400);
    const labtech = await openImageQuery(as('labtech'));
    expect(labtech.statusCode).toBe(403);
    expect(await countQueries()).toBe(before);

    const response = await openImageQuery(as('reader1'));
    expect(response.statusCode).toBe(201);
    expect(response.json().message).toBe(QUERY_MESSAGES.created);
    q = queryOf(response);
    expect(q).toMatchObject({
      objectType: 'IMAGE',
      objectId: imageId,
      caseId,
      queryStatus: 'OPEN',
      group: 'open',
      resolution: null,
      reasonText: 'Blurry / out of focus',
      childReasonText: 'Whole slide',
      withRoleName: 'Lab Technician',
      openedByRoleName: 'Central Reader',
      createdBy: users.reader1!.username,
      latestFollowUpOnDt: followUpDate(new Date(), 14),
      actions: ['cancel', 'followUp', 'comment'],
      showDisclaimer: false,
      // blinded: no file name for a reader
      imageName: `ENDO-Q1 – image 1`,
    });
    expect(q.comments.map((c) => c.commentText)).toEqual(['The whole slide is out of focus']);
    expect(q.reminders).toHaveLength(1);
    expect(q.firstQueryReminderId).toBe(q.reminders[0]!.id);
    expect(q.lastQueryReminderId).toBe(q.reminders[0]!.id);
    expect(await auditOf(q.id)).toEqual(['QUERY_OPENED', 'QUERY_COMMENTED']);
    const kase = await as('isc').request({ method: 'GET', url: `/api/cases/${caseId}` });
    expect(kase.json<{ case: { openQueries: number } }>().case.openQueries).toBe(1);
  });

  it('is seen by the target role and admins, not by another reader, the sponsor or outsiders', async () => {
    const lab = await queriesOfImage(as('labtech'));
    expect(lab.queries.map((x) => [x.id, x.actions, x.showDisclaimer])).toEqual([
      [q.id, ['resolve', 'comment', 'replaceImage'], true],
    ]);
    expect(lab.queries[0]!.imageName).toMatch(/^slide-.*\.svs$/);
    const pm = await queriesOfImage(as('pm'));
    expect(pm.queries.map((x) => x.actions)).toEqual([['comment']]);
    const isc = await queriesOfImage(as('isc'));
    expect(isc.queries.map((x) => x.actions)).toEqual([['cancel', 'comment']]);
    expect((await queriesOfImage(as('sponsor'))).queries).toEqual([]);
    expect((await queriesOfImage(as('reader2'))).response.statusCode).toBe(404);
    const reader2List = await list(as('reader2'), { objectType: 'IMAGE', includeClosedQueries: true });
    expect(reader2List.queries.map((x) => x.id)).not.toContain(q.id);
    const outsider = await as('outsiderIsc').request({
      method: 'POST',
      url: `/api/queries/${q.id}/comment`,
      payload: { commentText: 'hello' },
    });
    expect(outsider.statusCode).toBe(404);
    expect(outsider.json().message).toBe(QUERY_MESSAGES.queryNotFound);
    const caseTab = await as('reader1').request({ method: 'GET', url: `/api/queries/case/${caseId}` });
    expect(caseTab.json<{ queries: QueryView[] }>().queries.map((x) => x.id)).toEqual([q.id]);
  });

  it('a comment adds to the history and does not progress the query', async () => {
    const empty = await as('pm').request({
      method: 'POST',
      url: `/api/queries/${q.id}/comment`,
      payload: { commentText: '' },
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toBe(QUERY_MESSAGES.commentsMandatory);
    const mismatch = await as('pm').request({
      method: 'POST',
      url: `/api/queries/${q.id}/comment`,
      payload: { queryId: q.id + 1000, commentText: 'x' },
    });
    expect(mismatch.statusCode).toBe(400);
    const response = await as('pm').request({
      method: 'POST',
      url: `/api/queries/${q.id}/comment`,
      payload: { queryId: q.id, commentText: 'Please prioritise' },
    });
    expect(response.statusCode).toBe(200);
    const after = queryOf(response);
    expect(after.group).toBe('open');
    expect(after.comments.map((c) => c.username)).toEqual([users.reader1!.username, users.pm!.username]);
  });

  it('only the opener follows up, and only from the last reminder', async () => {
    const notOpener = await as('isc').request({
      method: 'POST',
      url: `/api/queries/${q.id}/reminder`,
      payload: { queryReminderId: q.lastQueryReminderId, followUpInDays: 3 },
    });
    expect(notOpener.statusCode).toBe(403);
    expect(notOpener.json().message).toBe(
      `Unable to create query reminder for queryId ${q.id}: ${QUERY_MESSAGES.notAllowed}`,
    );
    const stale = await as('reader1').request({
      method: 'POST',
      url: `/api/queries/${q.id}/reminder`,
      payload: { queryReminderId: q.lastQueryReminderId! + 1000, followUpInDays: 3 },
    });
    expect(stale.statusCode).toBe(409);
    const tooFar = await as('reader1').request({
      method: 'POST',
      url: `/api/queries/${q.id}/reminder`,
      payload: { queryReminderId: q.lastQueryReminderId, followUpInDays: 400 },
    });
    expect(tooFar.statusCode).toBe(400);
    const response = await as('reader1').request({
      method: 'POST',
      url: `/api/queries/${q.id}/reminder`,
      payload: { queryId: q.id, queryReminderId: q.lastQueryReminderId, followUpInDays: 3 },
    });
    expect(response.statusCode).toBe(200);
    const after = queryOf(response);
    expect(after.reminders).toHaveLength(2);
    expect(after.latestFollowUpOnDt).toBe(followUpDate(new Date(), 3));
    expect(after.lastQueryReminderId).not.toBe(q.lastQueryReminderId);
    expect(after.dynamicStatus).toBe('UPCOMINGDUEDATE');
    const again = await as('reader1').request({
      method: 'POST',
      url: `/api/queries/${q.id}/reminder`,
      payload: { queryReminderId: q.lastQueryReminderId, followUpInDays: 3 },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toContain(QUERY_MESSAGES.notLastReminder);
    q = after;
  });

  it('LabTech replaces the image: the query goes with the replacement', async () => {
    const signed = await as('labtech').request({
      method: 'POST',
      url: '/api/signed-urls',
      payload: { studyId, fileNames: ['rescan.svs'] },
    });
    const { s3Key, signedUrl } = signed.json<{ data: { urls: { s3Key: string; signedUrl: string }[] } }>().data
      .urls[0]!;
    const { readFile } = await import('node:fs/promises');
    await t.app.inject({
      method: 'PUT',
      url: signedUrl,
      payload: await readFile(path.join(WSI_DIR, 'small.svs')),
      headers: { 'content-type': 'application/octet-stream' },
    });
    const response = await as('labtech').request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'rescan.svs', s3Key, studyId, imageToReplaceId: imageId },
    });
    expect(response.statusCode, response.body).toBe(200);
    const replacement = response.json<{ image: { id: number } }>().image.id;
    const moved = await t.database.db
      .selectFrom('queries')
      .select(['object_id', 'case_id'])
      .where('id', '=', q.id)
      .executeTakeFirstOrThrow();
    expect(moved).toEqual({ object_id: replacement, case_id: caseId });
    expect(await auditOf(q.id)).toContain('QUERY_IMAGE_REPLACED');
    expect((await queriesOfImage(as('labtech'), replacement)).queries.map((x) => x.id)).toEqual([q.id]);
    imageId = replacement;
    // The replacement has no open query of its own history beyond this one; an image without an
    // open query (and processed) cannot be replaced.
    const plain = (await createStudyImage(t.database.db, { studyId, status: 'CASE_ASSIGNMENT_PENDING' })).id;
    await t.database.db.updateTable('images').set({ processing_status: 'SUCCESS' }).where('id', '=', plain).execute();
    const signed2 = await as('labtech').request({
      method: 'POST',
      url: '/api/signed-urls',
      payload: { studyId, fileNames: ['other.svs'] },
    });
    const second = signed2.json<{ data: { urls: { s3Key: string; signedUrl: string }[] } }>().data.urls[0]!;
    await t.app.inject({
      method: 'PUT',
      url: second.signedUrl,
      payload: Buffer.from('x'),
      headers: { 'content-type': 'application/octet-stream' },
    });
    const refused = await as('labtech').request({
      method: 'POST',
      url: '/api/images',
      payload: { name: 'other.svs', s3Key: second.s3Key, studyId, imageToReplaceId: plain },
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(IMAGE_MESSAGES.imageToReplaceNotReplaceable);
  });

  it('only the target resolves, with an offered option; resolution is final', async () => {
    const notTarget = await as('reader1').request({
      method: 'PATCH',
      url: `/api/queries/${q.id}/resolve`,
      payload: { resolutionOption: 'Image replaced' },
    });
    expect(notTarget.statusCode).toBe(403);
    expect(notTarget.json().message).toBe(
      `Unable to mark the query as resolved for queryId ${q.id}: ${QUERY_MESSAGES.notAllowed}`,
    );
    const unknown = await as('labtech').request({
      method: 'PATCH',
      url: `/api/queries/${q.id}/resolve`,
      payload: { resolutionOption: 'Because' },
    });
    expect(unknown.statusCode).toBe(400);
    const none = await as('labtech').request({
      method: 'PATCH',
      url: `/api/queries/${q.id}/resolve`,
      payload: { resolutionOption: ' ' },
    });
    expect(none.statusCode).toBe(400);
    expect(none.json().message).toContain(QUERY_MESSAGES.resolutionOptionRequired);
    const closeEarly = await as('reader1').request({ method: 'PATCH', url: `/api/queries/${q.id}/close`, payload: {} });
    // Unanswered: the opener's close is a cancel; tried below on another query.
    expect(closeEarly.statusCode).toBe(200);
    expect(closeEarly.json().message).toBe('Cancelled');
    // Re-open the scenario with a fresh query (the cancel above closed this one).
    const fresh = queryOf(await openImageQuery(as('reader1')));
    const labNotOpener = await as('labtech2').request({
      method: 'PATCH',
      url: `/api/queries/${fresh.id}/resolve`,
      payload: { resolutionOption: 'Image replaced', commentText: 'Rescanned at 40x' },
    });
    expect(labNotOpener.statusCode).toBe(200);
    const resolved = queryOf(labNotOpener);
    expect(resolved).toMatchObject({
      group: 'answered',
      dynamicStatus: 'ANSWERED',
      resolution: 'RESOLVED',
      resolutionOption: 'Image replaced',
      resolutionText: 'Rescanned at 40x',
      resolvedBy: users.labtech2!.username,
    });
    const twice = await as('labtech').request({
      method: 'PATCH',
      url: `/api/queries/${fresh.id}/resolve`,
      payload: { resolutionOption: 'Image replaced' },
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().message).toContain(QUERY_MESSAGES.alreadyAnswered);
    q = resolved;
  });

  it('the opener closes the answered query; a closed query takes nothing more', async () => {
    const labtech = await as('labtech').request({ method: 'PATCH', url: `/api/queries/${q.id}/close`, payload: {} });
    expect(labtech.statusCode).toBe(403); // LabTech holds no close permission
    const response = await as('reader1').request({
      method: 'PATCH',
      url: `/api/queries/${q.id}/close`,
      payload: { queryId: q.id, detailedReasonText: 'Thank you' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().message).toBe(QUERY_MESSAGES.closed);
    const closed = queryOf(response);
    expect(closed).toMatchObject({ queryStatus: 'CLOSED', group: 'closed', cancelled: false, closeText: 'Thank you' });
    expect(closed.actions).toEqual([]);
    const comment = await as('pm').request({
      method: 'POST',
      url: `/api/queries/${q.id}/comment`,
      payload: { commentText: 'late' },
    });
    expect(comment.statusCode).toBe(409);
    expect(comment.json().message).toBe(
      `Unable to add comment to query for queryId ${q.id}: ${QUERY_MESSAGES.alreadyClosed}`,
    );
    expect(await auditOf(q.id)).toEqual(['QUERY_OPENED', 'QUERY_COMMENTED', 'QUERY_RESOLVED', 'QUERY_CLOSED']);
  });

  it('a cancelled query shows Cancelled and records QUERY_CANCELLED', async () => {
    const opened = queryOf(await openImageQuery(as('reader1')));
    const response = await as('reader1').request({ method: 'PATCH', url: `/api/queries/${opened.id}/close` });
    expect(response.statusCode).toBe(200);
    expect(response.json().message).toBe('Cancelled');
    expect(queryOf(response)).toMatchObject({ cancelled: true, queryStatus: 'CLOSED', resolution: null });
    expect(await auditOf(opened.id)).toContain('QUERY_CANCELLED');
  });
});

describe('a case query: ISC → DM, marked unresolvable', () => {
  it('needs a reason; closes the query with UNRESOLVABLE', async () => {
    const opened = queryOf(await openCaseQuery(as('isc'), 'DM'));
    expect(opened.actions).toEqual(['cancel', 'followUp', 'comment']);
    const byOpener = await as('isc').request({
      method: 'PATCH',
      url: `/api/queries/${opened.id}/unresolvable`,
      payload: { unresolvableReasonText: 'x' },
    });
    expect(byOpener.statusCode).toBe(403);
    const noReason = await as('dm').request({
      method: 'PATCH',
      url: `/api/queries/${opened.id}/unresolvable`,
      payload: { unresolvableReasonText: '   ' },
    });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toBe(
      `Unable to mark query unresolvable for queryId ${opened.id}: ${QUERY_MESSAGES.unresolvableReasonRequired}`,
    );
    const response = await as('dm').request({
      method: 'PATCH',
      url: `/api/queries/${opened.id}/unresolvable`,
      payload: { queryId: opened.id, unresolvableReasonText: 'The requisition is lost' },
    });
    expect(response.statusCode).toBe(200);
    expect(queryOf(response)).toMatchObject({
      queryStatus: 'CLOSED',
      resolution: 'UNRESOLVABLE',
      resolutionText: 'The requisition is lost',
      resolvedBy: users.dm!.username,
      cancelled: false,
    });
    expect(await auditOf(opened.id)).toEqual(['QUERY_OPENED', 'QUERY_COMMENTED', 'QUERY_UNRESOLVABLE']);
  });

  it('readers see case queries of their assigned cases only, and never subject, site or visit', async () => {
    const opened = queryOf(await openCaseQuery(as('reader1'), 'ISC'));
    const mine = await list(as('reader1'), { objectType: 'CASE' });
    expect(mine.queries.map((x) => x.id)).toContain(opened.id);
    for (const row of mine.queries) expect(Object.keys(row).some((k) => /subject|site|visit/i.test(k))).toBe(false);
    const other = await list(as('reader2'), { objectType: 'CASE', includeClosedQueries: true });
    expect(other.queries.map((x) => x.id)).not.toContain(opened.id);
    const tab = await as('reader2').request({ method: 'GET', url: `/api/queries/case/${caseId}` });
    expect(tab.statusCode).toBe(404);
  });
});

describe('POST /api/queries and GET /api/queries/stats', () => {
  it('filters, sorts and pages on the server; stats count what the caller sees', async () => {
    const db = t.database.db;
    // A fresh study with a known set: 2 open (one overdue), 1 answered, 1 closed, all ISC → DM.
    const sid = (await createStudy(db, `Stats study ${Date.now()}`)).id;
    const iscHere = await createUser(db, { studyRoles: [{ studyId: sid, role: 'ISC' }] });
    const dmHere = await createUser(db, { studyRoles: [{ studyId: sid, role: 'DM' }] });
    const isc = await login(t.app, iscHere.username, PASSWORD);
    const dm = await login(t.app, dmHere.username, PASSWORD);
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const kase = (await createCase(db, { studyId: sid, status: 'PENDING_QC' })).id;
      await db
        .updateTable('cases')
        .set({ proc_id: `STAT-${i}` })
        .where('id', '=', kase)
        .execute();
      const r = await isc.request({
        method: 'POST',
        url: '/api/queries/new',
        payload: {
          queryObjectType: 'CASE',
          objectId: kase,
          studyId: sid,
          withRoleId: role('DM'),
          responseOptionId: await reasonId('CASE', 'DM', i === 0 ? 'Missing images' : 'Wrong site'),
          childResponseOptionId:
            i === 0
              ? await reasonId(
                  'CASE',
                  'DM',
                  'Fewer images than expected',
                  await reasonId('CASE', 'DM', 'Missing images'),
                )
              : null,
          commentText: `query ${i}`,
        },
      });
      ids.push(queryOf(r).id);
    }
    await db.updateTable('queries').set({ latest_follow_up_on: '2020-01-01' }).where('id', '=', ids[0]!).execute();
    await dm.request({
      method: 'PATCH',
      url: `/api/queries/${ids[2]}/resolve`,
      payload: { resolutionOption: 'Other' },
    });
    await dm.request({
      method: 'PATCH',
      url: `/api/queries/${ids[3]}/resolve`,
      payload: { resolutionOption: 'Other' },
    });
    await isc.request({ method: 'PATCH', url: `/api/queries/${ids[3]}/close`, payload: {} });

    expect(await stats(isc, 'CASE')).toEqual({ numOpen: 2, numAnswered: 1, numClosed: 1, numOverdue: 1 });
    expect(await stats(isc, 'IMAGE')).toEqual({ numOpen: 0, numAnswered: 0, numClosed: 0, numOverdue: 0 });

    const open = await list(isc, { objectType: 'CASE' });
    expect(open.total).toBe(3);
    expect(open.queries.map((x) => x.id).sort()).toEqual([ids[0], ids[1], ids[2]].sort());
    const overdue = await list(isc, { objectType: 'CASE', statusFilter: ['overdue'] });
    expect(overdue.queries.map((x) => [x.id, x.overdue, x.dynamicStatus])).toEqual([
      [ids[0], true, 'FOLLOWUPREQUIRED'],
    ]);
    const closed = await list(isc, { objectType: 'CASE', statusFilter: ['closed'] });
    expect(closed.queries.map((x) => x.id)).toEqual([ids[3]]);
    const all = await list(isc, { objectType: 'CASE', includeClosedQueries: true, sort: 'caseName' });
    expect(all.queries.map((x) => x.caseName)).toEqual(['STAT-0', 'STAT-1', 'STAT-2', 'STAT-3']);
    expect(all.queries[0]).toMatchObject({
      queryWith: 'Data Manager',
      queryReasonText: 'Missing images – Fewer images than expected',
      openedByUsername: iscHere.username,
    });
    const page2 = await list(isc, {
      objectType: 'CASE',
      includeClosedQueries: true,
      sort: '-caseName',
      page: 2,
      pageSize: 10,
    });
    expect(page2).toMatchObject({ total: 4, queries: [] });
    const search = await list(isc, { objectType: 'CASE', includeClosedQueries: true, searchText: 'fewer images' });
    expect(search.queries.map((x) => x.id)).toEqual([ids[0]]);
    const byCase = await list(isc, { objectType: 'CASE', searchText: 'stat-1' });
    expect(byCase.queries.map((x) => x.id)).toEqual([ids[1]]);
    const byRole = await list(isc, { objectType: 'CASE', roleFilter: [role('PM')] });
    expect(byRole.total).toBe(0);
    const byStudy = await list(users.isc!.session, { objectType: 'CASE', studyFilter: [sid] });
    expect(byStudy.total).toBe(0); // that ISC has no access to the stats study
    // DM sees queries with its role, answered ones included.
    expect(await stats(dm, 'CASE')).toEqual({ numOpen: 2, numAnswered: 1, numClosed: 1, numOverdue: 1 });
    // The tab's own permission: a Site user lists images only.
    const site = await createUser(db, { studyRoles: [{ studyId: sid, role: 'Site' }] });
    const siteSession = await login(t.app, site.username, PASSWORD);
    const refused = await siteSession.request({ method: 'POST', url: '/api/queries', payload: { objectType: 'CASE' } });
    expect(refused.statusCode).toBe(403);
    const bad = await isc.request({
      method: 'POST',
      url: '/api/queries',
      payload: { objectType: 'CASE', pageSize: 7 },
    });
    expect(bad.statusCode).toBe(400);
  });
});

describe('reminders (the pg-boss cron job)', () => {
  it('e-mails the target role once per due query, and again only after a new follow-up date comes', async () => {
    const db = t.database.db;
    const deps = { db, mailer: t.app.slides.mailer, publicUrl: 'https://lamina.example.org' };
    await sendDueReminders(deps); // whatever other tests left due
    inbox.length = 0;
    const opened = queryOf(await openImageQuery(as('reader1'), { followUpInDays: 0 }));
    const other = queryOf(await openImageQuery(as('reader1'), { followUpInDays: 5 }));
    const first = await sendDueReminders(deps);
    expect(first).toEqual({ queries: 1, sent: 1 });
    expect(inbox).toHaveLength(1);
    expect(inbox[0]!.to.sort()).toEqual([users.labtech!.username, users.labtech2!.username].sort());
    // The body is quoted-printable: soft line breaks and '=' escaped.
    const text = inbox[0]!.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    expect(text).toContain(`Query ${opened.id}`);
    expect(text).toContain(`https://lamina.example.org/studies/${studyId}/images/${imageId}?queryId=${opened.id}`);
    expect(await sendDueReminders(deps)).toEqual({ queries: 0, sent: 0 });
    expect(inbox).toHaveLength(1);
    const reminded = (await queriesOfImage(as('reader1'))).queries.find((x) => x.id === opened.id)!;
    expect(reminded.reminders[0]!.remindedOnDt).not.toBeNull();
    expect(await auditOf(opened.id)).toContain('QUERY_REMINDER_SENT');

    // A new follow-up date: due again when it comes.
    await as('reader1').request({
      method: 'POST',
      url: `/api/queries/${opened.id}/reminder`,
      payload: { queryReminderId: reminded.lastQueryReminderId, followUpInDays: 2 },
    });
    expect(await sendDueReminders(deps)).toEqual({ queries: 0, sent: 0 });
    await db
      .updateTable('query_reminders')
      .set({ follow_up_on: '2020-01-01' })
      .where('query_id', '=', opened.id)
      .execute();
    expect(await sendDueReminders(deps)).toEqual({ queries: 1, sent: 1 });
    expect(inbox).toHaveLength(2);

    // Answered or closed queries are not chased.
    await db
      .updateTable('query_reminders')
      .set({ follow_up_on: '2020-01-01' })
      .where('query_id', '=', other.id)
      .execute();
    await as('labtech').request({
      method: 'PATCH',
      url: `/api/queries/${other.id}/resolve`,
      payload: { resolutionOption: 'Confirmed as correct' },
    });
    expect(await sendDueReminders(deps)).toEqual({ queries: 0, sent: 0 });
    expect(inbox).toHaveLength(2);
  });

  it('registers the sweep as a cron schedule of pg-boss', async () => {
    await startQueryReminders({
      db: t.database.db,
      mailer: t.app.slides.mailer,
      publicUrl: 'http://localhost',
      jobs: t.app.slides.jobs,
      cron: '*/15 * * * *',
    });
    const boss = await t.app.slides.jobs.instance();
    const schedules = await boss.getSchedules();
    expect(schedules.map((s) => [s.name, s.cron])).toContainEqual([QUEUES.queryReminders, '*/15 * * * *']);
  });
});

describe('image queries follow their image', () => {
  it('to another case (the open-query counts follow too)', async () => {
    const db = t.database.db;
    const opened = queryOf(await openImageQuery(as('reader1')));
    const target = (await createCase(db, { studyId, status: 'PENDING_QC' })).id;
    const count = async (id: number) =>
      (await db.selectFrom('cases').select('open_queries').where('id', '=', id).executeTakeFirstOrThrow()).open_queries;
    const open = await db
      .selectFrom('queries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('object_type', '=', 'IMAGE')
      .where('object_id', '=', imageId)
      .where('query_status', '=', 'OPEN')
      .executeTakeFirstOrThrow();
    const before = await count(caseId);
    await db.updateTable('images').set({ case_id: target }).where('id', '=', imageId).execute();
    const row = await db.selectFrom('queries').select('case_id').where('id', '=', opened.id).executeTakeFirstOrThrow();
    expect(row.case_id).toBe(target);
    expect(await count(caseId)).toBe(before - open.n);
    expect(await count(target)).toBe(open.n);
    await db.updateTable('images').set({ case_id: caseId }).where('id', '=', imageId).execute();
  });
});

describe('the reason catalogue (system admins)', () => {
  it('adds, nests one level, renames and deactivates reasons, audited; inactive reasons are not offered', async () => {
    const admin = as('sysadmin');
    const listed = await admin.request({ method: 'GET', url: '/api/query-reasons' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json<{ reasons: unknown[] }>().reasons.length).toBeGreaterThan(50);
    expect((await as('isc').request({ method: 'GET', url: '/api/query-reasons' })).statusCode).toBe(403);

    const created = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('LabTech'), reasonText: '  Scanner artefact ' },
    });
    expect(created.statusCode).toBe(201);
    const parent = created.json<{ reason: { id: number; reasonText: string } }>().reason;
    expect(parent.reasonText).toBe('Scanner artefact');
    const dup = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('LabTech'), reasonText: 'scanner ARTEFACT' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toBe(QUERY_MESSAGES.reasonDuplicate);
    const child = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('LabTech'), parentId: parent.id, reasonText: 'Stripes' },
    });
    expect(child.statusCode).toBe(201);
    const childId = child.json<{ reason: { id: number } }>().reason.id;
    const grandchild = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('LabTech'), parentId: childId, reasonText: 'Too deep' },
    });
    expect(grandchild.statusCode).toBe(400);
    expect(grandchild.json().message).toBe(QUERY_MESSAGES.reasonNestOneLevel);
    const otherRole = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('DM'), parentId: parent.id, reasonText: 'Wrong place' },
    });
    expect(otherRole.statusCode).toBe(400);
    const empty = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('DM'), reasonText: '   ' },
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toBe(QUERY_MESSAGES.reasonTextRequired);
    const notTarget = await admin.request({
      method: 'POST',
      url: '/api/query-reasons',
      payload: { objectType: 'IMAGE', withRoleId: role('LIS'), reasonText: 'x' },
    });
    expect(notTarget.statusCode).toBe(400);

    const renamed = await admin.request({
      method: 'PATCH',
      url: `/api/query-reasons/${parent.id}`,
      payload: { reasonText: 'Scanner artefacts', reasonForChange: 'plural' },
    });
    expect(renamed.statusCode).toBe(200);
    const nothing = await admin.request({
      method: 'PATCH',
      url: `/api/query-reasons/${parent.id}`,
      payload: { reasonText: 'Scanner artefacts' },
    });
    expect(nothing.statusCode).toBe(400);

    // Used by a query, then deactivated: no longer offered, still on the query.
    const used = queryOf(
      await openImageQuery(as('reader1'), { responseOptionId: parent.id, childResponseOptionId: childId }),
    );
    const off = await admin.request({
      method: 'PATCH',
      url: `/api/query-reasons/${parent.id}`,
      payload: { active: false, reasonText: 'Scanner artefacts (retired)' },
    });
    expect(off.json<{ reason: { active: boolean; usedBy: number } }>().reason).toMatchObject({
      active: false,
      usedBy: 1,
    });
    const meta = await as('reader1').request({ method: 'GET', url: `/api/queries/metadata?studyId=${studyId}` });
    const lab = meta
      .json<{
        imageReasons: { withRoleId: number; values: { reasonOptionId: number; reasonOptionIsActive: boolean }[] }[];
      }>()
      .imageReasons.find((r) => r.withRoleId === role('LabTech'))!;
    expect(lab.values.find((v) => v.reasonOptionId === parent.id)?.reasonOptionIsActive).toBe(false);
    const refused = await openImageQuery(as('reader1'), {
      responseOptionId: parent.id,
      childResponseOptionId: childId,
    });
    expect(refused.statusCode).toBe(400);
    const still = (await queriesOfImage(as('reader1'))).queries.find((x) => x.id === used.id)!;
    expect(still.reasonText).toBe('Scanner artefacts'); // the text it was opened with

    const actions = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'field'])
      .where('entity_type', '=', 'query_reason')
      .where('entity_id', '=', String(parent.id))
      .orderBy('id')
      .execute();
    expect(actions.map((a) => `${a.action}:${a.field ?? ''}`)).toEqual([
      'QUERY_REASON_CREATED:',
      'QUERY_REASON_CHANGED:reasonText',
      'QUERY_REASON_CHANGED:reasonText',
      'QUERY_REASON_CHANGED:active',
    ]);
  });
});
