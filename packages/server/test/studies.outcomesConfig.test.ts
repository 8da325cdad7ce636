import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENDPOINT_MESSAGES,
  MESSAGES,
  STUDY_MESSAGES,
  categoryNeedsThreshold,
  classNotInStudy,
  endpointKeyUnknown,
} from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createUser, PASSWORD, studyCreateBody } from './factories.js';

// Issue 30, the study configuration: endpoints, adjudication and signatures are stored, returned
// and audited like the other study fields, refused with the domain's messages (docs/OUTCOMES.md).

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

const pec = {
  key: 'pec',
  label: 'Peak eosinophil count',
  kind: 'PEAK_COUNT_PER_HPF',
  className: 'Eosinophil',
  threshold: 15,
  positiveWhen: 'GTE',
};
const total = { key: 'total_neut', label: 'Neutrophils', kind: 'TOTAL_COUNT', className: 'Neutrophil' };
const vhcd = { key: 'vh_cd', label: 'Vh:Cd', kind: 'VH_CD_RATIO', threshold: 2, positiveWhen: 'LT' };
const onCategories = { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' };

const pointClasses = [
  { name: 'Neutrophil', color: '#87FF01', sortOrder: 0, enabled: true },
  { name: 'Eosinophil', color: '#FF001E', sortOrder: 1, enabled: true },
];

interface View {
  id: number;
  name: string;
  endpoints: unknown[];
  adjudication: unknown;
  signatures: boolean;
  pointClasses: { id: number; name: string; color: string; sortOrder: number; enabled: boolean }[];
}

const create = (over: Record<string, unknown>) =>
  admin.request({ method: 'POST', url: '/api/studies', payload: studyCreateBody({ pointClasses, ...over }) });

async function newStudy(over: Record<string, unknown> = {}): Promise<View> {
  const response = await create(over);
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ study: View }>().study;
}

const put = (id: number, payload: object) => admin.request({ method: 'PUT', url: `/api/studies/${id}`, payload });
const view = async (id: number): Promise<View> =>
  (await admin.request({ method: 'GET', url: `/api/studies/${id}` })).json<View>();

const stored = (id: number) =>
  t.database.db
    .selectFrom('studies')
    .select(['endpoints', 'adjudication', 'signatures', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

const auditRows = (studyId: number, action: string) =>
  t.database.db
    .selectFrom('audit_events')
    .select(['field', 'old_value', 'new_value', 'reason'])
    .where('study_id', '=', studyId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

const json = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

describe('POST /api/studies: endpoints, adjudication, signatures', () => {
  it('stores and returns them, and audits each with the other fields of STUDY_CREATED', async () => {
    const study = await newStudy({ endpoints: [pec, vhcd], adjudication: onCategories, signatures: true });
    expect(study).toMatchObject({ endpoints: [pec, vhcd], adjudication: onCategories, signatures: true });
    expect(await view(study.id)).toEqual(study);
    expect(await stored(study.id)).toMatchObject({
      endpoints: [pec, vhcd],
      adjudication: onCategories,
      signatures: true,
    });
    const rows = await auditRows(study.id, 'STUDY_CREATED');
    const byField = new Map(rows.map((r) => [r.field, r]));
    expect(json(byField.get('endpoints')?.new_value ?? null)).toEqual([pec, vhcd]);
    expect(json(byField.get('adjudication')?.new_value ?? null)).toEqual(onCategories);
    expect(byField.get('signatures')?.new_value).toBe('true');
    expect(rows.every((r) => r.old_value === null)).toBe(true);
  });

  it('defaults to no endpoints, no adjudication and signatures off; the list rows leave them out', async () => {
    const study = await newStudy();
    expect(study).toMatchObject({ endpoints: [], adjudication: null, signatures: false });
    expect(await stored(study.id)).toMatchObject({ endpoints: [], adjudication: null, signatures: false });
    const list = await admin.request({
      method: 'GET',
      url: `/api/studies/list?name=${encodeURIComponent(study.name)}`,
    });
    const row = list.json<{ studies: Record<string, unknown>[] }>().studies[0];
    expect(row?.id).toBe(study.id);
    expect(row).not.toHaveProperty('endpoints');
    expect(row).not.toHaveProperty('adjudication');
    expect(row).not.toHaveProperty('signatures');
  });

  it('keeps an endpoint on a celiac default class that the same create adds', async () => {
    const iel = { key: 'iel', label: 'IELs', kind: 'TOTAL_COUNT', className: 'IEL' };
    const study = await newStudy({ indications: ['CELIAC_DISEASE'], endpoints: [iel] });
    expect(study.endpoints).toEqual([iel]);
  });
});

/** Each refusal: the payload's read-outcome fields and the domain's exact message. */
const refusals: [string, Record<string, unknown>, string][] = [
  ['an invalid key', { endpoints: [{ ...pec, key: 'PEC 1' }] }, ENDPOINT_MESSAGES.keyInvalid],
  ['a duplicate key', { endpoints: [pec, { ...vhcd, key: 'pec' }] }, ENDPOINT_MESSAGES.keysNotUnique],
  [
    'a class that is not one of the point classes',
    { endpoints: [{ ...pec, className: 'Eos' }] },
    classNotInStudy('Eos', ['Neutrophil', 'Eosinophil']),
  ],
  [
    'a count kind without a class',
    { endpoints: [{ key: 'pec', label: 'PEC', kind: 'PEAK_COUNT_PER_HPF' }] },
    ENDPOINT_MESSAGES.classNameRequired,
  ],
  ['a threshold without positiveWhen', { endpoints: [{ ...total, threshold: 3 }] }, ENDPOINT_MESSAGES.thresholdPair],
  [
    'an adjudication on an unknown endpoint',
    { endpoints: [vhcd], adjudication: onCategories },
    endpointKeyUnknown('pec', ['vh_cd']),
  ],
  [
    'CATEGORY_DISAGREES on an endpoint without a threshold',
    { endpoints: [total], adjudication: { endpointKey: 'total_neut', rule: 'CATEGORY_DISAGREES' } },
    categoryNeedsThreshold('total_neut'),
  ],
  [
    'ABS_DIFF_ABOVE without its value',
    { endpoints: [pec], adjudication: { endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE' } },
    ENDPOINT_MESSAGES.valueRequired,
  ],
];

describe('POST /api/studies: refusals with the domain messages', () => {
  it.each(refusals)('%s: 400, no study, no audit row', async (_, fields, message) => {
    const name = `Refused ${Math.random().toString(36).slice(2)}`;
    const response = await create({ name, ...fields });
    expect(response.json()).toEqual({ success: false, message });
    expect(response.statusCode).toBe(400);
    const made = await t.database.db.selectFrom('studies').select('id').where('name', '=', name).execute();
    expect(made).toEqual([]);
  });
});

describe('PUT /api/studies/{id}: endpoints, adjudication, signatures', () => {
  it('each change needs its reason: without one 400, nothing stored, no audit row', async () => {
    const study = await newStudy({ endpoints: [pec], adjudication: onCategories });
    const before = await stored(study.id);
    for (const payload of [
      { endpoints: { value: [pec, total] } },
      { endpoints: { value: [pec, vhcd], reasonForChange: '  ' } },
      { adjudication: { value: null, reasonForChange: null } },
      { signatures: { value: true } },
    ]) {
      const response = await put(study.id, payload);
      expect(response.json(), JSON.stringify(payload)).toEqual({
        success: false,
        message: MESSAGES.reasonForChangeRequired,
      });
      expect(response.statusCode).toBe(400);
    }
    expect(await stored(study.id)).toEqual(before);
    expect(await auditRows(study.id, 'STUDY_UPDATED')).toEqual([]);
  });

  it('with reasons: stored, returned, one audit row each with old value, new value and reason', async () => {
    const study = await newStudy({ endpoints: [pec], adjudication: onCategories });
    const response = await put(study.id, {
      endpoints: { value: [pec, total], reasonForChange: 'SAP v2: neutrophils' },
      adjudication: { value: { endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 5 }, reasonForChange: 'SAP v2' },
      signatures: { value: true, reasonForChange: 'Part 11 from now on' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const changed = {
      endpoints: [pec, total],
      adjudication: { endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 5 },
      signatures: true,
    };
    expect(response.json()).toMatchObject({ success: true, message: STUDY_MESSAGES.studyUpdated, study: changed });
    expect(await view(study.id)).toMatchObject(changed);
    expect(await stored(study.id)).toMatchObject(changed);
    const rows = await auditRows(study.id, 'STUDY_UPDATED');
    expect(rows.map((r) => [r.field, json(r.old_value), json(r.new_value), r.reason])).toEqual([
      ['endpoints', [pec], [pec, total], 'SAP v2: neutrophils'],
      ['adjudication', onCategories, changed.adjudication, 'SAP v2'],
      ['signatures', false, true, 'Part 11 from now on'],
    ]);

    // Back to no adjudication: old value the rule, new value null, the column SQL null.
    const off = await put(study.id, { adjudication: { value: null, reasonForChange: 'Adjudication dropped' } });
    expect(off.statusCode, off.body).toBe(200);
    expect((await stored(study.id)).adjudication).toBeNull();
    const last = (await auditRows(study.id, 'STUDY_UPDATED')).at(-1);
    expect(last).toEqual({
      field: 'adjudication',
      old_value: JSON.stringify(changed.adjudication),
      new_value: null,
      reason: 'Adjudication dropped',
    });
  });

  it('the same endpoints with their keys in another order are no change: no reason needed, no audit row', async () => {
    const study = await newStudy({ endpoints: [pec], adjudication: onCategories });
    const reordered = {
      positiveWhen: 'GTE',
      threshold: 15,
      className: 'Eosinophil',
      kind: 'PEAK_COUNT_PER_HPF',
      label: 'Peak eosinophil count',
      key: 'pec',
    };
    const response = await put(study.id, {
      endpoints: { value: [reordered] },
      adjudication: { value: { rule: 'CATEGORY_DISAGREES', endpointKey: 'pec' } },
      signatures: { value: false },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().message).toBe(STUDY_MESSAGES.noChanges);
    expect(await auditRows(study.id, 'STUDY_UPDATED')).toEqual([]);
  });

  it.each(refusals)('%s: 400, the row unchanged, no audit row', async (_, fields, message) => {
    const study = await newStudy({ endpoints: [pec, vhcd], adjudication: onCategories });
    const before = await stored(study.id);
    const payload = Object.fromEntries(
      Object.entries(fields).map(([field, value]) => [field, { value, reasonForChange: 'r' }]),
    );
    const response = await put(study.id, payload);
    expect(response.json()).toEqual({ success: false, message });
    expect(response.statusCode).toBe(400);
    expect(await stored(study.id)).toEqual(before);
    expect(await auditRows(study.id, 'STUDY_UPDATED')).toEqual([]);
  });

  it('refuses deleting or renaming a point class an endpoint counts, in the same update or alone', async () => {
    const study = await newStudy({ endpoints: [pec] });
    const [neutrophil, eosinophil] = study.pointClasses;
    if (!neutrophil || !eosinophil) throw new Error('two point classes expected');
    const input = (c: typeof neutrophil) => ({
      id: c.id,
      name: c.name,
      color: c.color,
      sortOrder: c.sortOrder,
      enabled: c.enabled,
    });
    const before = await stored(study.id);
    const attempts = [
      { pointClasses: { value: [input(neutrophil), { ...input(eosinophil), deleted: true }], reasonForChange: 'r' } },
      {
        pointClasses: { value: [input(neutrophil), { ...input(eosinophil), deleted: true }], reasonForChange: 'r' },
        endpoints: { value: [pec, total], reasonForChange: 'r' },
      },
      { pointClasses: { value: [input(neutrophil), { ...input(eosinophil), name: 'Eos' }], reasonForChange: 'r' } },
    ];
    const messages = [
      classNotInStudy('Eosinophil', ['Neutrophil']),
      classNotInStudy('Eosinophil', ['Neutrophil']),
      classNotInStudy('Eosinophil', ['Neutrophil', 'Eos']),
    ];
    for (const [i, payload] of attempts.entries()) {
      const response = await put(study.id, payload);
      expect(response.json(), JSON.stringify(payload)).toEqual({ success: false, message: messages[i] });
      expect(response.statusCode).toBe(400);
    }
    expect(await stored(study.id)).toEqual(before);
    expect((await view(study.id)).pointClasses.map((c) => c.name)).toEqual(['Neutrophil', 'Eosinophil']);
    expect(await auditRows(study.id, 'STUDY_UPDATED')).toEqual([]);

    // Both at once — the endpoint moved to the other class, the class deleted — go through.
    const moved = await put(study.id, {
      pointClasses: { value: [input(neutrophil), { ...input(eosinophil), deleted: true }], reasonForChange: 'r' },
      endpoints: { value: [total], reasonForChange: 'r' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await view(study.id)).endpoints).toEqual([total]);
  });
});
