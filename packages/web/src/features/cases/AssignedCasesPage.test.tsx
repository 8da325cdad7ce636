import type { AssignedCase } from '@lamina/domain';
import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, describe, it, expect } from 'vitest';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { AssignedCasesPage } from './AssignedCasesPage';
import { scoredLabel } from './CaseReads';

afterEach(() => cleanup());

const row = (id: number, myReadAt: string | null): AssignedCase => ({
  id,
  studyId: 2,
  studyName: 'UC-2',
  procId: `ENDO-${id}`,
  histoProcedureId: null,
  status: 'PROCESSED',
  numberOfImages: 1,
  assignedAt: '2026-11-20T10:00:00.000Z',
  myReadAt,
});

describe('assigned cases (issue 29, item 8)', () => {
  it('shows "Scored {date}" beside the status of the cases the reader scored', async () => {
    const readAt = '2026-11-21T09:30:00.000Z';
    mockFetch({ 'GET /api/cases/assigned': { body: { success: true, cases: [row(5, readAt), row(6, null)] } } });
    renderWithProviders(<AssignedCasesPage />);
    const scored = (await screen.findByRole('link', { name: 'ENDO-5' })).closest('tr')!;
    within(scored).getByText('Processed');
    within(scored).getByText(scoredLabel(readAt));
    const open = screen.getByRole('link', { name: 'ENDO-6' }).closest('tr')!;
    within(open).getByText('Processed');
    expect(within(open).queryByText(/^Scored/)).toBeNull();
  });
});
