import { QUERY_MESSAGES } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { QueriesTab, type QueriedImage } from './QueriesTab';
import { makeMetadata, makeQuery } from './testData';
import { clampFollowUp, createQueryBody, initialWizard, reasonsFor } from './wizardState';

beforeEach(() => setCsrfToken('token'));
afterEach(cleanup);

const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

function renderTab(actions: string[], options: { caseId?: number | null; image?: QueriedImage } = {}) {
  const mock = mockFetch({
    'GET /api/queries/case/40': { body: { success: true, queries: [] } },
    'GET /api/queries/image/1': { body: { success: true, queries: [] } },
    'GET /api/queries/metadata': { body: makeMetadata() },
    'POST /api/queries/new': { body: { success: true, message: QUERY_MESSAGES.created, query: makeQuery({ id: 77 }) } },
  });
  renderWithProviders(
    <QueriesTab
      studyId={3}
      caseId={options.caseId === undefined ? 40 : options.caseId}
      image={options.image ?? { id: 1, name: 'slide-1.svs', caseId: 40 }}
      onImageReplaced={() => undefined}
    />,
    { user: makeUserAs('CR', ['AP_CaseViewer_ViewQueries', ...actions]) },
  );
  return mock;
}

const wizard = () => within(screen.getByRole('region', { name: 'New query' }));
const click = (name: string) => fireEvent.click(wizard().getByRole('button', { name }));

describe('the create-query wizard', () => {
  it('New query shows only with the permission to open a case or an image query', async () => {
    renderTab([]);
    await screen.findByText('No queries');
    expect(screen.queryByRole('button', { name: 'New query' })).toBeNull();
    cleanup();
    renderTab(['Q_IssueCaseQuery'], { caseId: null });
    await screen.findByText('No queries');
    // The image viewer has no case to query.
    expect(screen.queryByRole('button', { name: 'New query' })).toBeNull();
    cleanup();
    renderTab(['Q_IssueImageQueryStudy'], { caseId: null });
    await screen.findByRole('button', { name: 'New query' });
  });

  it('walks the four steps and sends the query: category OTHER, follow-up 14 days by default', async () => {
    const { calls } = renderTab(['Q_IssueCaseQuery', 'Q_IssueImageQueryStudy']);
    fireEvent.click(await screen.findByRole('button', { name: 'New query' }));
    await wizard().findByText(/Step 1 of 4/);
    // Step 1: the case or the image shown, and the role.
    fireEvent.click(wizard().getByLabelText('The image slide-1.svs'));
    expect(wizard().getByRole('button', { name: 'Next' }).hasAttribute('disabled')).toBe(true);
    fireEvent.click(wizard().getByLabelText('Lab Technician'));
    click('Next');
    // Step 2: active reasons only, alphabetical, Other last; the sub-reason; comments mandatory.
    await wizard().findByText(/Step 2 of 4/);
    const reason = wizard().getByLabelText<HTMLSelectElement>('Reason');
    expect([...reason.options].map((o) => o.textContent)).toEqual([
      'Choose a reason…',
      'Blurry / out of focus',
      'Incorrect file name',
      'Other',
    ]);
    click('Next');
    wizard().getByText('Choose a reason');
    wizard().getByText(QUERY_MESSAGES.commentsMandatory);
    fireEvent.change(reason, { target: { value: '11' } });
    fireEvent.change(wizard().getByLabelText('Comments'), { target: { value: 'Out of focus at 20x' } });
    click('Next');
    wizard().getByText('Choose a sub-reason');
    fireEvent.change(wizard().getByLabelText('Sub-reason'), { target: { value: '14' } });
    click('Next');
    // Step 3: 14 days from today.
    await wizard().findByText(/Step 3 of 4/);
    expect(wizard().getByLabelText<HTMLInputElement>('Follow up on').value).toBe(day(14));
    click('Next');
    // Step 4: confirm, Back keeps what was chosen.
    await wizard().findByText(/Step 4 of 4/);
    const summary = within(wizard().getByLabelText('Confirm the query'));
    summary.getByText('Blurry / out of focus – Part of the tissue');
    summary.getByText('Lab Technician');
    click('Back');
    await wizard().findByText(/Step 3 of 4/);
    click('Next');
    click('Submit');
    await waitFor(() => expect(screen.queryByRole('region', { name: 'New query' })).toBeNull());
    expect(calls.find((c) => c.path === '/api/queries/new')?.body).toEqual({
      queryObjectType: 'IMAGE',
      objectId: 1,
      studyId: 3,
      caseId: 40,
      organizationId: null,
      category: 'OTHER',
      categoryOtherText: '',
      followUpInDays: 14,
      withRoleId: 9,
      responseOptionId: 11,
      childResponseOptionId: 14,
      commentText: 'Out of focus at 20x',
    });
  });

  it('a query to a reading role names one reader of the case (issue 26)', async () => {
    const reader = (id: number, name: string) => ({
      role: 'PRIMARY' as const,
      id,
      username: `${name.toLowerCase()}@example.org`,
      firstName: name,
      lastName: 'Reader',
      displayName: `${name} Reader`,
      numReadCases: 0,
      numTotalCases: 1,
      readAt: null,
    });
    const { calls } = mockFetch({
      'GET /api/queries/case/40': { body: { success: true, queries: [] } },
      'GET /api/queries/metadata': {
        body: makeMetadata({
          roles: [
            { id: 4, name: 'DM', displayName: 'Data Manager' },
            { id: 8, name: 'CR', displayName: 'Central Reader' },
          ],
          caseReasons: [{ withRoleId: 8, values: makeMetadata().caseReasons[0]!.values }],
        }),
      },
      'GET /api/cases/40': {
        body: { success: true, message: '', case: makeCase({ readers: [reader(31, 'Ann'), reader(32, 'Bob')] }) },
      },
      'POST /api/queries/new': {
        body: { success: true, message: QUERY_MESSAGES.created, query: makeQuery({ id: 78 }) },
      },
    });
    renderWithProviders(<QueriesTab studyId={3} caseId={40} image={null} onImageReplaced={() => undefined} />, {
      user: makeUserAs('ISC', ['AP_CaseViewer_ViewQueries', 'Q_IssueCaseQuery']),
    });
    fireEvent.click(await screen.findByRole('button', { name: 'New query' }));
    fireEvent.click(await wizard().findByLabelText('Data Manager'));
    expect(wizard().queryByLabelText('Reader')).toBeNull(); // other roles are queried as a role
    fireEvent.click(wizard().getByLabelText('Central Reader'));
    const select = await wizard().findByLabelText<HTMLSelectElement>('Reader');
    expect([...select.options].map((o) => o.textContent)).toEqual(['Choose the reader…', 'Ann Reader', 'Bob Reader']);
    click('Next');
    wizard().getByText('Choose the reader to query');
    fireEvent.change(select, { target: { value: '32' } });
    click('Next');
    await wizard().findByText(/Step 2 of 4/);
    fireEvent.change(wizard().getByLabelText('Reason'), { target: { value: '21' } });
    fireEvent.change(wizard().getByLabelText('Comments'), { target: { value: 'Please re-check HPF 2' } });
    click('Next');
    click('Next');
    await wizard().findByText(/Step 4 of 4/);
    within(wizard().getByLabelText('Confirm the query')).getByText('Central Reader · Bob Reader');
    click('Submit');
    await waitFor(() => expect(screen.queryByRole('region', { name: 'New query' })).toBeNull());
    expect(calls.find((c) => c.path === '/api/queries/new')?.body).toMatchObject({ withRoleId: 8, withUserId: 32 });
  });

  it('the reset icon starts over; Cancel on step 1 closes the wizard', async () => {
    renderTab(['Q_IssueImageQueryStudy'], { caseId: null });
    fireEvent.click(await screen.findByRole('button', { name: 'New query' }));
    fireEvent.click(await wizard().findByLabelText('Data Manager'));
    click('Next');
    await wizard().findByText(/Step 2 of 4/);
    click('Reset');
    await wizard().findByText(/Step 1 of 4/);
    expect(wizard().getByLabelText<HTMLInputElement>('Data Manager').checked).toBe(false);
    click('Cancel');
    expect(screen.queryByRole('region', { name: 'New query' })).toBeNull();
    screen.getByRole('button', { name: 'New query' });
  });

  it('a refused query shows the server’s message and the wizard stays on step 4', async () => {
    const message = `${QUERY_MESSAGES.unableToCreate('CASE', 40)}: ${QUERY_MESSAGES.roleNotQueryable}`;
    mockFetch({
      'GET /api/queries/case/40': { body: { success: true, queries: [] } },
      'GET /api/queries/image/1': { body: { success: true, queries: [] } },
      'GET /api/queries/metadata': { body: makeMetadata() },
      'POST /api/queries/new': { status: 403, body: { success: false, message } },
    });
    renderWithProviders(<QueriesTab studyId={3} caseId={40} image={null} onImageReplaced={() => undefined} />, {
      user: makeUserAs('ISC', ['AP_CaseViewer_ViewQueries', 'Q_IssueCaseQuery']),
    });
    fireEvent.click(await screen.findByRole('button', { name: 'New query' }));
    fireEvent.click(await wizard().findByLabelText('Data Manager'));
    click('Next');
    fireEvent.change(wizard().getByLabelText('Reason'), { target: { value: '21' } });
    fireEvent.change(wizard().getByLabelText('Comments'), { target: { value: 'Visit 2, not 3' } });
    click('Next');
    click('Next');
    click('Submit');
    expect((await wizard().findByRole('alert')).textContent).toBe(message);
    wizard().getByText(/Step 4 of 4/);
  });
});

describe('the wizard’s rules', () => {
  const now = new Date();
  it('starts at step 1 with the follow-up 14 days out; a past date becomes today', () => {
    const state = initialWizard('CASE', now);
    expect(state.step).toBe(1);
    expect(state.followUp).toBe(day(14));
    expect(clampFollowUp('2001-01-01', now)).toBe(day(0));
    expect(clampFollowUp(day(5), now)).toBe(day(5));
  });

  it('offers the reasons of the chosen role and object type', () => {
    expect(reasonsFor(makeMetadata(), 'CASE', 4).map((r) => r.reasonText)).toEqual(['Visit ID mismatch']);
    expect(reasonsFor(makeMetadata(), 'IMAGE', null)).toEqual([]);
  });

  it('sends an empty case as null and no comment as null', () => {
    const body = createQueryBody(
      { ...initialWizard('IMAGE', now), withRoleId: 9, reasonId: 16 },
      { studyId: 3, objectId: 1, caseId: null },
      now,
    );
    expect(body).toMatchObject({ caseId: null, commentText: null, childResponseOptionId: null, followUpInDays: 14 });
  });
});
