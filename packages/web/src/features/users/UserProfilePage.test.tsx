import {
  confirmStudyAccessText,
  removeStudyAccessText,
  USER_MESSAGES,
  type StudyAccessRow,
  type UserInfo,
  type UserListRow,
} from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeRoleViews, makeStudyRow, makeUserAs, makeUserRow } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { UserProfilePage } from './UserProfilePage';

beforeEach(() => setCsrfToken('token'));
afterEach(() => cleanup());

const MANAGER = makeUserAs('StudyAdmin', [
  'UM_ViewUsersPage',
  'UM_RegisterUser',
  'UM_GrantStudyAccess',
  'UM_RevokeStudyAccess',
]);
const ORGS = [
  { id: 1, name: 'Lamina Labs', groupEmail: null },
  { id: 2, name: 'Site 12', groupEmail: 'site12@example.org' },
];
const ACCESS: StudyAccessRow[] = [{ studyId: 3, studyName: 'GUT-301', roleId: 7, roleName: 'UPLOADER' }];

function renderProfile(
  path: string,
  me: UserInfo = MANAGER,
  user: UserListRow = makeUserRow(),
  extra: Parameters<typeof mockFetch>[0] = {},
) {
  const mock = mockFetch({
    [`GET /api/users/${user.id}`]: { body: user },
    'GET /api/organizations': { body: ORGS },
    'GET /api/permissions/roles': { body: makeRoleViews() },
    [`GET /api/users/${user.id}/studyAccess`]: { body: ACCESS },
    'GET /api/studies/list': {
      body: {
        success: true,
        studies: [makeStudyRow({ id: 3, name: 'GUT-301' }), makeStudyRow({ id: 4, name: 'LIV-9' })],
        total: 2,
      },
    },
    ...extra,
  });
  renderRoutes([{ path: '/users/:id/:tab?', element: <UserProfilePage /> }], { path, user: me });
  return mock;
}

const save = () => screen.getByRole('button', { name: 'Save' });
const disabled = (el: HTMLElement) => el.hasAttribute('disabled');

describe('user settings (doc 1 §2.8)', () => {
  it('shows both tabs and the form, with the email read-only', async () => {
    renderProfile('/users/11');
    await screen.findByRole('heading', { level: 2, name: 'Rita Reader' });
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['User Settings', 'Study Access']);
    expect(screen.getByLabelText<HTMLInputElement>('First Name').value).toBe('Rita');
    const email = screen.getByLabelText<HTMLInputElement>('Email Address');
    expect(email.value).toBe('reader2@example.org');
    expect(email.readOnly).toBe(true);
  });

  it('enables Save by a change of first name, last name or organization only', async () => {
    renderProfile('/users/11/settings');
    const first = await screen.findByLabelText('First Name');
    expect(disabled(save())).toBe(true);
    fireEvent.change(first, { target: { value: 'Ritta' } });
    await waitFor(() => expect(disabled(save())).toBe(false));
    fireEvent.change(first, { target: { value: 'Rita' } });
    await waitFor(() => expect(disabled(save())).toBe(true));
    fireEvent.change(screen.getByLabelText('Last Name'), { target: { value: 'Reads' } });
    await waitFor(() => expect(disabled(save())).toBe(false));
    fireEvent.change(screen.getByLabelText('Last Name'), { target: { value: 'Reader' } });
    await screen.findByRole('option', { name: 'Site 12' });
    fireEvent.change(screen.getByLabelText('Organization'), { target: { value: '2' } });
    await waitFor(() => expect(disabled(save())).toBe(false));
  });

  it('keeps Save disabled with a blank name and says First Name Required', async () => {
    renderProfile('/users/11/settings');
    fireEvent.change(await screen.findByLabelText('First Name'), { target: { value: '  ' } });
    await screen.findByText(USER_MESSAGES.firstNameRequired);
    expect(disabled(save())).toBe(true);
    fireEvent.change(screen.getByLabelText('Last Name'), { target: { value: '' } });
    await screen.findByText(USER_MESSAGES.lastNameRequired);
  });

  it('lets an unregistered user be saved unchanged, since saving registers them', async () => {
    renderProfile('/users/11/settings', MANAGER, makeUserRow({ registered: false }));
    await screen.findByText('Not registered');
    expect(disabled(save())).toBe(false);
  });

  it('shows no Save without the register-user permission', async () => {
    renderProfile('/users/11/settings', makeUserAs('PM', ['UM_ViewUsersPage']));
    await screen.findByLabelText('First Name');
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
  });

  it('saves the names and organization, then disables Save again', async () => {
    const saved = makeUserRow({ firstName: 'Ritta', organizationId: 2, organizationName: 'Site 12' });
    const { calls } = renderProfile('/users/11/settings', MANAGER, makeUserRow(), {
      'PUT /api/users/11': { body: { success: true, message: USER_MESSAGES.userUpdated, user: saved } },
    });
    fireEvent.change(await screen.findByLabelText('First Name'), { target: { value: ' Ritta ' } });
    await screen.findByRole('option', { name: 'Site 12' });
    fireEvent.change(screen.getByLabelText('Organization'), { target: { value: '2' } });
    await waitFor(() => expect(disabled(save())).toBe(false));
    fireEvent.click(save());
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      firstName: 'Ritta',
      lastName: 'Reader',
      organizationId: 2,
    });
    await waitFor(() => expect(disabled(save())).toBe(true));
  });

  it('shows a failure in a red callout', async () => {
    renderProfile('/users/11/settings', MANAGER, makeUserRow(), { 'PUT /api/users/11': { status: 500 } });
    fireEvent.change(await screen.findByLabelText('First Name'), { target: { value: 'Ritta' } });
    await waitFor(() => expect(disabled(save())).toBe(false));
    fireEvent.click(save());
    const message = await screen.findByText(USER_MESSAGES.unableToUpdateUser);
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });

  it("shows a system admin's settings read-only to a study admin, without Save (issue 26)", async () => {
    renderProfile('/users/11/settings', MANAGER, makeUserRow({ isSystemAdmin: true }));
    const first = await screen.findByLabelText<HTMLInputElement>('First Name');
    expect(first.readOnly).toBe(true);
    expect(screen.getByLabelText<HTMLInputElement>('Last Name').readOnly).toBe(true);
    expect(screen.getByLabelText<HTMLSelectElement>('Organization').disabled).toBe(true);
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
    screen.getByText(USER_MESSAGES.systemAdminAccount);
  });

  it("lets a system admin edit a system admin's settings", async () => {
    const sysadmin = makeUserAs('SystemAdmin', ['UM_ViewUsersPage', 'UM_RegisterUser'], { isSystemAdmin: true });
    renderProfile('/users/11/settings', sysadmin, makeUserRow({ isSystemAdmin: true }));
    fireEvent.change(await screen.findByLabelText('First Name'), { target: { value: 'Ritta' } });
    await waitFor(() => expect(disabled(save())).toBe(false));
    expect(screen.queryByText(USER_MESSAGES.systemAdminAccount)).toBeNull();
  });

  it("says 'User not found' for an unknown user", async () => {
    mockFetch({ 'GET /api/users/99': { status: 404, body: { success: false, message: USER_MESSAGES.userNotFound } } });
    renderRoutes([{ path: '/users/:id/:tab?', element: <UserProfilePage /> }], { path: '/users/99', user: MANAGER });
    await screen.findByText(USER_MESSAGES.userNotFound);
  });
});

describe('study access (doc 1 §2.8)', () => {
  it('lists the study access with a Remove Access button per row', async () => {
    renderProfile('/users/11/studyAccess');
    const table = await screen.findByRole('table', { name: 'Study access' });
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((th) => th.textContent),
    ).toEqual(['Study Name', 'Role', 'Remove']);
    const row = within(table).getByText('GUT-301').closest('tr')!;
    within(row).getByText('Uploader');
    within(row).getByRole('button', { name: /Remove Access/ });
  });

  it('offers only the assignable roles', async () => {
    renderProfile('/users/11/studyAccess');
    await screen.findByRole('option', { name: 'Central Reader' });
    const roles = within(screen.getByLabelText('Role'))
      .getAllByRole('option')
      .map((o) => o.textContent);
    expect(roles).toEqual([
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

  it('offers a system admin Site, NOTO and LIS as well (issue 26), and grants them', async () => {
    const sysadmin = makeUserAs(
      'SystemAdmin',
      ['UM_ViewUsersPage', 'UM_RegisterUser', 'UM_GrantStudyAccess', 'UM_RevokeStudyAccess'],
      { isSystemAdmin: true },
    );
    const { calls } = renderProfile('/users/11/studyAccess', sysadmin, makeUserRow(), {
      'PATCH /api/users/studies/add': {
        body: {
          success: true,
          message: USER_MESSAGES.studyAccessAdded,
          studyAccess: [...ACCESS, { studyId: 4, studyName: 'LIV-9', roleId: 10, roleName: 'Site' }],
        },
      },
    });
    await screen.findByRole('option', { name: 'LIS' });
    const roles = within(screen.getByLabelText('Role'))
      .getAllByRole('option')
      .map((o) => o.textContent);
    expect(roles).toEqual([
      'Choose a role',
      'ISC',
      'Data Manager',
      'Project Manager',
      'Sponsor',
      'Lab Technician',
      'Uploader',
      'Central Reader',
      'Site',
      'NOTO',
      'LIS',
    ]);
    await screen.findByRole('option', { name: 'LIV-9' });
    fireEvent.change(screen.getByLabelText('Study'), { target: { value: '4' } });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: '10' } });
    fireEvent.click(screen.getByRole('button', { name: '+ Add' }));
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText(confirmStudyAccessText('Site', 'LIV-9'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ studyId: 4, userId: 11, roleId: 10 });
  });

  it('offers the seven to a system admin working as another role', async () => {
    renderProfile(
      '/users/11/studyAccess',
      makeUserAs('StudyAdmin', ['UM_ViewUsersPage', 'UM_GrantStudyAccess'], { isSystemAdmin: true }),
    );
    await screen.findByRole('option', { name: 'Central Reader' });
    expect(screen.queryByRole('option', { name: 'Site' })).toBeNull();
    expect(screen.queryByRole('option', { name: 'LIS' })).toBeNull();
  });

  it("a study admin cannot add or remove a system admin's study access (issue 26)", async () => {
    renderProfile('/users/11/studyAccess', MANAGER, makeUserRow({ isSystemAdmin: true }));
    await screen.findByRole('table', { name: 'Study access' });
    expect(screen.queryByRole('button', { name: '+ Add' })).toBeNull();
    expect(screen.queryByRole('button', { name: /Remove Access/ })).toBeNull();
    screen.getByText(USER_MESSAGES.systemAdminAccount);
  });

  it('enables + Add only with a study and a role, confirms, then adds', async () => {
    const { calls } = renderProfile('/users/11/studyAccess', MANAGER, makeUserRow(), {
      'PATCH /api/users/studies/add': {
        body: {
          success: true,
          message: USER_MESSAGES.studyAccessAdded,
          studyAccess: [...ACCESS, { studyId: 4, studyName: 'LIV-9', roleId: 8, roleName: 'CR' }],
        },
      },
    });
    const add = await screen.findByRole('button', { name: '+ Add' });
    expect(disabled(add)).toBe(true);
    await screen.findByRole('option', { name: 'LIV-9' });
    fireEvent.change(screen.getByLabelText('Study'), { target: { value: '4' } });
    expect(disabled(add)).toBe(true);
    await screen.findByRole('option', { name: 'Central Reader' });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: '8' } });
    expect(disabled(add)).toBe(false);

    fireEvent.click(add);
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText(USER_MESSAGES.confirmStudyAccessTitle);
    within(dialog).getByText(confirmStudyAccessText('Central Reader', 'LIV-9'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ studyId: 4, userId: 11, roleId: 8 });
    expect(Object.fromEntries(calls.find((c) => c.path === '/api/studies/list')!.query)).toEqual({
      page: '1',
      pageSize: '100',
      sort: 'name',
    });
    await screen.findByText('LIV-9', { selector: 'td' });
  });

  it('keeps + Add disabled with a hint for access the user already holds (issue 20)', async () => {
    renderProfile('/users/11/studyAccess');
    const add = await screen.findByRole('button', { name: '+ Add' });
    await screen.findByRole('option', { name: 'GUT-301' });
    fireEvent.change(screen.getByLabelText('Study'), { target: { value: '3' } });
    await screen.findByRole('option', { name: 'Uploader' });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: '7' } });
    expect(disabled(add)).toBe(true);
    screen.getByText(USER_MESSAGES.accessAlreadyHeld);
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: '8' } });
    expect(disabled(add)).toBe(false);
    expect(screen.queryByText(USER_MESSAGES.accessAlreadyHeld)).toBeNull();
  });

  it('keeps the add dialog open with the error in a red callout', async () => {
    renderProfile('/users/11/studyAccess', MANAGER, makeUserRow(), {
      'PATCH /api/users/studies/add': {
        status: 409,
        body: { success: false, message: USER_MESSAGES.studyAccessExists },
      },
    });
    // The server still refuses what it finds held (someone granted it meanwhile).
    await screen.findByRole('option', { name: 'LIV-9' });
    fireEvent.change(screen.getByLabelText('Study'), { target: { value: '4' } });
    await screen.findByRole('option', { name: 'Central Reader' });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: '8' } });
    fireEvent.click(screen.getByRole('button', { name: '+ Add' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Confirm' }));
    const message = await within(dialog).findByText(USER_MESSAGES.studyAccessExists);
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
    screen.getByRole('dialog');
  });

  it('asks before removing access, then removes it', async () => {
    const { calls } = renderProfile('/users/11/studyAccess', MANAGER, makeUserRow(), {
      'PUT /api/users/studies/remove': {
        body: { success: true, message: USER_MESSAGES.studyAccessRemoved, studyAccess: [] },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: /Remove Access/ }));
    const dialog = await screen.findByRole('dialog');
    within(dialog).getByText(USER_MESSAGES.removeStudyAccessQuestion);
    within(dialog).getByText(removeStudyAccessText('GUT-301'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Remove Access' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.path === '/api/users/studies/remove')?.body).toEqual({
      studyId: 3,
      userId: 11,
      roleId: 7,
    });
    await screen.findByText('No study access');
  });

  it('keeps the remove dialog open with the error in a red callout', async () => {
    renderProfile('/users/11/studyAccess', MANAGER, makeUserRow(), {
      'PUT /api/users/studies/remove': { status: 500 },
    });
    fireEvent.click(await screen.findByRole('button', { name: /Remove Access/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Remove Access' }));
    const message = await within(dialog).findByText(USER_MESSAGES.unableToRemoveStudyAccess);
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });

  it('shows + Add and Remove Access only with their permissions', async () => {
    renderProfile('/users/11/studyAccess', makeUserAs('PM', ['UM_ViewUsersPage']));
    await screen.findByRole('table', { name: 'Study access' });
    expect(screen.queryByRole('button', { name: '+ Add' })).toBeNull();
    expect(screen.queryByRole('button', { name: /Remove Access/ })).toBeNull();
  });
});

describe('account status', () => {
  const SYSADMIN = makeUserAs('SystemAdmin', ['UM_ViewUsersPage', 'UM_RegisterUser'], { isSystemAdmin: true });

  it('lets a system admin deactivate after confirming, with an optional reason', async () => {
    const { calls } = renderProfile('/users/11/settings', SYSADMIN, makeUserRow(), {
      'PATCH /api/users/11/deactivate': {
        body: { success: true, message: USER_MESSAGES.userDeactivated, user: makeUserRow({ active: false }) },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Deactivate' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Reason (optional)'), { target: { value: 'Left the trial' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Deactivate' }));
    await screen.findByRole('button', { name: 'Activate' });
    screen.getByText('Deactivated');
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ reason: 'Left the trial' });
  });

  it('is not offered to others', async () => {
    renderProfile('/users/11/settings');
    await screen.findByLabelText('First Name');
    expect(screen.queryByRole('button', { name: 'Deactivate' })).toBeNull();
  });
});
