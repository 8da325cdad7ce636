// engine: postgres — audit trail exports (CSV, PDF) through a server-side cursor on a pooled connection
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_BOM, REPORT_MESSAGES, csvLine, ddMmmYyyy, hpfRadiusPx, roleByName, zonedStamp } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  assignReader,
  createAnnotationClass,
  createCase,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';
import { parseCsv } from './support/csv.js';

/**
 * Reports and the audit trail (issue 16): permission × format, study scope, Global for system
 * admins only, each report's header and a known row from annotations and queries made here, file
 * names, date-range edges, the PDF rendered and its text read back (poppler), the chain statement
 * and the rows' SHA-256 matching the CSV, a tampered row named as the broken link.
 */

let t: TestContext;
let celiacStudy: { id: number; name: string };
let plainStudy: { id: number; name: string };
let caseId: number;
let imageId: number;
const s: Record<string, Session> = {};
const ids: Record<string, number> = {};
const MPP = 0.5;

async function user(key: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  ids[key] = made.id;
  s[key] = await login(t.app, made.username, PASSWORD);
}

async function get(session: Session, url: string) {
  return session.request({ method: 'GET', url });
}

function csvOf(body: string): string[][] {
  expect(body.startsWith(CSV_BOM)).toBe(true);
  return parseCsv(body.slice(1));
}

function fileName(response: { headers: Record<string, unknown> }): string {
  const value = response.headers['content-disposition'];
  const header = typeof value === 'string' ? value : '';
  return /filename="([^"]+)"/.exec(header)?.[1] ?? '';
}

const today = () => ddMmmYyyy(new Date());

function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
  try {
    const file = path.join(dir, 'a.pdf');
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  celiacStudy = await createStudy(db, `Celiac Report Study ${Date.now()}`);
  plainStudy = await createStudy(db, `Plain study ${Date.now()}`);
  await db
    .updateTable('studies')
    .set({ indications: ['CELIAC_DISEASE'] })
    .where('id', '=', celiacStudy.id)
    .execute();
  const inStudy = (role: 'DM' | 'PM' | 'SPONSOR' | 'CR' | 'ISC') => ({
    studyRoles: [{ studyId: celiacStudy.id, role }],
  });
  await user('sysadmin', { systemAdmin: true, globalRoles: ['SystemAdmin'] });
  await user('dm', inStudy('DM'));
  await user('pm', inStudy('PM'));
  await user('sponsor', inStudy('SPONSOR'));
  await user('isc', inStudy('ISC'));
  await user('reader', inStudy('CR'));
  await user('outsiderDm', { studyRoles: [{ studyId: plainStudy.id, role: 'DM' }] });

  const hpfClass = (await createAnnotationClass(db, { studyId: celiacStudy.id, type: 'HPF', name: 'Crypt' })).id;
  const iel = (await createAnnotationClass(db, { studyId: celiacStudy.id, type: 'POINT', name: 'IEL', sortOrder: 1 }))
    .id;
  const entero = (
    await createAnnotationClass(db, { studyId: celiacStudy.id, type: 'POINT', name: 'Enterocyte', sortOrder: 2 })
  ).id;
  const unit = (await createAnnotationClass(db, { studyId: celiacStudy.id, type: 'MULTILINE', name: 'Unit 1' })).id;
  caseId = (await createCase(db, { studyId: celiacStudy.id, status: 'PROCESSED' })).id;
  await db.updateTable('cases').set({ proc_id: 'ENDO-R1', subject_id: 'SUBJ-9' }).where('id', '=', caseId).execute();
  imageId = (
    await createStudyImage(db, {
      studyId: celiacStudy.id,
      caseId,
      status: 'READY_FOR_READING',
      width: 4000,
      height: 4000,
      mpp: MPP,
    })
  ).id;
  await assignReader(db, { caseId, userId: ids.reader! });
  const draw = async (body: Record<string, unknown>) => {
    const response = await s.reader!.request({
      method: 'POST',
      url: '/api/annotations',
      payload: { imageId, ...body },
    });
    expect(response.statusCode, response.body).toBe(200);
  };
  const pt = (x: number, y: number) => ({ type: 'Point', coordinates: [x, y] });
  await draw({ annotationType: 'HPF', geometry: pt(1000, 1000), annotationClassId: hpfClass });
  for (const [x, cls] of [
    [1000, iel],
    [1010, iel],
    [1020, iel],
    [1030, entero],
  ] as const)
    await draw({ annotationType: 'POINT', geometry: pt(x, 1000), annotationClassId: cls });
  await draw({ annotationType: 'POINT', geometry: pt(3900, 3900), annotationClassId: iel }); // outside: Orphan
  const line = (length: number) => ({
    type: 'LineString',
    coordinates: [
      [100, 100],
      [100, 100 + length],
    ],
  });
  await draw({
    annotationType: 'MULTILINE',
    geometry: line(200),
    annotationClassId: unit,
    multilineCategory: 'VILLUS_HEIGHT',
  });
  await draw({
    annotationType: 'MULTILINE',
    geometry: line(50),
    annotationClassId: unit,
    multilineCategory: 'CRYPT_DEPTH',
  });

  // A case query, PM → DM, answered.
  const reason = await db
    .selectFrom('query_reasons')
    .select('id')
    .where('object_type', '=', 'CASE')
    .where('with_role_id', '=', roleByName('DM').id)
    .where('reason_text', '=', 'Wrong site')
    .executeTakeFirstOrThrow();
  const opened = await s.pm!.request({
    method: 'POST',
    url: '/api/queries/new',
    payload: {
      queryObjectType: 'CASE',
      objectId: caseId,
      studyId: celiacStudy.id,
      withRoleId: roleByName('DM').id,
      responseOptionId: reason.id,
      commentText: 'Site 12 on the requisition',
    },
  });
  expect(opened.statusCode, opened.body).toBe(201);
  ids.query = opened.json<{ query: { id: number } }>().query.id;
  await s.dm!.request({
    method: 'PATCH',
    url: `/api/queries/${ids.query}/resolve`,
    payload: { resolutionOption: 'Case data corrected' },
  });
  // Study access granted and revoked through the API: the access report reads them from the audit trail.
  const admin = s.sysadmin!;
  await user('temp', {});
  await admin.request({
    method: 'PATCH',
    url: '/api/users/studies/add',
    payload: { studyId: celiacStudy.id, userId: ids.temp, roleId: roleByName('PM').id },
  });
  await admin.request({
    method: 'PUT',
    url: '/api/users/studies/remove',
    payload: { studyId: celiacStudy.id, userId: ids.temp, roleId: roleByName('PM').id },
  });
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('GET /api/audit-trail', () => {
  it('PDF only for R_GenerateAuditTrailPDFonly; CSV for R_GenerateAuditTrailPDForCSV; the study is required', async () => {
    const pmCsv = await get(s.pm!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}`);
    expect(pmCsv.statusCode).toBe(403);
    expect(pmCsv.json().message).toBe(`Unable to fetch audit trail csv: ${REPORT_MESSAGES.formatNotAllowed}`);
    const pmPdf = await get(s.pm!, `/api/audit-trail?reportFormat=pdf&studyId=${celiacStudy.id}`);
    expect(pmPdf.statusCode).toBe(200);
    expect(pmPdf.headers['content-type']).toBe('application/pdf');
    expect(pmPdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    const noStudy = await get(s.dm!, '/api/audit-trail?reportFormat=csv');
    expect(noStudy.statusCode).toBe(400);
    expect(noStudy.json().message).toBe(`Unable to fetch audit trail csv: ${REPORT_MESSAGES.studyRequired}`);
    expect((await get(s.sponsor!, `/api/audit-trail?reportFormat=pdf&studyId=${celiacStudy.id}`)).statusCode).toBe(403);
    expect((await get(s.outsiderDm!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}`)).statusCode).toBe(
      404,
    );
    const userFilter = await get(s.dm!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&userId=${ids.pm}`);
    expect(userFilter.statusCode).toBe(403);
    expect(
      (await get(s.dm!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&tz=Mars/Base`)).statusCode,
    ).toBe(400);
    const badDate = await get(
      s.dm!,
      `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&startDate=2026-01-01`,
    );
    expect(badDate.statusCode).toBe(400);
    expect(badDate.json().message).toBe(`Unable to fetch audit trail csv: ${REPORT_MESSAGES.invalidDate}`);
  });

  it('exports the study’s events as CSV, named from study, user, date, time and zone; the export is audited', async () => {
    const response = await get(s.dm!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&tz=Europe/Paris`);
    expect(response.statusCode).toBe(200);
    const stamp = zonedStamp(new Date(), 'Europe/Paris');
    expect(fileName(response)).toMatch(
      new RegExp(`^CeliacReportStudy\\d+_user-[0-9a-f]+_example\\.org_audit-trail_${stamp.date}_\\d{4}_CET\\.csv$`),
    );
    const [header, ...rows] = csvOf(response.body);
    expect(header).toEqual([
      'Event',
      'Time (UTC)',
      'Time (local)',
      'User',
      'Username',
      'Role',
      'Action',
      'Object Type',
      'Object ID',
      'Object',
      'Field',
      'Old Value',
      'New Value',
      'Reason for Change',
      'Client IP',
    ]);
    const opened = rows.find((r) => r[6] === 'QUERY_OPENED' && r[8] === String(ids.query));
    expect(opened).toBeDefined();
    expect(opened?.[5]).toBe('PM');
    expect(opened?.[9]).toBe(`CASE ${caseId}`);
    expect(opened?.[2]).toMatch(/ (CET|GMT\+1)$/);
    expect(rows.some((r) => r[6] === 'ANNOTATION_CREATED')).toBe(true);
    // Only this study's events.
    expect(rows.every((r) => r[6] !== 'LOGIN')).toBe(true);
    const exported = await t.database.db
      .selectFrom('audit_events')
      .select(['user_id', 'new_value'])
      .where('action', '=', 'AUDIT_TRAIL_EXPORTED')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(exported.user_id).toBe(ids.dm);
    expect(JSON.parse(exported.new_value ?? '{}')).toMatchObject({ format: 'csv', timeZone: 'Europe/Paris' });
  });

  it('includes the whole end date in the viewer’s zone; a range before today has none of today’s events', async () => {
    for (const tz of ['UTC', 'Pacific/Kiritimati', 'America/Adak']) {
      const day = zonedStamp(new Date(), tz).date;
      const todays = await get(
        s.dm!,
        `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&startDate=${day}&endDate=${day}&tz=${tz}`,
      );
      expect(csvOf(todays.body).length, tz).toBeGreaterThan(5);
    }
    const past = await get(
      s.dm!,
      `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&startDate=01-Jan-2020&endDate=31-Dec-2020`,
    );
    expect(csvOf(past.body)).toHaveLength(1); // the header only
    const reversed = await get(
      s.dm!,
      `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}&startDate=${today()}&endDate=01-Jan-2020`,
    );
    expect(reversed.statusCode).toBe(400);
  });

  it('the PDF: header, page numbering, a known row, the chain statement and the rows’ SHA-256 the CSV gives too', async () => {
    const pdf = await get(s.sysadmin!, `/api/audit-trail?reportFormat=pdf&studyId=${celiacStudy.id}`);
    expect(pdf.statusCode).toBe(200);
    expect(fileName(pdf)).toMatch(/_audit-trail_\d{2}-[A-Z][a-z]{2}-\d{4}_\d{4}_UTC\.pdf$/);
    const text = pdfText(pdf.rawPayload);
    expect(text).toContain(`Audit trail — ${celiacStudy.name}`);
    expect(text).toContain('Old value');
    expect(text).toMatch(/Page 1 of \d+/);
    expect(text).toContain('QUERY_OPENED');
    expect(text).toMatch(/Hash chain: verified intact from event \d+ to event \d+/);
    const range = /\(event (\d+) to event (\d+)\)/.exec(text);
    const sha = /SHA-256 of the exported rows[^:]*:\s*([0-9a-f]{64})/.exec(text.replace(/\s+\n\s*/g, ' '));
    expect(range).not.toBeNull();
    expect(sha).not.toBeNull();
    // The same rows from the CSV export hash to the same value.
    const csv = await get(s.sysadmin!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}`);
    const last = Number(range?.[2]);
    const lines = csvOf(csv.body)
      .slice(1)
      .filter((r) => Number(r[0]) <= last);
    const hash = createHash('sha256');
    for (const r of lines) hash.update(csvLine(r.map((v, i) => (i === 0 ? Number(v) : v === '' ? null : v))));
    expect(hash.digest('hex')).toBe(sha?.[1]);
    // It renders (poppler draws every page).
    const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
    try {
      writeFileSync(path.join(dir, 'a.pdf'), pdf.rawPayload);
      execFileSync('pdftoppm', ['-r', '40', '-png', path.join(dir, 'a.pdf'), path.join(dir, 'page')]);
      const pages = readdirSync(dir).filter((f) => f.endsWith('.png'));
      expect(pages.length).toBeGreaterThanOrEqual(1);
      expect(statSync(path.join(dir, pages[0] ?? '')).size).toBeGreaterThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the PDF’s action column breaks an action only after an underscore (issue 29 item 17)', async () => {
    const pdf = await get(s.sysadmin!, `/api/audit-trail?reportFormat=pdf&studyId=${celiacStudy.id}`);
    const csv = await get(s.sysadmin!, `/api/audit-trail?reportFormat=csv&studyId=${celiacStudy.id}`);
    const actions = new Set(
      csvOf(csv.body)
        .slice(1)
        .map((r) => r[6] ?? ''),
    );
    const parts = new Set([...actions].flatMap((a) => a.split('_')));
    expect([...actions].some((a) => a.length > 16)).toBe(true); // one too long for a line
    // Each word poppler finds in the action column (x 234–306 pt) is made of whole parts of the names.
    const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
    let words: string[];
    try {
      writeFileSync(path.join(dir, 'a.pdf'), pdf.rawPayload);
      const html = execFileSync('pdftotext', ['-bbox', path.join(dir, 'a.pdf'), '-'], { encoding: 'utf8' });
      words = [...html.matchAll(/<word xMin="([\d.]+)"[^>]*>([^<]*)<\/word>/g)]
        .filter((m) => Number(m[1]) > 234 && Number(m[1]) < 306)
        .map((m) => m[2] ?? '')
        .filter((w) => /^[A-Z][A-Z_]*$/.test(w));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(words.some((w) => w.endsWith('_'))).toBe(true); // some name was wrapped
    // A name's words (one with an underscore, and the word after one ending in an underscore) hold
    // only whole parts: `IMAGE_STATUS_CHA` / `NGED` would fail.
    const names = words.filter((w, i) => w.includes('_') || (words[i - 1]?.endsWith('_') ?? false));
    expect(names.length).toBeGreaterThan(0);
    for (const word of names) for (const part of word.split('_')) if (part !== '') expect(parts).toContain(part);
  });

  it('a system admin exports every study’s events (Global) and may filter by user', async () => {
    const response = await get(s.sysadmin!, `/api/audit-trail?reportFormat=csv&userId=${ids.pm}`);
    expect(response.statusCode).toBe(200);
    expect(fileName(response)).toMatch(/^Global_/);
    const rows = csvOf(response.body).slice(1);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r[4] === rows[0]?.[4])).toBe(true);
    expect(rows.some((r) => r[6] === 'LOGIN')).toBe(true);
  });
});

describe('GET /api/report/…', () => {
  it('image details: the columns the caller may view; the sponsor variant the Sponsor role’s', async () => {
    const response = await get(s.dm!, `/api/report/${celiacStudy.id}/image-details`);
    expect(response.statusCode).toBe(200);
    expect(fileName(response)).toBe(`${celiacStudy.name.replace(/\s/g, '')}_image-details_${today()}.csv`);
    const [header, ...rows] = csvOf(response.body);
    expect(header).toContain('Subject ID');
    expect(header).not.toContain('File Name'); // DM does not see file names
    const row = rows.find((r) => r[header!.indexOf('Image ID')] === String(imageId));
    expect(row?.[header!.indexOf('Subject ID')]).toBe('SUBJ-9');
    expect(row?.[header!.indexOf('Endo Procedure ID')]).toBe('ENDO-R1');
    expect(row?.[header!.indexOf('Readers')]).toContain('@example.org');

    const sponsorOwn = csvOf((await get(s.sponsor!, `/api/report/${celiacStudy.id}/image-details`)).body)[0];
    const sponsorVariant = csvOf(
      (await get(s.sponsor!, `/api/report/${celiacStudy.id}/image-details-sponsor`)).body,
    )[0];
    const adminVariant = csvOf((await get(s.sysadmin!, `/api/report/${celiacStudy.id}/image-details-sponsor`)).body)[0];
    expect(sponsorVariant).toEqual(sponsorOwn);
    expect(adminVariant).toEqual(sponsorOwn);
    expect(sponsorOwn).not.toContain('Protocol ID');
    expect(sponsorOwn).not.toContain('Readers');
  });

  it('Global only for system admins and only the image details; a study elsewhere', async () => {
    const global = await get(s.sysadmin!, '/api/report/image-details');
    expect(global.statusCode).toBe(200);
    expect(fileName(global)).toBe(`Global_image-details_${today()}.csv`);
    const dm = await get(s.dm!, '/api/report/image-details');
    expect(dm.statusCode).toBe(403);
    expect(dm.json().message).toBe(
      `Unable to fetch report image-details: ${REPORT_MESSAGES.globalOnlyForSystemAdmins}`,
    );
    const query = await get(s.sysadmin!, '/api/report/query');
    expect(query.statusCode).toBe(400);
    expect(query.json().message).toBe(`Unable to fetch report query: ${REPORT_MESSAGES.studyRequired}`);
    const byQuery = await get(s.dm!, `/api/report/query?studyId=${celiacStudy.id}`);
    expect(byQuery.statusCode).toBe(200);
    expect((await get(s.sponsor!, `/api/report/${celiacStudy.id}/hpf-annotations`)).statusCode).toBe(403);
    expect((await get(s.outsiderDm!, `/api/report/${celiacStudy.id}/query`)).statusCode).toBe(404);
    expect((await get(s.dm!, `/api/report/${celiacStudy.id}/bogus`)).statusCode).toBe(400);
  });

  it('HPF annotations: counts per point class, Orphan points, the area in mm²', async () => {
    const response = await get(s.dm!, `/api/report/${celiacStudy.id}/hpf-annotations`);
    const [header, ...rows] = csvOf(response.body);
    expect(header).toEqual([
      'Study',
      'Endo Procedure ID',
      'Histo Procedure ID',
      'Subject ID',
      'Visit ID',
      'Image ID',
      'Reader',
      'Source',
      'HPF Class',
      'HPF ID',
      'Count: IEL',
      'Count: Enterocyte',
      'Count: Other',
      'Total Points',
      'HPF Area (mm²)',
      'Created At',
    ]);
    const col = (name: string) => header!.indexOf(name);
    const hpf = rows.find((r) => r[col('HPF Class')] === 'Crypt');
    expect(hpf?.[col('Count: IEL')]).toBe('3');
    expect(hpf?.[col('Count: Enterocyte')]).toBe('1');
    expect(hpf?.[col('Total Points')]).toBe('4');
    expect(hpf?.[col('Source')]).toBe('Reader');
    const area = (Math.PI * (hpfRadiusPx(MPP, false) * MPP) ** 2) / 1e6;
    expect(Number(hpf?.[col('HPF Area (mm²)')])).toBeCloseTo(0.238, 3);
    expect(Number(hpf?.[col('HPF Area (mm²)')])).toBeCloseTo(area, 4);
    const orphan = rows.find((r) => r[col('HPF Class')] === 'Orphan');
    expect(orphan?.[col('Count: IEL')]).toBe('1');
    expect(orphan?.[col('HPF ID')]).toBe('');
  });

  it('celiac annotations: villus height, crypt depth in whole µm and Vh:Cd; other studies are refused', async () => {
    const response = await get(s.dm!, `/api/report/${celiacStudy.id}/celiac-annotations`);
    expect(response.statusCode).toBe(200);
    const [header, ...rows] = csvOf(response.body);
    const col = (name: string) => header!.indexOf(name);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.[col('Line Class')]).toBe('Unit 1');
    expect(rows[0]?.[col('Villus Height (µm)')]).toBe('100');
    expect(rows[0]?.[col('Crypt Depth (µm)')]).toBe('25');
    expect(rows[0]?.[col('Vh:Cd')]).toBe('4.0');
    const isc = await login(
      t.app,
      (await createUser(t.database.db, { studyRoles: [{ studyId: plainStudy.id, role: 'DM' }] })).username,
      PASSWORD,
    );
    const refused = await get(isc, `/api/report/${plainStudy.id}/celiac-annotations`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe(`Unable to fetch report celiac-annotations: ${REPORT_MESSAGES.celiacOnly}`);
  });

  it('query: one row per query with its people and dates', async () => {
    const [header, ...rows] = csvOf((await get(s.dm!, `/api/report/${celiacStudy.id}/query`)).body);
    const col = (name: string) => header!.indexOf(name);
    const row = rows.find((r) => r[col('Query ID')] === String(ids.query));
    expect(row?.[col('Query With')]).toBe('Data Manager');
    expect(row?.[col('Opened By Role')]).toBe('Project Manager');
    expect(row?.[col('Resolution')]).toBe('RESOLVED');
    expect(row?.[col('Resolution Option')]).toBe('Case data corrected');
    expect(row?.[col('Dynamic Status')]).toBe('ANSWERED');
    expect(row?.[col('Reason')]).toBe('Wrong site');
    expect(row?.[col('Days Open')]).toBe('0');
    const later = await get(s.dm!, `/api/report/${celiacStudy.id}/query?startDate=01-Jan-2099`);
    expect(csvOf(later.body)).toHaveLength(1);
  });

  it('access: granted and revoked from the audit trail, held now, account status', async () => {
    const [header, ...rows] = csvOf((await get(s.isc!, `/api/report/${celiacStudy.id}/access`)).body);
    const col = (name: string) => header!.indexOf(name);
    const temp = rows.find((r) => r[col('User ID')] === String(ids.temp));
    expect(temp?.[col('Role')]).toBe('Project Manager');
    expect(temp?.[col('Held Now')]).toBe('No');
    expect(temp?.[col('Granted At')]).not.toBe('');
    expect(temp?.[col('Revoked At')]).not.toBe('');
    expect(temp?.[col('Account Status')]).toBe('Active');
    const dm = rows.find((r) => r[col('User ID')] === String(ids.dm));
    expect(dm?.[col('Held Now')]).toBe('Yes');
    expect(rows.some((r) => r[col('Scope')] === 'Global (every study)')).toBe(true);
    expect((await get(s.dm!, `/api/report/${celiacStudy.id}/access`)).statusCode).toBe(403);
  });

  it('every export is an audit event with its filters', async () => {
    await get(s.dm!, `/api/report/${celiacStudy.id}/hpf-annotations?startDate=01-Jan-2026&tz=Europe/Paris`);
    const row = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'field', 'new_value', 'study_id'])
      .where('action', '=', 'REPORT_EXPORTED')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(row.field).toBe('hpf-annotations');
    expect(row.study_id).toBe(celiacStudy.id);
    expect(JSON.parse(row.new_value ?? '{}')).toMatchObject({ startDate: '01-Jan-2026', timeZone: 'Europe/Paris' });
  });
});

describe('a tampered audit row', () => {
  it('shows as the first broken link in the PDF’s closing statement', async () => {
    const target = await t.database.db
      .selectFrom('audit_events')
      .select('id')
      .where('study_id', '=', celiacStudy.id)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    await t.database.raw.exec(
      `ALTER TABLE audit_events DISABLE TRIGGER USER; UPDATE audit_events SET reason = 'forged' WHERE id = ${target.id}; ALTER TABLE audit_events ENABLE TRIGGER USER;`,
    );
    const pdf = await get(s.sysadmin!, `/api/audit-trail?reportFormat=pdf&studyId=${celiacStudy.id}`);
    const text = pdfText(pdf.rawPayload).replace(/\s+/g, ' ');
    expect(text).toContain(`Hash chain: BROKEN — first broken link at event ${target.id}`);
  });
});
