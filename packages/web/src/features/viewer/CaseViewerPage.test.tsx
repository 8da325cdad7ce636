import {
  CASE_MESSAGES,
  IMAGE_ACTION_MESSAGES,
  ROLE_PERMISSIONS,
  type CaseReader,
  type CaseView,
  type UserInfo,
} from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase, makeImage, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { caseCloseTarget, CaseViewerPage, readerList } from './CaseViewerPage';
import { stubResizeObserver } from './olTestSupport';

beforeEach(() => {
  setCsrfToken('token');
  stubResizeObserver();
  window.localStorage.clear();
});
afterEach(cleanup);

const image = (id: number, status: CaseView['images'][number]['status']) => ({
  id,
  name: `slide-${id}.svs`,
  status,
  accessionNumber: null,
  biopsyLocation: null,
  uploadedAt: '2026-11-20T10:00:00.000Z',
  processed: true,
  ignored: false,
});

const reader = (id: number, readAt: string | null = null): CaseReader => ({
  id,
  username: `reader${id}`,
  firstName: null,
  lastName: null,
  displayName: `reader${id}`,
  numReadCases: 0,
  numTotalCases: 1,
  readAt,
});

const labtech = () => makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]);
/** A central reader (user id 7, as every fixture user). */
const centralReader = () => makeUserAs('CR', [...ROLE_PERMISSIONS.CR]);

function renderCase(
  c: CaseView,
  user: UserInfo,
  extra: Parameters<typeof mockFetch>[0] = {},
  options: { path?: string; embedded?: boolean } = {},
) {
  const mock = mockFetch({
    [`GET /api/cases/${c.id}`]: { body: { success: true, message: '', case: c } },
    'GET /api/studies/3': { body: makeStudy({ id: 3 }) },
    ...Object.fromEntries(
      c.images.map((i) => [`GET /api/images/${i.id}`, { body: makeImage({ id: i.id, name: i.name, caseId: c.id }) }]),
    ),
    ...extra,
  });
  const view = renderRoutes(
    [
      { path: '/studies/:studyId/cases/:id', element: <CaseViewerPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: options.path ?? `/studies/3/cases/${c.id}`, user, embedded: options.embedded ?? false },
  );
  return { ...mock, ...view };
}

describe('the case viewer: QC and scoring', () => {
  it('a lab technician passes the shown image’s lab QC after the confirmation', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING'), image(2, 'ISC_QC_PENDING')] });
    const { calls } = renderCase(c, labtech(), {
      'PATCH /api/images/1/pass-qc': { body: { success: true, message: IMAGE_ACTION_MESSAGES.passedQc, imageId: 1 } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Pass QC of slide-1.svs' }));
    const dialog = await screen.findByRole('dialog', { name: 'Confirm Image Status Change' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Pass QC' }));
    await waitFor(() =>
      expect(calls.some((x) => x.method === 'PATCH' && x.path === '/api/images/1/pass-qc')).toBe(true),
    );
    // Image 2 has passed lab QC already, and ISC QC is not the lab technician's.
    fireEvent.click(screen.getByRole('radio', { name: 'slide-2.svs' }));
    await screen.findByLabelText('Image details');
    expect(screen.queryByRole('button', { name: /Pass QC of/ })).toBeNull();
  });

  it('the case’s QC step from the top bar asks to Confirm Case Status Change', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    const { calls } = renderCase(c, labtech(), {
      'PATCH /api/cases/40/status/forward': {
        body: { success: true, message: CASE_MESSAGES.forwarded, case: { ...c, status: 'PENDING_QC' } },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Pass Lab QC' }));
    const dialog = await screen.findByRole('dialog', { name: 'Confirm Case Status Change' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Pass Lab QC' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/cases/40/status/forward')).toBe(true));
  });

  it('an assigned reader sees only the procedure IDs and the accession number, marks the case scored, and leaves', async () => {
    const c = makeCase({
      status: 'PROCESSED',
      subjectId: null,
      siteId: null,
      visitId: null,
      readers: [reader(7)],
      images: [{ ...image(1, 'READY_FOR_READING'), accessionNumber: 'ACC-1' }],
    });
    const { calls } = renderCase(c, centralReader(), {
      'PATCH /api/cases/40/status/forward': { body: { success: true, message: CASE_MESSAGES.scored, case: c } },
    });
    const terms = async (label: string) =>
      within(await screen.findByLabelText(label))
        .getAllByRole('term')
        .map((t) => t.textContent);
    expect(await terms('Case details')).toEqual(['Histo Procedure ID', 'Endo Procedure ID']);
    expect(await terms('Image details')).toEqual(['Accession Number']);
    expect(screen.queryByRole('button', { name: 'Show details' })).toBeNull();
    expect(screen.queryByRole('button', { name: /Pass QC of/ })).toBeNull();
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    expect(within(dialog).getByText(/completes when every assigned reader/)).toBeTruthy();
    expect(within(dialog).queryByText(/AI annotation/)).toBeNull();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Mark as Scored' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/cases/40/status/forward')).toBe(true));
    // The reader's part is done (the case waits for the other readers): on to the study page.
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3');
  });

  it('embedded, Mark as Scored ends on the success message', async () => {
    const c = makeCase({ status: 'PROCESSED', readers: [reader(7)], images: [image(1, 'READY_FOR_READING')] });
    renderCase(
      c,
      makeUserAs('NOTO', [...ROLE_PERMISSIONS.NOTO]),
      { 'PATCH /api/cases/40/status/forward': { body: { success: true, message: CASE_MESSAGES.scored, case: c } } },
      { embedded: true },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    fireEvent.click(
      within(await screen.findByRole('dialog', { name: 'Mark as Scored' })).getByRole('button', {
        name: 'Mark as Scored',
      }),
    );
    expect((await screen.findByTestId('location')).textContent).toBe('/successMessage');
  });

  it('no Mark as Scored for a reader who has marked already, nor for one not assigned', async () => {
    const c = makeCase({ status: 'PROCESSED', readers: [reader(7, '2026-11-24T10:00:00Z'), reader(8)] });
    renderCase(c, centralReader());
    await screen.findByLabelText('Case details');
    expect(screen.queryByRole('button', { name: 'Mark as Scored' })).toBeNull();
    cleanup();
    renderCase(makeCase({ status: 'PROCESSED', readers: [reader(8)] }), centralReader());
    await screen.findByLabelText('Case details');
    expect(screen.queryByRole('button', { name: 'Mark as Scored' })).toBeNull();
  });

  it('with AI annotations on the image, Mark as Scored asks to include or exclude their counts', async () => {
    const c = makeCase({ status: 'PROCESSED', readers: [reader(7)], images: [image(1, 'READY_FOR_READING')] });
    const { calls } = renderCase(c, centralReader(), {
      'GET /api/images/1': {
        body: makeImage({ id: 1, caseId: 40, mldFile: { id: 5, name: 'ses1_4_Result.mld', appSequenceId: '4' } }),
      },
      'PATCH /api/images/1/accept-ai-annotations': {
        body: { success: true, message: IMAGE_ACTION_MESSAGES.aiAccepted, imageId: 1 },
      },
      'PATCH /api/cases/40/status/forward': { body: { success: true, message: CASE_MESSAGES.scored, case: c } },
    });
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/1')).toBe(true));
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    expect(within(dialog).getByText(/Include or exclude their counts/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('radio', { name: 'Include imported AI annotation counts' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Mark as Scored' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/cases/40/status/forward')).toBe(true));
    const accept = calls.findIndex((x) => x.path === '/api/images/1/accept-ai-annotations');
    expect(calls[accept]?.body).toEqual({ acceptAiAnnotations: true });
    expect(accept).toBeLessThan(calls.findIndex((x) => x.path === '/api/cases/40/status/forward'));
  });

  it('the last reader’s mark completes the case and goes on to the study page', async () => {
    const c = makeCase({ status: 'PROCESSED', readers: [reader(7)], images: [image(1, 'READY_FOR_READING')] });
    renderCase(c, centralReader(), {
      'PATCH /api/cases/40/status/forward': {
        body: { success: true, message: CASE_MESSAGES.scoredComplete, case: { ...c, status: 'COMPLETED' } },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Mark as Scored' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3');
  });
});

describe('the case viewer: Overview', () => {
  it('the details box is collapsed by default: only the procedure IDs until it is opened', async () => {
    const c = makeCase({
      procId: 'ENDO-40',
      histoProcedureId: 'H-40',
      subjectId: 'SUBJ-40',
      readers: [1, 2, 3, 4, 5, 6].map((id) => reader(id)),
    });
    renderCase(c, labtech());
    const toggle = await screen.findByRole('button', { name: 'Show details' });
    const details = screen.getByLabelText('Case details');
    expect(
      within(details)
        .getAllByRole('term')
        .map((t) => t.textContent),
    ).toEqual(['Histo Procedure ID', 'Endo Procedure ID']);
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(toggle);
    expect(within(details).getByText('SUBJ-40')).toBeTruthy();
    expect(within(details).getByText('reader1, reader2, reader3, reader4, reader5, …')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Hide details' }).getAttribute('aria-expanded')).toBe('true');
  });

  it('copies the image’s accession number with a click', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const c = makeCase({ images: [{ ...image(1, 'LAB_QC_PENDING'), accessionNumber: 'ACC-77' }] });
    renderCase(c, labtech());
    fireEvent.click(await screen.findByRole('button', { name: 'ACC-77' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('ACC-77'));
    expect(await screen.findByText('Accession number ACC-77 copied')).toBeTruthy();
  });

  it('edits the shown image (with the edit permissions)', async () => {
    const c = makeCase({ images: [{ ...image(1, 'LAB_QC_PENDING'), accessionNumber: 'ACC-1' }] });
    const { calls } = renderCase(c, labtech(), {
      'PATCH /api/images/1': { body: { success: true, message: IMAGE_ACTION_MESSAGES.updated, imageId: 1 } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Edit Image' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Image' });
    fireEvent.change(within(dialog).getByLabelText('Accession #'), { target: { value: 'ACC-2' } });
    fireEvent.change(within(dialog).getByLabelText('Reason for change: Accession #'), { target: { value: 'Typo' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(calls.find((x) => x.method === 'PATCH')?.body).toEqual({
        accessionNumber: { value: 'ACC-2', reasonForChange: 'Typo' },
      }),
    );
  });

  it('a radio switches the image shown; the choice is kept for the case', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING'), image(2, 'LAB_QC_PENDING')] });
    const { calls } = renderCase(c, labtech());
    await screen.findByRole('radio', { name: 'slide-1.svs' });
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/1')).toBe(true));
    expect(screen.getByRole<HTMLInputElement>('radio', { name: 'slide-1.svs' }).checked).toBe(true);
    fireEvent.click(screen.getByRole('radio', { name: 'slide-2.svs' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/2')).toBe(true));
    expect(screen.getByRole<HTMLInputElement>('radio', { name: 'slide-2.svs' }).checked).toBe(true);
    cleanup();
    renderCase(c, labtech());
    await waitFor(() =>
      expect(screen.getByRole<HTMLInputElement>('radio', { name: 'slide-2.svs' }).checked).toBe(true),
    );
  });

  it('each image has a download icon (with the download permission) that opens a signed link', async () => {
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    renderCase(c, labtech(), {
      'GET /api/signed-urls/image/1': { body: { success: true, url: 'http://storage/original?sig=1' } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Download slide-1.svs' }));
    await waitFor(() => expect(open).toHaveBeenCalledWith('http://storage/original?sig=1', '_blank', 'noopener'));
    open.mockRestore();
    cleanup();
    renderCase(c, centralReader());
    await screen.findByRole('radio', { name: 'slide-1.svs' });
    expect(screen.queryByRole('button', { name: 'Download slide-1.svs' })).toBeNull();
  });
});

describe('the case viewer: frame', () => {
  it('the sidebar has the tabs the role may see, and collapses (remembered)', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    renderCase(
      c,
      makeUserAs('ISC', [
        'AP_CaseViewer_ViewCaseViewer',
        'AP_ImageCaseViewer_ViewOverviewtab',
        'AP_CaseViewer_ViewQueries',
      ]),
    );
    const sidebar = await screen.findByRole('complementary', { name: 'Sidebar' });
    expect(
      within(sidebar)
        .getAllByRole('tab')
        .map((t) => t.textContent),
    ).toEqual(['Overview', 'Queries']);
    fireEvent.click(screen.getByRole('button', { name: 'Sidebar' }));
    expect(screen.queryByRole('complementary', { name: 'Sidebar' })).toBeNull();
    cleanup();
    renderCase(c, labtech());
    await screen.findByRole('button', { name: 'Sidebar' });
    expect(screen.queryByRole('complementary', { name: 'Sidebar' })).toBeNull();
  });

  it('without the overview permission (and not the uploader) there is no sidebar', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    const { calls } = renderCase(
      c,
      makeUserAs('Viewer', ['AP_CaseViewer_ViewCaseViewer', 'AP_CaseViewer_ViewQueries']),
      {
        'GET /api/images/1': { body: makeImage({ id: 1, uploaderId: 99 }) },
      },
    );
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/1')).toBe(true));
    await screen.findByText('Case ENDO-40');
    expect(screen.queryByRole('complementary', { name: 'Sidebar' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Sidebar' })).toBeNull();
  });

  it('a queryId in the URL opens the Queries tab', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    renderCase(c, makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]), {}, { path: '/studies/3/cases/40?queryId=5' });
    const tab = await screen.findByRole('tab', { name: 'Queries' });
    expect(tab.getAttribute('aria-selected')).toBe('true');
  });

  it('close goes back to the study tab it came from; an embedded reader has blank space instead', async () => {
    expect(caseCloseTarget(3, 'images')).toBe('/studies/3/images');
    expect(caseCloseTarget(3, null)).toBe('/studies/3/cases');
    expect(caseCloseTarget(3, '../admin')).toBe('/studies/3/cases');
    const c = makeCase({ status: 'PROCESSED', readers: [reader(7)], images: [image(1, 'READY_FOR_READING')] });
    renderCase(c, centralReader(), {}, { path: '/studies/3/cases/40?tab=images' });
    fireEvent.click(await screen.findByRole('button', { name: 'Close' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/images');
    cleanup();
    renderCase(c, centralReader(), {}, { embedded: true });
    await screen.findByRole('button', { name: 'Mark as Scored' });
    expect(screen.queryByRole('button', { name: 'Close' })).toBeNull();
  });

  it('up to five readers, then an ellipsis', () => {
    expect(readerList([])).toBeNull();
    expect(readerList(['a', 'b'])).toBe('a, b');
    expect(readerList(['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toBe('a, b, c, d, e, …');
  });
});
