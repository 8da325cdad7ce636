import { QUERY_MESSAGES } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeStudyRow, makeUserAs } from '../../test/fixtures';
import { mockFetch, type RecordedCall } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { QueriesPage } from './QueriesPage';
import { queryRowTarget } from './queryColumns';
import { makeQueryRow } from './testData';

beforeEach(() => {
  setCsrfToken('token');
  window.localStorage.clear();
});
afterEach(cleanup);

const LONG_REASON = 'Label does not match – Accession number';

const IMAGE_STATS = { numOpen: 4, numAnswered: 3, numClosed: 2, numOverdue: 1 };
const CASE_STATS = { numOpen: 9, numAnswered: 8, numClosed: 7, numOverdue: 6 };

function renderPage(
  path: string,
  actions = ['Q_ViewQueriesCases', 'Q_ViewQueriesImages'],
  rows = defaultRows(),
  stats = { cases: CASE_STATS, images: IMAGE_STATS },
) {
  const mock = mockFetch({
    'POST /api/queries': { body: { success: true, queries: rows, total: rows.length } },
    'GET /api/queries/stats': (call) => ({
      body: { success: true, stats: call.query.get('objectType') === 'IMAGE' ? stats.images : stats.cases },
    }),
    'GET /api/studies/list': {
      body: { success: true, studies: [makeStudyRow({ id: 3, name: 'DEMO-UC-001' })], total: 1 },
    },
  });
  renderRoutes(
    [
      { path: '/queries/:tab?', element: <QueriesPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path, user: makeUserAs('ISC', actions) },
  );
  return mock;
}

function defaultRows() {
  return [
    makeQueryRow({
      queryReasonText: LONG_REASON,
      overdue: true,
      dynamicStatus: 'FOLLOWUPREQUIRED',
      latestFollowUpOnDt: '2020-03-04',
    }),
    makeQueryRow({ id: 6, group: 'answered', resolution: 'RESOLVED', dynamicStatus: 'ANSWERED' }),
  ];
}

const lastList = (calls: RecordedCall[]) =>
  calls.filter((c) => c.method === 'POST' && c.path === '/api/queries').at(-1);

describe('the queries lists', () => {
  const NONE = { numOpen: 0, numAnswered: 0, numClosed: 5, numOverdue: 0 };
  const location = () => screen.getByTestId('location').textContent;
  const routes = (path: string, stats: { cases: typeof NONE; images: typeof NONE }) => {
    mockFetch({
      'POST /api/queries': { body: { success: true, queries: [], total: 0 } },
      'GET /api/queries/stats': (call) => ({
        body: { success: true, stats: call.query.get('objectType') === 'IMAGE' ? stats.images : stats.cases },
      }),
      'GET /api/studies/list': { body: { success: true, studies: [], total: 0 } },
    });
    renderRoutes(
      [
        { path: '/queries/:tab', element: <LocationProbe /> },
        { path: '/queries', element: <QueriesPage /> },
      ],
      { path, user: makeUserAs('LabTech', ['Q_ViewQueriesCases', 'Q_ViewQueriesImages']) },
    );
  };

  it('opens on the Images tab when only images hold open queries for the user (issue 29 item 14)', async () => {
    routes('/queries', { cases: NONE, images: { ...NONE, numOpen: 1 } });
    await waitFor(() => expect(location()).toBe('/queries/images'));
  });

  it('opens on the Images tab for an answered image query waiting to be closed', async () => {
    routes('/queries', { cases: NONE, images: { ...NONE, numAnswered: 2 } });
    await waitFor(() => expect(location()).toBe('/queries/images'));
  });

  it('keeps the Cases tab when both tabs, or neither, hold open queries', async () => {
    routes('/queries', { cases: { ...NONE, numOpen: 1 }, images: { ...NONE, numOpen: 3 } });
    await waitFor(() => expect(location()).toBe('/queries/cases'));
    cleanup();
    routes('/queries', { cases: NONE, images: NONE });
    await waitFor(() => expect(location()).toBe('/queries/cases'));
  });

  it('shows each tab with its permission; a tab the user may not see goes to the one they may', async () => {
    renderPage('/queries/cases', ['Q_ViewQueriesImages']);
    await screen.findByRole('tab', { name: 'Images' });
    expect(screen.queryByRole('tab', { name: 'Cases' })).toBeNull();
    await screen.findByRole('table', { name: 'Image queries' });
  });

  it('shows the stats header of the tab’s object type; a stat filters by it', async () => {
    const { calls } = renderPage('/queries/images');
    const stats = within(await screen.findByRole('group', { name: 'Query statistics' }));
    await waitFor(() => expect(stats.getByTestId('stat-open').textContent).toBe('4'));
    expect(stats.getByTestId('stat-answered').textContent).toBe('3');
    expect(stats.getByTestId('stat-closed').textContent).toBe('2');
    expect(stats.getByTestId('stat-overdue').textContent).toBe('1');
    expect(calls.find((c) => c.path === '/api/queries/stats')?.query.get('objectType')).toBe('IMAGE');
    fireEvent.click(stats.getByRole('button', { name: /Overdue/ }));
    await waitFor(() => expect(lastList(calls)?.body).toMatchObject({ statusFilter: ['overdue'] }));
  });

  it('sends the filters: search, study, status, role queried, include closed; first page, newest first', async () => {
    const { calls } = renderPage('/queries/cases');
    await screen.findByRole('table', { name: 'Case queries' });
    expect(lastList(calls)?.body).toEqual({
      objectType: 'CASE',
      includeClosedQueries: false,
      page: 1,
      pageSize: 20,
      sort: '-openedAt',
    });
    fireEvent.change(screen.getByLabelText('Search queries'), { target: { value: 'ENDO' } });
    await waitFor(() => expect(lastList(calls)?.body).toMatchObject({ searchText: 'ENDO' }));
    await screen.findByRole('option', { name: 'DEMO-UC-001' });
    fireEvent.change(screen.getByLabelText('Study'), { target: { value: '3' } });
    fireEvent.change(screen.getByLabelText('Role queried'), { target: { value: '4' } });
    fireEvent.click(screen.getByLabelText('Include closed queries'));
    await waitFor(() =>
      expect(lastList(calls)?.body).toMatchObject({ studyFilter: [3], roleFilter: [4], includeClosedQueries: true }),
    );
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'answered' } });
    await waitFor(() => expect(lastList(calls)?.body).toMatchObject({ statusFilter: ['answered'] }));
  });

  it('truncates the reason to 34 characters, shows overdue follow-ups red and Answered green', async () => {
    renderPage('/queries/images');
    const table = await screen.findByRole('table', { name: 'Image queries' });
    const reason = await within(table).findByText(`${LONG_REASON.slice(0, 34)}...`);
    expect(reason.getAttribute('title')).toBe(LONG_REASON);
    expect(within(table).getByText('Mar 4 2020').className).toContain('lamina-overdue');
    const statuses = within(table).getAllByTestId('row-status');
    expect(statuses.map((s) => s.textContent)).toEqual(['Follow-up required', 'Answered']);
    expect(statuses[0]!.className).toContain('bp6-intent-danger');
    expect(statuses[1]!.className).toContain('bp6-intent-success');
  });

  it('a row opens its query in the viewer', async () => {
    renderPage('/queries/images');
    const table = await screen.findByRole('table', { name: 'Image queries' });
    fireEvent.click((await within(table).findAllByText('slide-1.svs'))[0]!.closest('tr')!);
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/images/1?queryId=5');
    expect(queryRowTarget({ id: 6, objectType: 'CASE', objectId: 40, studyId: 3, caseId: 40 })).toBe(
      '/studies/3/cases/40?queryId=6',
    );
  });

  it('says why the list or the stats could not be fetched', async () => {
    mockFetch({ 'POST /api/queries': { status: 500 }, 'GET /api/queries/stats': { status: 500 } });
    renderRoutes([{ path: '/queries/:tab?', element: <QueriesPage /> }], {
      path: '/queries/cases',
      user: makeUserAs('ISC', ['Q_ViewQueriesCases']),
    });
    await screen.findByText(QUERY_MESSAGES.unableToFetchQueries);
    await screen.findByText(QUERY_MESSAGES.unableToFetchStats);
  });
});
