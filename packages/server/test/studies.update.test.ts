import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, STUDY_MESSAGES } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createAnnotation, createStudy, createStudyImage, createUser, PASSWORD, studyCreateBody } from './factories.js';

let t: TestContext;
let admin: Session;
beforeAll(async () => {
  t = await createTestApp();
  const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
  admin = await login(t.app, user.username, PASSWORD);
});
afterAll(async () => {
  await t.close();
});

interface Cls {
  id?: number;
  name: string;
  color: string;
  sortOrder: number;
  enabled: boolean;
  deleted?: boolean;
  count?: number;
  type?: string;
}

const cls = (name: string, sortOrder = 0, extra: Partial<Cls> = {}): Cls => ({
  name,
  color: '#87FF01',
  sortOrder,
  enabled: true,
  ...extra,
});
/** A class of the view as the form sends it back. */
const asInput = ({ id, name, color, sortOrder, enabled }: Cls): Cls => ({
  ...(id !== undefined && { id }),
  name,
  color,
  sortOrder,
  enabled,
});

async function newStudy(over: Record<string, unknown> = {}) {
  const response = await admin.request({
    method: 'POST',
    url: '/api/studies',
    payload: studyCreateBody({ pointClasses: [cls('Neutrophil'), cls('Eosinophil', 1)], ...over }),
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().study as {
    id: number;
    name: string;
    pointClasses: Cls[];
    multilineClasses: Cls[];
    hpfClasses: Cls[];
  } & Record<string, unknown>;
}

const put = (id: number, payload: unknown, session: Session = admin) =>
  session.request({ method: 'PUT', url: `/api/studies/${id}`, payload: payload as object });

async function expectRefused(id: number, payload: unknown, message: string, status = 400) {
  const response = await put(id, payload);
  expect(response.json(), JSON.stringify(payload)).toEqual({ success: false, message });
  expect(response.statusCode).toBe(status);
}

const updates = (studyId: number) =>
  t.database.db
    .selectFrom('audit_events')
    .selectAll()
    .where('study_id', '=', studyId)
    .where('action', '=', 'STUDY_UPDATED')
    .orderBy('id')
    .execute();

describe('PUT /api/studies/{id}: access', () => {
  it('401 when logged out', async () => {
    const study = await createStudy(t.database.db);
    const response = await t.app.inject({ method: 'PUT', url: `/api/studies/${study.id}`, payload: {} });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
  });

  it('403 for a role without the edit-study permission (DM with access to the study)', async () => {
    const study = await createStudy(t.database.db);
    const dm = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role: 'DM' }] });
    const session = await login(t.app, dm.username, PASSWORD);
    const response = await put(study.id, { name: { value: 'X', reasonForChange: 'r' } }, session);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
  });

  it('404 Study not found for a missing study', async () => {
    await expectRefused(987654, { name: { value: 'X', reasonForChange: 'r' } }, 'Study not found', 404);
  });
});

describe('PUT /api/studies/{id}: reason for change', () => {
  it('refuses a changed field without a reason, changing nothing', async () => {
    const study = await newStudy();
    await expectRefused(study.id, { name: { value: 'Renamed' } }, 'Reason for change is required');
    await expectRefused(
      study.id,
      { name: { value: 'Renamed', reasonForChange: '   ' } },
      'Reason for change is required',
    );
    await expectRefused(
      study.id,
      { name: { value: 'Renamed', reasonForChange: null } },
      'Reason for change is required',
    );
    const row = await t.database.db
      .selectFrom('studies')
      .select('name')
      .where('id', '=', study.id)
      .executeTakeFirstOrThrow();
    expect(row.name).toBe(study.name);
    expect(await updates(study.id)).toEqual([]);
  });

  it('needs a reason even when the previous value was empty (sponsor was none)', async () => {
    const study = await newStudy();
    await expectRefused(study.id, { sponsor: { value: 'Acme' } }, 'Reason for change is required');
    expect((await put(study.id, { sponsor: { value: 'Acme', reasonForChange: 'Sponsor confirmed' } })).statusCode).toBe(
      200,
    );
  });

  it('saves the changed fields and audits one row per field with old, new and reason', async () => {
    const study = await newStudy();
    const response = await put(study.id, {
      name: { value: `${study.name} v2`, reasonForChange: 'Protocol amendment 2' },
      modality: { value: ['ENDOSCOPY', 'HISTOPATHOLOGY'], reasonForChange: 'Biopsies added' },
      segments: { value: 1, reasonForChange: 'unchanged, no row' },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      success: true,
      message: STUDY_MESSAGES.studyUpdated,
      study: { name: `${study.name} v2`, modality: ['ENDOSCOPY', 'HISTOPATHOLOGY'] },
    });
    const rows = await updates(study.id);
    expect(rows.map((r) => [r.field, r.old_value, r.new_value, r.reason])).toEqual([
      ['name', study.name, `${study.name} v2`, 'Protocol amendment 2'],
      ['modality', '["ENDOSCOPY"]', '["ENDOSCOPY","HISTOPATHOLOGY"]', 'Biopsies added'],
    ]);
  });

  it('sending only unchanged values needs no reason and changes nothing', async () => {
    const study = await newStudy();
    const response = await put(study.id, {
      name: { value: study.name },
      pointClasses: { value: study.pointClasses.map(asInput) },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().message).toBe(STUDY_MESSAGES.noChanges);
    expect(await updates(study.id)).toEqual([]);
  });

  it('lab visit IDs reuse the visit IDs’ reason', async () => {
    const study = await newStudy();
    const response = await put(study.id, {
      visitIds: { value: ['V1', 'V2'], reasonForChange: 'Week 12 visit added' },
      labVisitIds: { value: ['L1', 'L2'] },
    });
    expect(response.statusCode, response.body).toBe(200);
    const rows = await updates(study.id);
    expect(rows.map((r) => [r.field, r.reason])).toEqual([
      ['visitIds', 'Week 12 visit added'],
      ['labVisitIds', 'Week 12 visit added'],
    ]);
    // Alone, a lab visit ID change still needs its own reason.
    await expectRefused(study.id, { labVisitIds: { value: ['L1', 'L9'] } }, 'Reason for change is required');
  });
});

describe('PUT /api/studies/{id}: the merged configuration passes every rule', () => {
  it.each([
    [{ name: { value: ' ', reasonForChange: 'r' } }, 'Name is required'],
    [{ indications: { value: [], reasonForChange: 'r' } }, 'Indication is required'],
    [
      { indications: { value: ['CROHNS_DISEASE', 'NASH'], reasonForChange: 'r' } },
      'Studies only support one indication.',
    ],
    [
      { indications: { value: ['CELIAC_DISEASE', 'POUCHITIS'], reasonForChange: 'r' } },
      'Studies only support one indication.',
    ],
    [{ segments: { value: 2, reasonForChange: 'r' } }, 'Enter one name per segment (2)'],
    [{ segments: { value: null, reasonForChange: 'r' } }, 'Number of Anatomical Segments is required'],
    [{ modality: { value: [], reasonForChange: 'r' } }, 'Modality is required'],
    [{ onHold: { value: true, reasonForChange: 'r' } }, 'On Hold Reason is required'],
    [
      { onHold: { value: true, reasonForChange: 'r' }, onHoldReason: { value: 'z'.repeat(179), reasonForChange: 'r' } },
      'On Hold Reason must be at most 178 characters',
    ],
    [
      { visitIds: { value: ['V1', 'V1'], reasonForChange: 'r' }, labVisitIds: { value: ['L1', 'L1'] } },
      'The Visit ID / Lab Visit ID pair must be unique',
    ],
    [{ visitIds: { value: ['V1', 'V2'], reasonForChange: 'r' } }, 'Visit IDs and Lab Visit IDs must be paired'],
    [{ pointClasses: { value: [cls('A'), cls('a', 1)], reasonForChange: 'r' } }, 'name is blank or not unique'],
    [{ indications: { value: ['FLU'], reasonForChange: 'r' } }, 'Cannot decode indications.value.0 from FLU'],
  ])('%j → %s', async (payload, message) => {
    const study = await newStudy({ pointClasses: [] });
    await expectRefused(study.id, payload, message);
  });

  it('puts a study on hold with a reason of up to 178 characters, and takes it off', async () => {
    const study = await newStudy();
    const held = await put(study.id, {
      onHold: { value: true, reasonForChange: 'Sponsor request' },
      onHoldReason: { value: 'h'.repeat(178), reasonForChange: 'Sponsor request' },
    });
    expect(held.statusCode, held.body).toBe(200);
    expect(held.json().study).toMatchObject({ onHold: true, onHoldReason: 'h'.repeat(178) });
    const released = await put(study.id, { onHold: { value: false, reasonForChange: 'Resumed' } });
    expect(released.json().study.onHold).toBe(false);
  });

  it('refuses a name another study has (409)', async () => {
    const a = await newStudy();
    const b = await newStudy();
    await expectRefused(
      b.id,
      { name: { value: a.name.toLowerCase(), reasonForChange: 'r' } },
      STUDY_MESSAGES.nameTaken,
      409,
    );
  });
});

describe('PUT /api/studies/{id}: celiac chosen on an existing study', () => {
  it('adds the default classes, skipping existing names, with the indications’ reason', async () => {
    const study = await newStudy({ pointClasses: [cls('IEL', 0, { color: '#4A90E2' })] });
    const response = await put(study.id, {
      indications: { value: ['CELIAC_DISEASE'], reasonForChange: 'Re-scoped to celiac' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const view = response.json().study;
    expect(view.pointClasses.map((c: Cls) => `${c.name} ${c.color}`)).toEqual(['IEL #4A90E2', 'Enterocyte #FF9F00']);
    expect(view.multilineClasses.map((c: Cls) => c.name)).toEqual(['Unit 1', 'Unit 2', 'Unit 3', 'Unit 4', 'Unit 5']);
    const rows = await updates(study.id);
    expect(rows.map((r) => [r.field, r.reason])).toEqual([
      ['indications', 'Re-scoped to celiac'],
      ['pointClasses', 'Re-scoped to celiac'],
      ['multilineClasses', 'Re-scoped to celiac'],
    ]);
    // Already celiac: saving other changes adds nothing again.
    const again = await put(study.id, { sponsor: { value: 'S', reasonForChange: 'r' } });
    expect(again.json().study.multilineClasses).toHaveLength(5);
  });
});

describe('PUT /api/studies/{id}: annotation classes', () => {
  it('adds, renames, recolours, reorders, disables and re-enables classes', async () => {
    const study = await newStudy();
    const [neutrophil, eosinophil] = study.pointClasses as [Cls, Cls];
    const step = async (value: Cls[]) => {
      const response = await put(study.id, { pointClasses: { value, reasonForChange: 'class edit' } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().study.pointClasses as Cls[];
    };
    let list = await step([asInput(neutrophil), asInput(eosinophil), cls('Plasma cell', 2, { color: '#00FFFF' })]);
    expect(list.map((c) => c.name)).toEqual(['Neutrophil', 'Eosinophil', 'Plasma cell']);
    const plasma = list[2]!;
    expect(plasma.id).toBeGreaterThan(0);

    list = await step([
      { ...asInput(neutrophil), name: 'PMN', color: '#FF001E' },
      asInput(eosinophil),
      asInput(plasma),
    ]);
    expect(list[0]).toMatchObject({ id: neutrophil.id, name: 'PMN', color: '#FF001E' });

    list = await step([
      { ...asInput(list[0]!), sortOrder: 2 },
      { ...asInput(list[1]!), sortOrder: 0 },
      { ...asInput(list[2]!), sortOrder: 1 },
    ]);
    expect(list.map((c) => [c.name, c.sortOrder])).toEqual([
      ['Eosinophil', 0],
      ['Plasma cell', 1],
      ['PMN', 2],
    ]);

    list = await step(list.map((c) => ({ ...asInput(c), enabled: c.name !== 'Plasma cell' })));
    expect(list.find((c) => c.name === 'Plasma cell')?.enabled).toBe(false);
    list = await step(list.map((c) => ({ ...asInput(c), enabled: true })));
    expect(list.every((c) => c.enabled)).toBe(true);

    const rows = await updates(study.id);
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.field === 'pointClasses' && r.reason === 'class edit')).toBe(true);
    expect(JSON.parse(rows[1]!.old_value!)[0]).toEqual({
      id: neutrophil.id,
      name: 'Neutrophil',
      color: '#87FF01',
      sortOrder: 0,
      enabled: true,
    });
    expect(JSON.parse(rows[1]!.new_value!)[0]).toEqual({
      id: neutrophil.id,
      name: 'PMN',
      color: '#FF001E',
      sortOrder: 0,
      enabled: true,
    });
  });

  it('swaps two names in one save', async () => {
    const study = await newStudy();
    const [a, b] = study.pointClasses as [Cls, Cls];
    const response = await put(study.id, {
      pointClasses: {
        value: [
          { ...asInput(a), name: b.name },
          { ...asInput(b), name: a.name },
        ],
        reasonForChange: 'swap',
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().study.pointClasses.map((c: Cls) => [c.id, c.name])).toEqual([
      [a.id, b.name],
      [b.id, a.name],
    ]);
  });

  it('deletes a class with an id (marked deleted), drops one without an id, and may reuse the name', async () => {
    const study = await newStudy();
    const [a, b] = study.pointClasses as [Cls, Cls];
    const response = await put(study.id, {
      pointClasses: {
        value: [{ ...asInput(a), deleted: true }, asInput(b), cls('Draft', 2, { deleted: true }), cls(a.name, 3)],
        reasonForChange: 'cleanup',
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const list = response.json().study.pointClasses as Cls[];
    expect(list.map((c) => [c.name, c.sortOrder])).toEqual([
      [b.name, 0],
      [a.name, 1],
    ]);
    expect(list[1]!.id).not.toBe(a.id);
    const stored = await t.database.db
      .selectFrom('annotation_classes')
      .select(['deleted', 'enabled'])
      .where('id', '=', a.id!)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ deleted: true, enabled: false });
  });

  it('refuses to delete a class that has annotations (409); deleted annotations do not count', async () => {
    const study = await newStudy();
    const [a, b] = study.pointClasses as [Cls, Cls];
    const image = await createStudyImage(t.database.db, { studyId: study.id });
    await createAnnotation(t.database.db, { imageId: image.id, classId: a.id! });
    await createAnnotation(t.database.db, { imageId: image.id, classId: b.id!, deleted: true });
    const view = (await admin.request({ method: 'GET', url: `/api/studies/${study.id}` })).json();
    expect(view.pointClasses.map((c: Cls) => c.count)).toEqual([1, 0]);

    await expectRefused(
      study.id,
      { pointClasses: { value: [{ ...asInput(a), deleted: true }, asInput(b)], reasonForChange: 'r' } },
      STUDY_MESSAGES.classHasAnnotations,
      409,
    );
    expect(
      (
        await put(study.id, {
          pointClasses: { value: [asInput(a), { ...asInput(b), deleted: true }], reasonForChange: 'r' },
        })
      ).statusCode,
    ).toBe(200);
    // Disabling a class with annotations is allowed.
    const disabled = await put(study.id, {
      pointClasses: { value: [{ ...asInput(a), enabled: false }], reasonForChange: 'r' },
    });
    expect(disabled.json().study.pointClasses).toMatchObject([{ id: a.id, enabled: false, count: 1 }]);
  });

  it('refuses class ids of another study or list, ids listed twice, and a list missing a stored class', async () => {
    const study = await newStudy();
    const other = await newStudy({ hpfClasses: [cls('HPF 1')] });
    const [a, b] = study.pointClasses as [Cls, Cls];
    const foreign = other.pointClasses[0]!;
    const otherList = other.hpfClasses[0]!;
    await expectRefused(
      study.id,
      { pointClasses: { value: [asInput(a), asInput(b), asInput(foreign)], reasonForChange: 'r' } },
      STUDY_MESSAGES.classNotInList,
    );
    await expectRefused(
      study.id,
      { hpfClasses: { value: [asInput(a)], reasonForChange: 'r' } },
      STUDY_MESSAGES.classNotInList,
    );
    await expectRefused(
      study.id,
      {
        pointClasses: {
          value: [asInput(a), asInput(b), { ...asInput(otherList), sortOrder: 2 }],
          reasonForChange: 'r',
        },
      },
      STUDY_MESSAGES.classNotInList,
    );
    await expectRefused(
      study.id,
      { pointClasses: { value: [asInput(a), asInput(a), asInput(b)], reasonForChange: 'r' } },
      STUDY_MESSAGES.classListedTwice,
    );
    await expectRefused(
      study.id,
      { pointClasses: { value: [asInput(a)], reasonForChange: 'r' } },
      STUDY_MESSAGES.classesOutdated,
      409,
    );
  });
});
