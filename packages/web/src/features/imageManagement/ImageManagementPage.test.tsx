import {
  IM_EDIT_MESSAGES,
  ROLE_PERMISSIONS,
  imImageEditRefusals,
  type ImCaseRecord,
  type ImImageRecord,
} from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { fakeXhr } from '../upload/fakeXhr';
import { ImageManagementPage } from './ImageManagementPage';
import { columnsCookie } from './imPreferences';

const labtech = () => makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]);
const isc = () => makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]);

const image: ImImageRecord = {
  id: 11,
  studyId: 3,
  caseId: null,
  imageFilename: 'COLON-4711.svs',
  accessionNumber: 'ACC-4711',
  sponsor: 'Gut Pharma',
  studyName: 'UC-301',
  protocolId: 'P-1',
  siteId: 'SITE-1',
  subjectId: 'SUBJ-1',
  visitId: 'V1',
  labVisitId: 'LV1',
  anatomicalSegment: 'Rectum',
  specimenCollectionDate: null,
  uploadedAt: '2026-11-20T10:00:00.000Z',
  inQuery: true,
  organizationName: 'Gut Lab',
  qaComments: null,
};

const aCase: ImCaseRecord = {
  caseId: 40,
  studyId: 3,
  prevWorkflowStatuses: ['PENDING_LAB_QC'],
  studyName: 'UC-301',
  siteId: 'SITE-1',
  subjectId: 'SUBJ-1',
  visitId: 'V1',
  status: 'PENDING_QC',
  openQueries: 2,
  labTech: [{ id: 5, username: 'labtech', displayName: 'Leo Tech' }],
  caseCreatedAt: '2026-11-20T10:00:00.000Z',
};

function renderIm(path = '/image-management/images', extra: Parameters<typeof mockFetch>[0] = {}, user = labtech()) {
  const mock = mockFetch({
    'POST /api/imageManagement/images': { body: { success: true, results: [image], total: 1 } },
    'POST /api/imageManagement/cases': { body: { success: true, results: [aCase], total: 1 } },
    'GET /api/studies/list': { body: { success: true, studies: [{ id: 3, name: 'UC-301' }], total: 1 } },
    'GET /api/studies/3': { body: makeStudy({ id: 3 }) },
    ...extra,
  });
  renderRoutes(
    [
      { path: '/image-management/:tab?', element: <ImageManagementPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path, user },
  );
  return mock;
}

const headers = () =>
  Array.from(screen.getByRole('table', { name: 'Images' }).querySelectorAll('thead th'), (th) =>
    th.textContent?.trim(),
  );

beforeEach(() => {
  setCsrfToken('token');
  window.sessionStorage.clear();
  document.cookie = `${columnsCookie('images')}=; max-age=0; path=/`;
  document.cookie = `${columnsCookie('cases')}=; max-age=0; path=/`;
});
afterEach(cleanup);

describe('Image Management: Images tab', () => {
  it('shows a lab technician’s default columns (doc 2 §6) and asks for the newest uploads first', async () => {
    const { calls } = renderIm();
    await screen.findByText('COLON-4711.svs');
    expect(headers()).toEqual([
      'File Name',
      'Accession Number',
      'Sponsor',
      'Study Name',
      'Protocol ID',
      'Site ID',
      'Subject ID',
      'Lab Visit ID',
      'Anatomical Segment',
      'Collection Date',
      'Upload Date',
      'In Query',
      'Organization',
      'QA Comments',
      'Actions',
    ]);
    const call = calls.find((c) => c.path === '/api/imageManagement/images');
    expect(call?.body).toMatchObject({ page: 1, pageSize: 20, sort: '-uploadedAt' });
  });

  it('Add Filter steps from the menu to a filter and back; the badge counts; filters are kept for the tab', async () => {
    const { calls } = renderIm();
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: /Add Filter/ }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Filter' });
    fireEvent.click(within(dialog).getByText('Status'));
    const statusStep = await screen.findByRole('dialog', { name: 'Status' });
    fireEvent.click(within(statusStep).getByRole('checkbox', { name: 'Lab QC Pending' }));
    fireEvent.click(within(statusStep).getByRole('checkbox', { name: 'ISC QC Pending' }));
    fireEvent.click(within(statusStep).getByRole('button', { name: 'Back' }));
    const menu = await screen.findByRole('dialog', { name: 'Add Filter' });
    fireEvent.click(within(menu).getByText('Upload Date'));
    fireEvent.click(
      within(await screen.findByRole('dialog', { name: 'Upload Date' })).getByRole('radio', { name: 'Last 7 Days' }),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Done' }));
    expect((await screen.findByTestId('filter-count')).textContent).toBe('3');
    await waitFor(() =>
      expect(calls.filter((c) => c.path === '/api/imageManagement/images').at(-1)?.body).toMatchObject({
        imageStatusFilter: ['LAB_QC_PENDING', 'ISC_QC_PENDING'],
        dateFilter: 'Last7',
        page: 1,
      }),
    );
    cleanup();
    renderIm();
    expect((await screen.findByTestId('filter-count')).textContent).toBe('3');
  });

  it('the study filter searches studies by name and counts once', async () => {
    const { calls } = renderIm();
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: /Add Filter/ }));
    fireEvent.click(within(await screen.findByRole('dialog', { name: 'Add Filter' })).getByText('Study Name'));
    const step = await screen.findByRole('dialog', { name: 'Study Name' });
    fireEvent.change(within(step).getByPlaceholderText('Enter study name'), { target: { value: 'UC' } });
    fireEvent.click(await within(step).findByRole('checkbox', { name: 'UC-301' }));
    within(step).getByText('UC-301', { selector: '.bp6-tag span, .bp6-tag' });
    fireEvent.click(within(step).getByRole('button', { name: 'Done' }));
    expect((await screen.findByTestId('filter-count')).textContent).toBe('1');
    await waitFor(() =>
      expect(calls.filter((c) => c.path === '/api/imageManagement/images').at(-1)?.body).toMatchObject({
        studyFilter: { selectedIds: [3] },
      }),
    );
  });

  it('Show/Hide Columns lists the viewable columns; a hidden one stays hidden after a reload (cookie)', async () => {
    renderIm();
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: /Show\/Hide Columns/ }));
    const dialog = await screen.findByRole('dialog', { name: 'Show/Hide Columns' });
    // Viewable but hidden by default for a lab technician: Visit ID. Not viewable: Status.
    expect(within(dialog).getByRole<HTMLInputElement>('checkbox', { name: 'Visit ID' }).checked).toBe(false);
    expect(within(dialog).queryByRole('checkbox', { name: 'Status' })).toBeNull();
    fireEvent.click(within(dialog).getByRole('checkbox', { name: 'Accession Number' }));
    // Staged until Apply (issue 29 item 15).
    expect(headers()).toContain('Accession Number');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Apply' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Show/Hide Columns' })).toBeNull());
    expect(headers()).not.toContain('Accession Number');
    expect(screen.getByTestId('hidden-count').textContent).toBe('2');
    cleanup();
    renderIm();
    await screen.findByText('COLON-4711.svs');
    expect(headers()).not.toContain('Accession Number');
  });

  it('Show/Hide Columns: Cancel and Escape abandon the ticks; Reset to defaults is staged too (issue 29 item 15)', async () => {
    renderIm();
    await screen.findByText('COLON-4711.svs');
    const open = async () => {
      fireEvent.click(screen.getByRole('button', { name: /Show\/Hide Columns/ }));
      return within(await screen.findByRole('dialog', { name: 'Show/Hide Columns' }));
    };
    const closed = () => waitFor(() => expect(screen.queryByRole('dialog', { name: 'Show/Hide Columns' })).toBeNull());
    let dialog = await open();
    fireEvent.click(dialog.getByRole('checkbox', { name: 'Accession Number' }));
    fireEvent.click(dialog.getByRole('checkbox', { name: 'Visit ID' }));
    fireEvent.click(dialog.getByRole('button', { name: 'Cancel' }));
    await closed();
    expect(headers()).toContain('Accession Number');
    expect(headers()).not.toContain('Visit ID');
    dialog = await open();
    expect(dialog.getByRole<HTMLInputElement>('checkbox', { name: 'Accession Number' }).checked).toBe(true);
    fireEvent.click(dialog.getByRole('checkbox', { name: 'Accession Number' }));
    fireEvent.keyDown(screen.getByRole('dialog', { name: 'Show/Hide Columns' }), { key: 'Escape' });
    await closed();
    expect(headers()).toContain('Accession Number');
    // Hide it, then Reset to defaults shows it again only on Apply.
    dialog = await open();
    fireEvent.click(dialog.getByRole('checkbox', { name: 'Accession Number' }));
    fireEvent.click(dialog.getByRole('button', { name: 'Apply' }));
    await closed();
    expect(headers()).not.toContain('Accession Number');
    dialog = await open();
    fireEvent.click(dialog.getByRole('button', { name: 'Reset to defaults' }));
    expect(dialog.getByRole<HTMLInputElement>('checkbox', { name: 'Accession Number' }).checked).toBe(true);
    expect(headers()).not.toContain('Accession Number');
    fireEvent.click(dialog.getByRole('button', { name: 'Apply' }));
    await closed();
    expect(headers()).toContain('Accession Number');
  });

  it('searches after the typing stops, from the first page', async () => {
    const { calls } = renderIm();
    await screen.findByText('COLON-4711.svs');
    fireEvent.change(screen.getByRole('textbox', { name: 'Search images' }), { target: { value: '  colon ' } });
    await waitFor(() =>
      expect(calls.filter((c) => c.path === '/api/imageManagement/images').at(-1)?.body).toMatchObject({
        searchText: 'colon',
        page: 1,
      }),
    );
    expect(screen.getByTestId('filter-count').textContent).toBe('1');
  });

  it('a list error shows in a red callout in place of the table', async () => {
    renderIm('/image-management/images', {
      'POST /api/imageManagement/images': { status: 500, body: { success: false, message: 'Database down' } },
    });
    const message = await screen.findByText('Database down', undefined, { timeout: 4000 });
    expect(message.closest('.bp6-callout')?.className).toContain('bp6-intent-danger');
  });

  it('a row opens the image viewer', async () => {
    renderIm();
    fireEvent.click(await screen.findByText('COLON-4711.svs'));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/images/11');
  });
});

describe('Image Management: row menus', () => {
  it('an image row offers the actions of the role; Copy Image opens the study page’s dialog, not the viewer', async () => {
    renderIm('/image-management/images', {}, isc());
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for COLON-4711.svs' }));
    const items = (await screen.findAllByRole('menuitem')).map((item) => item.textContent);
    expect(items).toEqual([
      'Assign to Case',
      'Copy Image',
      'Move Image',
      'View Image',
      'Download Image',
      'Archive Image',
    ]);
    fireEvent.click(screen.getByRole('menuitem', { name: 'Copy Image' }));
    const dialog = await screen.findByRole('dialog', { name: 'Copy Image' });
    fireEvent.click(within(dialog).getByLabelText('Name of the copy'));
    expect(screen.queryByTestId('location')).toBeNull();
  });

  it('a case row offers Revert Status, Put on Hold, View Images and Archive Case by permission', async () => {
    renderIm('/image-management/cases', {}, isc());
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for case 40' }));
    const items = (await screen.findAllByRole('menuitem')).map((item) => item.textContent);
    expect(items).toEqual(['Revert Status', 'Put on Hold', 'View Images', 'Archive Case']);
    fireEvent.click(screen.getByRole('menuitem', { name: 'View Images' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/cases/40');
  });
});

describe('Image Management: Cases and Annotations tabs', () => {
  it('lists the cases with their columns; a row opens the case viewer', async () => {
    renderIm('/image-management/cases');
    await screen.findByText('Leo Tech');
    const table = screen.getByRole('table', { name: 'Cases' });
    within(table).getByText('Pending QC');
    fireEvent.click(within(table).getByText('SUBJ-1'));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/cases/40');
  });

  it('the Annotations tab explains where imported annotations come from', async () => {
    renderIm('/image-management/annotations', {
      'POST /api/imageManagement/annotations': { body: { success: true, results: [], total: 0 } },
    });
    await screen.findByText(/imported from \.mld files to give central readers AI annotations/);
    screen.getByRole('table', { name: 'Imported annotations' });
  });
});

describe('Image Management: Edit Column (doc 2 §5)', () => {
  const EDIT = 'POST /api/imageManagement/11/editImageColumn';

  it('a value that exists: Confirm waits for a different value and a reason; the call carries both; the row does not open', async () => {
    const { calls } = renderIm('/image-management/images', {
      [EDIT]: { body: { success: true, message: 'Subject ID updated' } },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Edit Subject ID' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Subject ID' });
    // The pencil does not open the row (the viewer's route would show the location probe).
    expect(screen.queryByTestId('location')).toBeNull();
    const confirm = within(dialog).getByRole('button', { name: 'Confirm' });
    expect(confirm).toHaveProperty('disabled', true);
    fireEvent.change(within(dialog).getByLabelText('New Subject ID'), { target: { value: 'SUBJ-2' } });
    expect(confirm).toHaveProperty('disabled', true);
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'Mistyped' } });
    expect(confirm).toHaveProperty('disabled', false);
    fireEvent.click(confirm);
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Edit Subject ID' })).toBeNull());
    expect(calls.find((c) => c.path === '/api/imageManagement/11/editImageColumn')?.body).toEqual({
      tabName: 'images',
      columnName: 'subjectId',
      columnValue: 'SUBJ-2',
      reasonForChange: 'Mistyped',
    });
  });

  it('an empty value: no reason is asked, Confirm waits for a value', async () => {
    const { calls } = renderIm('/image-management/images', {
      [EDIT]: { body: { success: true, message: 'QA Comments updated' } },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Edit QA Comments' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit QA Comments' });
    expect(within(dialog).queryByLabelText(/Reason for change/)).toBeNull();
    const confirm = within(dialog).getByRole('button', { name: 'Confirm' });
    expect(confirm).toHaveProperty('disabled', true);
    fireEvent.change(within(dialog).getByLabelText('New QA Comments'), { target: { value: 'Fold at the edge' } });
    fireEvent.click(confirm);
    await waitFor(() =>
      expect(calls.find((c) => c.path === '/api/imageManagement/11/editImageColumn')?.body).toMatchObject({
        columnValue: 'Fold at the edge',
        reasonForChange: null,
      }),
    );
  });

  it("Lab Visit ID is chosen from the study's options; with none, 'No options configured' and no Confirm", async () => {
    renderIm('/image-management/images', {
      'GET /api/studies/3': { body: makeStudy({ id: 3, visitIds: ['V1', 'V2'], labVisitIds: ['LV1', 'LV2'] }) },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Edit Lab Visit ID' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Lab Visit ID' });
    const select = await within(dialog).findByRole<HTMLSelectElement>('combobox');
    expect(Array.from(select.options, (o) => o.value)).toEqual(['', 'LV1', 'LV2']);
    cleanup();
    renderIm('/image-management/images', {
      'GET /api/studies/3': { body: makeStudy({ id: 3, visitIds: [], labVisitIds: [] }) },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Edit Lab Visit ID' }));
    const empty = await screen.findByRole('dialog', { name: 'Edit Lab Visit ID' });
    await within(empty).findByText('No options configured');
    expect(within(empty).getByRole('button', { name: 'Confirm' })).toHaveProperty('disabled', true);
  });

  it('Anatomical Segment is chosen from the study’s segments (issue 29 item 13)', async () => {
    const { calls } = renderIm('/image-management/images', {
      'GET /api/studies/3': { body: makeStudy({ id: 3, anatomicalSegments: ['Rectum', 'Sigmoid colon'] }) },
      [EDIT]: { body: { success: true, message: 'Anatomical Segment updated' } },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Edit Anatomical Segment' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Anatomical Segment' });
    const select = await within(dialog).findByRole<HTMLSelectElement>('combobox', { name: 'New Anatomical Segment' });
    expect(Array.from(select.options, (o) => o.value)).toEqual(['', 'Rectum', 'Sigmoid colon']);
    fireEvent.change(select, { target: { value: 'Sigmoid colon' } });
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'Label' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'POST' && c.path.endsWith('/editImageColumn'))?.body).toMatchObject({
        columnName: 'anatomicalSegment',
        columnValue: 'Sigmoid colon',
      }),
    );
  });

  it('an image in a case offers no Site, Subject, Visit or Lab Visit ID pencil; the tooltip says why (issue 29 item 13)', async () => {
    // The server's refusals of the row, as it computes them (imImageEditRefusals).
    const inCase = { ...image, caseId: 40 };
    const editRefusals = imImageEditRefusals({ ...inCase, status: 'LAB_QC_PENDING' }, [
      'siteId',
      'subjectId',
      'labVisitId',
      'accessionNumber',
    ]);
    renderIm('/image-management/images', {
      'POST /api/imageManagement/images': {
        body: { success: true, results: [{ ...inCase, editRefusals }], total: 1 },
      },
    });
    await screen.findByText('COLON-4711.svs');
    for (const label of ['Site ID', 'Subject ID', 'Lab Visit ID']) {
      const pencil = screen.getByRole('button', { name: `Edit ${label}` });
      expect(pencil.getAttribute('aria-disabled')).toBe('true');
      fireEvent.click(pencil);
      expect(screen.queryByRole('dialog', { name: `Edit ${label}` })).toBeNull();
    }
    expect(screen.getByRole('button', { name: 'Edit Subject ID' }).getAttribute('aria-description')).toBe(
      'Subject ID can be edited only for an image without a case; edit the case to change it for its images',
    );
    // What can succeed is still offered.
    expect(screen.getByRole('button', { name: 'Edit Accession Number' }).getAttribute('aria-disabled')).toBeNull();
  });

  it('a role without the Status column gets the pencil of each row as the server says (issue 29 item 17)', async () => {
    // The lab tech does not view the status: an image without a case whose status takes no Lab
    // Visit ID edit (Data Incomplete) is refused by the server's flag, the next row is offered.
    const refused = {
      ...image,
      editRefusals: imImageEditRefusals({ caseId: null, studyId: 3, status: 'DATA_INCOMPLETE' }, ['labVisitId']),
    };
    const offered = { ...image, id: 12, imageFilename: 'COLON-4712.svs', labVisitId: 'LV2', editRefusals: {} };
    renderIm('/image-management/images', {
      'POST /api/imageManagement/images': { body: { success: true, results: [refused, offered], total: 2 } },
    });
    const table = await screen.findByRole('table', { name: 'Images' });
    const row = (name: string) => within(table).getByText(name).closest('tr') as HTMLElement;
    await within(table).findByText('COLON-4712.svs');
    const no = within(row('COLON-4711.svs')).getByRole('button', { name: 'Edit Lab Visit ID' });
    expect(no.getAttribute('aria-disabled')).toBe('true');
    expect(no.getAttribute('aria-description')).toBe(IM_EDIT_MESSAGES.labVisitNotNow);
    fireEvent.click(no);
    expect(screen.queryByRole('dialog', { name: 'Edit Lab Visit ID' })).toBeNull();
    const yes = within(row('COLON-4712.svs')).getByRole('button', { name: 'Edit Lab Visit ID' });
    expect(yes.getAttribute('aria-disabled')).toBeNull();
    fireEvent.click(yes);
    await screen.findByRole('dialog', { name: 'Edit Lab Visit ID' });
  });

  it('an archived case offers no pencil on the cases tab (issue 29 item 13)', async () => {
    renderIm(
      '/image-management/cases',
      {
        'POST /api/imageManagement/cases': {
          body: { success: true, results: [{ ...aCase, status: 'ARCHIVED' }], total: 1 },
        },
      },
      isc(),
    );
    const table = await screen.findByRole('table', { name: 'Cases' });
    await within(table).findByText('SUBJ-1');
    const pencils = within(table).getAllByRole('button', { name: /^Edit / });
    expect(pencils.length).toBeGreaterThan(0);
    for (const pencil of pencils) {
      expect(pencil.getAttribute('aria-disabled')).toBe('true');
      expect(pencil.getAttribute('aria-description')).toBe('An archived case cannot be edited');
    }
  });

  it("the server's refusal shows in a red callout and the dialog stays open", async () => {
    renderIm('/image-management/images', {
      [EDIT]: {
        status: 409,
        body: { success: false, message: 'Subject ID can be edited only for an image without a case' },
      },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Edit Subject ID' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Subject ID' });
    fireEvent.change(within(dialog).getByLabelText('New Subject ID'), { target: { value: 'SUBJ-2' } });
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'x' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    const alert = await within(dialog).findByRole('alert');
    expect(alert.textContent).toContain('only for an image without a case');
  });

  it('columns the role may not edit have no pencil (a lab technician may not edit the sponsor or the organization)', async () => {
    renderIm();
    await screen.findByText('COLON-4711.svs');
    expect(screen.queryByRole('button', { name: 'Edit Sponsor' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Edit Organization' })).toBeNull();
    screen.getByRole('button', { name: 'Edit Accession Number' });
  });
});

describe('Image Management: Export Report (doc 2 §7)', () => {
  const dm = () => makeUserAs('DM', [...ROLE_PERMISSIONS.DM]);

  it('exports the list as CSV with its filters, order and shown columns, and saves the named file', async () => {
    const createObjectURL = vi.fn(() => 'blob:export');
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    const { calls } = renderIm(
      '/image-management/images',
      {
        'POST /api/imageManagement/images': (call) =>
          call.query.get('reportFormat') === 'csv'
            ? { body: 'Accession Number\r\nACC-4711\r\n' }
            : { body: { success: true, results: [image], total: 1 } },
      },
      dm(),
    );
    await screen.findByText('ACC-4711');
    fireEvent.click(screen.getByRole('button', { name: 'Export Report' }));
    await waitFor(() => expect(click).toHaveBeenCalled());
    const exported = calls.find((c) => c.query.get('reportFormat') === 'csv');
    expect(exported?.method).toBe('POST');
    expect(exported?.body).toMatchObject({ sort: '-uploadedAt' });
    // The columns shown: a DM's defaults (Histo Procedure ID yes, File Name no).
    const columns = (exported?.body as { columns: string[] }).columns;
    expect(columns).toContain('histoProcedureId');
    expect(columns).not.toContain('imageFilename');
    expect(createObjectURL).toHaveBeenCalled();
    click.mockRestore();
  });

  it('is offered only with the export permission (a lab technician lists but does not export)', async () => {
    renderIm();
    await screen.findByText('COLON-4711.svs');
    expect(screen.queryByRole('button', { name: 'Export Report' })).toBeNull();
  });

  it("a failed cases export says the spec's message", async () => {
    renderIm(
      '/image-management/cases',
      {
        'POST /api/imageManagement/cases': (call) =>
          call.query.get('reportFormat') === 'csv'
            ? { status: 500, body: null }
            : { body: { success: true, results: [aCase], total: 1 } },
      },
      dm(),
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Export Report' }));
    await screen.findByText('Unable to fetch image management cases tab results');
  });
});

describe('Image Management: sample-data import (doc 2 §4)', () => {
  const request = {
    s3SampleDataKey: 'samples/u1-k/lab.csv',
    fileName: 'lab.csv',
    resultFileKey: 'samples/u1-k/result-lab.csv',
  };
  const chooseFile = (name: string) => {
    const input = screen.getByLabelText<HTMLInputElement>('Sample data file');
    fireEvent.change(input, { target: { files: [new File(['File Name\r\na.svs\r\n'], name, { type: 'text/csv' })] } });
  };

  it('uploads the chosen file to its signed URL, imports it and shows the counts with the result file', async () => {
    const { requests } = fakeXhr(() => ({ status: 200 }));
    const { calls } = renderIm('/image-management/images', {
      'POST /api/samples/upload': {
        body: { success: true, putSignedUrl: '/api/storage/samples/x?sig=1', sampleDataRequest: request },
      },
      'POST /api/samples/process': {
        body: {
          success: true,
          message: 'done',
          numRowsUpdated: 2,
          numFieldsUpdated: 5,
          numRowsFailed: 1,
          s3SampleDataResponse: '/api/storage/result?sig=2',
        },
      },
      'GET /api/samples/progress': { body: { success: true, status: 'PROCESSING', totalRows: 3, doneRows: 1 } },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findByRole('dialog', { name: 'Select Sample Data File' });
    chooseFile('lab.csv');
    fireEvent.click(screen.getByRole('button', { name: 'Import' }));
    const summary = await screen.findByRole('dialog', { name: 'Sample Data Import Complete' });
    expect(within(summary).getByTestId('rows-updated').textContent).toBe('2');
    expect(within(summary).getByTestId('fields-updated').textContent).toBe('5');
    expect(within(summary).getByTestId('rows-failed').textContent).toBe('1');
    expect(
      within(summary)
        .getByRole('button', { name: /result file/ })
        .getAttribute('href'),
    ).toBe('/api/storage/result?sig=2');
    expect(calls.find((c) => c.path === '/api/samples/upload')?.body).toEqual({ fileName: 'lab.csv' });
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual(['PUT /api/storage/samples/x?sig=1']);
    expect(calls.find((c) => c.path === '/api/samples/process')?.body).toEqual(request);
  });

  it('only .csv and .txt files may be imported', async () => {
    renderIm();
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findByRole('dialog', { name: 'Select Sample Data File' });
    chooseFile('lab.xlsx');
    screen.getByText('Sample data must be a .csv or .txt file');
    expect(screen.getByRole('button', { name: 'Import' })).toHaveProperty('disabled', true);
  });

  it("a refused file says the server's message and the dialog stays to choose another", async () => {
    fakeXhr(() => ({ status: 200 }));
    renderIm('/image-management/images', {
      'POST /api/samples/upload': {
        body: { success: true, putSignedUrl: '/api/storage/samples/x?sig=1', sampleDataRequest: request },
      },
      'POST /api/samples/process': {
        status: 400,
        body: { success: false, message: "Unknown column 'Colour'; see the template for the columns" },
      },
    });
    await screen.findByText('COLON-4711.svs');
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    const dialog = await screen.findByRole('dialog', { name: 'Select Sample Data File' });
    chooseFile('lab.csv');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Import' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain("Unknown column 'Colour'");
    expect(within(dialog).getByRole('button', { name: 'Import' })).toHaveProperty('disabled', false);
  });

  it('is offered only with the permission to upload sample data (not to a data manager)', async () => {
    renderIm('/image-management/images', {}, makeUserAs('DM', [...ROLE_PERMISSIONS.DM]));
    await screen.findByText('ACC-4711');
    expect(screen.queryByRole('button', { name: 'Upload' })).toBeNull();
  });
});
