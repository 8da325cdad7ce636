import { STUDY_MESSAGES, type StudyListRow, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { savedFiltersKey } from '../../lib/storage';
import { makeStudyRow, makeUserAs } from '../../test/fixtures';
import { mockFetch, type RecordedCall } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { StudiesPage } from './StudiesPage';

afterEach(() => {
  cleanup();
  window.localStorage.clear();
  window.sessionStorage.clear();
});

const ADMIN = makeUserAs('StudyAdmin', [
  'S_Main_ViewStudyPage',
  'S_Main_ViewAllStudies',
  'S_Main_EditStudy',
  'S_Main_CreateStudy',
]);

function serveStudies(studies: StudyListRow[], total = studies.length) {
  return mockFetch({ 'GET /api/studies/list': { body: { success: true, studies, total } } });
}

function renderPage(user: UserInfo = ADMIN) {
  return renderRoutes(
    [
      { path: '/studies', element: <StudiesPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: '/studies', user },
  );
}

function listCalls(calls: RecordedCall[]) {
  return calls.filter((c) => c.path === '/api/studies/list');
}

function headers(): string[] {
  const table = screen.getByRole('table', { name: 'Studies' });
  return within(table)
    .getAllByRole('columnheader')
    .map((th) => th.textContent ?? '');
}

describe('studies list columns by kind of user (doc 1 §2.4)', () => {
  const common = ['Name', 'Status', 'Created', 'Indications', 'Locations', 'Modality'];

  it.each([
    ['StudyAdmin', [...common, 'Unassigned Images', 'Cases to QC', 'Open Queries', 'Answered Queries']],
    ['ISC', [...common, 'Unassigned Images', 'Cases to QC', 'Open Queries', 'Answered Queries']],
    ['CR', [...common, 'Read Cases', 'Unread Cases']],
    ['NOTO', [...common, 'Read Cases', 'Unread Cases']],
    ['UPLOADER', ['Name', 'Status', 'Most Recent Upload', 'Indications', 'Locations', 'Modality', 'Open Queries']],
    ['Site', ['Name', 'Status', 'Most Recent Upload', 'Indications', 'Locations', 'Modality', 'Open Queries']],
  ])('working as %s shows %j', async (role, expected) => {
    serveStudies([makeStudyRow()]);
    renderPage(makeUserAs(role, ['S_Main_ViewStudyPage']));
    await screen.findByText('GUT-301');
    expect(headers()).toEqual(expected);
  });

  it('shows the counts of the kind', async () => {
    serveStudies([makeStudyRow()]);
    renderPage(makeUserAs('CR', ['S_Main_ViewStudyPage']));
    const row = (await screen.findByText('GUT-301')).closest('tr')!;
    const cells = within(row)
      .getAllByRole('cell')
      .map((td) => td.textContent);
    expect(cells.slice(-2)).toEqual(['8', '9']);
  });

  it('sorts an uploader by most recent upload, newest first', async () => {
    const { calls } = serveStudies([makeStudyRow()]);
    renderPage(makeUserAs('UPLOADER', ['S_Main_ViewStudyPage']));
    await screen.findByText('GUT-301');
    expect(listCalls(calls)[0]?.query.get('sort')).toBe('-mostRecentUploadAt');
  });
});

describe('studies list', () => {
  it('shows status, labels, locations and modality of each study', async () => {
    serveStudies([
      makeStudyRow({
        id: 1,
        name: 'Active one',
        indications: ['CELIAC_DISEASE'],
        modality: ['HISTOPATHOLOGY', 'ENDOSCOPY'],
      }),
      makeStudyRow({ id: 2, name: 'Held one', onHold: true, onHoldReason: 'Awaiting sponsor' }),
    ]);
    renderPage();
    const active = (await screen.findByText('Active one')).closest('tr')!;
    within(active).getByText('Active');
    within(active).getByText('Celiac Disease');
    within(active).getByText('Ileum, Colon');
    within(active).getByText('Histopathology, Endoscopy');
    const held = screen.getByText('Held one').closest('tr')!;
    within(held).getByText('On hold');
    within(held).getByLabelText('On hold: Awaiting sponsor');
  });

  it('asks for page 1 of 20, newest first, by default', async () => {
    const { calls } = serveStudies([makeStudyRow()]);
    renderPage();
    await screen.findByText('GUT-301');
    const query = listCalls(calls)[0]!.query;
    expect(Object.fromEntries(query)).toEqual({ page: '1', pageSize: '20', sort: '-createdAt' });
  });

  it('pages on the server and shows the range', async () => {
    const { calls } = serveStudies([makeStudyRow()], 45);
    renderPage();
    await screen.findByText('1–20 of 45');
    screen.getByText('Page 1 of 3');
    expect(screen.getByRole('button', { name: 'Previous page' }).hasAttribute('disabled')).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await screen.findByText('21–40 of 45');
    expect(listCalls(calls).at(-1)?.query.get('page')).toBe('2');
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await screen.findByText('41–45 of 45');
    expect(screen.getByRole('button', { name: 'Next page' }).hasAttribute('disabled')).toBe(true);
  });

  it('remembers the page size under studyRowsPerPage and starts over at page 1', async () => {
    const { calls } = serveStudies([makeStudyRow()], 120);
    renderPage();
    await screen.findByText('1–20 of 120');
    fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await screen.findByText('21–40 of 120');
    fireEvent.change(screen.getByRole('combobox'), { target: { value: '50' } });
    await screen.findByText('1–50 of 120');
    expect(window.localStorage.getItem('studyRowsPerPage')).toBe('50');
    expect(Object.fromEntries(listCalls(calls).at(-1)!.query)).toMatchObject({ page: '1', pageSize: '50' });
  });

  it('opens with the remembered page size', async () => {
    window.localStorage.setItem('studyRowsPerPage', '100');
    const { calls } = serveStudies([makeStudyRow()]);
    renderPage();
    await screen.findByText('GUT-301');
    expect(listCalls(calls)[0]?.query.get('pageSize')).toBe('100');
    expect(screen.getByRole<HTMLSelectElement>('combobox').value).toBe('100');
  });

  it('offers the page sizes 10, 20, 50 and 100', async () => {
    serveStudies([makeStudyRow()]);
    renderPage();
    await screen.findByText('GUT-301');
    const options = within(screen.getByRole('combobox')).getAllByRole('option');
    expect(options.map((o) => o.textContent)).toEqual(['10', '20', '50', '100']);
  });

  it('sorts by name when the Name header is clicked, then reverses', async () => {
    const { calls } = serveStudies([makeStudyRow()]);
    renderPage();
    await screen.findByText('GUT-301');
    fireEvent.click(screen.getByRole('button', { name: 'Name' }));
    await waitFor(() => expect(listCalls(calls).at(-1)?.query.get('sort')).toBe('name'));
    expect(screen.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBe('ascending');
    fireEvent.click(screen.getByRole('button', { name: 'Name' }));
    await waitFor(() => expect(listCalls(calls).at(-1)?.query.get('sort')).toBe('-name'));
  });

  it('searches by the trimmed name after the typing stops', async () => {
    const { calls } = serveStudies([makeStudyRow()]);
    renderPage();
    await screen.findByText('GUT-301');
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search by name' }), { target: { value: '  gut  ' } });
    expect(listCalls(calls).some((c) => c.query.has('name'))).toBe(false);
    await waitFor(() => expect(listCalls(calls).at(-1)?.query.get('name')).toBe('gut'), { timeout: 2000 });
  });

  it('opens /studies/{id}/cases on a row click and clears the saved filters', async () => {
    window.sessionStorage.setItem(savedFiltersKey('cases'), '{"status":"ON_HOLD"}');
    serveStudies([makeStudyRow({ id: 42, name: 'Click me' })]);
    renderPage();
    fireEvent.click(await screen.findByText('Click me'));
    expect(await screen.findByTestId('location')).toHaveProperty('textContent', '/studies/42/cases');
    expect(window.sessionStorage.getItem(savedFiltersKey('cases'))).toBeNull();
  });

  it('opens a row with the keyboard', async () => {
    serveStudies([makeStudyRow({ id: 42, name: 'Keyboard' })]);
    renderPage();
    const row = (await screen.findByText('Keyboard')).closest('tr')!;
    fireEvent.keyDown(row, { key: 'Enter' });
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/42/cases');
  });

  it('shows Create Study only with the create-study permission', async () => {
    serveStudies([]);
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'Create Study' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/new/configure/settings');
    cleanup();
    serveStudies([]);
    renderPage(makeUserAs('DM', ['S_Main_ViewStudyPage']));
    await screen.findByText('No studies');
    expect(screen.queryByRole('button', { name: 'Create Study' })).toBeNull();
  });

  it('says No studies when there are none', async () => {
    serveStudies([]);
    renderPage();
    await screen.findByText('No studies');
  });

  it("shows the server's message in a red callout in place of the table", async () => {
    mockFetch({ 'GET /api/studies/list': { status: 500, body: { success: false, message: 'Database unavailable' } } });
    renderPage();
    const message = await screen.findByText('Database unavailable');
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
    expect(screen.queryByRole('table')).toBeNull();
  });

  it('says Unable to fetch studies when the server gives no message', async () => {
    mockFetch({ 'GET /api/studies/list': { status: 502 } });
    renderPage();
    await screen.findByText(STUDY_MESSAGES.unableToFetchStudies);
  });
});
