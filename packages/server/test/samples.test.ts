import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IM_EDIT_MESSAGES,
  SAMPLE_MESSAGES,
  SAMPLE_TEMPLATE_HEADER,
  csvLine,
  parseSampleTable,
  type RoleName,
  type SampleImportResult,
} from '@lamina/domain';
import { login, type Session } from './testApp.js';
import {
  createCase,
  createImage,
  createSlideTestApp,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
  type SlideTestContext,
} from './factories.js';

/**
 * Sample-data import (issue 12; doc 2 §4, §7; docs/SAMPLE-DATA.md): through the real flow — signed
 * upload, PUT, process — every outcome: fields updated (audited with the import's reason), rows that
 * fail with their message (and change nothing), study match by Protocol ID, Data Incomplete and
 * back, case match; the result file; refusals of the file as a whole.
 */

let t: SlideTestContext;
let study: { id: number; name: string };
let other: { id: number; name: string };
const sessions = new Map<string, Session>();
const db = () => t.database.db;

async function as(role: RoleName | 'sysadmin'): Promise<Session> {
  const known = sessions.get(role);
  if (known) return known;
  const user =
    role === 'sysadmin'
      ? await createUser(db(), { systemAdmin: true, globalRoles: ['SystemAdmin'] })
      : await createUser(db(), { studyRoles: [{ studyId: study.id, role }] });
  const session = await login(t.app, user.username, PASSWORD);
  sessions.set(role, session);
  return session;
}

/** Uploads a file through the signed URL the server gives; returns the process request. */
async function upload(session: Session, fileName: string, content: string | Buffer) {
  const signed = await session.request({ method: 'POST', url: '/api/samples/upload', payload: { fileName } });
  expect(signed.statusCode, signed.body).toBe(200);
  const { putSignedUrl, sampleDataRequest } = signed.json<{
    putSignedUrl: string;
    sampleDataRequest: { s3SampleDataKey: string; fileName: string; resultFileKey: string };
  }>();
  const put = await t.app.inject({ method: 'PUT', url: putSignedUrl, payload: content });
  expect(put.statusCode, put.body).toBeLessThan(300);
  return sampleDataRequest;
}

async function importFile(session: Session, fileName: string, content: string | Buffer) {
  const request = await upload(session, fileName, content);
  const response = await session.request({ method: 'POST', url: '/api/samples/process', payload: request });
  return { request, status: response.statusCode, body: response.json<SampleImportResult & { message: string }>() };
}

/** The result CSV behind the summary's link: rows of cells. */
async function resultRows(link: string): Promise<string[][]> {
  const response = await t.app.inject({ method: 'GET', url: link });
  expect(response.statusCode).toBe(200);
  const { header, rows } = parseSampleTable(response.body);
  return [header, ...rows];
}

const csv = (...rows: (string | null)[][]) => rows.map((r) => csvLine(r)).join('');
const image = (id: number) => db().selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const named = async (name: string, spec: { studyId?: number | null; status?: string; caseId?: number } = {}) => {
  const row =
    spec.studyId === null
      ? await createImage(db(), { studyId: null, status: spec.status ?? 'STUDY_ASSIGNMENT_PENDING' })
      : await createStudyImage(db(), { studyId: spec.studyId ?? study.id, status: spec.status, caseId: spec.caseId });
  await db().updateTable('images').set({ name }).where('id', '=', row.id).execute();
  return row.id;
};
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

beforeAll(async () => {
  t = await createSlideTestApp();
  study = await createStudy(db(), `Sample study ${Date.now()}`);
  other = await createStudy(db(), `Sample other ${Date.now()}`);
  await db()
    .updateTable('studies')
    .set({ visit_ids: ['V1', 'V2'], lab_visit_ids: ['LV1', 'LV2'], protocol_ids: ['PROTO-S'] })
    .where('id', '=', study.id)
    .execute();
  await db()
    .updateTable('studies')
    .set({ protocol_ids: ['PROTO-SHARED'] })
    .where('id', '=', other.id)
    .execute();
});

afterAll(async () => {
  await t.close();
});

describe('sample-data import: rows', () => {
  it('updates the named images field by field, audited with the reason Sample data import {file}; the summary counts', async () => {
    const a = await named(`a-${unique()}.svs`);
    const b = await named(`b-${unique()}.svs`);
    const { name: nameA } = await image(a);
    const { name: nameB } = await image(b);
    const file = csv(
      ['File Name', 'Subject ID', 'Site ID', 'Visit ID', 'QA Comments'],
      [nameA, 'SUBJ-1', 'SITE-1', 'V1', 'Fold at the edge'],
      [nameB, 'SUBJ-2', '', '', ''],
    );
    const r = await importFile(await as('LabTech'), 'lab-1.csv', file);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ numRowsUpdated: 2, numFieldsUpdated: 5, numRowsFailed: 0 });
    const first = await image(a);
    expect([first.subject_id, first.site_id, first.visit_id, first.qa_comments]).toEqual([
      'SUBJ-1',
      'SITE-1',
      'V1',
      'Fold at the edge',
    ]);
    expect(first.status).toBe('CASE_ASSIGNMENT_PENDING');
    // b lacks site and visit: Data Incomplete.
    expect((await image(b)).status).toBe('DATA_INCOMPLETE');
    const audit = await db()
      .selectFrom('audit_events')
      .select(['action', 'field', 'new_value', 'reason'])
      .where('entity_type', '=', 'image')
      .where('entity_id', '=', String(a))
      .execute();
    expect(audit).toContainEqual({
      action: 'IMAGE_EDITED',
      field: 'subjectId',
      new_value: 'SUBJ-1',
      reason: 'Sample data import lab-1.csv',
    });
    const rows = await resultRows(r.body.s3SampleDataResponse);
    expect(rows[0]).toEqual(['File Name', 'Subject ID', 'Site ID', 'Visit ID', 'QA Comments', 'Result', 'Message']);
    expect(rows[1]?.[5]).toBe('Updated');
    expect(rows[2]?.slice(5)).toEqual(['Updated', `1 field updated; ${SAMPLE_MESSAGES.dataIncomplete}`]);
  });

  it('rows that match nothing, match several images or carry invalid values fail with a message and change nothing', async () => {
    const accession = `ACC-${unique()}`;
    const twinA = await named(`t1-${unique()}.svs`);
    const twinB = await named(`t2-${unique()}.svs`);
    await db().updateTable('images').set({ accession_number: accession }).where('id', 'in', [twinA, twinB]).execute();
    const lone = await named(`l-${unique()}.svs`);
    const loneAccession = `ACC-${unique()}`;
    await db().updateTable('images').set({ accession_number: loneAccession }).where('id', '=', lone).execute();
    const file = csv(
      ['Accession Number', 'Subject ID', 'Visit ID', 'Protocol ID'],
      ['ACC-NOWHERE', 'S-1', '', ''],
      [accession, 'S-2', '', ''],
      [loneAccession, 'S'.repeat(31), '', ''],
      [loneAccession, 'S-3', 'V9', ''],
      // A lab technician may not edit the Protocol ID.
      [loneAccession, 'S-4', '', 'PROTO-S'],
      ['', 'S-5', '', ''],
    );
    const r = await importFile(await as('LabTech'), 'bad.csv', file);
    expect(r.body).toMatchObject({ numRowsUpdated: 0, numFieldsUpdated: 0, numRowsFailed: 6 });
    const messages = (await resultRows(r.body.s3SampleDataResponse)).slice(1).map((row) => row.slice(4).join('|'));
    expect(messages).toEqual([
      `Failed|${SAMPLE_MESSAGES.noMatch('Accession Number', 'ACC-NOWHERE')}`,
      `Failed|${SAMPLE_MESSAGES.severalMatch('Accession Number', accession)}`,
      'Failed|Subject ID must be less than 30 characters',
      `Failed|${IM_EDIT_MESSAGES.notAnOption('Visit ID')}`,
      `Failed|${IM_EDIT_MESSAGES.notPermitted('Protocol ID')}`,
      `Failed|${SAMPLE_MESSAGES.emptyKey('Accession Number')}`,
    ]);
    for (const id of [twinA, twinB, lone]) expect((await image(id)).subject_id).toBeNull();
  });

  it('an image without a study takes the one study listing its Protocol ID (isStudyMatched), then its case by subject, visit and Endo Procedure ID (isCaseMatched)', async () => {
    const orphan = await named(`o-${unique()}.svs`, { studyId: null });
    const { name } = await image(orphan);
    const kase = await createCase(db(), { studyId: study.id });
    const procId = `ENDO-${unique()}`;
    await db()
      .updateTable('cases')
      .set({ proc_id: procId, subject_id: 'SUBJ-M', site_id: 'SITE-M', visit_id: 'V2' })
      .where('id', '=', kase.id)
      .execute();
    const file = csv(
      ['File Name', 'Protocol ID', 'Subject ID', 'Site ID', 'Visit ID', 'Endo Procedure ID'],
      [name, 'PROTO-S', 'SUBJ-M', 'SITE-M', 'V2', procId.toLowerCase()],
    );
    const r = await importFile(await as('sysadmin'), 'match.csv', file);
    expect(r.body, JSON.stringify(r.body)).toMatchObject({ numRowsUpdated: 1, numFieldsUpdated: 4, numRowsFailed: 0 });
    const matched = await image(orphan);
    expect(matched.study_id).toBe(study.id);
    expect(matched.is_study_matched).toBe(true);
    expect(matched.case_id).toBe(kase.id);
    expect(matched.is_case_matched).toBe(true);
    expect(matched.status).toBe('LAB_QC_PENDING');
    const rows = await resultRows(r.body.s3SampleDataResponse);
    expect(rows[1]?.slice(6).join('|')).toContain(`assigned to case ${procId}`);
    const actions = (
      await db()
        .selectFrom('audit_events')
        .select('action')
        .where('entity_type', '=', 'image')
        .where('entity_id', '=', String(orphan))
        .execute()
    ).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['IMAGE_EDITED', 'IMAGE_STUDY_MATCHED', 'IMAGE_CASE_ASSIGNED']));
  });

  it('a Protocol ID shared by two studies, or none, matches no study', async () => {
    await db()
      .updateTable('studies')
      .set({ protocol_ids: ['PROTO-S', 'PROTO-SHARED'] })
      .where('id', '=', study.id)
      .execute();
    const orphan = await named(`o2-${unique()}.svs`, { studyId: null });
    const { name } = await image(orphan);
    const r = await importFile(
      await as('sysadmin'),
      'shared.csv',
      csv(['File Name', 'Protocol ID'], [name, 'PROTO-SHARED']),
    );
    expect(r.body.numRowsUpdated).toBe(1);
    const row = await image(orphan);
    expect(row.study_id).toBeNull();
    expect(row.protocol_id).toBe('PROTO-SHARED');
    await db()
      .updateTable('studies')
      .set({ protocol_ids: ['PROTO-S'] })
      .where('id', '=', study.id)
      .execute();
  });

  it('Data Incomplete returns to Case Assignment Pending once a later import completes the data', async () => {
    const id = await named(`d-${unique()}.svs`);
    const { name } = await image(id);
    await importFile(await as('LabTech'), 'first.csv', csv(['File Name', 'Subject ID'], [name, 'SUBJ-D']));
    expect((await image(id)).status).toBe('DATA_INCOMPLETE');
    const r = await importFile(
      await as('LabTech'),
      'second.txt',
      // Tab-separated, with a byte-order mark.
      `\uFEFFFile Name\tSite ID\tVisit ID\r\n${name}\tSITE-D\tV1\r\n`,
    );
    expect(r.body.numFieldsUpdated).toBe(2);
    expect((await image(id)).status).toBe('CASE_ASSIGNMENT_PENDING');
  });

  it('the progress of an import is the importing user’s; complete afterwards', async () => {
    const id = await named(`p-${unique()}.svs`);
    const { name } = await image(id);
    const session = await as('LabTech');
    const { request } = await importFile(session, 'progress.csv', csv(['File Name', 'QA Comments'], [name, 'ok']));
    const progress = await session.request({
      method: 'GET',
      url: `/api/samples/progress?s3SampleDataKey=${encodeURIComponent(request.s3SampleDataKey)}`,
    });
    expect(progress.json()).toEqual({ success: true, status: 'COMPLETE', totalRows: 1, doneRows: 1 });
    const stranger = await as('StudyAdmin');
    const hidden = await stranger.request({
      method: 'GET',
      url: `/api/samples/progress?s3SampleDataKey=${encodeURIComponent(request.s3SampleDataKey)}`,
    });
    expect(hidden.statusCode).toBe(404);
  });
});

describe('sample-data import: the file as a whole', () => {
  it('refuses unknown columns, a file without a key column, a file that is not UTF-8; nothing changes', async () => {
    const session = await as('LabTech');
    const unknown = await importFile(session, 'x.csv', csv(['File Name', 'Colour'], ['a.svs', 'red']));
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe(SAMPLE_MESSAGES.unknownColumns(['Colour']));
    const noKey = await importFile(session, 'y.csv', csv(['Subject ID'], ['S']));
    expect(noKey.body.message).toBe(SAMPLE_MESSAGES.noKeyColumn);
    const latin1 = await importFile(session, 'z.csv', Buffer.from([0x46, 0x69, 0x6c, 0x65, 0xe9, 0x0d, 0x0a]));
    expect(latin1.body.message).toBe(SAMPLE_MESSAGES.notUtf8);
  });

  it('a file is imported once; another user’s file is not theirs to import; only .csv and .txt', async () => {
    const id = await named(`once-${unique()}.svs`);
    const { name } = await image(id);
    const session = await as('LabTech');
    const { request } = await importFile(session, 'once.csv', csv(['File Name', 'QA Comments'], [name, 'once']));
    const again = await session.request({ method: 'POST', url: '/api/samples/process', payload: request });
    expect(again.statusCode).toBe(409);
    expect(again.json<{ message: string }>().message).toBe(SAMPLE_MESSAGES.alreadyImported);
    const mine = await upload(session, 'mine.csv', csv(['File Name'], [name]));
    const theirs = await (
      await as('StudyAdmin')
    ).request({ method: 'POST', url: '/api/samples/process', payload: mine });
    expect(theirs.statusCode).toBe(404);
    const bad = await session.request({
      method: 'POST',
      url: '/api/samples/upload',
      payload: { fileName: 'data.xlsx' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ message: string }>().message).toBe(SAMPLE_MESSAGES.notCsv);
  });

  it('the template imports (its header is every column the import reads)', async () => {
    const id = await named(`tpl-${unique()}.svs`);
    const { name } = await image(id);
    const cells = SAMPLE_TEMPLATE_HEADER.map((h) =>
      h === 'File Name' ? name : h === 'QA Comments' ? 'From the template' : '',
    );
    const r = await importFile(await as('StudyAdmin'), 'template.csv', csv([...SAMPLE_TEMPLATE_HEADER], cells));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.numFieldsUpdated).toBe(1);
    expect((await image(id)).qa_comments).toBe('From the template');
  });
});
