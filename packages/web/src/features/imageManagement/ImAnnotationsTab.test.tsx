import { ROLE_PERMISSIONS, type MldRecord } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { ImageManagementPage } from './ImageManagementPage';
import { MLD_POLL_MS } from './mldApi';
import { makeMld } from './mldTestData';

const LIST = 'POST /api/imageManagement/annotations';
const isc = () => makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]);
const labtech = () => makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]);

const page = (results: MldRecord[], total = results.length) => ({ body: { success: true, results, total } });

function renderTab(replies: Parameters<typeof mockFetch>[0] = {}, user = isc()) {
  const mock = mockFetch({ [LIST]: page([makeMld()]), ...replies });
  const view = renderRoutes(
    [
      { path: '/image-management/:tab?', element: <ImageManagementPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: '/image-management/annotations', user },
  );
  return { ...mock, ...view };
}

const table = () => screen.getByRole('table', { name: 'Imported annotations' });
const listCalls = (calls: ReturnType<typeof mockFetch>['calls']) =>
  calls.filter((c) => c.path === '/api/imageManagement/annotations' && c.query.get('reportFormat') === null);

beforeEach(() => {
  setCsrfToken('token');
  window.sessionStorage.clear();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe('Image Management: the Annotations tab (doc 2 §2.3)', () => {
  it('shows the help text and the columns of doc 2 §2.3 in order', async () => {
    renderTab();
    await screen.findByText(
      'Layers are imported from .mld files to give central readers AI annotations: heatmap, HPFs, tissue detection and point counts.',
    );
    await within(table()).findByText('APP12_S1001_A.mld');
    const headers = Array.from(table().querySelectorAll('thead th'), (th) => th.textContent?.trim());
    expect(headers).toEqual([
      'Imported Annotations File',
      'Status',
      'APP Sequence',
      'Layers',
      'Image File',
      'Endo/Histo Procedure ID',
      'Import Date',
      'User',
    ]);
  });

  it('a row: name and 1024-step size, status with its icon, APP sequence, layers, links to the image and the case, user', async () => {
    renderTab();
    const row = (await within(table()).findByText('APP12_S1001_A.mld')).closest('tr')!;
    const cells = within(row);
    cells.getByText('1.50 MB');
    expect(cells.getByTestId('mld-status').textContent?.trim()).toBe('Complete');
    expect(row.querySelector('[data-icon="tick-circle"]')).toBeTruthy();
    cells.getByText('12');
    cells.getByText('3');
    expect(cells.getByRole('link', { name: 'S1001_A.tif' }).getAttribute('href')).toBe('/studies/3/images/7');
    expect(cells.getByRole('link', { name: 'ENDO-1001 / HISTO-77' }).getAttribute('href')).toBe('/studies/3/cases/40');
    cells.getByText('isc');
    fireEvent.click(cells.getByRole('link', { name: 'S1001_A.tif' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/images/7');
  });

  it('appends the error message to Error, and shows dashes for what an unlinked import lacks', async () => {
    const failed = makeMld({
      mldId: 2,
      mldName: 'orphan.mld',
      status: 'ERROR',
      errorMessage: 'No image matches OS-2',
      appSequenceId: null,
      numLayers: null,
      imageId: null,
      imageName: null,
      studyId: null,
      caseId: null,
      procId: null,
      histoProcedureId: null,
    });
    renderTab({ [LIST]: page([failed]) });
    const row = (await within(table()).findByText('orphan.mld')).closest('tr')!;
    const status = within(row).getByTestId('mld-status');
    expect(status.textContent?.trim()).toBe('Error: No image matches OS-2');
    expect(row.querySelector('[data-icon="error"]')).toBeTruthy();
    expect(within(row).queryAllByRole('link')).toHaveLength(0);
    expect(within(row).getAllByText('-').length).toBeGreaterThanOrEqual(4);
  });

  it('searches and filters by status (All statuses plus each), paging and sorting on the server', async () => {
    const { calls } = renderTab();
    await within(table()).findByText('APP12_S1001_A.mld');
    expect(listCalls(calls)[0]?.body).toEqual({ page: 1, pageSize: 20, sort: '-uploadedAt' });
    const select = screen.getByRole('combobox', { name: 'Status' });
    expect(Array.from((select as HTMLSelectElement).options, (o) => o.text)).toEqual([
      'All statuses',
      'Uploaded',
      'Queued',
      'Processing',
      'Complete',
      'Error',
      'Archived',
    ]);
    fireEvent.change(select, { target: { value: 'ERROR' } });
    await waitFor(() =>
      expect(listCalls(calls).at(-1)?.body).toMatchObject({ annotationStatusFilter: ['ERROR'], page: 1 }),
    );
    fireEvent.change(screen.getByRole('textbox', { name: 'Search imported annotations' }), {
      target: { value: 'ENDO-1001' },
    });
    await waitFor(() =>
      expect(listCalls(calls).at(-1)?.body).toMatchObject({
        searchText: 'ENDO-1001',
        annotationStatusFilter: ['ERROR'],
      }),
    );
    fireEvent.click(within(table()).getByRole('button', { name: /Imported Annotations File/ }));
    await waitFor(() => expect(listCalls(calls).at(-1)?.body).toMatchObject({ sort: 'mldName' }));
    // Kept for the browser tab, like the other tabs' filters.
    expect(JSON.parse(window.sessionStorage.getItem('lamina.imageManagement.filters.annotations') ?? '{}')).toEqual({
      searchText: 'ENDO-1001',
      status: 'ERROR',
    });
  });

  it('asks again every 2 s while a row is queued or processing, and stops once none is', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { calls } = renderTab({
      [LIST]: [
        page([makeMld({ status: 'QUEUED' })]),
        page([makeMld({ status: 'PROCESSING' })]),
        page([makeMld({ status: 'COMPLETE' })]),
      ],
    });
    expect((await screen.findByTestId('mld-status')).textContent?.trim()).toBe('Queued');
    await vi.advanceTimersByTimeAsync(MLD_POLL_MS);
    await waitFor(() => expect(screen.getByTestId('mld-status').textContent?.trim()).toBe('Processing'));
    await vi.advanceTimersByTimeAsync(MLD_POLL_MS);
    await waitFor(() => expect(screen.getByTestId('mld-status').textContent?.trim()).toBe('Complete'));
    const asked = listCalls(calls).length;
    expect(asked).toBe(3);
    await vi.advanceTimersByTimeAsync(3 * MLD_POLL_MS);
    expect(listCalls(calls)).toHaveLength(asked);
  });

  it('a list failure shows the spec message in a red callout', async () => {
    renderTab({ [LIST]: { status: 500, body: null } });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Unable to fetch image management images tab results');
  });

  it('Export as CSV posts the filters and order with ?reportFormat=csv and saves the file', async () => {
    const createObjectURL = vi.fn(() => 'blob:export');
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    const { calls } = renderTab({
      [LIST]: (call) =>
        call.query.get('reportFormat') === 'csv' ? { body: 'Imported Annotations File\r\n' } : page([makeMld()]),
    });
    await within(table()).findByText('APP12_S1001_A.mld');
    fireEvent.change(screen.getByRole('combobox', { name: 'Status' }), { target: { value: 'COMPLETE' } });
    fireEvent.click(screen.getByRole('button', { name: 'Export as CSV' }));
    await waitFor(() => expect(click).toHaveBeenCalled());
    const exported = calls.find((c) => c.query.get('reportFormat') === 'csv');
    expect(exported?.method).toBe('POST');
    expect(exported?.body).toEqual({ annotationStatusFilter: ['COMPLETE'], sort: '-uploadedAt' });
    expect(createObjectURL).toHaveBeenCalled();
    click.mockRestore();
  });

  it('offers Import Annotations only with its permission', async () => {
    renderTab({}, labtech());
    await within(table()).findByText('APP12_S1001_A.mld');
    expect(screen.queryByRole('button', { name: 'Import Annotations' })).toBeNull();
    cleanup();
    renderTab();
    await screen.findByRole('button', { name: 'Import Annotations' });
  });
});
