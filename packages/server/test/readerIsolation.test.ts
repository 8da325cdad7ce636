import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUERY_MESSAGES, roleByName, type QueryView, type RoleName } from '@lamina/domain';
import { sendDueReminders } from '../src/modules/queries/queryReminders.js';
import { login, type Session } from './testApp.js';
import {
  assignReader,
  createCase,
  createSlideTestApp,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
  type SlideTestContext,
} from './factories.js';

/**
 * Independent reads (issue 26, findings 1–3): two central readers of one case. Whatever the first
 * reader writes — a query, its comments, a case comment — and whoever the first reader is, the
 * second learns nothing of it through any call they can make; the roles that are not blinded keep
 * the spec's role rules. Queries to a reading role go to one reader in person.
 */
let t: SlideTestContext;
let studyId: number;
let caseId: number;
let imageId: number;
/** A case read by reader2 only, and one by reader1 only. */
let reader2OnlyCase: number;
let reader1OnlyCase: number;
const users: Record<string, { id: number; username: string; session: Session }> = {};
const as = (key: string) => users[key]!.session;
const role = (name: RoleName) => roleByName(name).id;

/** What reader1 writes: none of it may reach reader2. */
const R1_QUERY_COMMENT = 'R1 counted 37 eosinophils in HPF1, the slide is blurry there';
const R1_CASE_QUERY_COMMENT = 'R1 sees villous blunting: is this the right visit?';
const R1_CASE_COMMENT = 'R1: marked 4 HPFs, peak 37 eos';

async function user(key: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  users[key] = { ...made, session: await login(t.app, made.username, PASSWORD) };
}

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

async function open(session: Session, payload: Record<string, unknown>) {
  return session.request({ method: 'POST', url: '/api/queries/new', payload });
}

async function imageQueryToLab(session: Session, commentText: string) {
  const blurry = await reasonId('IMAGE', 'LabTech', 'Blurry / out of focus');
  return open(session, {
    queryObjectType: 'IMAGE',
    objectId: imageId,
    studyId,
    caseId: null,
    followUpInDays: 0,
    withRoleId: role('LabTech'),
    responseOptionId: blurry,
    childResponseOptionId: await reasonId('IMAGE', 'LabTech', 'Part of the tissue', blurry),
    commentText,
  });
}

async function caseQuery(session: Session, withRole: RoleName, commentText: string, over: object = {}) {
  return open(session, {
    queryObjectType: 'CASE',
    objectId: caseId,
    studyId,
    caseId,
    followUpInDays: 0,
    withRoleId: role(withRole),
    responseOptionId: await reasonId('CASE', withRole, 'Visit ID mismatch'),
    commentText,
    ...over,
  });
}

function created(response: { statusCode: number; body: string; json: () => unknown }): QueryView {
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { query: QueryView }).query;
}

async function get(session: Session, url: string) {
  return session.request({ method: 'GET', url });
}

/** The ids of the queries `session` sees through every query read it can make. */
async function seenQueryIds(session: Session): Promise<{ ids: Set<number>; bodies: string }> {
  const responses = [
    await get(session, `/api/queries/case/${caseId}`),
    await get(session, `/api/queries/image/${imageId}`),
    await session.request({
      method: 'POST',
      url: '/api/queries',
      payload: { objectType: 'CASE', includeClosedQueries: true },
    }),
    await session.request({
      method: 'POST',
      url: '/api/queries',
      payload: { objectType: 'IMAGE', includeClosedQueries: true },
    }),
  ];
  const ids = new Set<number>();
  for (const r of responses) {
    expect(r.statusCode, r.body).toBe(200);
    for (const q of r.json<{ queries: { id: number }[] }>().queries) ids.add(q.id);
  }
  return { ids, bodies: responses.map((r) => r.body).join('\n') };
}

async function stats(session: Session) {
  const response = await get(session, '/api/queries/stats');
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ stats: Record<string, number> }>().stats;
}

async function queryRow(id: number) {
  return t.database.db.selectFrom('queries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

beforeAll(async () => {
  t = await createSlideTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db, `Independent reads ${Date.now()}`)).id;
  const inStudy = (r: RoleName) => ({ studyRoles: [{ studyId, role: r }] });
  await user('reader1', inStudy('CR'));
  await user('reader2', inStudy('CR'));
  await user('isc', inStudy('ISC'));
  await user('labtech', inStudy('LabTech'));
  await user('dm', inStudy('DM'));
  caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await db.updateTable('cases').set({ proc_id: 'ENDO-IRX' }).where('id', '=', caseId).execute();
  imageId = (await createStudyImage(db, { studyId, caseId, status: 'READY_FOR_READING' })).id;
  await assignReader(db, { caseId, userId: users.reader1!.id });
  await assignReader(db, { caseId, userId: users.reader2!.id });
  reader2OnlyCase = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await assignReader(db, { caseId: reader2OnlyCase, userId: users.reader2!.id });
  reader1OnlyCase = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  await assignReader(db, { caseId: reader1OnlyCase, userId: users.reader1!.id });
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('queries (finding 1): a reader sees and acts only on their own or those sent to them', () => {
  let imageQuery: QueryView;
  let caseQueryToIsc: QueryView;

  beforeAll(async () => {
    imageQuery = created(await imageQueryToLab(as('reader1'), R1_QUERY_COMMENT));
    caseQueryToIsc = created(await caseQuery(as('reader1'), 'ISC', R1_CASE_QUERY_COMMENT));
  });

  it('reader1 sees their queries, with what the opener may do', async () => {
    const seen = await seenQueryIds(as('reader1'));
    expect(seen.ids).toContain(imageQuery.id);
    expect(seen.ids).toContain(caseQueryToIsc.id);
    expect(imageQuery.actions).toEqual(['cancel', 'followUp', 'comment']);
  });

  it('reader2, reading the same case, gets none of them, nor their comments or author', async () => {
    const seen = await seenQueryIds(as('reader2'));
    expect([...seen.ids]).toEqual([]);
    expect(seen.bodies).not.toContain('R1 ');
    expect(seen.bodies).not.toContain(users.reader1!.username);
    for (const q of [imageQuery, caseQueryToIsc]) {
      const one = await as('reader2').request({
        method: 'POST',
        url: `/api/queries/${q.id}/comment`,
        payload: { commentText: 'x' },
      });
      expect(one.statusCode).toBe(404);
      expect(one.json<{ message: string }>().message).toBe(QUERY_MESSAGES.queryNotFound);
    }
  });

  it('reader2 cannot cancel, follow up or close reader1’s query: 404, nothing changes', async () => {
    const before = await queryRow(imageQuery.id);
    const cancel = await as('reader2').request({
      method: 'PATCH',
      url: `/api/queries/${imageQuery.id}/close`,
      payload: {},
    });
    expect(cancel.statusCode).toBe(404);
    const followUp = await as('reader2').request({
      method: 'POST',
      url: `/api/queries/${imageQuery.id}/reminder`,
      payload: { queryReminderId: imageQuery.lastQueryReminderId, followUpInDays: 3 },
    });
    expect(followUp.statusCode).toBe(404);
    expect(await queryRow(imageQuery.id)).toEqual(before);
  });

  it('the stats header counts the same set', async () => {
    expect(await stats(as('reader2'))).toEqual({ numOpen: 0, numAnswered: 0, numClosed: 0, numOverdue: 0 });
    expect((await stats(as('reader1'))).numOpen).toBe(2);
  });

  it('the roles that are not blinded keep the role rules: LabTech and ISC see what was sent to them', async () => {
    expect((await seenQueryIds(as('labtech'))).ids).toContain(imageQuery.id);
    expect((await seenQueryIds(as('isc'))).ids).toEqual(new Set([imageQuery.id, caseQueryToIsc.id]));
  });

  it('a query to a reading role goes to one reader: chosen when the case has several', async () => {
    const none = await caseQuery(as('isc'), 'CR', 'Please re-check HPF 2');
    expect(none.statusCode).toBe(400);
    expect(none.json<{ message: string }>().message).toContain(QUERY_MESSAGES.readerRequired);
    const stranger = await caseQuery(as('isc'), 'CR', 'Please re-check HPF 2', { withUserId: users.dm!.id });
    expect(stranger.statusCode).toBe(400);
    expect(stranger.json<{ message: string }>().message).toContain(QUERY_MESSAGES.readerNotAssigned);
    const toDmInPerson = await caseQuery(as('isc'), 'DM', 'Visit?', { withUserId: users.dm!.id });
    expect(toDmInPerson.statusCode).toBe(400);
    expect(toDmInPerson.json<{ message: string }>().message).toContain(QUERY_MESSAGES.readerOnlyForReadingRoles);

    const toReader1 = created(
      await caseQuery(as('isc'), 'CR', 'Please re-check HPF 2', { withUserId: users.reader1!.id }),
    );
    expect(toReader1.withUserId).toBe(users.reader1!.id);
    expect((await seenQueryIds(as('reader1'))).ids).toContain(toReader1.id);
    expect((await seenQueryIds(as('reader2'))).ids).not.toContain(toReader1.id);
    const mine = (await get(as('reader1'), `/api/queries/case/${caseId}`))
      .json<{ queries: QueryView[] }>()
      .queries.find((q) => q.id === toReader1.id)!;
    expect(mine.actions).toContain('resolve');
    const theirs = await as('reader2').request({
      method: 'PATCH',
      url: `/api/queries/${toReader1.id}/resolve`,
      payload: { resolutionOption: 'Confirmed as correct' },
    });
    expect(theirs.statusCode).toBe(404);
    expect((await queryRow(toReader1.id)).resolution).toBeNull();
  });

  it('the reminder of a query to one reader goes to that reader only', async () => {
    const db = t.database.db;
    const q = created(await caseQuery(as('isc'), 'CR', 'Reminder check', { withUserId: users.reader2!.id }));
    await db.updateTable('query_reminders').set({ reminded_on: new Date() }).where('query_id', '!=', q.id).execute();
    await sendDueReminders({ db, mailer: t.app.slides.mailer, publicUrl: 'http://localhost' });
    const mails = await db
      .selectFrom('mail_outbox')
      .select('to_address')
      .where('kind', '=', 'QUERY_REMINDER')
      .where('subject', 'like', `%Query ${q.id} %`)
      .execute();
    expect(mails.map((m) => m.to_address)).toEqual([users.reader2!.username]);
  });
});

describe('case comments (finding 2): a reader’s comment never reaches another reader', () => {
  const lastComment = async (session: Session) => {
    const response = await get(session, `/api/cases/${caseId}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ case: { lastCaseComment: { text: string; by: string } | null } }>().case.lastCaseComment;
  };
  const comment = async (session: Session, text: string) => {
    const response = await session.request({
      method: 'PATCH',
      url: `/api/cases/${caseId}/comment`,
      payload: { comment: text },
    });
    expect(response.statusCode, response.body).toBe(200);
  };

  it('reader1 and the ISC see reader1’s comment; reader2 does not', async () => {
    await comment(as('isc'), 'ISC: slides checked');
    await comment(as('reader1'), R1_CASE_COMMENT);
    expect((await lastComment(as('reader1')))?.text).toBe(R1_CASE_COMMENT);
    expect((await lastComment(as('isc')))?.text).toBe(R1_CASE_COMMENT);
    const second = await get(as('reader2'), `/api/cases/${caseId}`);
    expect(second.body).not.toContain('R1:');
    expect((await lastComment(as('reader2')))?.text).toBe('ISC: slides checked');
  });

  it('a later comment of a role that is not blinded reaches every reader', async () => {
    await comment(as('isc'), 'ISC: one slide replaced');
    expect((await lastComment(as('reader2')))?.text).toBe('ISC: one slide replaced');
  });
});

describe('co-assignment (finding 3): a reader cannot filter the cases by another reader', () => {
  const caseIds = async (session: Session, query = '') => {
    const response = await get(session, `/api/studies/${studyId}/cases${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response
      .json<{ cases: { id: number }[] }>()
      .cases.map((c) => c.id)
      .sort((a, b) => a - b);
  };

  it('the filter by reader1 gives reader2 their own list, not the cases they share with reader1', async () => {
    const own = await caseIds(as('reader2'));
    expect(own).toEqual([caseId, reader2OnlyCase].sort((a, b) => a - b));
    expect(await caseIds(as('reader2'), `?assignee=${users.reader1!.id}`)).toEqual(own);
    expect(await caseIds(as('reader2'), '?assignee=unassigned')).toEqual(own);
  });

  it('roles that are not blinded still filter by reader', async () => {
    expect(await caseIds(as('isc'), `?assignee=${users.reader1!.id}`)).toEqual(
      [caseId, reader1OnlyCase].sort((a, b) => a - b),
    );
  });
});

describe('the AI choice (finding 4): a reader’s include/exclude is kept with their read, not on the image', () => {
  it('a reader cannot set the image’s flag; Mark as Scored records their choice on their read only', async () => {
    const db = t.database.db;
    const flag = await as('reader1').request({
      method: 'PATCH',
      url: `/api/images/${imageId}/accept-ai-annotations`,
      payload: { acceptAiAnnotations: true },
    });
    expect(flag.statusCode).toBe(403);
    const mark = await as('reader1').request({
      method: 'PATCH',
      url: `/api/cases/${caseId}/status/forward`,
      payload: { includeAiCounts: true },
    });
    expect(mark.statusCode, mark.body).toBe(200);
    const reads = await db
      .selectFrom('case_readers')
      .select(['user_id', 'include_ai_counts'])
      .where('case_id', '=', caseId)
      .orderBy('user_id')
      .execute();
    expect(reads).toEqual([
      { user_id: users.reader1!.id, include_ai_counts: true },
      { user_id: users.reader2!.id, include_ai_counts: null },
    ]);
    const image = await db
      .selectFrom('images')
      .select('accept_ai_annotations')
      .where('id', '=', imageId)
      .executeTakeFirstOrThrow();
    expect(image.accept_ai_annotations).toBe(false);
  });
});

describe('myReadAt (issue 29, item 8): a reader’s rows carry only their own read time', () => {
  it('reader2’s case rows carry reader2’s time only, never reader1’s', async () => {
    const db = t.database.db;
    // reader1 marked caseId scored above; reader2 now scores the case only they read.
    await createStudyImage(db, { studyId, caseId: reader2OnlyCase, status: 'READY_FOR_READING' });
    const mark = await as('reader2').request({
      method: 'PATCH',
      url: `/api/cases/${reader2OnlyCase}/status/forward`,
      payload: {},
    });
    expect(mark.statusCode, mark.body).toBe(200);
    const reads = await db
      .selectFrom('case_readers')
      .select(['case_id', 'user_id', 'read_at'])
      .where('read_at', 'is not', null)
      .execute();
    const timeOf = (c: number, u: number) =>
      reads.find((r) => r.case_id === c && r.user_id === u)?.read_at?.toISOString();
    const reader1Time = timeOf(caseId, users.reader1!.id)!;
    const reader2Time = timeOf(reader2OnlyCase, users.reader2!.id)!;
    expect(reader1Time).toBeDefined();
    expect(reader2Time).toBeDefined();

    const list = await get(as('reader2'), `/api/studies/${studyId}/cases`);
    const assigned = await get(as('reader2'), '/api/cases/assigned');
    for (const response of [list, assigned]) {
      expect(response.statusCode, response.body).toBe(200);
      const rows = response.json<{ cases: { id: number; myReadAt: string | null }[] }>().cases;
      expect(rows.find((c) => c.id === caseId)?.myReadAt).toBeNull();
      expect(rows.find((c) => c.id === reader2OnlyCase)?.myReadAt).toBe(reader2Time);
      expect(response.body).not.toContain(reader1Time);
    }
    const mine = (await get(as('reader1'), `/api/studies/${studyId}/cases`)).json<{
      cases: { id: number; myReadAt: string | null }[];
    }>().cases;
    expect(mine.find((c) => c.id === caseId)?.myReadAt).toBe(reader1Time);
  });
});
