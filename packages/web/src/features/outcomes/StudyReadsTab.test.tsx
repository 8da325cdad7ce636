import {
  AGREEMENT_GAP_MESSAGES,
  ENDPOINT_MESSAGES,
  OUTCOME_MESSAGES,
  type EndpointAgreement,
  type EndpointDefinition,
  type StudyOutcomeCase,
  type StudyView,
} from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { StudyPage } from '../studies/StudyPage';
import { formatOutcome, niceAxis } from './formatOutcome';

afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const PEC: EndpointDefinition = {
  key: 'pec',
  label: 'Peak eosinophils',
  kind: 'PEAK_COUNT_PER_HPF',
  className: 'Eosinophil',
  threshold: 15,
  positiveWhen: 'GTE',
};
const MEAN: EndpointDefinition = {
  key: 'mean',
  label: 'Mean eosinophils',
  kind: 'MEAN_COUNT_PER_HPF',
  className: 'Eosinophil',
};
const RESULTS = [
  'S_Main_ViewStudyPage',
  'S_Main_ViewCasesTab',
  'S_Main_ViewReadOutcomes',
  'AP_CaseData_ViewSubjectID',
  'AP_CaseData_ViewVisitID',
];
const at = '2026-03-04T17:06:00.000Z';
const value = (endpointKey: string, v: number | null, reason: string | null = null) => ({
  endpointKey,
  value: v,
  positive: v === null ? null : v >= 15,
  reason,
  scoredAt: at,
});

function makeRead(overrides: Partial<StudyOutcomeCase> = {}): StudyOutcomeCase {
  return {
    caseId: 40,
    procId: 'ENDO-40',
    histoProcedureId: 'H-40',
    subjectId: 'SUBJ-40',
    visitId: 'SCREENING',
    status: 'COMPLETED',
    readers: [
      {
        readerId: 11,
        readerName: 'Rita Reader',
        readerRole: 'PRIMARY',
        values: [value('pec', 16), value('mean', 10 / 3)],
      },
      { readerId: 12, readerName: 'Ravi Reader', readerRole: 'PRIMARY', values: [value('pec', 20), value('mean', 4)] },
    ],
    final: [
      { endpointKey: 'pec', value: 18, positive: true, adjudicated: false },
      { endpointKey: 'mean', value: 11 / 3, positive: null, adjudicated: false },
    ],
    adjudicationPending: false,
    ...overrides,
  };
}

function makeAgreement(overrides: Partial<EndpointAgreement> = {}): EndpointAgreement {
  return {
    endpointKey: 'pec',
    label: 'Peak eosinophils',
    cases: 6,
    readers: 2,
    valuedCases: 6,
    categorisedCases: 6,
    icc: 0.2898,
    iccLower95: 0.0188,
    iccUpper95: 0.7611,
    kappa: 0.4,
    kappaKind: 'COHEN',
    percentAgreement: 0.7,
    meanDifference: -1.5,
    loaLower: -8.25,
    loaUpper: 5.25,
    ...overrides,
  };
}

const PAIRS = [
  { caseId: 40, a: 16, b: 20 },
  { caseId: 41, a: 10, b: 30 },
  { caseId: 42, a: 12, b: 18 },
];

function renderReads(
  reads: StudyOutcomeCase[] | { status: number; body?: unknown },
  options: {
    study?: StudyView;
    actions?: string[];
    agreement?: EndpointAgreement[];
    pairs?: typeof PAIRS;
    path?: string;
  } = {},
) {
  const study = options.study ?? makeStudy({ endpoints: [PEC, MEAN] });
  const list = Array.isArray(reads) ? { body: { success: true, total: reads.length, cases: reads } } : reads;
  const mocked = mockFetch({
    [`GET /api/studies/${study.id}`]: { body: study },
    [`GET /api/studies/${study.id}/outcomes`]: list,
    [`GET /api/studies/${study.id}/agreement`]: {
      body: {
        success: true,
        endpoints: options.agreement ?? [makeAgreement(), makeAgreement({ endpointKey: 'mean' })],
      },
    },
    [`GET /api/studies/${study.id}/outcomes/pairs`]: { body: { success: true, pairs: options.pairs ?? PAIRS } },
    [`GET /api/studies/${study.id}/cases`]: { body: { success: true, total: 0, cases: [] } },
  });
  renderRoutes(
    [
      { path: '/studies/:id/:tab?', element: <StudyPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: options.path ?? `/studies/${study.id}/reads`, user: makeUserAs('DM', options.actions ?? RESULTS) },
  );
  return mocked;
}

/** The last call of `path` — of the list, not the pending count's (PENDING_COUNT_QUERY, page size 10). */
const lastQuery = (calls: ReturnType<typeof mockFetch>['calls'], path: string) =>
  Object.fromEntries(
    calls
      .filter((c) => c.path === path && !(c.query.get('adjudicated') === 'pending' && c.query.get('pageSize') === '10'))
      .at(-1)!.query,
  );

describe('study page, Reads tab (issue 30)', () => {
  it('is a tab for the roles that see read outcomes, on a study with endpoints only', async () => {
    renderReads([makeRead()]);
    await screen.findByRole('table', { name: 'Reads' });
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Cases', 'Reads']);
    expect(screen.getByRole('tab', { selected: true }).textContent).toBe('Reads');
    cleanup();

    // Without endpoints: no Reads tab, and its URL opens the Cases tab instead.
    renderReads([makeRead()], { study: makeStudy({ endpoints: [] }) });
    await screen.findByRole('table', { name: 'Cases' });
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Cases']);
    cleanup();

    // Without the permission (PM): no Reads tab.
    renderReads([makeRead()], { actions: ['S_Main_ViewStudyPage', 'S_Main_ViewCasesTab'], path: '/studies/3/cases' });
    await screen.findByRole('table', { name: 'Cases' });
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Cases']);
  });

  it('lists each case with the readers’ values side by side, rounded for display only, the final value and status', async () => {
    const { calls } = renderReads([makeRead()]);
    const table = await screen.findByRole('table', { name: 'Reads' });
    await within(table).findByText('ENDO-40');
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((th) => th.textContent),
    ).toEqual([
      'Endo Procedure ID',
      'Histo Procedure ID',
      'Subject ID',
      'Visit ID',
      'Status',
      'Readers: Peak eosinophils',
      'Final',
      'Adjudication',
      'Last scored',
    ]);
    expect(lastQuery(calls, '/api/studies/3/outcomes')).toEqual({ page: '1', pageSize: '20', sort: '-scoredAt' });
    const row = within(table).getByText('ENDO-40').closest('tr')!;
    expect(within(row).getByText('ENDO-40').closest('a')?.getAttribute('href')).toBe('/studies/3/cases/40');
    expect(within(row).getByText('Rita Reader').closest('li')?.textContent).toBe('Rita Reader16');
    expect(within(row).getByText('Ravi Reader').closest('li')?.textContent).toBe('Ravi Reader20');
    expect(within(row).getByText('18').closest('.lamina-read-final')?.textContent).toBe('18Positive');
    expect(within(row).getByText('Completed').closest('.bp6-tag')?.classList.contains('bp6-intent-success')).toBe(true);

    // The second endpoint: 10/3 shows as 3.33, the exact value in its title; no reading without a threshold.
    fireEvent.change(screen.getByRole('combobox', { name: 'Endpoint' }), { target: { value: 'mean' } });
    await within(table).findByText('Readers: Mean eosinophils');
    const rounded = within(row).getByText('3.33');
    expect(rounded.getAttribute('title')).toBe(String(10 / 3));
    expect(within(row).getByText('3.67').closest('.lamina-read-final')?.textContent).toBe('3.67');
  });

  it('a null value shows — with its reason; a reader not yet scored; the final value’s wait', async () => {
    renderReads([
      makeRead({
        caseId: 41,
        procId: 'ENDO-41',
        status: 'PROCESSED',
        readers: [
          {
            readerId: 11,
            readerName: 'Rita Reader',
            readerRole: 'PRIMARY',
            values: [value('pec', null, ENDPOINT_MESSAGES.noHpf), value('mean', null, ENDPOINT_MESSAGES.noHpf)],
          },
          { readerId: 12, readerName: 'Ravi Reader', readerRole: 'PRIMARY', values: [] },
        ],
        final: null,
      }),
    ]);
    const table = await screen.findByRole('table', { name: 'Reads' });
    const row = (await within(table).findByText('ENDO-41')).closest('tr')!;
    within(row).getByLabelText(`— ${ENDPOINT_MESSAGES.noHpf}`);
    expect(within(row).getByText('Ravi Reader').closest('li')?.textContent).toBe(
      `Ravi Reader${OUTCOME_MESSAGES.notScored}`,
    );
    within(row).getByLabelText(`— ${OUTCOME_MESSAGES.finalWaitsForReaders}`);
    expect(within(row).getByText('Processed').closest('.bp6-tag')?.classList.contains('bp6-intent-primary')).toBe(true);
  });

  it('flags adjudicated and pending cases; Pending Adjudication has its own colour', async () => {
    renderReads([
      makeRead({
        caseId: 42,
        procId: 'ENDO-42',
        readers: [
          ...makeRead().readers,
          { readerId: 13, readerName: 'Ada Judge', readerRole: 'ADJUDICATOR', values: [value('pec', 25)] },
        ],
        final: [{ endpointKey: 'pec', value: 25, positive: true, adjudicated: true }],
      }),
      makeRead({
        caseId: 43,
        procId: 'ENDO-43',
        status: 'PENDING_ADJUDICATION',
        final: null,
        adjudicationPending: true,
      }),
    ]);
    const table = await screen.findByRole('table', { name: 'Reads' });
    const adjudicated = (await within(table).findByText('ENDO-42')).closest('tr')!;
    expect(within(adjudicated).getByText('Ada Judge (adjudicator)').closest('li')?.textContent).toBe(
      'Ada Judge (adjudicator)25',
    );
    expect(
      within(adjudicated).getByText('Adjudicated').closest('.bp6-tag')?.classList.contains('bp6-intent-primary'),
    ).toBe(true);
    const pending = within(table).getByText('ENDO-43').closest('tr')!;
    expect(within(pending).getByText('Pending').closest('.bp6-tag')?.classList.contains('bp6-intent-warning')).toBe(
      true,
    );
    expect(
      within(pending).getByText('Pending Adjudication').closest('.bp6-tag')?.classList.contains('bp6-intent-warning'),
    ).toBe(true);
    within(pending).getByLabelText(`— ${OUTCOME_MESSAGES.finalWaitsForAdjudication}`);
  });

  it('filters by adjudication and Procedure ID from page 1; sorts on the server', async () => {
    const { calls } = renderReads([makeRead()]);
    const table = await screen.findByRole('table', { name: 'Reads' });
    await within(table).findByText('ENDO-40');
    fireEvent.change(screen.getByRole('combobox', { name: 'Adjudication' }), { target: { value: 'pending' } });
    await waitFor(() =>
      expect(lastQuery(calls, '/api/studies/3/outcomes')).toMatchObject({ adjudicated: 'pending', page: '1' }),
    );
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search by Procedure ID' }), {
      target: { value: 'ENDO-4' },
    });
    await waitFor(() => expect(lastQuery(calls, '/api/studies/3/outcomes')).toMatchObject({ procId: 'ENDO-4' }));
    fireEvent.click(within(table).getByRole('button', { name: 'Endo Procedure ID' }));
    await waitFor(() => expect(lastQuery(calls, '/api/studies/3/outcomes')).toMatchObject({ sort: 'procId' }));
  });

  it('counts the cases pending adjudication, and shows them at a click', async () => {
    const pending = makeRead({ caseId: 43, procId: 'ENDO-43', status: 'PENDING_ADJUDICATION', final: null });
    // The list answers by its filter: 3 pending among 5.
    mockFetch({
      'GET /api/studies/3': { body: makeStudy({ endpoints: [PEC, MEAN] }) },
      'GET /api/studies/3/outcomes': (call) =>
        call.query.get('adjudicated') === 'pending'
          ? { body: { success: true, total: 3, cases: [pending] } }
          : { body: { success: true, total: 5, cases: [makeRead()] } },
      'GET /api/studies/3/agreement': { body: { success: true, endpoints: [makeAgreement()] } },
      'GET /api/studies/3/outcomes/pairs': { body: { success: true, pairs: PAIRS } },
    });
    renderRoutes(
      [
        { path: '/studies/:id/:tab?', element: <StudyPage /> },
        { path: '*', element: <LocationProbe /> },
      ],
      { path: '/studies/3/reads', user: makeUserAs('DM', RESULTS) },
    );
    const count = await screen.findByRole('button', { name: '3 cases pending adjudication: show them' });
    expect(count.textContent).toBe('3 pending adjudication');
    fireEvent.click(count);
    const table = await screen.findByRole('table', { name: 'Reads' });
    expect(await within(table).findByText('ENDO-43')).toBeTruthy();
    expect(screen.getByRole<HTMLSelectElement>('combobox', { name: 'Adjudication' }).value).toBe('pending');
  });

  it('empty and error states', async () => {
    renderReads([]);
    await screen.findByText(OUTCOME_MESSAGES.noReads);
    cleanup();
    renderReads({ status: 500, body: { success: false, message: 'Database down' } });
    const alert = await screen.findByText('Database down');
    expect(alert.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });

  it('the agreement panel: ICC(2,1) with its interval, the kappa named, percent agreement, Bland–Altman', async () => {
    renderReads([makeRead()]);
    const panel = await screen.findByRole('region', { name: 'Agreement: Peak eosinophils' });
    const figure = (label: string) =>
      within(panel).getByRole('rowheader', { name: label }).nextElementSibling?.textContent;
    expect(figure('ICC(2,1)')).toBe('0.29 (95 % CI 0.02 to 0.76)');
    expect(figure('Cohen’s kappa')).toBe('0.4');
    expect(figure('Percent agreement')).toBe('70 %');
    expect(figure('Mean difference (A − B)')).toBe('-1.5');
    expect(figure('95 % limits of agreement')).toBe('-8.25 to 5.25');
    expect(figure('Cases read by two or more readers')).toBe('6');
    expect(figure('Readers per case in the figures')).toBe('2');
  });

  it('a figure that cannot be computed is — with why', async () => {
    renderReads([makeRead()], {
      agreement: [
        makeAgreement({
          readers: 3,
          valuedCases: 1,
          icc: null,
          iccLower95: null,
          iccUpper95: null,
          kappa: null,
          kappaKind: null,
          meanDifference: null,
          loaLower: null,
          loaUpper: null,
        }),
      ],
    });
    const panel = await screen.findByRole('region', { name: 'Agreement: Peak eosinophils' });
    const figure = (label: string) =>
      within(panel).getByRole('rowheader', { name: label }).nextElementSibling?.textContent;
    expect(figure('ICC(2,1)')).toBe(`— ${AGREEMENT_GAP_MESSAGES.fewValued}`);
    expect(figure('Fleiss’ kappa')).toBe(`— ${AGREEMENT_GAP_MESSAGES.oneCategory}`);
    expect(figure('Mean difference (A − B)')).toBe(`— ${AGREEMENT_GAP_MESSAGES.notTwoReaders}`);
  });

  it('draws reader A against B with the identity line, and the Bland–Altman plot with its three lines', async () => {
    const { calls } = renderReads([makeRead()]);
    const scatter = await screen.findByRole('figure', { name: 'Reader A against reader B: Peak eosinophils' });
    expect(lastQuery(calls, '/api/studies/3/outcomes/pairs')).toEqual({ endpointKey: 'pec' });
    await waitFor(() => expect(scatter.querySelectorAll('.recharts-scatter-symbol')).toHaveLength(PAIRS.length));
    expect(scatter.querySelectorAll('.lamina-chart-identity')).toHaveLength(1);
    expect(scatter.querySelector('svg title')?.textContent).toBe('Reader A against reader B: Peak eosinophils');
    within(scatter).getByText('Reader A');
    within(scatter).getByText('Reader B');

    const blandAltman = screen.getByRole('figure', { name: 'Bland–Altman: Peak eosinophils' });
    await waitFor(() => expect(blandAltman.querySelectorAll('.recharts-scatter-symbol')).toHaveLength(PAIRS.length));
    expect(blandAltman.querySelectorAll('.lamina-chart-reference')).toHaveLength(3);
    within(blandAltman).getByText('Mean difference -1.5');
    within(blandAltman).getByText('Lower limit -8.25');
    within(blandAltman).getByText('Upper limit 5.25');
    within(blandAltman).getByText('Mean of readers A and B');
    within(blandAltman).getByText('Difference A − B');
  });

  it('no pairs yet: the charts’ empty state', async () => {
    renderReads([makeRead()], { pairs: [] });
    await screen.findByText(OUTCOME_MESSAGES.noPairs);
    expect(screen.queryByRole('figure')).toBeNull();
  });
});

describe('display of values and chart axes', () => {
  it('rounds to at most 2 decimals for display, — for null', () => {
    expect([16, 10 / 3, 2.005, -0.001, 1234.5, null].map(formatOutcome)).toEqual([
      '16',
      '3.33',
      '2.01',
      '0',
      '1234.5',
      '—',
    ]);
  });

  it('gives round axes, about five steps, that hold every value', () => {
    expect(niceAxis([2, 6, 4])).toEqual({ domain: [2, 6], ticks: [2, 3, 4, 5, 6] });
    expect(niceAxis([-2, 0, 2, -3.92, 3.92])).toEqual({ domain: [-4, 4], ticks: [-4, -2, 0, 2, 4] });
    expect(niceAxis([0.13, 0.61])).toEqual({ domain: [0.1, 0.7], ticks: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7] });
    expect(niceAxis([7, 7])).toEqual({ domain: [6, 8], ticks: [6, 6.5, 7, 7.5, 8] });
  });
});
