import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CASE_FIELDS,
  CASE_FIELD_VIEW_PERMISSIONS,
  CSV_BOM,
  EDITABLE_IMAGE_FIELDS,
  IM_CASE_COLUMNS,
  IM_IMAGE_COLUMNS,
  roleByName,
  type Permission,
} from '@lamina/domain';
import { recordAudit, SYSTEM_ACTOR, type AuditEvent } from '../src/platform/audit/audit.js';
import {
  AUDIT_ERROR_REASON_ACTIONS,
  AUDIT_VALUE_RULES,
  AuditValueRenderer,
  HIDDEN_VALUE_LABEL,
  STORAGE_KEY_LABEL,
  type AuditValueRow,
} from '../src/modules/reports/auditTrailValues.js';
import { STORAGE_KEY_PREFIXES, withoutStorageKeys } from '../src/platform/storage/keysInText.js';
import { imageKeys, sampleResultKey, uploadKey, UploadKeys, safeFileName } from '../src/platform/storage/keys.js';
import { markFailed } from '../src/modules/processing/processImage.js';
import { failImport } from '../src/commands/mldImport.js';
import type { Principal } from '../src/platform/auth/principal.js';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createImage, createOrganization, createStudy, createUser, PASSWORD } from './factories.js';
import { parseCsv } from './support/csv.js';

/**
 * What the audit trail exports still showed after f751330 (issue 26, item 5 and the column view
 * permissions): failure reasons carrying storage keys and scanner file names (IMAGE_PROCESSING_FAILED,
 * MLD_IMPORT_FAILED), and the values of fields the exporter may not view (QA comments, the
 * uploader's organization, the protocol ID, the sponsor, subject/site/visit IDs). Storage keys
 * never leave in an export; file names only with AP_ImageData_ViewFilename; a field the exporter
 * may not view reads HIDDEN_VALUE_LABEL, old value and new. The rows keep what was recorded, and
 * reasons users typed are as they typed them.
 */

let t: TestContext;
const s: Record<string, Session> = {};
const ids: Record<string, number> = {};
let study: { id: number; name: string };

const FILE = 'SUBJ-0042_SITE-07_VISIT-3.svs';
const BASE = 'SUBJ-0042_SITE-07_VISIT-3';
const QA = 'Blurry at 40x: rescan requested by Dr Kowalski';
const ORG = `Gut Lab Nord ${Date.now()}`;
const ROOT = '/var/lib/lamina/storage';
const MLD_KEY = 'mld/u7-0123456789abcdef-0123456789abcdef0123/SUBJ-0042_SITE-07_VISIT-3_APP12.mld';

/** The failure reasons as the worker recorded them before the keys were left out at the source. */
const reasons = () => ({
  opened: `The image could not be opened (VipsForeignLoad: "${ROOT}/originals/${ids.failed}/${FILE}" is not a known file format)`,
  truncated: `The image data could not be decoded (${FILE} is truncated)`,
  exists: `The object uploads/${study.id}/u7-abc-def/${FILE} already exists and cannot be replaced`,
  renamed: `TIFFReadDirectory: ${ROOT}/originals/${ids.renamed}/${FILE}: Read error; the slide was ${FILE}`,
  noMatch: `No image matches ${BASE}`,
  mldRead: `ENOENT: no such file or directory, open '${ROOT}/${MLD_KEY}'`,
});

async function user(key: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  ids[key] = made.id;
  s[key] = await login(t.app, made.username, PASSWORD);
}

async function audit(events: AuditEvent[]) {
  await t.database.db.transaction().execute((tx) => recordAudit(tx, { ...SYSTEM_ACTOR, username: 'worker' }, events));
}

async function csv(session: Session): Promise<string[][]> {
  const response = await session.request({
    method: 'GET',
    url: `/api/audit-trail?reportFormat=csv&studyId=${study.id}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body.startsWith(CSV_BOM)).toBe(true);
  return parseCsv(response.body.slice(1)).slice(1);
}

async function pdfText(session: Session): Promise<string> {
  const response = await session.request({
    method: 'GET',
    url: `/api/audit-trail?reportFormat=pdf&studyId=${study.id}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
  try {
    writeFileSync(path.join(dir, 'a.pdf'), response.rawPayload);
    return execFileSync('pdftotext', [path.join(dir, 'a.pdf'), '-'], { encoding: 'utf8' }).replace(/\s+/g, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every row of an action (and field): Object ID, Old Value, New Value, Reason. */
function rowsOf(rows: string[][], action: string, field?: string) {
  const found = rows
    .filter((r) => r[6] === action && (field === undefined || r[10] === field))
    .map((r) => ({ id: r[8] ?? '', old: r[11] ?? '', new: r[12] ?? '', reason: r[13] ?? '' }));
  expect(found.length, `${action} ${field ?? ''}`).toBeGreaterThan(0);
  return found;
}
const one = (rows: string[][], action: string, field?: string) => rowsOf(rows, action, field).at(-1)!;
const reasonsOf = (rows: string[][], action: string) => rowsOf(rows, action).map((r) => r.reason);
const text = (rows: string[][]) => rows.map((r) => r.join('\u0001')).join('\n');

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  study = await createStudy(db, `Redaction study ${Date.now()}`);
  const inStudy = (role: 'DM' | 'PM' | 'ISC' | 'LabTech' | 'SPONSOR') => ({
    studyRoles: [{ studyId: study.id, role }],
  });
  await user('sysadmin', { systemAdmin: true, globalRoles: ['SystemAdmin'] });
  await user('isc', inStudy('ISC'));
  await user('dm', inStudy('DM'));
  await user('pm', inStudy('PM'));
  await user('lab', inStudy('LabTech'));
  // A deployment that lets sponsors print the audit trail ("where allowed").
  await db
    .insertInto('role_permissions')
    .values({ role_id: roleByName('SPONSOR').id, permission: 'R_GenerateAuditTrailPDFonly' })
    .execute();
  await user('sponsor', inStudy('SPONSOR'));
  await createOrganization(db, ORG);

  // Failed slides: the worker's reasons name the stored object (its key, under the storage root)
  // and the scanner's file name.
  ids.failed = (await createImage(db, { studyId: study.id, name: FILE, s3Key: `originals/0/${FILE}` })).id;
  await db
    .updateTable('images')
    .set({ s3_key: `originals/${ids.failed}/${FILE}` })
    .where('id', '=', ids.failed)
    .execute();
  // A slide renamed since it failed: its reason names the file it had.
  ids.renamed = (
    await createImage(db, { studyId: study.id, name: 'Renamed later.svs', s3Key: `originals/0/${FILE}` })
  ).id;
  const failed = (reason: string, id = ids.failed!): AuditEvent => ({
    action: 'IMAGE_PROCESSING_FAILED',
    entityType: 'image',
    entityId: id,
    studyId: study.id,
    field: 'status',
    oldValue: 'PROCESSING',
    newValue: 'FAIL_PROCESSING',
    reason,
  });
  const r = reasons();
  await audit([failed(r.opened), failed(r.truncated), failed(r.exists), failed(r.renamed, ids.renamed)]);
  // .mld imports that failed: no image matched the name the file gave, and storage trouble.
  for (const [i, reason] of [r.noMatch, r.mldRead].entries()) {
    const mld = await db
      .insertInto('mld_files')
      .values({ name: 'x.mld', s3_key: `${MLD_KEY}.${i}`, size_bytes: 10, study_id: study.id, status: 'ERROR' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await audit([
      {
        action: 'MLD_IMPORT_FAILED',
        entityType: 'mld_file',
        entityId: mld.id,
        studyId: study.id,
        field: 'status',
        oldValue: 'PROCESSING',
        newValue: 'ERROR',
        reason,
      },
    ]);
  }

  // Edits of fields some exporters may not view (Edit Column, by the roles that may make them).
  ids.slide = (
    await createImage(db, { studyId: study.id, name: 'visible-slide.svs', s3Key: 'originals/9/visible-slide.svs' })
  ).id;
  const edit = async (who: string, columnName: string, columnValue: string, reasonForChange?: string) => {
    const response = await s[who]!.request({
      method: 'POST',
      url: `/api/imageManagement/${ids.slide}/editImageColumn`,
      payload: { tabName: 'images', columnName, columnValue, reasonForChange },
    });
    expect(response.statusCode, response.body).toBe(200);
  };
  await edit('lab', 'qaComments', 'Fold on the left edge');
  await edit('lab', 'qaComments', QA, 'Second look');
  await edit('sysadmin', 'organizationName', ORG);
  await edit('sysadmin', 'protocolId', 'PROT-SECRET-77');
  await edit('sysadmin', 'accessionNumber', 'ACC-2026-0001');
  // A study's sponsor (STUDY_UPDATED as the study service records it).
  await audit([
    {
      action: 'STUDY_UPDATED',
      entityType: 'study',
      entityId: study.id,
      studyId: study.id,
      field: 'sponsor',
      oldValue: 'Test Sponsor',
      newValue: 'Acme Therapeutics',
      reason: 'Sponsor renamed',
    },
  ]);
  // A case edit the data manager may make and see.
  ids.case = (await createCase(db, { studyId: study.id })).id;
  const patched = await s.dm!.request({
    method: 'PATCH',
    url: `/api/cases/${ids.case}`,
    payload: { subjectId: { value: 'SUBJ-9001', reasonForChange: 'Requisition' } },
  });
  expect(patched.statusCode, patched.body).toBe(200);
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('failure reasons: no storage key in any export, file names only with AP_ImageData_ViewFilename', () => {
  it('a data manager’s CSV: the keys and the storage root are gone, the file names are the neutral label', async () => {
    const rows = await csv(s.dm!);
    const all = text(rows);
    for (const leak of [BASE, 'originals/', 'uploads/', 'mld/', ROOT]) expect(all).not.toContain(leak);
    expect(reasonsOf(rows, 'IMAGE_PROCESSING_FAILED')).toEqual([
      `The image could not be opened (VipsForeignLoad: "${STORAGE_KEY_LABEL}" is not a known file format)`,
      `The image data could not be decoded (Image ${ids.failed} is truncated)`,
      `The object ${STORAGE_KEY_LABEL} already exists and cannot be replaced`,
      `TIFFReadDirectory: ${STORAGE_KEY_LABEL}: Read error; the slide was Image ${ids.renamed}`,
    ]);
    expect(reasonsOf(rows, 'MLD_IMPORT_FAILED')).toEqual([
      'No image matches (file name)',
      `ENOENT: no such file or directory, open '${STORAGE_KEY_LABEL}'`,
    ]);
  });

  it('with the permission (ISC, system admin): the file names stay, the keys still go', async () => {
    for (const who of ['isc', 'sysadmin']) {
      const rows = await csv(s[who]!);
      const all = text(rows);
      for (const leak of ['originals/', 'uploads/', 'mld/', ROOT]) expect(all, who).not.toContain(leak);
      expect(reasonsOf(rows, 'IMAGE_PROCESSING_FAILED'), who).toEqual([
        `The image could not be opened (VipsForeignLoad: "${STORAGE_KEY_LABEL}" is not a known file format)`,
        `The image data could not be decoded (${FILE} is truncated)`,
        `The object ${STORAGE_KEY_LABEL} already exists and cannot be replaced`,
        `TIFFReadDirectory: ${STORAGE_KEY_LABEL}: Read error; the slide was ${FILE}`,
      ]);
      expect(reasonsOf(rows, 'MLD_IMPORT_FAILED'), who).toEqual([
        `No image matches ${BASE}`,
        `ENOENT: no such file or directory, open '${STORAGE_KEY_LABEL}'`,
      ]);
    }
  });

  it('the PDFs of a project manager and a sponsor hold neither', async () => {
    for (const who of ['pm', 'sponsor']) {
      const flat = await pdfText(s[who]!);
      expect(flat, who).toContain(`Theimagedatacouldnotbedecoded(Image${ids.failed}istruncated)`);
      expect(flat, who).toContain('Noimagematches(filename)');
      for (const leak of [BASE, 'originals/', 'uploads/', 'mld/u7', 'lamina/storage'])
        expect(flat, who).not.toContain(leak);
    }
  });

  it('the audit rows keep the reasons as recorded', async () => {
    const stored = await t.database.db
      .selectFrom('audit_events')
      .select('reason')
      .where('action', 'in', ['IMAGE_PROCESSING_FAILED', 'MLD_IMPORT_FAILED'])
      .where('study_id', '=', study.id)
      .orderBy('id')
      .execute();
    const r = reasons();
    expect(stored.map((x) => x.reason)).toEqual([r.opened, r.truncated, r.exists, r.renamed, r.noMatch, r.mldRead]);
  });
});

describe('values of fields the exporter may not view read the hidden label, old and new', () => {
  const values = (rows: string[][], field: string) => {
    const row = one(rows, 'IMAGE_EDITED', field);
    return [row.old, row.new];
  };

  it('a data manager: no QA comments, no uploader organization; what they may view as recorded', async () => {
    const rows = await csv(s.dm!);
    const all = text(rows);
    expect(all).not.toContain('Fold on the left edge');
    expect(all).not.toContain('Kowalski');
    expect(all).not.toContain(ORG);
    const qa = rowsOf(rows, 'IMAGE_EDITED', 'qaComments');
    expect(qa.map((r) => [r.old, r.new])).toEqual([
      [HIDDEN_VALUE_LABEL, HIDDEN_VALUE_LABEL],
      [HIDDEN_VALUE_LABEL, HIDDEN_VALUE_LABEL],
    ]);
    expect(qa.map((r) => r.reason)).toEqual(['', 'Second look']); // reasons as typed
    expect(values(rows, 'organizationName')).toEqual([HIDDEN_VALUE_LABEL, HIDDEN_VALUE_LABEL]);
    expect(values(rows, 'protocolId')).toEqual(['', 'PROT-SECRET-77']);
    expect(values(rows, 'accessionNumber')).toEqual(['', 'ACC-2026-0001']);
    expect([one(rows, 'STUDY_UPDATED', 'sponsor').old, one(rows, 'STUDY_UPDATED', 'sponsor').new]).toEqual([
      'Test Sponsor',
      'Acme Therapeutics',
    ]);
    const subject = one(rows, 'CASE_EDITED', 'subjectId');
    expect(subject.new).toBe('SUBJ-9001');
  });

  it('an ISC (no QA comments) and a system admin (everything)', async () => {
    const isc = await csv(s.isc!);
    expect(text(isc)).not.toContain('Kowalski');
    expect(values(isc, 'qaComments')).toEqual([HIDDEN_VALUE_LABEL, HIDDEN_VALUE_LABEL]);
    expect(values(isc, 'organizationName')).toEqual(['', ORG]);
    const admin = await csv(s.sysadmin!);
    expect(values(admin, 'qaComments')).toEqual(['Fold on the left edge', QA]);
    expect(values(admin, 'organizationName')).toEqual(['', ORG]);
  });

  it('the PDFs of a project manager and a sponsor: no QA comments, organization, protocol ID; the sponsor only for the sponsor', async () => {
    for (const who of ['pm', 'sponsor']) {
      const flat = await pdfText(s[who]!);
      for (const leak of ['Foldontheleftedge', 'Kowalski', ORG.replace(/\s+/g, ''), 'PROT-SECRET-77'])
        expect(flat, who).not.toContain(leak);
      expect(flat, who).toContain(HIDDEN_VALUE_LABEL.replace(/\s+/g, ''));
      expect(flat, who).toContain('ACC-2026-0001');
      expect(flat, who).toContain('Secondlook');
      if (who === 'pm') expect(flat, who).not.toContain('AcmeTherapeutics');
      else expect(flat, who).toContain('AcmeTherapeutics');
    }
  });

  it('the audit rows keep the values', async () => {
    const stored = await t.database.db
      .selectFrom('audit_events')
      .select(['field', 'old_value', 'new_value'])
      .where('action', '=', 'IMAGE_EDITED')
      .where('entity_id', '=', String(ids.slide))
      .where('field', '=', 'qaComments')
      .orderBy('id')
      .execute();
    expect(stored.map((r) => [r.old_value, r.new_value])).toEqual([
      [null, 'Fold on the left edge'],
      ['Fold on the left edge', QA],
    ]);
  });
});

describe('the renderer on its own', () => {
  const principal = (...actions: Permission[]) => ({ actions: new Set(actions) }) as unknown as Principal;
  const row = (r: Partial<AuditValueRow>): AuditValueRow => ({
    action: 'SOMETHING_ELSE',
    entity_type: 'case',
    entity_id: '5',
    field: null,
    old_value: null,
    new_value: null,
    reason: null,
    ...r,
  });
  const render = (actions: Permission[], r: Partial<AuditValueRow>, fileNames = false) => {
    const renderer = new AuditValueRenderer({ fileNames, principal: principal(...actions) });
    const x = row(r);
    // (`reason?.`: so that, on the code before, the test fails on what it shows rather than on the call.)
    return [...renderer.values(x), renderer.reason?.(x) ?? x.reason];
  };

  it('case fields by mayViewCaseField: CASE_EDITED and the members of CASE_CREATED', () => {
    const edited = { action: 'CASE_EDITED', field: 'subjectId', old_value: 'S-1', new_value: 'S-2', reason: 'Typo' };
    expect(render([], edited)).toEqual([HIDDEN_VALUE_LABEL, HIDDEN_VALUE_LABEL, 'Typo']);
    expect(render(['AP_CaseData_ViewSubjectID'], edited)).toEqual(['S-1', 'S-2', 'Typo']);
    // The Endo Procedure ID names the case wherever the case is shown: as recorded.
    expect(render([], { ...edited, field: 'procId' })).toEqual(['S-1', 'S-2', 'Typo']);
    const created = {
      action: 'CASE_CREATED',
      new_value: '{"procId":"ENDO-1","subjectId":"S-1","siteId":"07","visitId":null}',
    };
    expect(render(['AP_CaseData_ViewSiteID'], created)).toEqual([
      null,
      JSON.stringify({ procId: 'ENDO-1', subjectId: HIDDEN_VALUE_LABEL, siteId: '07', visitId: HIDDEN_VALUE_LABEL }),
      null,
    ]);
    const all: Permission[] = ['AP_CaseData_ViewSiteID', 'AP_CaseData_ViewSubjectID', 'AP_CaseData_ViewVisitID'];
    expect(render(all, created)).toEqual([null, created.new_value, null]);
  });

  it('an empty value of a hidden field is hidden too (whether there was one is not shown)', () => {
    expect(render([], { action: 'IMAGE_EDITED', entity_type: 'image', field: 'qaComments', new_value: 'x' })).toEqual([
      HIDDEN_VALUE_LABEL,
      HIDDEN_VALUE_LABEL,
      null,
    ]);
  });

  it('every field IMAGE_EDITED and CASE_EDITED record has its rule from the column tables', () => {
    const image = AUDIT_VALUE_RULES.IMAGE_EDITED!;
    const cases = AUDIT_VALUE_RULES.CASE_EDITED!;
    for (const field of EDITABLE_IMAGE_FIELDS) expect(image[field], field).toBeDefined();
    for (const column of IM_IMAGE_COLUMNS)
      if (column.edit && column.view && column.key !== 'imageFilename')
        expect(image[column.key], column.key).toBe(`view:${column.view}`);
    expect(image.imageFilename).toBe('fileName');
    for (const field of CASE_FIELDS) {
      const permission = CASE_FIELD_VIEW_PERMISSIONS[field];
      expect(cases[field], field).toBe(permission ? `view:${permission}` : undefined);
    }
    const expected = IM_CASE_COLUMNS.find((c) => c.key === 'imagesExpected')!.view;
    expect(cases.imagesExpected).toBe(`view:${expected}`);
  });

  it('error reasons only: a user’s reason that mentions a path is as typed', () => {
    const typed = 'see uploads/ folder and SUBJ-0042.svs on the share';
    expect(render([], { action: 'CASE_EDITED', field: 'procId', reason: typed })[2]).toBe(typed);
    expect(AUDIT_ERROR_REASON_ACTIONS).toEqual(
      expect.arrayContaining(['IMAGE_PROCESSING_FAILED', 'MLD_IMPORT_FAILED']),
    );
    // Without a look-up, an image's failure still loses keys and slide file names.
    const reason = `Missing level 2 in ${FILE}; see ${ROOT}/images/4/pyramid.tif`;
    const failure = { action: 'IMAGE_PROCESSING_FAILED', entity_type: 'image', entity_id: '4', reason };
    expect(render([], failure)[2]).toBe(`Missing level 2 in Image 4; see ${STORAGE_KEY_LABEL}`);
    expect(render([], failure, true)[2]).toBe(`Missing level 2 in ${FILE}; see ${STORAGE_KEY_LABEL}`);
  });
});

describe('storage keys in a text', () => {
  it('every kind of key the code makes is found, with the path before it', () => {
    const keys = new UploadKeys('secret');
    const made = [
      uploadKey(3, FILE),
      keys.issue(3, 7, FILE),
      keys.issueSample(7, 'samples.csv'),
      sampleResultKey(keys.issueSample(7, 'samples.csv')),
      keys.issueMld(7, `${BASE}.mld`),
      imageKeys.original(12, uploadKey(3, FILE)),
      imageKeys.pyramid(12),
      imageKeys.label(12),
      imageKeys.macro(12),
      'mld/imports/5/heatmap.png',
    ];
    for (const key of made) {
      expect(withoutStorageKeys(`open '${ROOT}/${key}' failed`, 'K'), key).toBe(`open 'K' failed`);
      expect(withoutStorageKeys(`The object ${key} already exists.`, 'K'), key).toBe('The object K already exists.');
      expect(withoutStorageKeys(`${key}: Read error`, 'K'), key).toBe('K: Read error');
    }
    expect(withoutStorageKeys(`s3://bucket/${made[0]}`, 'K')).toBe('K');
    // Words that merely end like a prefix are not keys; neither is text without a key.
    expect(withoutStorageKeys('myuploads/ 3 images/ left', 'K')).toBe('myuploads/ 3 images/ left');
    expect(withoutStorageKeys(`No image matches ${BASE}`, 'K')).toBe(`No image matches ${BASE}`);
    expect(safeFileName(FILE)).toBe(FILE);
  });

  it('every key template in the code starts with one of STORAGE_KEY_PREFIXES', () => {
    const src = path.join(import.meta.dirname, '..', 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const prefixes = new Set<string>();
    for (const file of files)
      for (const m of readFileSync(path.join(src, file), 'utf8').matchAll(/`([a-z][a-z0-9-]*)\/[^`\n]*\$\{/g))
        prefixes.add(m[1]!);
    expect(prefixes.size).toBeGreaterThanOrEqual(4);
    expect([...prefixes].filter((p) => !(STORAGE_KEY_PREFIXES as readonly string[]).includes(p))).toEqual([]);
  });

  it('at the source: a failed slide’s and a failed import’s message are recorded without the key', async () => {
    const db = t.database.db;
    // Outside the study, so the exports above keep their rows.
    const image = await createImage(db, { studyId: null, name: FILE, s3Key: `originals/77/${FILE}` });
    await markFailed(db, image.id, `The image could not be opened ("${ROOT}/originals/77/${FILE}")`);
    const row = await db.selectFrom('images').select('status_message').where('id', '=', image.id).executeTakeFirst();
    expect(row?.status_message).toBe('The image could not be opened ("(storage key)")');
    const mld = await db
      .insertInto('mld_files')
      .values({ name: 'y.mld', s3_key: `${MLD_KEY}.2`, size_bytes: 10, study_id: null, status: 'PROCESSING' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await failImport(db, mld.id, `ENOENT: no such file or directory, open '${ROOT}/${MLD_KEY}'`);
    const file = await db.selectFrom('mld_files').select('error_message').where('id', '=', mld.id).executeTakeFirst();
    expect(file?.error_message).toBe(`ENOENT: no such file or directory, open '(storage key)'`);
    const stored = await db
      .selectFrom('audit_events')
      .select(['action', 'reason'])
      .where((eb) =>
        eb.or([
          eb.and([eb('entity_type', '=', 'image'), eb('entity_id', '=', String(image.id))]),
          eb.and([eb('entity_type', '=', 'mld_file'), eb('entity_id', '=', String(mld.id))]),
        ]),
      )
      .orderBy('id')
      .execute();
    expect(stored).toEqual([
      { action: 'IMAGE_PROCESSING_FAILED', reason: 'The image could not be opened ("(storage key)")' },
      { action: 'MLD_IMPORT_FAILED', reason: `ENOENT: no such file or directory, open '(storage key)'` },
    ]);
  });
});
