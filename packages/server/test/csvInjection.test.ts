import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';
import { parseCsv } from './support/csv.js';

/**
 * Issue 26 item 14, at an export: the Image Management CSV (one of the exports that all write their
 * cells through the domain's csvField) neutralises the fullwidth formula starters and the pipe as
 * it did the ASCII ones: each such cell starts with an apostrophe.
 */
let t: TestContext;
let admin: Session;
let studyId: number;

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  const cells: [string, string, string][] = [
    ['＝HYPERLINK("http://evil")', '|cmd', 'ASCII-1'],
    ['＋1', '＠SUM(A1)', 'ASCII-2'],
    ['－1', '｜calc', 'ASCII-3'],
    ['=1+1', '@A1', 'ASCII-4'],
  ];
  for (const [accession, subject, site] of cells) {
    const image = await createStudyImage(db, { studyId });
    await db
      .updateTable('images')
      .set({ accession_number: accession, subject_id: subject, site_id: site })
      .where('id', '=', image.id)
      .execute();
  }
  const user = await createUser(db, { systemAdmin: true, globalRoles: ['SystemAdmin'] });
  admin = await login(t.app, user.username, PASSWORD);
});

afterAll(async () => {
  await t.close();
});

describe('CSV export neutralises every formula starter (issue 26 item 14)', () => {
  it('fullwidth ＝ ＋ － ＠, the pipe | ｜ and the ASCII ones each get an apostrophe', async () => {
    const response = await admin.request({
      method: 'POST',
      url: '/api/imageManagement/images?reportFormat=csv',
      payload: {
        columns: ['accessionNumber', 'subjectId', 'siteId'],
        searchText: 'ASCII-',
        studyFilter: { selectedIds: [studyId] },
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const [header, ...rows] = parseCsv(response.body.slice(1));
    const col = (label: string) => header?.indexOf(label) ?? -1;
    const bySite = new Map(rows.map((r) => [r[col('Site ID')], r]));
    const cell = (site: string, label: string) => bySite.get(site)?.[col(label)];
    expect(cell('ASCII-1', 'Accession Number')).toBe(`'＝HYPERLINK("http://evil")`);
    expect(cell('ASCII-1', 'Subject ID')).toBe(`'|cmd`);
    expect(cell('ASCII-2', 'Accession Number')).toBe(`'＋1`);
    expect(cell('ASCII-2', 'Subject ID')).toBe(`'＠SUM(A1)`);
    expect(cell('ASCII-3', 'Accession Number')).toBe(`'－1`);
    expect(cell('ASCII-3', 'Subject ID')).toBe(`'｜calc`);
    expect(cell('ASCII-4', 'Accession Number')).toBe(`'=1+1`);
    expect(cell('ASCII-4', 'Subject ID')).toBe(`'@A1`);
  });
});
