import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../api/client';
import { makeConfig, makeUser } from '../test/fixtures';
import { mockFetch } from '../test/mockFetch';
import { LocationProbe, renderRoutes, renderWithProviders } from '../test/render';
import { AppHeader } from './AppHeader';
import { fullPageNavigate } from '../lib/browser';
import { displayName } from './UserMenu';

vi.mock(import('../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageNavigate: vi.fn(),
  reloadPage: vi.fn(),
}));

afterEach(() => {
  cleanup();
  setCsrfToken(null);
  vi.mocked(fullPageNavigate).mockClear();
});

describe('AppHeader', () => {
  it('shows the logo, permitted tabs, the work-as role and the user menu', () => {
    renderWithProviders(<AppHeader config={makeConfig()} user={makeUser()} embedded={false} />);
    expect(screen.getByRole('link', { name: 'Lamina home' }).getAttribute('href')).toBe('/');
    screen.getByRole('link', { name: 'Studies' });
    screen.getByRole('link', { name: 'Users' });
    expect(screen.queryByRole('link', { name: 'Reports' })).toBeNull();
    expect(screen.getByTestId('work-as-role').textContent).toBe('ISC Reviewer');
    expect(screen.getByTestId('user-menu').textContent).toContain('Ada Lovelace');
    expect(screen.queryByRole('link', { name: 'Log in' })).toBeNull();
  });

  it("falls back to the username when the user's name is empty", () => {
    expect(displayName({ firstName: null, lastName: ' ', username: 'ada' })).toBe('ada');
    expect(displayName({ firstName: 'Ada', lastName: null, username: 'ada' })).toBe('Ada');
  });

  it('shows a Log in link when logged out', () => {
    renderWithProviders(<AppHeader config={makeConfig()} user={null} embedded={false} />);
    expect(screen.getByRole('link', { name: 'Log in' }).getAttribute('href')).toBe('/login');
    expect(screen.queryByTestId('user-menu')).toBeNull();
    expect(screen.queryByRole('navigation')).toBeNull();
  });

  it('hides the tabs and the user menu in embedded mode', () => {
    renderWithProviders(<AppHeader config={makeConfig()} user={makeUser()} embedded />);
    expect(screen.queryByRole('navigation')).toBeNull();
    expect(screen.queryByTestId('user-menu')).toBeNull();
    expect(screen.queryByRole('link', { name: 'Log in' })).toBeNull();
  });

  it('offers Work As..., the hub and Logout; logout goes to the configured logout URL', async () => {
    const config = makeConfig({
      ssoLoginUrl: 'https://hub.example.com/',
      ssoLogoutUrl: 'https://hub.example.com/logout',
    });
    const { calls } = mockFetch({
      'POST /api/auth/logout': { body: { success: true, message: 'Logged out', redirectUrl: null } },
    });
    setCsrfToken('tok');
    renderWithProviders(<AppHeader config={config} user={makeUser()} embedded={false} />, { config });
    fireEvent.click(screen.getByTestId('user-menu'));
    await screen.findByRole('menuitem', { name: 'Work As...' });
    expect(screen.getByRole('menuitem', { name: 'Hub' }).getAttribute('href')).toBe('https://hub.example.com/');
    fireEvent.click(screen.getByRole('menuitem', { name: 'Logout' }));
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith('https://hub.example.com/logout'));
    expect(calls.find((c) => c.path === '/api/auth/logout')?.headers.get('X-CSRF-Token')).toBe('tok');
  });

  it("logs a single sign-on session out at the provider's logout, and hides Change password without local login", async () => {
    const config = makeConfig({ oidcName: 'Acme ID', localLogin: false });
    const endSession = 'https://id.example.com/session/end?id_token_hint=x';
    mockFetch({ 'POST /api/auth/logout': { body: { success: true, message: 'Logged out', redirectUrl: endSession } } });
    setCsrfToken('tok');
    renderWithProviders(<AppHeader config={config} user={makeUser()} embedded={false} />, { config });
    fireEvent.click(screen.getByTestId('user-menu'));
    await screen.findByRole('menuitem', { name: 'Logout' });
    expect(screen.queryByRole('menuitem', { name: 'Change password' })).toBeNull();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Logout' }));
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith(endSession));
  });

  it('has no hub link without SSO, and logs out to /login even when the call fails', async () => {
    mockFetch({ 'POST /api/auth/logout': { status: 500, body: { success: false, message: 'boom' } } });
    setCsrfToken('tok');
    renderWithProviders(<AppHeader config={makeConfig()} user={makeUser()} embedded={false} />, {
      config: makeConfig(),
    });
    fireEvent.click(screen.getByTestId('user-menu'));
    await screen.findByRole('menuitem', { name: 'Logout' });
    expect(screen.queryByRole('menuitem', { name: 'Hub' })).toBeNull();
    fireEvent.click(screen.getByRole('menuitem', { name: 'Logout' }));
    await waitFor(() => expect(fullPageNavigate).toHaveBeenCalledWith('/login'));
  });

  it('opens Change password from the menu, coming back to the current page afterwards', async () => {
    const header = (
      <>
        <AppHeader config={makeConfig()} user={makeUser()} embedded={false} />
        <LocationProbe />
      </>
    );
    renderRoutes([{ path: '*', element: header }], { path: '/studies/3/cases?page=2' });
    fireEvent.click(screen.getByTestId('user-menu'));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Change password' }));
    await waitFor(() =>
      expect(screen.getByTestId('location').textContent).toBe(
        '/changePassword?redirect=%2Fstudies%2F3%2Fcases%3Fpage%3D2',
      ),
    );
  });

  it('shows no tabs and no Work As... while a one-time password must be changed', async () => {
    renderWithProviders(
      <AppHeader config={makeConfig()} user={makeUser({ mustChangePassword: true })} embedded={false} />,
    );
    expect(screen.queryByRole('navigation', { name: 'Main' })).toBeNull();
    fireEvent.click(screen.getByTestId('user-menu'));
    await screen.findByRole('menuitem', { name: 'Change password' });
    screen.getByRole('menuitem', { name: 'Logout' });
    expect(screen.queryByRole('menuitem', { name: 'Work As...' })).toBeNull();
  });

  it('opens the Work As dialog from the menu', async () => {
    mockFetch({
      'GET /api/users/availableRoles': {
        body: [
          { id: 2, displayName: 'ISC Reviewer' },
          { id: 5, displayName: 'Data Manager' },
        ],
      },
    });
    renderWithProviders(<AppHeader config={makeConfig()} user={makeUser()} embedded={false} />);
    fireEvent.click(screen.getByTestId('user-menu'));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Work As...' }));
    await screen.findByRole('radio', { name: 'Data Manager' });
  });
});
