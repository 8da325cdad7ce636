import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES, roleByName, STUDY_MESSAGES, USER_MESSAGES } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createStudy, createUser, PASSWORD } from './factories.js';

let t: TestContext;
let admin: Session;
let adminId: number;
beforeAll(async () => {
  t = await createTestApp();
  const user = await createUser(t.database.db, { globalRoles: ['StudyAdmin'] });
  adminId = user.id;
  admin = await login(t.app, user.username, PASSWORD);
});
afterAll(async () => {
  await t.close();
});

const rand = () => randomBytes(4).toString('hex');

function validConfig(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `UC Study ${rand()}`,
    sponsor: 'Acme',
    protocolIds: ['P-1'],
    visitIds: ['V1', 'V2'],
    labVisitIds: ['L1', ''],
    indications: ['ULCERATIVE_COLITIS'],
    segments: 2,
    anatomicalSegments: ['Colon', 'Rectum'],
    modality: ['HISTOPATHOLOGY'],
    onHold: false,
    onHoldReason: null,
    hpfClasses: [],
    pointClasses: [],
    freehandClasses: [],
    multilineClasses: [],
    ...over,
  };
}

const cls = (name: string, sortOrder = 0, extra: Record<string, unknown> = {}) => ({
  name,
  color: '#87FF01',
  sortOrder,
  enabled: true,
  ...extra,
});
const create = (payload: unknown, session: Session = admin) =>
  session.request({ method: 'POST', url: '/api/studies', payload: payload as object });

async function expectRefused(payload: unknown, message: string, status = 400) {
  const response = await create(payload);
  expect(response.json(), JSON.stringify(payload)).toEqual({ success: false, message });
  expect(response.statusCode).toBe(status);
}

describe('POST /api/studies: access', () => {
  it('401 when logged out', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/studies', payload: validConfig() });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.pleaseLogIn });
  });

  it('403 for a role without the create-study permission (ISC)', async () => {
    const study = await createStudy(t.database.db);
    const isc = await createUser(t.database.db, { studyRoles: [{ studyId: study.id, role: 'ISC' }] });
    const session = await login(t.app, isc.username, PASSWORD);
    const response = await create(validConfig(), session);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ success: false, message: MESSAGES.accessDenied });
  });

  it('a system admin may create studies too', async () => {
    const sys = await createUser(t.database.db, { systemAdmin: true });
    const session = await login(t.app, sys.username, PASSWORD);
    expect((await create(validConfig(), session)).statusCode).toBe(201);
  });
});

describe('POST /api/studies: a valid study', () => {
  it('creates the study and answers { success, message, study } with its id and every field', async () => {
    const payload = validConfig({
      name: '  Trimmed Name  ',
      sponsor: '  ',
      hpfClasses: [cls('HPF b', 5), cls('HPF a', 1)],
    });
    const response = await create(payload);
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({ success: true, message: STUDY_MESSAGES.studyCreated });
    const study = body.study;
    expect(study).toMatchObject({
      name: 'Trimmed Name',
      sponsor: null,
      protocolIds: ['P-1'],
      visitIds: ['V1', 'V2'],
      labVisitIds: ['L1', ''],
      indications: ['ULCERATIVE_COLITIS'],
      segments: 2,
      anatomicalSegments: ['Colon', 'Rectum'],
      modality: ['HISTOPATHOLOGY'],
      onHold: false,
      onHoldReason: null,
      isNoto: false,
      mostRecentUploadAt: null,
      numberOfUnassignedImages: 0,
      pointClasses: [],
    });
    expect(study.id).toBeGreaterThan(0);
    // Classes stored in sortOrder order, renumbered from 0.
    expect(
      study.hpfClasses.map((c: { name: string; sortOrder: number; type: string; count: number }) => [
        c.name,
        c.sortOrder,
        c.type,
        c.count,
      ]),
    ).toEqual([
      ['HPF a', 0, 'HPF', 0],
      ['HPF b', 1, 'HPF', 0],
    ]);
    const fetched = await admin.request({ method: 'GET', url: `/api/studies/${study.id}` });
    expect(fetched.json()).toEqual(study);
  });

  it('audits STUDY_CREATED and one row per field, by the creating user', async () => {
    const payload = validConfig({ pointClasses: [cls('Neutrophil')] });
    const study = (await create(payload)).json().study;
    const rows = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('study_id', '=', study.id)
      .orderBy('id')
      .execute();
    expect(rows.every((r) => r.action === 'STUDY_CREATED' && r.user_id === adminId && r.old_value === null)).toBe(true);
    expect(rows[0]).toMatchObject({
      field: null,
      new_value: payload.name,
      entity_type: 'study',
      entity_id: String(study.id),
    });
    const byField = Object.fromEntries(rows.slice(1).map((r) => [r.field, r.new_value]));
    expect(Object.keys(byField)).toHaveLength(18);
    expect(byField).toMatchObject({
      name: payload.name,
      indications: '["ULCERATIVE_COLITIS"]',
      segments: '2',
      onHold: 'false',
    });
    expect(JSON.parse(byField.pointClasses)).toEqual([
      { id: study.pointClasses[0].id, name: 'Neutrophil', color: '#87FF01', sortOrder: 0, enabled: true },
    ]);
  });

  it('ignores classes sent without an id and marked deleted', async () => {
    const study = (
      await create(validConfig({ freehandClasses: [cls('Gone', 0, { deleted: true }), cls('Kept', 1)] }))
    ).json().study;
    expect(study.freehandClasses.map((c: { name: string }) => c.name)).toEqual(['Kept']);
  });

  it('refuses a class id on a new study', async () => {
    await expectRefused(validConfig({ hpfClasses: [cls('X', 0, { id: 1 })] }), STUDY_MESSAGES.classNotInList);
  });

  it('refuses a second study with the same name, in any letter case (409)', async () => {
    const payload = validConfig();
    expect((await create(payload)).statusCode).toBe(201);
    await expectRefused({ ...payload, name: String(payload.name).toUpperCase() }, STUDY_MESSAGES.nameTaken, 409);
  });
});

describe('POST /api/studies: the rules of spec doc 1 §5, with their messages', () => {
  it.each([
    ['empty name', { name: '' }, 'Name is required'],
    ['blank name', { name: '   ' }, 'Name is required'],
    ['no indication', { indications: [] }, 'Indication is required'],
    ['no segment count', { segments: null }, 'Number of Anatomical Segments is required'],
    ['missing segment count', { segments: undefined }, 'Number of Anatomical Segments is required'],
    ['zero segments', { segments: 0, anatomicalSegments: [] }, STUDY_MESSAGES.segmentsRange],
    ['negative segments', { segments: -1, anatomicalSegments: [] }, STUDY_MESSAGES.segmentsRange],
    ['fractional segments', { segments: 1.5 }, STUDY_MESSAGES.segmentsRange],
    ['too many segments', { segments: 51 }, STUDY_MESSAGES.segmentsRange],
    [
      'the untouched celiac default classes in a study that is not celiac',
      {
        pointClasses: [cls('Enterocyte', 0, { color: '#FF9F00' }), cls('IEL', 1)],
        multilineClasses: [
          cls('Unit 1', 0),
          cls('Unit 2', 1, { color: '#FF001E' }),
          cls('Unit 3', 2, { color: '#FF9F00' }),
          cls('Unit 4', 3, { color: '#FDEB03' }),
          cls('Unit 5', 4, { color: '#013BFA' }),
        ],
      },
      STUDY_MESSAGES.celiacDefaultsWithoutCeliac,
    ],
    ['a name missing per segment', { segments: 3 }, 'Enter one name per segment (3)'],
    ['blank segment names', { segments: 2, anatomicalSegments: ['', ' '] }, 'Enter one name per segment (2)'],
    ['no modality', { modality: [] }, 'Modality is required'],
    ['on hold without reason', { onHold: true, onHoldReason: '  ' }, 'On Hold Reason is required'],
    [
      'on hold reason over 178',
      { onHold: true, onHoldReason: 'x'.repeat(179) },
      'On Hold Reason must be at most 178 characters',
    ],
    ['NASH with another indication', { indications: ['NASH', 'POUCHITIS'] }, 'Studies only support one indication.'],
    [
      'celiac with another indication',
      { indications: ['CROHNS_DISEASE', 'CELIAC_DISEASE'] },
      'Studies only support one indication.',
    ],
    ['duplicate protocol IDs', { protocolIds: ['P-1', ' P-1'] }, 'Protocol IDs must be unique'],
    [
      'duplicate visit pair',
      { visitIds: ['V1', 'V1'], labVisitIds: ['L1', 'L1'] },
      'The Visit ID / Lab Visit ID pair must be unique',
    ],
    [
      'lab visit ID used twice',
      { visitIds: ['V1', 'V2'], labVisitIds: ['L1', 'L1'] },
      'The Visit ID / Lab Visit ID pair must be unique',
    ],
    ['blank visit ID', { visitIds: ['V1', ' '], labVisitIds: ['L1', 'L2'] }, 'Visit ID is required'],
    [
      'unpaired lab visit IDs',
      { visitIds: ['V1'], labVisitIds: ['L1', 'L2'] },
      'Visit IDs and Lab Visit IDs must be paired',
    ],
    ['unknown indication', { indications: ['FLU'] }, 'Cannot decode indications.0 from FLU'],
    ['unknown modality', { modality: ['HISTOPATHOLOGY', 'XRAY'] }, 'Cannot decode modality.1 from XRAY'],
  ])('%s', async (_label, over, message) => {
    await expectRefused(validConfig(over), message);
  });

  it.each(['hpfClasses', 'pointClasses', 'freehandClasses', 'multilineClasses'])(
    '%s: names non-blank and unique in the list',
    async (list) => {
      await expectRefused(validConfig({ [list]: [cls('  ')] }), STUDY_MESSAGES.classNameInvalid);
      await expectRefused(validConfig({ [list]: [cls('Crypt'), cls(' crypt ', 1)] }), STUDY_MESSAGES.classNameInvalid);
      // Unique within one list only; a deleted class does not count.
      const other = list === 'hpfClasses' ? 'pointClasses' : 'hpfClasses';
      const ok = await create(
        validConfig({ [list]: [cls('Crypt'), cls('Crypt', 1, { deleted: true })], [other]: [cls('Crypt')] }),
      );
      expect(ok.statusCode).toBe(201);
    },
  );

  it('accepts the valid edges: 178-character hold reason, NASH alone, a visit with two lab visits, no lab visit', async () => {
    for (const over of [
      { onHold: true, onHoldReason: 'y'.repeat(178) },
      { indications: ['NASH'] },
      { visitIds: ['V1', 'V1', 'V2'], labVisitIds: ['L1', 'L2', ''] },
      { visitIds: ['V1', 'V2'], labVisitIds: ['', ''] },
      { segments: 1, anatomicalSegments: ['Liver'] },
    ]) {
      const response = await create(validConfig(over));
      expect(response.statusCode, JSON.stringify(over) + response.body).toBe(201);
    }
  });

  it('rejects malformed input with 400, never 500', async () => {
    for (const payload of [
      null,
      [],
      'text',
      { ...validConfig(), segments: 'two' },
      { ...validConfig(), pointClasses: [{ name: 'x', color: 'red', sortOrder: 0, enabled: true }] },
      { ...validConfig(), pointClasses: [{ name: 'x', color: '#FFFFFF', sortOrder: -1, enabled: true }] },
      { ...validConfig(), name: 'x'.repeat(201) },
    ]) {
      const response = await admin.request({
        method: 'POST',
        url: '/api/studies',
        payload: JSON.stringify(payload),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().success).toBe(false);
    }
  });
});

describe('POST /api/studies: celiac disease', () => {
  it('adds the default point classes Enterocyte and IEL and line classes Unit 1–5 with the spec colours', async () => {
    const study = (await create(validConfig({ indications: ['CELIAC_DISEASE'] }))).json().study;
    const brief = (list: { name: string; color: string; sortOrder: number; type: string }[]) =>
      list.map((c) => [c.name, c.color, c.sortOrder, c.type]);
    expect(brief(study.pointClasses)).toEqual([
      ['Enterocyte', '#FF9F00', 0, 'POINT'],
      ['IEL', '#87FF01', 1, 'POINT'],
    ]);
    expect(brief(study.multilineClasses)).toEqual([
      ['Unit 1', '#87FF01', 0, 'MULTILINE'],
      ['Unit 2', '#FF001E', 1, 'MULTILINE'],
      ['Unit 3', '#FF9F00', 2, 'MULTILINE'],
      ['Unit 4', '#FDEB03', 3, 'MULTILINE'],
      ['Unit 5', '#013BFA', 4, 'MULTILINE'],
    ]);
  });

  it('skips default names that already exist (any letter case) and keeps the given classes first', async () => {
    const study = (
      await create(
        validConfig({
          indications: ['CELIAC_DISEASE'],
          pointClasses: [cls('iel', 0, { color: '#8601FC' }), cls('Goblet', 1)],
          multilineClasses: [cls('Unit 3')],
        }),
      )
    ).json().study;
    expect(study.pointClasses.map((c: { name: string; color: string }) => `${c.name} ${c.color}`)).toEqual([
      'iel #8601FC',
      'Goblet #87FF01',
      'Enterocyte #FF9F00',
    ]);
    expect(study.multilineClasses.map((c: { name: string }) => c.name)).toEqual([
      'Unit 3',
      'Unit 1',
      'Unit 2',
      'Unit 4',
      'Unit 5',
    ]);
  });

  it('adds nothing for other indications', async () => {
    const study = (await create(validConfig({ indications: ['NASH'] }))).json().study;
    expect(study.pointClasses).toEqual([]);
    expect(study.multilineClasses).toEqual([]);
  });
});

describe('POST /api/studies: uploaders, readers and read-only users of the payload (spec doc 1 §7)', () => {
  const studyIdByName = async (name: string) =>
    (await t.database.db.selectFrom('studies').select('id').where('name', '=', name).executeTakeFirst())?.id;

  it('grants study access with each list’s default role, or a chosen role of the list, audited', async () => {
    const db = t.database.db;
    const [uploader, labtech, reader, dm] = await Promise.all([
      createUser(db),
      createUser(db),
      createUser(db),
      createUser(db),
    ]);
    const response = await create(
      validConfig({
        uploaders: [uploader.id, { id: labtech.id, roleId: roleByName('LabTech').id }],
        readers: [{ id: reader.id }, reader.id],
        readonlyUsers: [{ id: dm.id, roleId: roleByName('DM').id }],
      }),
    );
    expect(response.statusCode, response.body).toBe(201);
    const { study } = response.json();
    const names = (list: { username: string; roleName: string }[]) =>
      list.map((u) => `${u.username}:${u.roleName}`).sort();
    expect(names(study.uploaders)).toEqual([`${labtech.username}:LabTech`, `${uploader.username}:UPLOADER`].sort());
    expect(names(study.readers)).toEqual([`${reader.username}:CR`]);
    expect(names(study.readonlyUsers)).toEqual([`${dm.username}:DM`]);
    const audit = await db
      .selectFrom('audit_events')
      .select(['entity_id', 'new_value', 'user_id'])
      .where('action', '=', 'STUDY_ACCESS_GRANTED')
      .where('study_id', '=', study.id)
      .orderBy('id')
      .execute();
    expect(audit.map((a) => [a.entity_id, a.new_value, a.user_id])).toEqual([
      [String(uploader.id), 'UPLOADER', adminId],
      [String(labtech.id), 'LabTech', adminId],
      [String(reader.id), 'CR', adminId],
      [String(dm.id), 'DM', adminId],
    ]);
  });

  it('refuses a role outside the list, an unknown or deactivated user and one’s own access, creating nothing', async () => {
    const db = t.database.db;
    const user = await createUser(db);
    const inactive = await createUser(db, { active: false });
    const cases: [Record<string, unknown>, number, string][] = [
      [
        { uploaders: [{ id: user.id, roleId: roleByName('CR').id }] },
        400,
        'Central Reader cannot be given to the uploaders of a study',
      ],
      [
        { readonlyUsers: [{ id: user.id, roleId: roleByName('Site').id }] },
        400,
        'Site cannot be given to the readonlyUsers of a study',
      ],
      [{ readers: [{ id: user.id, roleId: 999 }] }, 400, USER_MESSAGES.roleNotAssignable],
      [{ readers: [2_000_000_000] }, 404, USER_MESSAGES.userNotFound],
      [{ readers: [inactive.id] }, 409, USER_MESSAGES.accountDeactivated],
      [{ uploaders: [adminId] }, 403, USER_MESSAGES.ownStudyAccess],
      [{ readers: ['x'] }, 400, ''],
    ];
    for (const [lists, status, message] of cases) {
      const config = validConfig(lists);
      const response = await create(config);
      expect(response.statusCode, JSON.stringify(lists)).toBe(status);
      if (message) expect(response.json()).toEqual({ success: false, message });
      expect(await studyIdByName(config.name as string), 'no study is left behind').toBeUndefined();
    }
  });
});
