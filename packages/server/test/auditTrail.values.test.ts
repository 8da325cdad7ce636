import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_BOM, csvLine, roleByName } from '@lamina/domain';
import { recordAudit, SYSTEM_ACTOR, type AuditEvent } from '../src/platform/audit/audit.js';
import {
  AUDIT_PLAIN_ACTIONS,
  AUDIT_VALUE_RULES,
  AuditValueRenderer,
  STORAGE_KEY_LABEL,
} from '../src/modules/reports/auditTrailValues.js';
import type { Principal } from '../src/platform/auth/principal.js';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import {
  assignReader,
  createAnnotationClass,
  createCase,
  createImage,
  createOrganization,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
} from './factories.js';
import { parseCsv } from './support/csv.js';

/**
 * The Old and New Value cells of the audit trail exports (issue 26, items 5 and 6): storage keys
 * never leave in an export, scanner file names only for holders of AP_ImageData_ViewFilename (the
 * others get the Object column's neutral `Image {id}`), and ids are named — people as
 * `First Last (username)`, images, cases, classes, query reasons, roles, organizations and
 * studies. The audit rows themselves keep everything; the PDF's SHA-256 is of the rows as the
 * exporter's CSV renders them.
 */

let t: TestContext;
const s: Record<string, Session> = {};
const ids: Record<string, number> = {};
const names: Record<string, string> = {};
let study: { id: number; name: string };
let otherStudy: { id: number; name: string };

const FILE = 'SUBJ-0042_SITE-07_VISIT-3.svs';
const UPLOAD_KEY = () => `uploads/${study.id}/u7-abc-def/${FILE}`;
const SEALED_KEY = () => `originals/${ids.slide}/${FILE}`;

async function user(key: string, first: string, last: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  await t.database.db
    .updateTable('users')
    .set({ first_name: first, last_name: last })
    .where('id', '=', made.id)
    .execute();
  ids[key] = made.id;
  names[key] = `${first} ${last} (${made.username})`;
  s[key] = await login(t.app, made.username, PASSWORD);
}

async function audit(events: AuditEvent[], actor = SYSTEM_ACTOR) {
  await t.database.db.transaction().execute((tx) => recordAudit(tx, actor, events));
}

function csvRows(body: string): string[][] {
  expect(body.startsWith(CSV_BOM)).toBe(true);
  return parseCsv(body.slice(1)).slice(1);
}

async function csv(session: Session, query: string): Promise<string[][]> {
  const response = await session.request({ method: 'GET', url: `/api/audit-trail?reportFormat=csv&${query}` });
  expect(response.statusCode, response.body).toBe(200);
  return csvRows(response.body);
}

async function pdf(session: Session, query: string): Promise<string> {
  const response = await session.request({ method: 'GET', url: `/api/audit-trail?reportFormat=pdf&${query}` });
  expect(response.statusCode, response.body).toBe(200);
  const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
  try {
    const file = path.join(dir, 'a.pdf');
    writeFileSync(file, response.rawPayload);
    return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The row of an action (and field), its Old and New Value cells. */
function row(rows: string[][], action: string, field?: string, entityId?: number) {
  const found = rows.filter(
    (r) =>
      r[6] === action &&
      (field === undefined || r[10] === field) &&
      (entityId === undefined || r[8] === String(entityId)),
  );
  expect(found.length, `${action} ${field ?? ''}`).toBeGreaterThan(0);
  const last = found[found.length - 1] ?? [];
  return { old: last[11] ?? '', new: last[12] ?? '', reason: last[13] ?? '' };
}

const studyQuery = () => `studyId=${study.id}`;

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  study = await createStudy(db, `Values study ${Date.now()}`);
  otherStudy = await createStudy(db, `Values other study ${Date.now()}`);
  const inStudy = (role: 'DM' | 'PM' | 'ISC' | 'CR') => ({ studyRoles: [{ studyId: study.id, role }] });
  await user('sysadmin', 'Sam', 'Admin', { systemAdmin: true, globalRoles: ['SystemAdmin'] });
  await user('isc', 'Ines', 'Coordinator', {
    studyRoles: [
      { studyId: study.id, role: 'ISC' },
      { studyId: otherStudy.id, role: 'ISC' },
    ],
  });
  await user('dm', 'Dana', 'Manager', inStudy('DM'));
  await user('pm', 'Pat', 'Projects', inStudy('PM'));
  await user('ada', 'Ada', 'Reader', inStudy('CR'));
  await user('bo', 'Bo', 'Reader', inStudy('CR'));

  // Item 5: an upload's events carry the scanner's file name and storage keys.
  ids.slide = (
    await createImage(db, {
      studyId: study.id,
      name: FILE,
      s3Key: `originals/0/${FILE}`,
      cogKey: 'images/0/pyramid.tif',
      width: 1000,
      height: 1000,
    })
  ).id;
  await audit([
    {
      action: 'IMAGE_UPLOADED',
      entityType: 'image',
      entityId: ids.slide,
      studyId: study.id,
      newValue: { name: FILE, s3Key: UPLOAD_KEY(), size: 1842233344 },
    },
  ]);
  await audit(
    [
      {
        action: 'IMAGE_ORIGINAL_SEALED',
        entityType: 'image',
        entityId: ids.slide,
        studyId: study.id,
        field: 's3_key',
        oldValue: UPLOAD_KEY(),
        newValue: SEALED_KEY(),
      },
    ],
    { ...SYSTEM_ACTOR, username: 'worker' },
  );
  // The file name itself edited (ISC, PATCH /api/images/{id}), and a copy named after it.
  const renamed = await s.isc!.request({
    method: 'PATCH',
    url: `/api/images/${ids.slide}`,
    payload: { imageName: { value: `X${FILE}`, reasonForChange: 'Typo' } },
  });
  expect(renamed.statusCode, renamed.body).toBe(200);
  const back = await s.isc!.request({
    method: 'PATCH',
    url: `/api/images/${ids.slide}`,
    payload: { imageName: { value: FILE, reasonForChange: 'Undo' } },
  });
  expect(back.statusCode, back.body).toBe(200);
  const copied = await s.isc!.request({ method: 'POST', url: `/api/images/${ids.slide}/copy`, payload: {} });
  expect(copied.statusCode, copied.body).toBe(200);
  ids.copy = copied.json<{ imageId: number }>().imageId;
  await audit([
    { action: 'IMAGE_DOWNLOADED', entityType: 'image', entityId: ids.slide, studyId: study.id, newValue: FILE },
  ]);

  // Item 6: readers and images of a case (PATCH /api/cases/{id}).
  ids.case = (await createCase(db, { studyId: study.id })).id;
  await db.updateTable('cases').set({ proc_id: 'ENDO-V1' }).where('id', '=', ids.case).execute();
  ids.img2 = (await createStudyImage(db, { studyId: study.id })).id;
  names.img2 = (await db.selectFrom('images').select('name').where('id', '=', ids.img2).executeTakeFirstOrThrow()).name;
  const readers = await s.dm!.request({
    method: 'PATCH',
    url: `/api/cases/${ids.case}`,
    payload: { readers: { ids: [ids.bo, ids.ada], reasonForChange: 'Balance' } },
  });
  expect(readers.statusCode, readers.body).toBe(200);
  const images = await s.isc!.request({
    method: 'PATCH',
    url: `/api/cases/${ids.case}`,
    payload: { images: { ids: [ids.slide, ids.img2], reasonForChange: 'Requisition' } },
  });
  expect(images.statusCode, images.body).toBe(200);
  await audit([
    {
      action: 'CASE_READ_REOPENED',
      entityType: 'case',
      entityId: ids.case,
      studyId: study.id,
      field: 'read_at',
      oldValue: `reader ${ids.ada}`,
      newValue: null,
      reason: 'Scored the wrong case',
    },
  ]);

  // An annotation by a reader: its image and class are ids.
  const readCase = (await createCase(db, { studyId: study.id, status: 'PROCESSED' })).id;
  ids.readImage = (
    await createStudyImage(db, {
      studyId: study.id,
      caseId: readCase,
      status: 'READY_FOR_READING',
      width: 4000,
      height: 4000,
      mpp: 0.5,
    })
  ).id;
  await assignReader(db, { caseId: readCase, userId: ids.ada! });
  ids.iel = (await createAnnotationClass(db, { studyId: study.id, type: 'POINT', name: 'IEL' })).id;
  const drawn = await s.ada!.request({
    method: 'POST',
    url: '/api/annotations',
    payload: {
      imageId: ids.readImage,
      annotationType: 'POINT',
      geometry: { type: 'Point', coordinates: [1000, 1000] },
      annotationClassId: ids.iel,
    },
  });
  expect(drawn.statusCode, drawn.body).toBe(200);

  // A case query, PM → DM: the role and the case are ids.
  const reason = await db
    .selectFrom('query_reasons')
    .select(['id', 'reason_text'])
    .where('object_type', '=', 'CASE')
    .where('with_role_id', '=', roleByName('DM').id)
    .where('reason_text', '=', 'Wrong site')
    .executeTakeFirstOrThrow();
  ids.reason = reason.id;
  const opened = await s.pm!.request({
    method: 'POST',
    url: '/api/queries/new',
    payload: {
      queryObjectType: 'CASE',
      objectId: ids.case,
      studyId: study.id,
      withRoleId: roleByName('DM').id,
      responseOptionId: reason.id,
      commentText: 'Site 12 on the requisition',
    },
  });
  expect(opened.statusCode, opened.body).toBe(201);
  ids.query = opened.json<{ query: { id: number } }>().query.id;

  // A report exported for one user; a move to another study (which the DM cannot see).
  const report = await s.dm!.request({ method: 'GET', url: `/api/report/${study.id}/query?userId=${ids.pm}` });
  expect(report.statusCode, report.body).toBe(200);
  ids.moved = (await createStudyImage(db, { studyId: study.id })).id;
  const moved = await s.isc!.request({
    method: 'PATCH',
    url: `/api/images/${ids.moved}/study`,
    payload: { value: otherStudy.id, reasonForChange: 'Wrong study' },
  });
  expect(moved.statusCode, moved.body).toBe(200);

  // Platform events (Global): a query reason moved under another, a user's organization.
  const org = await createOrganization(db, `Lab of values ${Date.now()}`);
  names.org = org.name;
  await audit([
    {
      action: 'QUERY_REASON_CHANGED',
      entityType: 'query_reason',
      entityId: 999_001,
      field: 'parentId',
      oldValue: null,
      newValue: ids.reason,
      reason: 'Grouped',
    },
    {
      action: 'USER_UPDATED',
      entityType: 'user',
      entityId: ids.bo,
      field: 'organizationId',
      oldValue: null,
      newValue: org.id,
    },
  ]);
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('item 5: storage keys never, file names only with AP_ImageData_ViewFilename', () => {
  it('a data manager’s CSV: no file name, no storage key; the neutral label instead', async () => {
    const rows = await csv(s.dm!, studyQuery());
    const text = rows.map((r) => r.join('\u0001')).join('\n');
    expect(text).not.toContain('SUBJ-0042');
    expect(text).not.toContain('uploads/');
    expect(text).not.toContain('originals/');
    expect(text).not.toContain('s3Key');
    expect(JSON.parse(row(rows, 'IMAGE_UPLOADED').new)).toEqual({ name: `Image ${ids.slide}`, size: 1842233344 });
    const sealed = row(rows, 'IMAGE_ORIGINAL_SEALED', 's3_key');
    expect(sealed.old).toBe('(storage key: not exported)');
    expect(sealed.new).toBe('(storage key: not exported)');
    const renamed = row(rows, 'IMAGE_EDITED', 'imageName');
    expect([renamed.old, renamed.new]).toEqual([`Image ${ids.slide}`, `Image ${ids.slide}`]);
    expect(renamed.reason).toBe('Undo'); // plain text as recorded
    expect(JSON.parse(row(rows, 'IMAGE_COPIED').new)).toEqual({
      copiedFrom: `Image ${ids.slide}`,
      name: `Image ${ids.copy}`,
    });
    expect(row(rows, 'IMAGE_DOWNLOADED').new).toBe(`Image ${ids.slide}`);
  });

  it('a project manager’s PDF (PDF only) and a data manager’s PDF hold neither', async () => {
    for (const who of ['pm', 'dm']) {
      const text = (await pdf(s[who]!, studyQuery())).replace(/\s+/g, '');
      expect(text, who).toContain('IMAGE_UPLOADED');
      expect(text, who).not.toContain('SUBJ-0042');
      expect(text, who).not.toContain('uploads/');
      expect(text, who).not.toContain('originals/');
      expect(text, who).toContain('(storagekey:notexported)');
    }
  });

  it('with the permission: the file names, still no storage key', async () => {
    for (const who of ['isc', 'sysadmin']) {
      const rows = await csv(s[who]!, studyQuery());
      const text = rows.map((r) => r.join('\u0001')).join('\n');
      expect(text, who).not.toContain('uploads/');
      expect(text, who).not.toContain('originals/');
      expect(JSON.parse(row(rows, 'IMAGE_UPLOADED').new)).toEqual({ name: FILE, size: 1842233344 });
      const renamed = row(rows, 'IMAGE_EDITED', 'imageName');
      expect([renamed.old, renamed.new]).toEqual([`X${FILE}`, FILE]);
      expect(row(rows, 'IMAGE_DOWNLOADED').new).toBe(FILE);
      expect(row(rows, 'IMAGE_ORIGINAL_SEALED', 's3_key').new).toBe('(storage key: not exported)');
    }
  });

  it('the audit rows themselves keep everything, and the chain holds', async () => {
    const stored = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'old_value', 'new_value'])
      .where('entity_type', '=', 'image')
      .where('entity_id', '=', String(ids.slide))
      .where('action', 'in', ['IMAGE_UPLOADED', 'IMAGE_ORIGINAL_SEALED'])
      .orderBy('id')
      .execute();
    expect(JSON.parse(stored[0]?.new_value ?? '{}')).toEqual({ name: FILE, s3Key: UPLOAD_KEY(), size: 1842233344 });
    expect([stored[1]?.old_value, stored[1]?.new_value]).toEqual([UPLOAD_KEY(), SEALED_KEY()]);
  });
});

describe('item 6: ids are named', () => {
  it('reader assignments name the people; images, cases, classes, roles, reports, reopened reads', async () => {
    for (const who of ['dm', 'isc']) {
      const rows = await csv(s[who]!, studyQuery());
      const readers = row(rows, 'CASE_READERS_CHANGED', 'readers');
      expect(readers.old).toBe('[]');
      expect(JSON.parse(readers.new)).toEqual([names.ada, names.bo]); // sorted by id, as stored
      expect(readers.reason).toBe('Balance');
      const images = row(rows, 'CASE_IMAGES_CHANGED', 'images');
      const imageName = (id: number, name: string) => (who === 'isc' ? name : `Image ${id}`);
      expect(images.old).toBe('[]');
      expect(JSON.parse(images.new)).toEqual([imageName(ids.slide!, FILE), imageName(ids.img2!, names.img2!)]);
      expect(row(rows, 'IMAGE_CASE_ASSIGNED', 'case_id', ids.img2).new).toBe('ENDO-V1');
      expect(row(rows, 'CASE_READ_REOPENED', 'read_at').old).toBe(`reader ${names.ada}`);
      expect((JSON.parse(row(rows, 'ANNOTATION_CREATED').new) as Record<string, unknown>).annotationClassId).toBe(
        'IEL',
      );
      const opened = JSON.parse(row(rows, 'QUERY_OPENED').new) as Record<string, unknown>;
      expect(opened).toMatchObject({
        objectType: 'CASE',
        objectId: 'ENDO-V1',
        caseId: 'ENDO-V1',
        withRoleId: 'Data Manager',
        reason: 'Wrong site',
      });
      expect(JSON.parse(row(rows, 'REPORT_EXPORTED', 'query').new)).toMatchObject({ userId: names.pm });
      // A study the data manager cannot see stays a number; the ISC sees both.
      const move = row(rows, 'IMAGE_MOVED_STUDY', 'study_id', ids.moved);
      expect(move.old).toBe(study.name);
      expect(move.new).toBe(who === 'isc' ? otherStudy.name : `Study ${otherStudy.id}`);
      // Plain text is as recorded.
      const comment = JSON.parse(row(rows, 'QUERY_COMMENTED', 'comment').new) as Record<string, unknown>;
      expect(comment.text).toBe('Site 12 on the requisition');
    }
  });

  it('the ISC’s image ids are file names, the reader’s annotation names the slide', async () => {
    const rows = await csv(s.isc!, studyQuery());
    const name = (
      await t.database.db.selectFrom('images').select('name').where('id', '=', ids.readImage!).executeTakeFirstOrThrow()
    ).name;
    expect((JSON.parse(row(rows, 'ANNOTATION_CREATED').new) as Record<string, unknown>).imageId).toBe(name);
    const dm = await csv(s.dm!, studyQuery());
    expect((JSON.parse(row(dm, 'ANNOTATION_CREATED').new) as Record<string, unknown>).imageId).toBe(
      `Image ${ids.readImage}`,
    );
  });

  it('Global: query reasons and organizations by name', async () => {
    const rows = await csv(s.sysadmin!, '');
    expect(row(rows, 'QUERY_REASON_CHANGED', 'parentId').new).toBe('Wrong site');
    expect(row(rows, 'USER_UPDATED', 'organizationId', ids.bo).new).toBe(names.org);
  });

  it('the PDF names them too, and its SHA-256 is of the rows as this exporter’s CSV renders them', async () => {
    const response = await s.dm!.request({ method: 'GET', url: `/api/audit-trail?reportFormat=pdf&${studyQuery()}` });
    const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
    let text: string;
    try {
      writeFileSync(path.join(dir, 'a.pdf'), response.rawPayload);
      text = execFileSync('pdftotext', [path.join(dir, 'a.pdf'), '-'], { encoding: 'utf8' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const flat = text.replace(/\s+/g, '');
    expect(flat).toContain(`readerAdaReader`);
    expect(flat).toMatch(/Hashchain:verifiedintactfromevent\d+toevent\d+/);
    const range = /\(event (\d+) to event (\d+)\)/.exec(text.replace(/\s+/g, ' '));
    const sha = /SHA-256 of the exported rows[^:]*:\s*([0-9a-f]{64})/.exec(text.replace(/\s+\n\s*/g, ' '));
    expect(range).not.toBeNull();
    const last = Number(range?.[2]);
    const rows = (await csv(s.dm!, studyQuery())).filter((r) => Number(r[0]) <= last);
    const hash = createHash('sha256');
    for (const r of rows) hash.update(csvLine(r.map((v, i) => (i === 0 ? Number(v) : v === '' ? null : v))));
    expect(hash.digest('hex')).toBe(sha?.[1]);
  });
});

describe('every audited action has its values classified', () => {
  it('each action the server records is in AUDIT_VALUE_RULES or AUDIT_PLAIN_ACTIONS (not both)', () => {
    const src = path.join(import.meta.dirname, '..', 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const actions = new Set<string>();
    for (const file of files)
      for (const line of readFileSync(path.join(src, file), 'utf8').split('\n'))
        if (/\baction: /.test(line)) for (const m of line.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)) actions.add(m[1]!);
    expect(actions.size).toBeGreaterThan(60);
    const ruled = new Set(Object.keys(AUDIT_VALUE_RULES));
    const plain = new Set(AUDIT_PLAIN_ACTIONS);
    expect([...actions].filter((a) => !ruled.has(a) && !plain.has(a))).toEqual([]);
    expect([...ruled].filter((a) => plain.has(a))).toEqual([]);
  });
});

describe('the renderer on its own (no look-ups)', () => {
  const render = (fileNames: boolean, row: Partial<Parameters<AuditValueRenderer['values']>[0]>) =>
    new AuditValueRenderer({ fileNames, principal: { actions: new Set() } as unknown as Principal }).values({
      action: 'SOMETHING_ELSE',
      entity_type: 'image',
      entity_id: '7',
      field: null,
      old_value: null,
      new_value: null,
      reason: null,
      ...row,
    });

  it('leaves text as recorded, to the character, when there is nothing to change', () => {
    for (const text of ['Corrected after the site’s reply', '{"a": 1.0, "b":"x"}', 'see "s3Key": later', '[1,2]', '12'])
      expect(render(false, { old_value: text, new_value: text })).toEqual([text, text]);
    expect(
      render(false, { action: 'QUERY_COMMENTED', new_value: '{"commentId":3,"text":"uploads/x is fine"}' }),
    ).toEqual([null, '{"commentId":3,"text":"uploads/x is fine"}']);
  });

  it('drops key-like members at any depth, from any action; a key-named field reads the label', () => {
    expect(
      render(true, {
        new_value: '{"meta":{"labelKey":"images/7/label.png","n":1},"list":[{"key":"k"}],"heatmap":true}',
      }),
    ).toEqual([null, '{"meta":{"n":1},"list":[{}],"heatmap":true}']);
    expect(render(true, { field: 'cog_key', old_value: 'images/7/pyramid.tif' })).toEqual([STORAGE_KEY_LABEL, null]);
    // Names from the rows are never looked up on Object.prototype.
    const odd = '{"toString":3,"constructor":4,"__proto__":5}';
    expect(render(true, { action: 'ANNOTATION_CREATED', field: 'constructor', new_value: odd })).toEqual([null, odd]);
    expect(render(true, { action: 'toString', new_value: odd })).toEqual([null, odd]);
  });

  it('file names by permission; ids without a look-up read as their neutral label; usernames stay', () => {
    const uploaded = {
      action: 'IMAGE_UPLOADED',
      new_value: `{"name":"${FILE}","s3Key":"uploads/1/t/${FILE}","size":3}`,
    };
    expect(render(true, uploaded)).toEqual([null, `{"name":"${FILE}","size":3}`]);
    expect(render(false, uploaded)).toEqual([null, '{"name":"Image 7","size":3}']);
    expect(
      render(false, { action: 'CASE_READERS_CHANGED', field: 'readers', new_value: '[12,"cr@example.org"]' }),
    ).toEqual([null, '["User 12","cr@example.org"]']);
    expect(render(true, { action: 'IMAGE_REPLACED', field: 'replaces_image_id', new_value: '99999999999' })).toEqual([
      null,
      '99999999999',
    ]);
  });
});
