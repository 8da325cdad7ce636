// engine: postgres — CSV exports through a server-side cursor (DECLARE/FETCH) holding a pooled connection
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import {
  CSV_BOM,
  IM_CASE_COLUMNS,
  IM_IMAGE_COLUMNS,
  ROLE_PERMISSIONS,
  imCsvFileName,
  viewableColumns,
  visibleByDefault,
  type RoleName,
} from '@lamina/domain';
import { CURSOR_BATCH } from '../src/platform/db/cursor.js';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';
import { parseCsv } from './support/csv.js';

/**
 * The CSV export of Image Management (issue 12; doc 2 §7): ?reportFormat=csv on both list calls,
 * streamed from a database cursor, the columns the user shows of those they may view, the list's
 * filters, the spec's file names.
 */

let t: TestContext;
let study: { id: number; name: string };
let hidden: { id: number; name: string };
const db = () => t.database.db;
const sessions = new Map<string, Session>();
/** More rows than one cursor batch, so the export crosses batches. */
const MANY = CURSOR_BATCH + 250;

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

async function exportCsv(session: Session, tab: 'images' | 'cases', body: object = {}) {
  const response = await session.request({
    method: 'POST',
    url: `/api/imageManagement/${tab}?reportFormat=csv`,
    payload: body,
  });
  return response;
}

beforeAll(async () => {
  t = await createTestApp();
  study = await createStudy(db(), `Export study ${Date.now()}`);
  hidden = await createStudy(db(), `Export hidden ${Date.now()}`);
  // Many images in one statement: more than a cursor batch.
  await sql`
    insert into images (study_id, name, s3_key, status, accession_number)
    select ${study.id}, 'bulk-' || lpad(g::text, 5, '0') || '.svs', 'uploads/bulk-' || g || '.svs',
           'CASE_ASSIGNMENT_PENDING', 'ACC-' || g
    from generate_series(1, ${MANY}) g
  `.execute(db());
  const tricky = await createStudyImage(db(), { studyId: study.id });
  await db()
    .updateTable('images')
    .set({ name: 'odd, "quoted".svs', accession_number: '=HYPERLINK("x")', subject_id: 'SUBJ-Z' })
    .where('id', '=', tricky.id)
    .execute();
  await createStudyImage(db(), { studyId: hidden.id });
  const c = await createCase(db(), { studyId: study.id, status: 'PENDING_QC' });
  await db().updateTable('cases').set({ proc_id: 'ENDO-X1', site_id: 'SITE-1' }).where('id', '=', c.id).execute();
});

afterAll(async () => {
  await t.close();
});

describe('CSV export of the images list', () => {
  it('streams every row of the visible studies across cursor batches, with the file name and a BOM', async () => {
    const response = await exportCsv(await as('DM'), 'images');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="${imCsvFileName('images', new Date())}"`,
    );
    expect(response.headers['content-disposition']).toMatch(/image-mgmt-images_\d{2}-[A-Z][a-z]{2}-\d{4}\.csv/);
    expect(response.body.startsWith(CSV_BOM)).toBe(true);
    const [header, ...rows] = parseCsv(response.body.slice(1));
    // No column choice: the role's default columns, of those it may view, in the table's order.
    const dm = ROLE_PERMISSIONS.DM;
    expect(header).toEqual(
      viewableColumns(IM_IMAGE_COLUMNS, dm)
        .filter((c) => visibleByDefault(c, 'DM'))
        .map((c) => c.label),
    );
    // The DM's study only: the bulk images and the tricky one, not the hidden study's.
    expect(rows).toHaveLength(MANY + 1);
    expect(rows.every((r) => r.length === header?.length)).toBe(true);
    const names = rows.map((r) => r[header?.indexOf('Study Name') ?? -1]);
    expect(new Set(names)).toEqual(new Set([study.name]));
  });

  it('writes the columns the user shows, never one the role may not view; quotes and neutralises formulas', async () => {
    // DM may not view the image status (docs/PERMISSIONS.md): asked for, it is left out.
    const response = await exportCsv(await as('DM'), 'images', {
      columns: ['status', 'accessionNumber', 'subjectId', 'imageFilename'],
      searchText: 'SUBJ-Z',
    });
    const [header, ...rows] = parseCsv(response.body.slice(1));
    const dmViews = new Set<string>(ROLE_PERMISSIONS.DM);
    const expected = IM_IMAGE_COLUMNS.filter(
      (c) =>
        ['status', 'accessionNumber', 'subjectId', 'imageFilename'].includes(c.key) &&
        (c.view === null || dmViews.has(c.view)),
    ).map((c) => c.label);
    expect(header).toEqual(expected);
    expect(header).not.toContain('Status');
    expect(rows).toHaveLength(1);
    const row = rows[0] ?? [];
    expect(row[header?.indexOf('Accession Number') ?? -1]).toBe(`'=HYPERLINK("x")`);
    if (header?.includes('File Name')) expect(row[header.indexOf('File Name')]).toBe('odd, "quoted".svs');
  });

  it('follows the list filters and order (the same rows as the list, in its order)', async () => {
    const session = await as('sysadmin');
    const filter = { studyFilter: { selectedIds: [study.id] }, searchText: 'bulk-0001', sort: 'imageFilename' };
    const list = await session.request({
      method: 'POST',
      url: '/api/imageManagement/images',
      payload: { ...filter, pageSize: 100 },
    });
    const listed = list.json<{ results: { imageFilename: string }[]; total: number }>();
    const response = await exportCsv(session, 'images', { ...filter, columns: ['imageFilename'] });
    const [header, ...rows] = parseCsv(response.body.slice(1));
    expect(header).toEqual(['File Name']);
    expect(rows.map((r) => r[0])).toEqual(listed.results.map((r) => r.imageFilename));
    expect(rows).toHaveLength(listed.total);
    expect(listed.total).toBeGreaterThan(1);
  });

  it('needs the export permission (a lab technician may list but not export): 403', async () => {
    const response = await exportCsv(await as('LabTech'), 'images');
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/application\/json/);
  });

  it('a bad report format is a 400', async () => {
    const session = await as('DM');
    const response = await session.request({
      method: 'POST',
      url: '/api/imageManagement/images?reportFormat=xlsx',
      payload: {},
    });
    expect(response.statusCode).toBe(400);
  });
});

describe('CSV export of the cases list', () => {
  it('writes the cases with status labels; the file name of the cases tab', async () => {
    const response = await exportCsv(await as('DM'), 'cases', { columns: ['procId', 'siteId', 'status'] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-disposition']).toContain(imCsvFileName('cases', new Date()));
    const [header, ...rows] = parseCsv(response.body.slice(1));
    const labels = IM_CASE_COLUMNS.filter((c) => ['procId', 'siteId', 'status'].includes(c.key)).map((c) => c.label);
    expect(header).toEqual(labels);
    expect(rows).toContainEqual(['ENDO-X1', 'SITE-1', 'Pending QC']);
  });

  it('needs its export permission: 403 for a lab technician', async () => {
    expect((await exportCsv(await as('LabTech'), 'cases')).statusCode).toBe(403);
  });
});
