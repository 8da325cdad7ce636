import { roleByName, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeRoleViews, makeStudy, makeUserAs, makeUserRow } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { StudyAccessPage } from './StudyAccessPage';

beforeEach(() => setCsrfToken('token'));
afterEach(cleanup);

const GRANTS = ['S_Main_EditStudy', 'UM_ViewUsersPage', 'UM_GrantStudyAccess', 'UM_RevokeStudyAccess'];

function renderPage(user: UserInfo) {
  const mock = mockFetch({
    'GET /api/studies/3': { body: makeStudy() },
    'POST /api/users/inStudy/3': { body: { success: true, users: [] } },
    'GET /api/permissions/roles': { body: makeRoleViews() },
    'GET /api/users': {
      body: {
        success: true,
        users: [makeUserRow({ id: 12, username: 'site@example.org', firstName: 'Sam', lastName: 'Site' })],
        total: 1,
      },
    },
    'PATCH /api/users/studies/add': { body: { success: true, message: 'Study access added', studyAccess: [] } },
  });
  renderRoutes([{ path: '/studies/:id/configure/associate-users', element: <StudyAccessPage /> }], {
    path: '/studies/3/configure/associate-users',
    user,
  });
  return mock;
}

const roleOptions = () =>
  within(screen.getByLabelText('Role'))
    .getAllByRole('option')
    .map((o) => o.textContent);

describe('the study access screen offers Site, NOTO and LIS to a system admin (issue 26)', () => {
  it('a system admin gives a new study its site users and embedded readers', async () => {
    const { calls } = renderPage(makeUserAs('SystemAdmin', GRANTS, { isSystemAdmin: true }));
    await screen.findByRole('option', { name: 'NOTO' });
    expect(roleOptions().slice(-3)).toEqual(['Site', 'NOTO', 'LIS']);
    await screen.findByRole('option', { name: 'site@example.org (Sam Site)' });
    fireEvent.change(screen.getByLabelText('User'), { target: { value: '12' } });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: String(roleByName('Site').id) } });
    fireEvent.click(screen.getByRole('button', { name: '+ Add' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({
      studyId: 3,
      userId: 12,
      roleId: roleByName('Site').id,
    });
  });

  it('a study admin is offered the seven assignable roles only', async () => {
    renderPage(makeUserAs('StudyAdmin', GRANTS));
    await screen.findByRole('option', { name: 'Central Reader' });
    expect(roleOptions()).toEqual([
      'Choose a role',
      'ISC',
      'Data Manager',
      'Project Manager',
      'Sponsor',
      'Lab Technician',
      'Uploader',
      'Central Reader',
    ]);
  });
});
