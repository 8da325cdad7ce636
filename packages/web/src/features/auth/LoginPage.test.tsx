import { MESSAGES } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getCsrfToken, setCsrfToken } from '../../api/client';
import { fullPageNavigate, fullPageReplace } from '../../lib/browser';
import { makeConfig, makeUser } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { LoginPage } from './LoginPage';

vi.mock(import('../../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageNavigate: vi.fn(),
  fullPageReplace: vi.fn(),
}));

const loggedOut = { status: 401, body: { success: false, message: MESSAGES.pleaseLogIn } };

function fillAndSubmit(username = 'ada', password = 'secret') {
  fireEvent.change(screen.getByLabelText('Username'), { target: { value: username } });
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: password } });
  fireEvent.click(screen.getByRole('button', { name: 'Log in' }));
}

afterEach(() => {
  cleanup();
  setCsrfToken(null);
  vi.mocked(fullPageNavigate).mockClear();
  vi.mocked(fullPageReplace).mockClear();
});

describe('LoginPage', () => {
  it("shows the server's message in a red callout when the login is refused", async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': loggedOut,
      'POST /api/auth/login': { status: 401, body: { success: false, message: MESSAGES.invalidLogin } },
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    fillAndSubmit('ada', 'wrong');
    const message = await screen.findByText('Invalid username or password');
    expect(message.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
    expect(fullPageNavigate).not.toHaveBeenCalled();
    expect(screen.getByRole('button', { name: 'Log in' }).hasAttribute('disabled')).toBe(false);
  });

  it('shows the throttling message', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': loggedOut,
      'POST /api/auth/login': { status: 429, body: { success: false, message: MESSAGES.tooManyLogins } },
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    fillAndSubmit();
    await screen.findByText(MESSAGES.tooManyLogins);
  });

  it('logs in without a CSRF header, keeps the token and follows a safe redirect with a page load', async () => {
    const { calls } = mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': loggedOut,
      'POST /api/auth/login': { body: { success: true, message: 'Logged in', csrfToken: 'tok', user: makeUser() } },
    });
    renderWithProviders(<LoginPage />, { path: '/login?redirect=%2Fusers%2F7%2FstudyAccess%3Fx%3D1' });
    fillAndSubmit(' ada ', 'secret');
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith('/users/7/studyAccess?x=1'));
    const login = calls.find((c) => c.path === '/api/auth/login');
    expect(login?.body).toEqual({ username: 'ada', password: 'secret' });
    expect(login?.headers.has('X-CSRF-Token')).toBe(false);
    expect(getCsrfToken()).toBe('tok');
  });

  it('sends a user with a one-time password to /changePassword, keeping the redirect', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': loggedOut,
      'POST /api/auth/login': {
        body: { success: true, message: 'Logged in', csrfToken: 'tok', user: makeUser({ mustChangePassword: true }) },
      },
    });
    renderWithProviders(<LoginPage />, { path: '/login?redirect=%2Fusers%3Fx%3D1' });
    fillAndSubmit();
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith('/changePassword?redirect=%2Fusers%3Fx%3D1'));
    cleanup();
    vi.mocked(fullPageNavigate).mockClear();
    renderWithProviders(<LoginPage />, { path: '/login' });
    fillAndSubmit();
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith('/changePassword?redirect=%2Fstudies'));
  });

  it('ignores a redirect to another site and goes to /studies', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': loggedOut,
      'POST /api/auth/login': { body: { success: true, message: 'Logged in', csrfToken: 'tok', user: makeUser() } },
    });
    renderWithProviders(<LoginPage />, { path: '/login?redirect=%2F%2Fevil.example.com' });
    fillAndSubmit();
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith('/studies'));
  });

  it('disables the button while the login is on its way', async () => {
    mockFetch({ 'GET /api/config': { body: makeConfig() }, 'GET /api/users/info': loggedOut });
    let release: (r: Response) => void = () => undefined;
    const pending = new Promise<Response>((resolve) => (release = resolve));
    const original = vi.mocked(fetch).getMockImplementation();
    vi.mocked(fetch).mockImplementation((input, init) =>
      init?.method === 'POST' ? pending : (original as typeof fetch)(input, init),
    );
    renderWithProviders(<LoginPage />, { path: '/login' });
    fillAndSubmit();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Log in' }).hasAttribute('disabled')).toBe(true));
    release(new Response(JSON.stringify({ success: false, message: MESSAGES.invalidLogin }), { status: 401 }));
    await screen.findByText(MESSAGES.invalidLogin);
    expect(screen.getByRole('button', { name: 'Log in' }).hasAttribute('disabled')).toBe(false);
  });

  it('submits with Enter', async () => {
    const { calls } = mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': loggedOut,
      'POST /api/auth/login': { status: 401, body: { success: false, message: MESSAGES.invalidLogin } },
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'ada' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'pw' } });
    fireEvent.submit(screen.getByLabelText('Password').closest('form') as HTMLFormElement);
    await screen.findByText(MESSAGES.invalidLogin);
    expect(calls.filter((c) => c.path === '/api/auth/login')).toHaveLength(1);
  });

  it('offers single sign-on when configured', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig({ ssoLoginUrl: 'https://hub.example.com/login' }) },
      'GET /api/users/info': loggedOut,
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    const link = await screen.findByRole('link', { name: 'Log in with single sign-on' });
    expect(link.getAttribute('href')).toBe('https://hub.example.com/login');
  });

  it('offers OpenID Connect as a keyboard-reachable button that carries the redirect (issue 19)', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig({ oidcName: 'Acme ID', ssoLoginUrl: 'https://hub.example.com/login' }) },
      'GET /api/auth/session': { body: { authenticated: false } },
    });
    renderWithProviders(<LoginPage />, { path: '/login?redirect=%2Fusers%3Fx%3D1' });
    const button = await screen.findByRole('button', { name: 'Log in with Acme ID' });
    expect(button.getAttribute('href')).toBe('/api/auth/oidc/login?redirect=%2Fusers%3Fx%3D1');
    expect(button.tabIndex).toBe(0);
    button.focus();
    expect(document.activeElement).toBe(button);
    // The password form stays, and the provider's button replaces the hub link.
    screen.getByLabelText('Password');
    expect(screen.queryByRole('link', { name: 'Log in with single sign-on' })).toBeNull();
  });

  it('shows only the single sign-on button when local login is off', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig({ oidcName: 'single sign-on', localLogin: false }) },
      'GET /api/auth/session': { body: { authenticated: false } },
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    const button = await screen.findByRole('button', { name: 'Log in with single sign-on' });
    expect(button.getAttribute('href')).toBe('/api/auth/oidc/login?redirect=%2Fstudies');
    expect(screen.queryByLabelText('Username')).toBeNull();
    expect(screen.queryByLabelText('Password')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Log in' })).toBeNull();
  });

  it('has no single sign-on link without configuration', async () => {
    mockFetch({ 'GET /api/config': { body: makeConfig() }, 'GET /api/users/info': loggedOut });
    renderWithProviders(<LoginPage />, { path: '/login' });
    await waitFor(() => expect(fetch).toHaveBeenCalledTimes(2));
    expect(screen.queryByRole('link', { name: 'Log in with single sign-on' })).toBeNull();
  });

  it('sends a logged-in user to /studies', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/auth/session': { body: { authenticated: true } },
      'GET /api/users/info': { body: makeUser() },
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/studies'));
  });

  it('asks whether a session exists without a call that answers 401 (no console error, issue 20)', async () => {
    const { calls } = mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/auth/session': { body: { authenticated: false } },
    });
    renderWithProviders(<LoginPage />, { path: '/login' });
    await waitFor(() => expect(calls.some((c) => c.path === '/api/auth/session')).toBe(true));
    await screen.findByRole('button', { name: 'Log in' });
    expect(calls.map((c) => c.path)).not.toContain('/api/users/info');
    expect(fullPageReplace).not.toHaveBeenCalled();
  });
});
