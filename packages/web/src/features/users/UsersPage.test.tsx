import { USER_MESSAGES, type UserInfo, type UserListRow } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeUserAs, makeUserRow } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { UsersPage } from './UsersPage';

beforeEach(() => setCsrfToken('token'));
afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const MANAGER = makeUserAs('StudyAdmin', ['UM_ViewUsersPage']);
const SYSADMIN = makeUserAs('SystemAdmin', ['UM_ViewUsersPage'], { isSystemAdmin: true });

function renderUsers(users: UserListRow[], me: UserInfo = MANAGER, extra: Parameters<typeof mockFetch>[0] = {}) {
  const mock = mockFetch({
    'GET /api/users': { body: { success: true, users, total: users.length } },
    'GET /api/organizations': { body: [{ id: 1, name: 'Lamina Labs', groupEmail: null }] },
    ...extra,
  });
  renderRoutes(
    [
      { path: '/users', element: <UsersPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: '/users', user: me },
  );
  return mock;
}

describe('users list (doc 1 §2.7)', () => {
  it('shows the columns, a dash for a missing login, and the registered tick or cross', async () => {
    renderUsers([
      makeUserRow(),
      makeUserRow({ id: 12, username: 'new@example.org', registered: false, firstName: null }),
    ]);
    await screen.findByText('reader2@example.org');
    const table = screen.getByRole('table', { name: 'Users' });
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((th) => th.textContent),
    ).toEqual(['Username', 'First Name', 'Last Name', 'Last Login', 'Organization', 'Studies', 'Registered', 'Edit']);
    const first = screen.getByText('reader2@example.org').closest('tr')!;
    const second = screen.getByText('new@example.org').closest('tr')!;
    // Blueprint draws an icon's SVG (and its title) once its paths have loaded, a tick later.
    await within(first).findByText('Registered');
    await within(second).findByText('Not registered');
    expect(
      within(first)
        .getAllByRole('cell')
        .map((td) => td.textContent),
    ).toEqual(['reader2@example.org', 'Rita', 'Reader', '-', 'Lamina Labs', '2', 'Registered', '']);
    expect(first.querySelector('[data-icon="tick"]')).not.toBeNull();
    expect(second.querySelector('[data-icon="cross"]')).not.toBeNull();
  });

  it('sorts by username by default and remembers the page size under userRowsPerPage', async () => {
    window.localStorage.setItem('userRowsPerPage', '50');
    const { calls } = renderUsers([makeUserRow()]);
    await screen.findByText('reader2@example.org');
    expect(Object.fromEntries(calls.find((c) => c.path === '/api/users')!.query)).toEqual({
      page: '1',
      pageSize: '50',
      sort: 'username',
    });
    fireEvent.change(screen.getByRole('combobox'), { target: { value: '10' } });
    expect(window.localStorage.getItem('userRowsPerPage')).toBe('10');
  });

  it('searches by name', async () => {
    const { calls } = renderUsers([makeUserRow()]);
    await screen.findByText('reader2@example.org');
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search by name' }), { target: { value: ' rita ' } });
    await waitFor(
      () =>
        expect(
          calls
            .filter((c) => c.path === '/api/users')
            .at(-1)
            ?.query.get('name'),
        ).toBe('rita'),
      { timeout: 2000 },
    );
  });

  it('opens /users/{id}/settings with the edit button', async () => {
    renderUsers([makeUserRow()]);
    fireEvent.click(await screen.findByRole('button', { name: 'Edit reader2@example.org' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/users/11/settings');
  });

  it('shows a failure in a red callout', async () => {
    mockFetch({ 'GET /api/users': { status: 500 } });
    renderRoutes([{ path: '/users', element: <UsersPage /> }], { path: '/users', user: MANAGER });
    const message = await screen.findByText(USER_MESSAGES.unableToFetchUsers);
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });

  it('offers Create user only to a system admin working as SystemAdmin', async () => {
    renderUsers([makeUserRow()]);
    await screen.findByText('reader2@example.org');
    expect(screen.queryByRole('button', { name: 'Create user' })).toBeNull();
    cleanup();
    renderUsers([makeUserRow()], makeUserAs('StudyAdmin', ['UM_ViewUsersPage'], { isSystemAdmin: true }));
    await screen.findByText('reader2@example.org');
    expect(screen.queryByRole('button', { name: 'Create user' })).toBeNull();
    cleanup();
    renderUsers([makeUserRow()], SYSADMIN);
    await screen.findByRole('button', { name: 'Create user' });
  });
});

describe('create user', () => {
  it('checks the fields, creates the user and shows the initial password once', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const created = makeUserRow({ id: 40, username: 'nina@example.org', registered: false, studyCount: 0 });
    const { calls } = renderUsers([makeUserRow()], SYSADMIN, {
      'POST /api/users': {
        status: 201,
        body: { success: true, message: USER_MESSAGES.userCreated, user: created, initialPassword: 'Tr0ub4dor&3-xyz' },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Create user' }));
    const dialog = await screen.findByRole('dialog');
    // The first field has the focus when the dialog opens (issue 20).
    await waitFor(() => expect(document.activeElement).toBe(within(dialog).getByLabelText('Email')));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await within(dialog).findByText(USER_MESSAGES.emailRequired);
    within(dialog).getByText(USER_MESSAGES.firstNameRequired);
    expect(calls.some((c) => c.method === 'POST')).toBe(false);

    fireEvent.change(within(dialog).getByLabelText('Email'), { target: { value: 'nina@example.org' } });
    fireEvent.change(within(dialog).getByLabelText('First Name'), { target: { value: 'Nina' } });
    fireEvent.change(within(dialog).getByLabelText('Last Name'), { target: { value: 'North' } });
    await within(dialog).findByRole('option', { name: 'Lamina Labs' });
    fireEvent.change(within(dialog).getByLabelText('Organization'), { target: { value: '1' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));

    const password = await within(dialog).findByDisplayValue('Tr0ub4dor&3-xyz');
    expect(password.hasAttribute('readonly')).toBe(true);
    within(dialog).getByText(/shown only once/);
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      username: 'nina@example.org',
      firstName: 'Nina',
      lastName: 'North',
      organizationId: 1,
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Copy' }));
    expect(writeText).toHaveBeenCalledWith('Tr0ub4dor&3-xyz');
    await within(dialog).findByRole('button', { name: 'Copied' });

    fireEvent.click(within(dialog).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByDisplayValue('Tr0ub4dor&3-xyz')).toBeNull());
    fireEvent.click(screen.getByRole('button', { name: 'Create user' }));
    expect(screen.queryByDisplayValue('Tr0ub4dor&3-xyz')).toBeNull();
  });

  it('keeps the dialog open with the error in a red callout', async () => {
    renderUsers([makeUserRow()], SYSADMIN, {
      'POST /api/users': { status: 409, body: { success: false, message: USER_MESSAGES.usernameTaken } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Create user' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Email'), { target: { value: 'ada@example.org' } });
    fireEvent.change(within(dialog).getByLabelText('First Name'), { target: { value: 'Ada' } });
    fireEvent.change(within(dialog).getByLabelText('Last Name'), { target: { value: 'L' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    const message = await within(dialog).findByText(USER_MESSAGES.usernameTaken);
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });
});
