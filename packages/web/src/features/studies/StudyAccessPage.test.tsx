import { roleByName, USER_MESSAGES, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeRoleViews, makeStudy, makeUserAs, makeUserRow } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { StudyAccessPage } from './StudyAccessPage';

beforeEach(() => setCsrfToken('token'));
afterEach(cleanup);

const ADMIN = makeUserAs('StudyAdmin', [
  'S_Main_EditStudy',
  'UM_ViewUsersPage',
  'UM_GrantStudyAccess',
  'UM_RevokeStudyAccess',
]);
const member = {
  id: 11,
  username: 'reader2@example.org',
  firstName: 'Rita',
  lastName: 'Reader',
  roleId: roleByName('CR').id,
  roleName: 'CR',
  organizationName: 'Lamina Labs',
};
const changed = { success: true, message: 'Study access added', studyAccess: [] };

function renderPage(user: UserInfo = ADMIN, members = [member], usersTotal = 1) {
  const mock = mockFetch({
    'GET /api/studies/3': { body: makeStudy() },
    'POST /api/users/inStudy/3': { body: { success: true, users: members } },
    'GET /api/permissions/roles': { body: makeRoleViews() },
    'GET /api/users': {
      body: {
        success: true,
        users: [makeUserRow({ id: 12, username: 'dm@example.org', firstName: 'Dana', lastName: 'Manager' })],
        total: usersTotal,
      },
    },
    'PATCH /api/users/studies/add': { body: changed },
    'PUT /api/users/studies/remove': { body: { ...changed, message: 'Study access removed' } },
  });
  renderRoutes([{ path: '/studies/:id/configure/associate-users', element: <StudyAccessPage /> }], {
    path: '/studies/3/configure/associate-users',
    user,
  });
  return mock;
}

describe('study access screen /studies/{id}/configure/associate-users (doc 1 §2.1, §2.8)', () => {
  it('lists the users with access, with role display names', async () => {
    renderPage();
    await screen.findByRole('heading', { level: 2, name: 'GUT-301: study access' });
    const table = await screen.findByRole('table', { name: 'Users with access' });
    const row = within(table).getByText('reader2@example.org').closest('tr')!;
    expect(
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['reader2@example.org', 'Rita Reader', 'Central Reader', 'Lamina Labs', 'Remove Access']);
  });

  it("grants a role after 'Confirm Study Access'; + Add needs a user and a role", async () => {
    const { calls } = renderPage();
    const add = await screen.findByRole('button', { name: '+ Add' });
    expect(add.hasAttribute('disabled')).toBe(true);
    await screen.findByRole('option', { name: 'dm@example.org (Dana Manager)' });
    fireEvent.change(screen.getByLabelText('User'), { target: { value: '12' } });
    expect(screen.getByRole('button', { name: '+ Add' }).hasAttribute('disabled')).toBe(true);
    await screen.findByRole('option', { name: 'Data Manager' });
    // Only the assignable roles are offered.
    expect(
      within(screen.getByLabelText('Role'))
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual([
      'Choose a role',
      'ISC',
      'Data Manager',
      'Project Manager',
      'Sponsor',
      'Lab Technician',
      'Uploader',
      'Central Reader',
    ]);
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: String(roleByName('DM').id) } });
    fireEvent.click(screen.getByRole('button', { name: '+ Add' }));
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText(USER_MESSAGES.confirmStudyAccessTitle);
    within(dialog).getByText('dm@example.org: The user will be assigned as Data Manager to GUT-301.');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')!.body).toEqual({
      studyId: 3,
      userId: 12,
      roleId: roleByName('DM').id,
    });
  });

  it("removes a role after 'Are you sure you want to remove study access?'", async () => {
    const { calls } = renderPage();
    fireEvent.click(
      await screen.findByRole('button', { name: 'Remove Access of reader2@example.org as Central Reader' }),
    );
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText(USER_MESSAGES.removeStudyAccessQuestion);
    within(dialog).getByText('reader2@example.org (Central Reader): The user will no longer have access to GUT-301.');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Remove Access' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')!.body).toEqual({
      studyId: 3,
      userId: 11,
      roleId: roleByName('CR').id,
    });
  });

  it('asks for a narrower search when more users match than the picker offers', async () => {
    renderPage(ADMIN, [member], 150);
    await screen.findByText('Showing the first 100; search to narrow.');
  });

  it('shows neither + Add nor Remove Access without the grant and revoke permissions', async () => {
    const { calls } = renderPage(makeUserAs('PM', ['S_Main_EditStudy', 'UM_ViewUsersPage']));
    await screen.findByRole('table', { name: 'Users with access' });
    expect(screen.queryByRole('button', { name: '+ Add' })).toBeNull();
    expect(screen.queryByRole('button', { name: /Remove Access/ })).toBeNull();
    // Nothing shows the user picker, so the users list is not asked for.
    expect(calls.some((c) => c.method === 'GET' && c.path === '/api/users')).toBe(false);
  });
});
