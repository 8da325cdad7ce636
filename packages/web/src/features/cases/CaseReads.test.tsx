import { CASE_MESSAGES, ROLE_PERMISSIONS, type CaseAssignment } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { formatDate } from '../../util/formatDate';
import { CaseReads, reopenReadOffered, scoredLabel } from './CaseReads';

beforeEach(() => setCsrfToken('token'));
afterEach(() => cleanup());

const READ_AT = '2026-03-04T17:06:00.000Z';
const reader = (id: number, name: string, readAt: string | null): CaseAssignment => ({
  role: 'PRIMARY',
  id,
  username: name.toLowerCase(),
  firstName: name,
  lastName: null,
  displayName: name,
  numReadCases: 0,
  numTotalCases: 1,
  readAt,
});
const CASE = makeCase({
  id: 41,
  status: 'COMPLETED',
  readers: [reader(7, 'Rita', READ_AT), reader(8, 'Ravi', null)],
});

describe('the case’s reads (issue 29, items 8 and 9)', () => {
  it('"Scored {date}" in the lists’ date format', () => {
    expect(scoredLabel(READ_AT)).toBe(`Scored ${formatDate(READ_AT)}`);
    expect(scoredLabel(new Date().toISOString())).toMatch(/^Scored \d{1,2}:\d{2}/);
  });

  it('Reopen read is offered to the roles that may revert status, while the case is being read or read', () => {
    expect(reopenReadOffered([...ROLE_PERMISSIONS.LabTech], { status: 'COMPLETED' })).toBe(true);
    expect(reopenReadOffered([...ROLE_PERMISSIONS.LabTech], { status: 'PENDING_QC' })).toBe(false);
    expect(reopenReadOffered([...ROLE_PERMISSIONS.CR], { status: 'COMPLETED' })).toBe(false);
  });

  it('reopens one scored reader’s read with a reason', async () => {
    const { calls } = mockFetch({
      'PATCH /api/cases/41/reads/7/reopen': {
        body: {
          success: true,
          message: CASE_MESSAGES.readReopened,
          case: { ...CASE, status: 'PROCESSED', readers: [reader(7, 'Rita', null), reader(8, 'Ravi', null)] },
        },
      },
    });
    renderWithProviders(<CaseReads c={CASE} actions={[...ROLE_PERMISSIONS.LabTech]} />);
    const list = screen.getByRole('list', { name: 'Reads' });
    within(list).getByText(scoredLabel(READ_AT));
    within(list).getByText('Not scored');
    expect(screen.queryByRole('button', { name: 'Reopen Ravi’s read' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Reopen Rita’s read' }));
    const dialog = await screen.findByRole('dialog', { name: 'Reopen read' });
    within(dialog).getByText(/The case returns to Processed/);
    const confirm = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Reopen read' });
    expect(confirm.disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'HPF 2 redrawn' } });
    fireEvent.click(confirm);
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ reasonForChange: 'HPF 2 redrawn' }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Reopen read' })).toBeNull());
  });

  it('a reader sees no Reopen action', () => {
    renderWithProviders(<CaseReads c={CASE} actions={[...ROLE_PERMISSIONS.CR]} />);
    expect(screen.queryByRole('button', { name: /Reopen/ })).toBeNull();
  });
});
