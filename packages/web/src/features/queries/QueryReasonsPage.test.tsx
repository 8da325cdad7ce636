import { QUERY_MESSAGES } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeUser } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { QueryReasonsPage, reasonTree } from './QueryReasonsPage';
import { makeReason } from './testData';

beforeEach(() => setCsrfToken('token'));
afterEach(cleanup);

const SYSADMIN = makeUser({
  isSystemAdmin: true,
  workAsRole: { id: 1, name: 'SystemAdmin', displayName: 'System Admin' },
});

const REASONS = [
  makeReason({ id: 11, reasonText: 'Blurry / out of focus', sortOrder: 0, usedBy: 2 }),
  makeReason({ id: 12, parentId: 11, reasonText: 'Whole slide', sortOrder: 0 }),
  makeReason({ id: 13, reasonText: 'Wrong stain', sortOrder: 1, active: false }),
  makeReason({ id: 14, reasonText: 'Other', sortOrder: 2 }),
  makeReason({ id: 21, objectType: 'CASE', reasonText: 'Visit ID mismatch' }),
  makeReason({ id: 31, withRoleId: 4, reasonText: 'Label does not match' }),
];

function renderPage(replies: Parameters<typeof mockFetch>[0] = {}) {
  const mock = mockFetch({ 'GET /api/query-reasons': { body: { success: true, reasons: REASONS } }, ...replies });
  renderWithProviders(<QueryReasonsPage />, { user: SYSADMIN });
  return mock;
}

const saved = (reason = REASONS[0]) => ({ body: { success: true, message: QUERY_MESSAGES.reasonSaved, reason } });

describe('the query reason catalogue', () => {
  it('shows the tree of the chosen object type and role, children under their parent, inactive marked', async () => {
    renderPage();
    // The first role that can be queried, image queries.
    fireEvent.change(await screen.findByLabelText('Role queried'), { target: { value: '9' } });
    const tree = await screen.findByRole('list', { name: 'Reasons' });
    const top = within(tree)
      .getAllByRole('listitem')
      .filter((li) => li.parentElement === tree)
      .map((li) => li.querySelector('.lamina-reason-text')?.textContent);
    expect(top).toEqual(['Blurry / out of focus', 'Wrong stain', 'Other']);
    const children = within(screen.getByRole('list', { name: 'Sub-reasons of Blurry / out of focus' }));
    children.getByText('Whole slide');
    within(tree).getByText('Inactive');
    within(tree).getByText('2 queries');
    fireEvent.change(screen.getByLabelText('Kind of query'), { target: { value: 'CASE' } });
    await screen.findByText('Visit ID mismatch');
    expect(screen.queryByText('Blurry / out of focus')).toBeNull();
  });

  it('adds a reason and a sub-reason', async () => {
    const { calls } = renderPage({ 'POST /api/query-reasons': { status: 201, body: saved().body } });
    fireEvent.change(await screen.findByLabelText('Role queried'), { target: { value: '9' } });
    fireEvent.click(await screen.findByRole('button', { name: 'Add a sub-reason to Blurry / out of focus' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add a sub-reason to Blurry / out of focus' });
    expect(within(dialog).getByRole('button', { name: 'Add' }).hasAttribute('disabled')).toBe(true);
    fireEvent.change(within(dialog).getByLabelText('Reason text'), { target: { value: ' Edge only ' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      objectType: 'IMAGE',
      withRoleId: 9,
      parentId: 11,
      reasonText: 'Edge only',
    });
  });

  it('renames, moves and deactivates with an optional reason for change', async () => {
    const { calls } = renderPage({
      'PATCH /api/query-reasons/14': saved(),
      'PATCH /api/query-reasons/12': saved(),
      'PATCH /api/query-reasons/11': saved(),
    });
    fireEvent.change(await screen.findByLabelText('Role queried'), { target: { value: '9' } });
    fireEvent.click(await screen.findByRole('button', { name: 'Rename Other' }));
    let dialog = await screen.findByRole('dialog', { name: 'Rename reason' });
    fireEvent.change(within(dialog).getByLabelText('Reason text'), { target: { value: 'Something else' } });
    fireEvent.change(within(dialog).getByLabelText('Reason for change (optional)'), { target: { value: 'Clearer' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.path === '/api/query-reasons/14')?.body).toEqual({
      reasonText: 'Something else',
      reasonForChange: 'Clearer',
    });

    fireEvent.click(screen.getByRole('button', { name: 'Move Whole slide' }));
    dialog = await screen.findByRole('dialog', { name: 'Move reason' });
    fireEvent.change(within(dialog).getByLabelText('Parent'), { target: { value: '' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.path === '/api/query-reasons/12')?.body).toEqual({ parentId: null });

    fireEvent.click(screen.getByRole('button', { name: 'Deactivate Blurry / out of focus' }));
    dialog = await screen.findByRole('dialog', { name: 'Deactivate reason' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Deactivate' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.path === '/api/query-reasons/11')?.body).toEqual({ active: false });
  });

  it('shows the server’s refusal in a red callout and keeps the dialog open', async () => {
    renderPage({
      'POST /api/query-reasons': { status: 409, body: { success: false, message: QUERY_MESSAGES.reasonDuplicate } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Add reason' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add a reason' });
    fireEvent.change(within(dialog).getByLabelText('Reason text'), { target: { value: 'Other' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe(QUERY_MESSAGES.reasonDuplicate);
  });

  it('builds the tree per object type and role', () => {
    expect(reasonTree(REASONS, 'IMAGE', 4).map((t) => t.reason.reasonText)).toEqual(['Label does not match']);
    expect(reasonTree(REASONS, 'IMAGE', 9)[0]?.children.map((c) => c.id)).toEqual([12]);
  });
});
