import type { StudyImageRow, UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../../api/client';
import { makeStudy, makeStudyImage, makeUserAs } from '../../../test/fixtures';
import { mockFetch } from '../../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../../test/render';
import { StudyImagesTab } from './StudyImagesTab';

beforeEach(() => setCsrfToken('token'));
afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const UPLOADER = makeUserAs('UPLOADER', [
  'S_Main_ViewImagesTab',
  'S_ImageListTab_UploadImage',
  'IM_ImagesListTab_DownloadImages',
  'AP_ImageViewer_ViewimageViewer',
]);
const SPONSOR = makeUserAs('SPONSOR', [
  'S_Main_ViewImagesTab',
  'S_Main_ViewCasesTab',
  'AP_ImageViewer_ViewimageViewer',
]);

type ListReply = { images: StudyImageRow[]; total?: number } | { status: number; message: string };

function renderTab(replies: ListReply[], user: UserInfo = UPLOADER) {
  const mock = mockFetch({
    'GET /api/studies/3/images': replies.map((r) =>
      'status' in r
        ? { status: r.status, body: { success: false, message: r.message } }
        : { body: { success: true, images: r.images, total: r.total ?? r.images.length } },
    ),
  });
  renderRoutes(
    [
      { path: '/studies/3/images', element: <StudyImagesTab study={makeStudy({ id: 3 })} /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: '/studies/3/images', user },
  );
  return mock;
}

const lastListQuery = (calls: ReturnType<typeof mockFetch>['calls']) =>
  Object.fromEntries(calls.filter((c) => c.path === '/api/studies/3/images').at(-1)!.query);

describe('study page, Images tab (doc 2 §2.5)', () => {
  it('shows the columns, newest upload first, with the page size remembered under imageRowsPerPage', async () => {
    window.localStorage.setItem('imageRowsPerPage', '50');
    const { calls } = renderTab([
      {
        images: [
          makeStudyImage({
            simpleCase: { id: 8, procId: 'ENDO-8' },
            caseId: 8,
            lastLabQuery: { queryStatus: 'OPEN', resolution: null },
          }),
        ],
      },
    ]);
    const table = await screen.findByRole('table', { name: 'Images' });
    await within(table).findByText('CMU-1-Small-Region.svs');
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((th) => th.textContent),
    ).toEqual(['File Name', 'Uploaded', 'Accession #', 'Anatomical Segment', 'Processed', 'Query', 'Case', 'Actions']);
    expect(lastListQuery(calls)).toEqual({ page: '1', pageSize: '50', sort: '-uploadedAt' });
    const row = within(table).getByText('CMU-1-Small-Region.svs').closest('tr')!;
    within(row).getByText('March 4, 2025');
    expect(within(row).getByRole('link', { name: 'ENDO-8' }).getAttribute('href')).toBe(
      '/studies/3/cases/8?tab=images',
    );
    await within(row).findByText('Succeeded');
    await within(row).findByText('Open');
  });

  it('shows the progress of an image being processed and reads the list again until it is done', async () => {
    const processing = makeStudyImage({
      processingStatus: 'SUBMITTED',
      processingProgress: 40,
      cogKey: null,
      status: 'PROCESSING',
    });
    renderTab([{ images: [processing] }, { images: [makeStudyImage()] }]);
    const bar = await screen.findByRole('progressbar', { name: 'Processing CMU-1-Small-Region.svs' });
    expect(bar.getAttribute('aria-valuenow')).toBe('40');
    screen.getByText('40%');
    await waitFor(() => expect(screen.queryByRole('progressbar')).toBeNull(), { timeout: 5000 });
    await screen.findByText('Succeeded');
  });

  it('shows a failed image with its reason and offers to replace it', async () => {
    const failed = makeStudyImage({
      processingStatus: 'FAIL',
      cogKey: null,
      status: 'FAIL_PROCESSING',
      statusMessage: 'The JPEG 2000 data of tile 3 (column 3, row 0) of level 0 could not be decoded',
      mayReplace: true,
    });
    renderTab([{ images: [failed] }]);
    await screen.findByText('Failed');
    fireEvent.click(screen.getByRole('button', { name: 'Actions for CMU-1-Small-Region.svs' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: /Replace/ }));
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText('Replace image');
    expect(within(dialog).getByLabelText('Choose a file').hasAttribute('multiple')).toBe(false);
    // The row click did not open the viewer underneath.
    expect(screen.queryByTestId('location')).toBeNull();
  });

  it('offers Replace only where the server says the caller may replace the image', async () => {
    // An open query that was not sent to the caller (issue 26: Site, or another role's query).
    const queried = makeStudyImage({ lastLabQuery: { queryStatus: 'OPEN', resolution: null }, mayReplace: false });
    renderTab([{ images: [queried] }]);
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for CMU-1-Small-Region.svs' }));
    await screen.findByRole('menuitem', { name: /Download/ });
    expect(screen.queryByRole('menuitem', { name: /Replace/ })).toBeNull();
  });

  it("opens 'Upload images' for several files from the Upload image button", async () => {
    renderTab([{ images: [] }]);
    await screen.findByText('No images yet');
    fireEvent.click(screen.getByRole('button', { name: 'Upload image' }));
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText('Upload images');
    const input = within(dialog).getByLabelText('Choose files');
    expect(input.hasAttribute('multiple')).toBe(true);
    expect(input.getAttribute('accept')).toBe('.svs,.tif,.tiff');
  });

  it("offers 'Upload Sample Data' with the permission to upload to assigned studies (doc 2 §2.5), the Image Management dialog", async () => {
    renderTab(
      [{ images: [] }],
      makeUserAs('LabTech', ['S_Main_ViewImagesTab', 'IM_ImagesListTab_UploadImagestoAssignedStudiesOnly']),
    );
    await screen.findByText('No images yet');
    fireEvent.click(screen.getByRole('button', { name: 'Upload Sample Data' }));
    const dialog = await screen.findByRole('dialog', { name: 'Select Sample Data File' });
    expect(within(dialog).getByLabelText('Sample data file').getAttribute('accept')).toBe('.csv,.txt');
    cleanup();
    renderTab([{ images: [] }]);
    await screen.findByText('No images yet');
    expect(screen.queryByRole('button', { name: 'Upload Sample Data' })).toBeNull();
  });

  it('searches by file name and filters, starting again on the first page', async () => {
    const { calls } = renderTab([{ images: [makeStudyImage()] }], SPONSOR);
    await screen.findByText('CMU-1-Small-Region.svs');
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search by file name' }), { target: { value: ' cmu ' } });
    await waitFor(() => expect(lastListQuery(calls).name).toBe('cmu'), { timeout: 2000 });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Only unassigned' }));
    await waitFor(() => expect(lastListQuery(calls).isUnassigned).toBe('true'));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Only images with queries' }));
    await waitFor(() =>
      expect(lastListQuery(calls)).toMatchObject({ name: 'cmu', isUnassigned: 'true', hasQueries: 'true', page: '1' }),
    );
  });

  it('hides Upload image, the row menu and Only unassigned without their permissions', async () => {
    renderTab(
      [{ images: [makeStudyImage()] }],
      makeUserAs('Site', ['S_Main_ViewImagesTab', 'AP_ImageViewer_ViewimageViewer']),
    );
    await screen.findByText('CMU-1-Small-Region.svs');
    expect(screen.queryByRole('button', { name: 'Upload image' })).toBeNull();
    expect(screen.queryByRole('checkbox', { name: 'Only unassigned' })).toBeNull();
    expect(screen.queryByRole('button', { name: /Actions for/ })).toBeNull();
    expect(screen.getAllByRole('columnheader').map((th) => th.textContent)).not.toContain('Actions');
  });

  it('opens the image viewer on a row click', async () => {
    renderTab([{ images: [makeStudyImage()] }]);
    fireEvent.click(await screen.findByText('CMU-1-Small-Region.svs'));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/images/21');
  });

  it("shows the server's failure in a red callout in place of the table", async () => {
    renderTab([{ status: 500, message: 'Unable to fetch images' }]);
    // By its text: a toast of an earlier file's test (the app's one toaster, outside the rendered
    // tree) may still be on the shared page, and is an alert too.
    const alert = (await screen.findByText('Unable to fetch images')).closest('[role="alert"]');
    expect(alert?.className).toContain('intent-danger');
  });
});
