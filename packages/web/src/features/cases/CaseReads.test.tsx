import { ADJUDICATION_TEXT, CASE_MESSAGES, ROLE_PERMISSIONS, type CaseAssignment } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { formatDate } from '../../util/formatDate';
import { AdjudicationCallout, CaseReads, reopenConsequence, reopenReadOffered, scoredLabel } from './CaseReads';

beforeEach(() => setCsrfToken('token'));
afterEach(() => cleanup());

const READ_AT = '2026-03-04T17:06:00.000Z';
const reader = (
  id: number,
  name: string,
  readAt: string | null,
  role: CaseAssignment['role'] = 'PRIMARY',
): CaseAssignment => ({
  role,
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

describe('adjudication in the case’s reads (issue 30)', () => {
  const rita = reader(7, 'Rita', READ_AT);
  const ravi = reader(8, 'Ravi', READ_AT);
  const ada = reader(9, 'Ada', null, 'ADJUDICATOR');
  const pending = makeCase({ id: 41, status: 'PENDING_ADJUDICATION', readers: [rita, ravi] });
  const assigned = makeCase({ ...pending, readers: [rita, ravi, ada] });
  const adjudicated = makeCase({ ...pending, status: 'COMPLETED', readers: [rita, ravi, { ...ada, readAt: READ_AT }] });
  const isc = [...ROLE_PERMISSIONS.ISC];
  const studyReaders = {
    'GET /api/studies/3/users': {
      body: { success: true, readers: [rita, ravi, reader(9, 'Ada', null), reader(10, 'Noa', null)] },
    },
  };

  it('the adjudicator’s row is tagged Adjudicator; the primary readers’ are not', () => {
    renderWithProviders(<CaseReads c={assigned} actions={isc} />);
    const rows = within(screen.getByRole('list', { name: 'Reads' })).getAllByRole('listitem');
    expect(rows.map((row) => within(row).queryByText('Adjudicator') !== null)).toEqual([false, false, true]);
  });

  it('what reopening a read does to the case', () => {
    expect(reopenConsequence(adjudicated, adjudicated.readers[2]!)).toBe(ADJUDICATION_TEXT.reopenAdjudicatorRead);
    expect(ADJUDICATION_TEXT.reopenAdjudicatorRead).toBe('The case returns to Pending Adjudication.');
    expect(reopenConsequence(adjudicated, rita)).toBe(ADJUDICATION_TEXT.reopenPrimaryRead);
    expect(reopenConsequence(assigned, rita)).toBe('The case returns to Processed and its adjudicator is removed.');
    expect(reopenConsequence(pending, rita)).toBe('The case returns to Processed.');
    expect(reopenConsequence({ ...CASE, status: 'COMPLETED' }, rita)).toBe('The case returns to Processed.');
    expect(reopenConsequence({ ...CASE, status: 'PROCESSED' }, rita)).toBeNull();
  });

  it('the reopen dialog of the adjudicator’s read says the case returns to Pending Adjudication', async () => {
    renderWithProviders(<CaseReads c={adjudicated} actions={isc} />);
    fireEvent.click(screen.getByRole('button', { name: 'Reopen Ada’s read' }));
    const dialog = await screen.findByRole('dialog', { name: 'Reopen read' });
    within(dialog).getByText(/The case returns to Pending Adjudication\./);
    cleanup();
    renderWithProviders(<CaseReads c={adjudicated} actions={isc} />);
    fireEvent.click(screen.getByRole('button', { name: 'Reopen Rita’s read' }));
    within(await screen.findByRole('dialog', { name: 'Reopen read' })).getByText(
      /The case returns to Processed and its adjudicator is removed\./,
    );
  });

  it('nothing while the case is not pending adjudication', () => {
    const { container } = renderWithProviders(<AdjudicationCallout c={adjudicated} actions={isc} />);
    expect(container.textContent).toBe('');
  });

  it('staff without the permission read why the case waits, with no action', () => {
    renderWithProviders(<AdjudicationCallout c={pending} actions={[...ROLE_PERMISSIONS.LabTech]} />);
    screen.getByText(ADJUDICATION_TEXT.awaitingAssignment);
    expect(screen.queryByRole('button', { name: /adjudicator/ })).toBeNull();
    cleanup();
    renderWithProviders(<AdjudicationCallout c={assigned} actions={[...ROLE_PERMISSIONS.PM]} />);
    screen.getByText('Waiting for the adjudicator Ada');
    expect(screen.queryByRole('button', { name: /adjudicator/ })).toBeNull();
  });

  it('the ISC assigns an adjudicator among the study’s readers who do not read the case; no reason needed', async () => {
    const { calls } = mockFetch({
      ...studyReaders,
      'PATCH /api/cases/41/adjudicator': {
        body: { success: true, message: CASE_MESSAGES.adjudicatorAssigned, case: assigned },
      },
    });
    renderWithProviders(<AdjudicationCallout c={pending} actions={isc} />);
    screen.getByText('The readers disagree by the study’s adjudication rule: assign an adjudicator.');
    fireEvent.click(screen.getByRole('button', { name: 'Assign adjudicator' }));
    const dialog = await screen.findByRole('dialog', { name: 'Assign adjudicator' });
    const list = within(dialog).getByRole('menu', { name: 'Readers of the study' });
    await within(list).findByText('Ada');
    // The primary readers are not offered.
    expect(
      within(list)
        .getAllByRole('menuitem')
        .map((item) => item.querySelector('.bp6-text-overflow-ellipsis')?.textContent),
    ).toEqual(['Ada', 'Noa']);
    within(dialog).getByText('(optional)');
    const submit = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Assign adjudicator' });
    expect(submit.disabled).toBe(true);
    fireEvent.click(within(list).getByText('Ada'));
    within(within(dialog).getByLabelText('Chosen adjudicator')).getByText('Ada');
    expect(submit.disabled).toBe(false);
    fireEvent.click(submit);
    await waitFor(() => expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ readerId: 9 }));
    expect(calls.find((c) => c.method === 'PATCH')?.path).toBe('/api/cases/41/adjudicator');
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Assign adjudicator' })).toBeNull());
    await screen.findByText(CASE_MESSAGES.adjudicatorAssigned);
  });

  it('changing the adjudicator needs a reason; the current one is not offered; a refusal shows in the dialog', async () => {
    const refusal = `${CASE_MESSAGES.unableToAssignAdjudicator} ${CASE_MESSAGES.adjudicatorNotInStudy}`;
    const { calls } = mockFetch({
      ...studyReaders,
      'PATCH /api/cases/41/adjudicator': { status: 400, body: { success: false, message: refusal } },
    });
    renderWithProviders(<AdjudicationCallout c={assigned} actions={isc} />);
    screen.getByText('Waiting for the adjudicator Ada');
    fireEvent.click(screen.getByRole('button', { name: 'Change adjudicator' }));
    const dialog = await screen.findByRole('dialog', { name: 'Change adjudicator' });
    const list = within(dialog).getByRole('menu', { name: 'Readers of the study' });
    fireEvent.click(await within(list).findByText('Noa'));
    expect(within(list).queryByText('Ada')).toBeNull();
    within(dialog).getByText('(required)');
    const submit = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Change adjudicator' });
    expect(submit.disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: '  Ada is away  ' } });
    expect(submit.disabled).toBe(false);
    fireEvent.click(submit);
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ readerId: 10, reasonForChange: 'Ada is away' }),
    );
    expect((await within(dialog).findByRole('alert')).textContent).toBe(refusal);
    screen.getByRole('dialog', { name: 'Change adjudicator' });
  });
});
