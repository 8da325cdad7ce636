import { CASE_MESSAGES, IMAGE_ACTION_MESSAGES, ROLE_PERMISSIONS, type CaseView, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { CaseDetailsPage } from './CaseDetailsPage';

beforeEach(() => setCsrfToken('token'));
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

function renderCase(c: CaseView, user: UserInfo, extra: Parameters<typeof mockFetch>[0] = {}) {
  const mock = mockFetch({
    [`GET /api/cases/${c.id}`]: { body: { success: true, message: '', case: c } },
    'GET /api/studies/3': { body: makeStudy({ id: 3 }) },
    ...extra,
  });
  renderRoutes(
    [
      { path: '/studies/:studyId/cases/:id', element: <CaseDetailsPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: `/studies/3/cases/${c.id}`, user },
  );
  return mock;
}

describe('the case page: QC and scoring (issue 13, first slice)', () => {
  it('a lab technician passes one image’s lab QC after the confirmation', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING'), image(2, 'ISC_QC_PENDING')] });
    const { calls } = renderCase(c, makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]), {
      'PATCH /api/images/1/pass-qc': { body: { success: true, message: IMAGE_ACTION_MESSAGES.passedQc, imageId: 1 } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Pass QC of slide-1.svs' }));
    // Image 2 has passed lab QC already, and ISC QC is not the lab technician's.
    expect(screen.queryByRole('button', { name: 'Pass QC of slide-2.svs' })).toBeNull();
    const dialog = await screen.findByRole('dialog', { name: 'Confirm Image Status Change' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Pass QC' }));
    await waitFor(() =>
      expect(calls.some((c) => c.method === 'PATCH' && c.path === '/api/images/1/pass-qc')).toBe(true),
    );
  });

  it('an assigned reader sees Mark as Scored on a processed case, without subject, site or visit', async () => {
    const c = makeCase({
      status: 'PROCESSED',
      subjectId: null,
      siteId: null,
      visitId: null,
      images: [image(1, 'READY_FOR_READING')],
    });
    const { calls } = renderCase(c, makeUserAs('CR', [...ROLE_PERMISSIONS.CR]), {
      'PATCH /api/cases/40/status/forward': {
        body: { success: true, message: CASE_MESSAGES.scored, case: c },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Mark as Scored' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    expect(within(dialog).getByText(/completes when every assigned reader/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Mark as Scored' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/cases/40/status/forward')).toBe(true));
    fireEvent.click(screen.getByRole('button', { name: 'Show details' }));
    const details = screen.getByLabelText('Case details');
    expect(within(details).getByText('Status')).toBeTruthy();
    expect(within(details).queryByText('Subject ID')).toBeNull();
    expect(within(details).queryByText('Readers')).toBeNull();
    expect(screen.queryByRole('button', { name: /Pass QC of/ })).toBeNull();
  });

  it('the details box is collapsed by default: only the procedure IDs until it is opened', async () => {
    const c = makeCase({ procId: 'ENDO-40', histoProcedureId: 'H-40', subjectId: 'SUBJ-40' });
    renderCase(c, makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]));
    const toggle = await screen.findByRole('button', { name: 'Show details' });
    const details = screen.getByLabelText('Case details');
    expect(
      within(details)
        .getAllByRole('term')
        .map((t) => t.textContent),
    ).toEqual(['Endo Procedure ID', 'Histo Procedure ID']);
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(toggle);
    expect(within(details).getByText('SUBJ-40')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Hide details' }).getAttribute('aria-expanded')).toBe('true');
  });

  it('copies an image’s accession number with a click', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const c = makeCase({ images: [{ ...image(1, 'LAB_QC_PENDING'), accessionNumber: 'ACC-77' }] });
    renderCase(c, makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]));
    fireEvent.click(await screen.findByRole('button', { name: 'ACC-77' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('ACC-77'));
    expect(await screen.findByText('Accession number ACC-77 copied')).toBeTruthy();
  });

  it('edits an image of the case from the case page (with the edit permissions)', async () => {
    const c = makeCase({ images: [{ ...image(1, 'LAB_QC_PENDING'), accessionNumber: 'ACC-1' }] });
    const { calls } = renderCase(c, makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]), {
      'PATCH /api/images/1': { body: { success: true, message: IMAGE_ACTION_MESSAGES.updated, imageId: 1 } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Edit slide-1.svs' }));
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

  it('shows one image of the case beside the details; a radio switches to another', async () => {
    const c = makeCase({ images: [image(1, 'LAB_QC_PENDING'), image(2, 'LAB_QC_PENDING')] });
    const { calls } = renderCase(c, makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]));
    await screen.findByRole('radio', { name: 'View slide-1.svs' });
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/1')).toBe(true));
    expect(screen.getByRole<HTMLInputElement>('radio', { name: 'View slide-1.svs' }).checked).toBe(true);
    fireEvent.click(screen.getByRole('radio', { name: 'View slide-2.svs' }));
    await waitFor(() => expect(calls.some((x) => x.path === '/api/images/2')).toBe(true));
    expect(screen.getByRole<HTMLInputElement>('radio', { name: 'View slide-2.svs' }).checked).toBe(true);
  });

  it('the last reader’s mark completes the case and goes on to the study page', async () => {
    const c = makeCase({ status: 'PROCESSED', images: [image(1, 'READY_FOR_READING')] });
    renderCase(c, makeUserAs('CR', [...ROLE_PERMISSIONS.CR]), {
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
