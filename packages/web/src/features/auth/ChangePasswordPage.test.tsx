import { MESSAGES, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { fullPageNavigate } from '../../lib/browser';
import { makeConfig, makeUser } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { ChangePasswordPage } from './ChangePasswordPage';

vi.mock(import('../../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageNavigate: vi.fn(),
  fullPageReplace: vi.fn(),
}));

afterEach(() => {
  cleanup();
  setCsrfToken(null);
  vi.mocked(fullPageNavigate).mockClear();
});

const forcedUser = makeUser({ username: 'ada.lovelace@example.org', mustChangePassword: true });
const GOOD = 'a brand new passphrase';

function renderPage(path: string, user: UserInfo = forcedUser) {
  const routes = [
    { path: '/changePassword', element: <ChangePasswordPage /> },
    { path: '*', element: <LocationProbe /> },
  ];
  return renderRoutes(routes, { path, user, config: makeConfig() });
}

const field = (label: string) => screen.getByLabelText(label);
const submit = () => screen.getByRole('button', { name: 'Change password' });

function type(label: string, value: string) {
  fireEvent.change(field(label), { target: { value } });
}

function fill(current: string, next: string, confirm = next) {
  type('Current password', current);
  type('New password', next);
  type('Confirm new password', confirm);
}

describe('ChangePasswordPage', () => {
  it('tells a user with a one-time password why they are here, and shows the rules', () => {
    renderPage('/changePassword?redirect=%2Fstudies');
    screen.getByRole('heading', { level: 2, name: 'Change password' });
    const callout = screen.getByText(MESSAGES.passwordChangeRequired).closest('.bp6-callout');
    expect(callout?.classList.contains('bp6-intent-warning')).toBe(true);
    screen.getByText(/At least 12 characters/);
    screen.getByRole('button', { name: 'Logout' });
    expect(submit().hasAttribute('disabled')).toBe(true);
  });

  it("shows the broken rules' messages under the fields and keeps Submit disabled while invalid", () => {
    renderPage('/changePassword');
    type('Current password', 'one-time-password');
    type('New password', 'short');
    screen.getByText(MESSAGES.passwordTooShort);
    expect(submit().hasAttribute('disabled')).toBe(true);

    type('New password', 'one-time-password');
    screen.getByText(MESSAGES.passwordUnchanged);

    type('New password', 'I am ADA.LOVELACE, hello');
    screen.getByText(MESSAGES.passwordContainsUsername);
    expect(screen.queryByText(MESSAGES.passwordTooShort)).toBeNull();

    type('New password', GOOD);
    expect(screen.queryByText(MESSAGES.passwordContainsUsername)).toBeNull();
    type('Confirm new password', `${GOOD}!`);
    screen.getByText(MESSAGES.passwordsDoNotMatch);
    expect(submit().hasAttribute('disabled')).toBe(true);

    type('Confirm new password', GOOD);
    expect(screen.queryByText(MESSAGES.passwordsDoNotMatch)).toBeNull();
    expect(submit().hasAttribute('disabled')).toBe(false);

    type('Current password', '');
    fireEvent.blur(field('Current password'));
    screen.getByText(MESSAGES.currentPasswordRequired);
    expect(submit().hasAttribute('disabled')).toBe(true);
  });

  it("shows the server's message in a red callout when the change is refused", async () => {
    mockFetch({
      'GET /api/auth/csrf': { body: { csrfToken: 'tok' } },
      'POST /api/auth/password': { status: 400, body: { success: false, message: MESSAGES.currentPasswordIncorrect } },
    });
    renderPage('/changePassword?redirect=%2Fstudies');
    fill('wrong', GOOD);
    fireEvent.click(submit());
    const message = await screen.findByText(MESSAGES.currentPasswordIncorrect);
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
    expect(screen.queryByTestId('location')).toBeNull();
    expect(submit().hasAttribute('disabled')).toBe(false);
  });

  it('changes the password with the CSRF token, refetches the user, toasts and follows the redirect', async () => {
    const { calls } = mockFetch({
      'GET /api/auth/csrf': { body: { csrfToken: 'tok' } },
      'POST /api/auth/password': { body: { success: true, message: MESSAGES.passwordChanged } },
      'GET /api/users/info': { body: { ...forcedUser, mustChangePassword: false } },
    });
    const { queryClient } = renderPage('/changePassword?redirect=%2Fusers%2F7%3Ftab%3Da');
    fill('one-time-password', GOOD);
    fireEvent.submit(field('New password').closest('form') as HTMLFormElement);
    await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/users/7?tab=a'));
    const post = calls.find((c) => c.path === '/api/auth/password');
    expect(post?.body).toEqual({ currentPassword: 'one-time-password', newPassword: GOOD });
    expect(post?.headers.get('X-CSRF-Token')).toBe('tok');
    // users/info was fetched again before leaving, so the next page's guard sees no pending change.
    expect(calls.filter((c) => c.path === '/api/users/info').length).toBeGreaterThan(0);
    expect(queryClient.getQueryData<UserInfo>(['users', 'info'])?.mustChangePassword).toBe(false);
    await screen.findByText(MESSAGES.passwordChanged);
    expect(fullPageNavigate).not.toHaveBeenCalled();
  });

  it('goes to / without a redirect, and ignores one to another site', async () => {
    mockFetch({
      'GET /api/auth/csrf': { body: { csrfToken: 'tok' } },
      'POST /api/auth/password': { body: { success: true, message: MESSAGES.passwordChanged } },
      'GET /api/users/info': { body: makeUser() },
    });
    renderPage('/changePassword?redirect=%2F%2Fevil.example.com');
    fill('one-time-password', GOOD);
    fireEvent.click(submit());
    await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/'));
  });

  it('offers Cancel, not the one-time explanation, to a user changing it by choice', () => {
    renderPage('/changePassword?redirect=%2Fstudies', makeUser());
    expect(screen.queryByText(MESSAGES.passwordChangeRequired)).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByTestId('location').textContent).toBe('/studies');
  });
});
