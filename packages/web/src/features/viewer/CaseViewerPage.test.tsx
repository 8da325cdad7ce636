import {
  CASE_MESSAGES,
  IMAGE_ACTION_MESSAGES,
  ROLE_PERMISSIONS,
  unableToHideImage,
  type CaseImage,
  type CaseAssignment,
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
import { makeQuery } from '../queries/testData';

beforeEach(() => {
  setCsrfToken('token');
  stubResizeObserver();
  window.localStorage.clear();
  window.sessionStorage.clear();
});
afterEach(cleanup);

const image = (id: number, status: CaseImage['status'], overrides: Partial<CaseImage> = {}): CaseImage => ({
  id,
  name: `slide-${id}.svs`,
  status,
  accessionNumber: null,
  biopsyLocation: null,
  uploadedAt: '2026-11-20T10:00:00.000Z',
  processed: true,
  ignored: false,
  inQueryChain: false,
  ...overrides,
});

const reader = (id: number, readAt: string | null = null): CaseAssignment => ({
  role: 'PRIMARY',
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
/** An ISC user: holds the ISC-QC permission (AP_CaseViewer_ViewButtonPassISCQC). */
const isc = () => makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]);
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
    within(dialog).getByText(/completes when every assigned reader/);
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
      'PATCH /api/cases/40/status/forward': { body: { success: true, message: CASE_MESSAGES.scored, case: c } },
    });
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/1')).toBe(true));
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    within(dialog).getByText(/Include or exclude their counts/);
    fireEvent.click(within(dialog).getByRole('radio', { name: 'Include imported AI annotation counts' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Mark as Scored' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/cases/40/status/forward')).toBe(true));
    // The choice is recorded with the read only: never on the image, where another reader would see it.
    expect(calls.find((x) => x.path === '/api/cases/40/status/forward')?.body).toEqual({ includeAiCounts: true });
    expect(calls.some((x) => x.path === '/api/images/1/accept-ai-annotations')).toBe(false);
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

describe('the case viewer: adjudication (issue 30)', () => {
  const adjudicatorRow = (id: number, readAt: string | null = null): CaseAssignment => ({
    ...reader(id, readAt),
    role: 'ADJUDICATOR',
  });

  it('the adjudicator marks a case pending adjudication scored, with the AI question; the case completes', async () => {
    // As the server sends it to the adjudicator (a blinded reader): their own row only.
    const c = makeCase({
      status: 'PENDING_ADJUDICATION',
      readers: [adjudicatorRow(7)],
      images: [image(1, 'READY_FOR_READING')],
    });
    const { calls } = renderCase(c, centralReader(), {
      'GET /api/images/1': {
        body: makeImage({ id: 1, caseId: 40, mldFile: { id: 5, name: 'ses1_4_Result.mld', appSequenceId: '4' } }),
      },
      'PATCH /api/cases/40/status/forward': {
        body: { success: true, message: CASE_MESSAGES.scoredComplete, case: { ...c, status: 'COMPLETED' } },
      },
    });
    expect((await screen.findByTestId('case-status')).textContent).toBe('Pending Adjudication');
    // Staff's callout is not the reader's.
    expect(screen.queryByText(/adjudication rule|Waiting for the adjudicator/)).toBeNull();
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/1')).toBe(true));
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    within(dialog).getByText(/your read as the adjudicator completes the case/);
    fireEvent.click(within(dialog).getByRole('radio', { name: 'Exclude imported AI annotation counts' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Mark as Scored' }));
    await waitFor(() =>
      expect(calls.find((x) => x.path === '/api/cases/40/status/forward')?.body).toEqual({ includeAiCounts: false }),
    );
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3');
  });

  it('no Mark as Scored of a case pending adjudication for a primary reader, nor for an adjudicator who has marked', async () => {
    renderCase(makeCase({ status: 'PENDING_ADJUDICATION', readers: [reader(7)] }), centralReader());
    await screen.findByLabelText('Case details');
    expect(screen.queryByRole('button', { name: 'Mark as Scored' })).toBeNull();
    cleanup();
    renderCase(
      makeCase({ status: 'PENDING_ADJUDICATION', readers: [adjudicatorRow(7, '2026-11-24T10:00:00Z')] }),
      centralReader(),
    );
    await screen.findByLabelText('Case details');
    expect(screen.queryByRole('button', { name: 'Mark as Scored' })).toBeNull();
  });

  it('the details name the primary readers under CR Assigned and the adjudicator on a line of their own', async () => {
    const c = makeCase({
      status: 'PENDING_ADJUDICATION',
      readers: [reader(1, '2026-11-24T10:00:00Z'), reader(2, '2026-11-24T11:00:00Z'), adjudicatorRow(3, null)],
    });
    renderCase(c, isc());
    const details = await screen.findByLabelText('Case details');
    fireEvent.click(within(details).getByRole('button', { name: 'Show details' }));
    const value = (label: string) =>
      within(details)
        .getAllByText(label)
        .find((element) => element.tagName === 'DT')?.nextElementSibling?.textContent;
    expect(value('CR Assigned')).toBe('reader1, reader2');
    expect(value('Adjudicator')).toBe('reader3');
  });

  it('the ISC sees the status in its colour and the callout with Assign adjudicator, and is not offered Mark as Scored', async () => {
    const c = makeCase({
      status: 'PENDING_ADJUDICATION',
      readers: [reader(1, '2026-11-24T10:00:00Z'), reader(2, '2026-11-24T11:00:00Z')],
    });
    renderCase(c, isc());
    const status = await screen.findByTestId('case-status');
    expect(status.textContent).toBe('Pending Adjudication');
    expect(status.classList.contains('bp6-intent-warning')).toBe(true);
    const details = screen.getByLabelText('Case details');
    // Shown with the details collapsed.
    within(details).getByText('The readers disagree by the study’s adjudication rule: assign an adjudicator.');
    within(details).getByRole('button', { name: 'Assign adjudicator' });
    expect(screen.queryByRole('button', { name: 'Mark as Scored' })).toBeNull();
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
    within(details).getByText('SUBJ-40');
    within(details).getByText('reader1, reader2, reader3, reader4, reader5, …');
    expect(screen.getByRole('button', { name: 'Hide details' }).getAttribute('aria-expanded')).toBe('true');
  });

  it('copies the image’s accession number with a click', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const c = makeCase({ images: [{ ...image(1, 'LAB_QC_PENDING'), accessionNumber: 'ACC-77' }] });
    renderCase(c, labtech());
    fireEvent.click(await screen.findByRole('button', { name: 'ACC-77' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('ACC-77'));
    await screen.findByText('Accession number ACC-77 copied');
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

describe('the case viewer: Show to reader / Hide from reader', () => {
  const queried = (overrides: Partial<CaseImage> = {}) =>
    image(1, 'ISC_QC_PENDING', { inQueryChain: true, ...overrides });

  it('is offered with the ISC-QC permission, and only for an image in a query chain', async () => {
    const c = makeCase({ status: 'PENDING_QC', images: [queried(), image(2, 'ISC_QC_PENDING')] });
    renderCase(c, isc());
    await screen.findByRole('button', { name: 'Hide from reader' });
    // Image 2 is in no query chain: the server would refuse it, so nothing is offered.
    fireEvent.click(screen.getByRole('radio', { name: 'slide-2.svs' }));
    await waitFor(() =>
      expect(screen.getByRole<HTMLInputElement>('radio', { name: 'slide-2.svs' }).checked).toBe(true),
    );
    expect(screen.queryByRole('button', { name: /from reader|to reader/ })).toBeNull();
    cleanup();
    // A lab technician lacks the ISC-QC permission, even for the image in a query chain.
    renderCase(c, labtech());
    await screen.findByLabelText('Image details');
    expect(screen.queryByRole('button', { name: /from reader|to reader/ })).toBeNull();
  });

  it('hides the image: the call, the server’s message, the case and image read again, the label flips', async () => {
    const c = makeCase({ status: 'PENDING_QC', images: [queried()] });
    const hidden = { ...c, images: [queried({ ignored: true })] };
    const { calls } = renderCase(c, isc(), {
      [`GET /api/cases/${c.id}`]: [
        { body: { success: true, message: '', case: c } },
        { body: { success: true, message: '', case: hidden } },
      ],
      'PATCH /api/images/1/toggle-image-visibility': {
        body: { success: true, message: IMAGE_ACTION_MESSAGES.hiddenFromReaders, imageId: 1 },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Hide from reader' }));
    await screen.findByText(IMAGE_ACTION_MESSAGES.hiddenFromReaders);
    await screen.findByRole('button', { name: 'Show to reader' });
    screen.getByText('Hidden from readers');
    const patches = calls.filter((x) => x.method === 'PATCH');
    expect(patches.map((x) => x.path)).toEqual(['/api/images/1/toggle-image-visibility']);
    // The page reloads: the case and the image are fetched again.
    expect(calls.filter((x) => x.path === '/api/cases/40').length).toBeGreaterThanOrEqual(2);
    await waitFor(() => expect(calls.filter((x) => x.path === '/api/images/1').length).toBeGreaterThanOrEqual(2));
  });

  it('a refusal shows the server’s message', async () => {
    const c = makeCase({ status: 'PENDING_QC', images: [queried({ ignored: true })] });
    const message = `${unableToHideImage(1)}. ${IMAGE_ACTION_MESSAGES.notInQueryChain}`;
    renderCase(c, isc(), {
      'PATCH /api/images/1/toggle-image-visibility': { status: 409, body: { success: false, message } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Show to reader' }));
    // Among the alerts (the image's own 'hidden from readers' notice is one): the refusal's.
    await waitFor(() =>
      expect(screen.getAllByRole('alert').map((a) => a.textContent)).toContainEqual(expect.stringContaining(message)),
    );
  });
});

describe('the case viewer: Add comment', () => {
  it('adds a comment on the case (noting the image shown); the case shows it as the last comment', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    const commented = {
      ...c,
      lastCaseComment: { text: 'Fold at the lower edge', imageId: 1, by: 'Lab Tech', createdAt: c.createdAt },
    };
    const { calls } = renderCase(c, labtech(), {
      [`GET /api/cases/${c.id}`]: [
        { body: { success: true, message: '', case: c } },
        { body: { success: true, message: '', case: commented } },
      ],
      'PATCH /api/cases/40/comment': {
        body: { success: true, message: CASE_MESSAGES.commentAdded, case: commented },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Add comment' }));
    const form = screen.getByRole('form', { name: 'Add comment' });
    const save = within(form).getByRole<HTMLButtonElement>('button', { name: 'Save' });
    expect(save.disabled).toBe(true);
    const text = within(form).getByLabelText('Comment');
    expect(text.getAttribute('maxlength')).toBe('1000');
    fireEvent.change(text, { target: { value: '  Fold at the lower edge ' } });
    fireEvent.click(save);
    await waitFor(() =>
      expect(calls.find((x) => x.method === 'PATCH')).toMatchObject({
        path: '/api/cases/40/comment',
        body: { caseId: 40, imageId: 1, comment: 'Fold at the lower edge' },
      }),
    );
    await screen.findByText(CASE_MESSAGES.commentAdded);
    expect(screen.queryByRole('form', { name: 'Add comment' })).toBeNull();
    // The details open on the new last comment.
    const details = screen.getByLabelText('Case details');
    await within(details).findByText(/Fold at the lower edge/);
  });

  it('a refused comment shows the server’s message in a red callout; Cancel closes the form', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    const message = `${CASE_MESSAGES.unableToComment(40)}. The image is not in the case`;
    renderCase(c, labtech(), {
      'PATCH /api/cases/40/comment': { status: 400, body: { success: false, message } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Add comment' }));
    const form = screen.getByRole('form', { name: 'Add comment' });
    fireEvent.change(within(form).getByLabelText('Comment'), { target: { value: 'A note' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    const alert = await within(form).findByRole('alert');
    expect(alert.textContent).toContain(message);
    expect(alert.className).toContain('bp6-intent-danger');
    fireEvent.click(within(form).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'Add comment' })).toBeNull();
    screen.getByRole('button', { name: 'Add comment' });
  });

  it('is not offered without a permission to open the case', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    renderCase(c, makeUserAs('Viewer', ['AP_ImageCaseViewer_ViewOverviewtab']));
    await screen.findByLabelText('Case details');
    expect(screen.queryByRole('button', { name: 'Add comment' })).toBeNull();
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
    // The tabs come once the slide's first frame is drawn (before, the sidebar's box and a spinner).
    await screen.findAllByRole('tab');
    const sidebar = screen.getByRole('complementary', { name: 'Sidebar' });
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

  it('the Queries tab shows a red dot when a query of the case or the shown image waits for the user', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING')] });
    renderCase(c, labtech(), {
      'GET /api/queries/case/40': { body: { success: true, queries: [] } },
      'GET /api/queries/image/1': {
        body: { success: true, queries: [makeQuery({ actions: ['resolve', 'comment'] })] },
      },
    });
    const tab = await screen.findByRole('tab', { name: /Queries/ });
    await within(tab).findByLabelText('needs attention');
    fireEvent.click(tab);
    await screen.findByRole('article', { name: 'Query 5' });
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
