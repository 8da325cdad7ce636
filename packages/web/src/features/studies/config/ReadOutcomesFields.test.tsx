import {
  ENDPOINT_MESSAGES,
  STUDY_MESSAGES,
  categoryNeedsThreshold,
  classNotInStudy,
  endpointKeyUnknown,
  type EndpointDefinition,
  type StudyConfig,
  type StudyView,
} from '@lamina/domain';
import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../../api/client';
import { makeClass, makeStudy, makeUserAs } from '../../../test/fixtures';
import { mockFetch } from '../../../test/mockFetch';
import { LocationProbe, renderRoutes, renderWithProviders } from '../../../test/render';
import { StudyConfigurePage } from '../StudyConfigurePage';
import { ReadOutcomesFields, type ReadOutcomesField } from './ReadOutcomesFields';

beforeEach(() => setCsrfToken('token'));
afterEach(() => cleanup());

type Outcomes = Pick<StudyConfig, ReadOutcomesField>;

const pec: EndpointDefinition = {
  key: 'pec',
  label: 'Peak eosinophil count',
  kind: 'PEAK_COUNT_PER_HPF',
  className: 'Eosinophil',
  threshold: 15,
  positiveWhen: 'GTE',
};

const type = (el: HTMLElement, value: string) => fireEvent.change(el, { target: { value } });
const choose = (el: HTMLElement, value: string) => fireEvent.change(el, { target: { value } });
const row = (name: string) => screen.getByRole('group', { name });
const field = (within_: HTMLElement, label: string) => within(within_).getByLabelText<HTMLInputElement>(label);

/** The fields alone, holding their value as the form does; `latest()` is what the form would hold. */
function renderFields(initial: Outcomes, pointClassNames: readonly string[] = ['Eosinophil', 'Neutrophil']) {
  let latest = initial;
  function Harness() {
    const [value, setValue] = useState(initial);
    return (
      <ReadOutcomesFields
        value={value}
        pointClassNames={pointClassNames}
        onChange={(f, v) => {
          latest = { ...latest, [f]: v };
          setValue(latest);
        }}
        issues={[]}
        reasons={{ endpoints: null, adjudication: null, signatures: null }}
      />
    );
  }
  renderWithProviders(<Harness />);
  return { latest: () => latest };
}

const none: Outcomes = { endpoints: [], adjudication: null, signatures: false };

describe('ReadOutcomesFields: endpoints', () => {
  it('adds, edits and removes endpoints; each row keeps what was typed in it', () => {
    const form = renderFields(none);
    screen.getByText('No endpoints');
    fireEvent.click(screen.getByRole('button', { name: 'Add endpoint' }));
    const first = row('Endpoint 1');
    expect(field(first, 'Kind').value).toBe('PEAK_COUNT_PER_HPF');
    expect(field(first, 'Point class').value).toBe('Eosinophil');
    type(field(first, 'Key'), 'pec');
    const pecRow = row('Endpoint 1 (pec)');
    type(field(pecRow, 'Label'), 'Peak eosinophil count');
    type(field(pecRow, 'Threshold'), '15');
    choose(field(pecRow, 'Positive when'), 'GTE');
    expect(form.latest().endpoints).toEqual([pec]);

    fireEvent.click(screen.getByRole('button', { name: 'Add endpoint' }));
    const second = row('Endpoint 2');
    type(field(second, 'Key'), 'vh_cd');
    const vh = row('Endpoint 2 (vh_cd)');
    type(field(vh, 'Label'), 'Vh:Cd');
    choose(field(vh, 'Kind'), 'VH_CD_RATIO');
    // A decimal as it is typed: '1.' stays on screen while the form holds 1.
    type(field(vh, 'Threshold'), '1.');
    expect(field(vh, 'Threshold').value).toBe('1.');
    expect(form.latest().endpoints[1]?.threshold).toBe(1);
    type(field(vh, 'Threshold'), '1.5');
    choose(field(vh, 'Positive when'), 'LT');
    const vhcd: EndpointDefinition = {
      key: 'vh_cd',
      label: 'Vh:Cd',
      kind: 'VH_CD_RATIO',
      threshold: 1.5,
      positiveWhen: 'LT',
    };
    expect(form.latest().endpoints).toEqual([pec, vhcd]);

    fireEvent.click(screen.getByRole('button', { name: 'Remove Endpoint 1 (pec)' }));
    expect(form.latest().endpoints).toEqual([vhcd]);
    const left = row('Endpoint 1 (vh_cd)');
    expect(field(left, 'Threshold').value).toBe('1.5');
    expect(within(screen.getByRole('list', { name: 'Endpoints' })).getAllByRole('listitem')).toHaveLength(1);

    // Clearing the threshold and its reading takes both out of the endpoint.
    type(field(left, 'Threshold'), '');
    choose(field(left, 'Positive when'), '');
    expect(form.latest().endpoints).toEqual([{ key: 'vh_cd', label: 'Vh:Cd', kind: 'VH_CD_RATIO' }]);
  });

  it('shows the point class select only for the count kinds, with the form’s point classes', () => {
    const form = renderFields({ ...none, endpoints: [pec] }, ['Eosinophil', 'Mast cell']);
    const r = row('Endpoint 1 (pec)');
    const classes = field(r, 'Point class') as unknown as HTMLSelectElement;
    expect([...classes.options].map((o) => o.value)).toEqual(['', 'Eosinophil', 'Mast cell']);
    choose(classes, 'Mast cell');
    expect(form.latest().endpoints[0]?.className).toBe('Mast cell');

    for (const kind of ['VH_CD_RATIO', 'MEAN_VILLUS_HEIGHT_UM', 'MEAN_CRYPT_DEPTH_UM']) {
      choose(field(r, 'Kind'), kind);
      expect(within(r).queryByLabelText('Point class')).toBeNull();
      expect(form.latest().endpoints[0]).not.toHaveProperty('className');
    }
    for (const kind of ['TOTAL_COUNT', 'MEAN_COUNT_PER_HPF', 'PEAK_COUNT_PER_HPF']) {
      choose(field(r, 'Kind'), kind);
      expect(field(r, 'Point class').value).toBe('Eosinophil');
      expect(form.latest().endpoints[0]).toMatchObject({ kind, className: 'Eosinophil' });
    }
  });

  it('keeps a class that is no longer among the point classes, so its message has something to point at', () => {
    renderFields({ ...none, endpoints: [{ ...pec, className: 'Eos' }] });
    const classes = field(row('Endpoint 1 (pec)'), 'Point class') as unknown as HTMLSelectElement;
    expect(classes.value).toBe('Eos');
    expect([...classes.options].map((o) => o.value)).toEqual(['', 'Eosinophil', 'Neutrophil', 'Eos']);
  });
});

describe('ReadOutcomesFields: adjudication and signatures', () => {
  it('asks for a value only for ABS_DIFF_ABOVE', () => {
    const form = renderFields({ ...none, endpoints: [pec] });
    const endpoint = screen.getByLabelText<HTMLSelectElement>('Endpoint');
    expect(endpoint.value).toBe('');
    expect([...endpoint.options].map((o) => o.textContent)).toEqual(['None', 'pec']);
    expect(screen.queryByLabelText('Rule')).toBeNull();

    choose(endpoint, 'pec');
    expect(form.latest().adjudication).toEqual({ endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' });
    expect(screen.getByLabelText<HTMLSelectElement>('Rule').value).toBe('CATEGORY_DISAGREES');
    expect(screen.queryByLabelText('Difference above')).toBeNull();

    choose(screen.getByLabelText('Rule'), 'ABS_DIFF_ABOVE');
    expect(form.latest().adjudication).toEqual({ endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE' });
    type(screen.getByLabelText('Difference above'), '5');
    expect(form.latest().adjudication).toEqual({ endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 5 });

    choose(screen.getByLabelText('Rule'), 'CATEGORY_DISAGREES');
    expect(screen.queryByLabelText('Difference above')).toBeNull();
    expect(form.latest().adjudication).toEqual({ endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' });

    choose(endpoint, '');
    expect(form.latest().adjudication).toBeNull();
    expect(screen.queryByLabelText('Rule')).toBeNull();
  });

  it('switches electronic signatures on and off', () => {
    const form = renderFields(none);
    const toggle = screen.getByRole<HTMLInputElement>('switch', { name: 'Electronic signatures (21 CFR Part 11)' });
    expect(toggle.checked).toBe(false);
    fireEvent.click(toggle);
    expect(form.latest().signatures).toBe(true);
    fireEvent.click(toggle);
    expect(form.latest().signatures).toBe(false);
  });
});

// The whole settings form: the domain's messages on these fields, their reasons, and what is sent.

const ADMIN = makeUserAs('StudyAdmin', ['S_Main_ViewStudyPage', 'S_Main_EditStudy', 'S_Main_CreateStudy']);
const saveButton = () => screen.getByRole('button', { name: 'Save Changes' });

function renderEdit(study: StudyView) {
  return mockAndRender(`/studies/${study.id}/configure/settings`, {
    [`GET /api/studies/${study.id}`]: { body: study },
    [`PUT /api/studies/${study.id}`]: { body: { success: true, message: STUDY_MESSAGES.studyUpdated, study } },
  });
}

function mockAndRender(path: string, replies: Parameters<typeof mockFetch>[0]) {
  const mock = mockFetch(replies);
  renderRoutes(
    [
      { path: '/studies/:id/configure/:tab?', element: <StudyConfigurePage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path, user: ADMIN },
  );
  return mock;
}

const eosinophilStudy = () =>
  makeStudy({
    pointClasses: [makeClass({ id: 1, name: 'Eosinophil' }), makeClass({ id: 2, name: 'Mast cell', sortOrder: 1 })],
    endpoints: [pec],
    adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
  });

describe('the settings form: Read outcomes', () => {
  it("shows the domain's messages on their endpoint and on the adjudication", async () => {
    renderEdit(eosinophilStudy());
    await screen.findByRole('list', { name: 'Endpoints' });
    fireEvent.click(screen.getByRole('button', { name: 'Add endpoint' }));
    const added = row('Endpoint 2');
    within(added).getByText(ENDPOINT_MESSAGES.keyInvalid);
    type(field(added, 'Key'), 'pec');
    within(row('Endpoint 2 (pec)')).getByText(ENDPOINT_MESSAGES.keysNotUnique);
    type(field(row('Endpoint 2 (pec)'), 'Key'), 'total');
    const total = row('Endpoint 2 (total)');
    type(field(total, 'Label'), 'Total');
    type(field(total, 'Threshold'), '3');
    within(total).getByText(ENDPOINT_MESSAGES.thresholdPair);
    type(field(total, 'Threshold'), '');
    expect(within(total).queryByText(ENDPOINT_MESSAGES.thresholdPair)).toBeNull();

    // Deleting the class pec counts leaves the endpoint naming a class the study no longer has.
    fireEvent.click(screen.getByRole('button', { name: 'Delete Point class Eosinophil' }));
    within(row('Endpoint 1 (pec)')).getByText(classNotInStudy('Eosinophil', ['Mast cell']));
    // The adjudication follows its endpoint: renamed, it names an unknown one; without a threshold,
    // categories cannot disagree.
    type(field(row('Endpoint 1 (pec)'), 'Key'), 'peak');
    screen.getByText(endpointKeyUnknown('pec', ['peak', 'total']));
    choose(screen.getByLabelText('Endpoint'), 'total');
    screen.getByText(categoryNeedsThreshold('total'));
    expect(saveButton().hasAttribute('disabled')).toBe(true);
  });

  it('asks a reason for each changed field and sends them with their reasons', async () => {
    const { calls } = renderEdit(eosinophilStudy());
    await screen.findByRole('list', { name: 'Endpoints' });
    type(field(row('Endpoint 1 (pec)'), 'Threshold'), '20');
    choose(screen.getByLabelText('Rule'), 'ABS_DIFF_ABOVE');
    type(screen.getByLabelText('Difference above'), '7.5');
    fireEvent.click(screen.getByRole('switch', { name: 'Electronic signatures (21 CFR Part 11)' }));
    expect(saveButton().hasAttribute('disabled')).toBe(true);
    expect(screen.getByRole('status', { name: 'Why Save is disabled' }).textContent).toBe(
      '3 changes need a reason: Endpoints, Adjudication, Electronic signatures',
    );
    type(screen.getByRole('textbox', { name: 'Reason for change: Endpoints' }), 'SAP v2');
    type(screen.getByRole('textbox', { name: 'Reason for change: Adjudication' }), 'SAP v2 §4');
    type(screen.getByRole('textbox', { name: 'Reason for change: Electronic signatures' }), 'Part 11');
    expect(saveButton().hasAttribute('disabled')).toBe(false);
    fireEvent.click(saveButton());
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3');
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      endpoints: { value: [{ ...pec, threshold: 20 }], reasonForChange: 'SAP v2' },
      adjudication: {
        value: { endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 7.5 },
        reasonForChange: 'SAP v2 §4',
      },
      signatures: { value: true, reasonForChange: 'Part 11' },
    });
  });

  it('undoing a change takes its reason away again', async () => {
    renderEdit(eosinophilStudy());
    await screen.findByRole('list', { name: 'Endpoints' });
    choose(screen.getByLabelText('Endpoint'), '');
    screen.getByRole('textbox', { name: 'Reason for change: Adjudication' });
    choose(screen.getByLabelText('Endpoint'), 'pec');
    expect(screen.queryByRole('textbox', { name: 'Reason for change: Adjudication' })).toBeNull();
  });

  it('a new study sends its endpoints, adjudication and signatures with the rest', async () => {
    const { calls } = mockAndRender('/studies/new/configure', {
      'POST /api/studies': {
        status: 201,
        body: { success: true, message: STUDY_MESSAGES.studyCreated, study: makeStudy({ id: 77 }) },
      },
    });
    type(screen.getByRole('textbox', { name: 'Name' }), 'EOE-1');
    fireEvent.click(screen.getByRole('checkbox', { name: 'Eosinophilic Esophagitis' }));
    type(screen.getByLabelText('Number of Anatomical Segments'), '1');
    type(screen.getByRole('textbox', { name: 'Segment 1 name' }), 'Esophagus');
    fireEvent.click(screen.getByRole('checkbox', { name: 'Histopathology' }));
    type(screen.getByRole('textbox', { name: 'New Point class name' }), 'Eosinophil');
    fireEvent.click(screen.getByRole('button', { name: 'Add Point class' }));
    fireEvent.click(screen.getByRole('button', { name: 'Add endpoint' }));
    type(field(row('Endpoint 1'), 'Key'), 'pec');
    type(field(row('Endpoint 1 (pec)'), 'Label'), ' Peak eosinophil count ');
    type(field(row('Endpoint 1 (pec)'), 'Threshold'), '15');
    choose(field(row('Endpoint 1 (pec)'), 'Positive when'), 'GTE');
    choose(screen.getByLabelText('Endpoint'), 'pec');
    fireEvent.click(screen.getByRole('switch', { name: 'Electronic signatures (21 CFR Part 11)' }));
    expect(saveButton().hasAttribute('disabled')).toBe(false);
    fireEvent.click(saveButton());
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/77');
    // The label as the domain's schema leaves it (trimmed), like the other fields.
    expect(calls.find((c) => c.method === 'POST')?.body).toMatchObject({
      name: 'EOE-1',
      endpoints: [pec],
      adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
      signatures: true,
    });
  });
});
