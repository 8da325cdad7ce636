import { MESSAGES } from '@lamina/domain';
import { describe, expect } from 'vitest';
import {
  chooseUserMenuItem,
  fetchUserInfo,
  loginViaUi,
  pageHeading,
  pathnameOf,
  submitLogin,
  visibleTabLabels,
  waitForPath,
  workAsTag,
} from '../src/app.js';
import { e2eTest as test } from '../src/browser.js';
import { appUrl } from '../src/env.js';

describe('login', () => {
  test('a guarded page sends a logged-out user to /login?redirect=, and login returns there', async ({ page }) => {
    await page.goto(appUrl('/users'));
    await waitForPath(page, '/login');
    const loginUrl = new URL(page.url());
    expect(loginUrl.searchParams.get('redirect')).toBe('/users');
    expect(loginUrl.search).toMatch(/^\?redirect=(%2F|\/)users$/i);

    await loginViaUi(page, 'studyadmin', { open: false });
    await waitForPath(page, '/users');
    await pageHeading(page, 'Users').waitFor();
    expect(pathnameOf(page)).toBe('/users');
    expect((await fetchUserInfo(page)).status()).toBe(200);
  });

  test('a wrong password shows the error and stays on /login', async ({ page }) => {
    await submitLogin(page, 'reader2', { password: 'definitely-not-the-password' });
    const alert = page.getByRole('alert').filter({ hasText: MESSAGES.invalidLogin });
    await alert.waitFor();
    expect((await alert.innerText()).trim()).toBe(MESSAGES.invalidLogin);
    expect(pathnameOf(page)).toBe('/login');
    // No session was created.
    expect((await fetchUserInfo(page)).status()).toBe(401);
  });

  test('an unregistered account lands on /welcome', async ({ page }) => {
    await loginViaUi(page, 'newuser');
    await waitForPath(page, '/welcome');
    await page.getByText(MESSAGES.welcome, { exact: true }).waitFor();
    expect(await page.getByText(MESSAGES.welcome, { exact: true }).isVisible()).toBe(true);
    expect(pathnameOf(page)).toBe('/welcome');
    // Not registered, no role: no tabs and no work-as role in the header.
    expect(await visibleTabLabels(page)).toEqual([]);
    expect(await workAsTag(page).count()).toBe(0);
  });
});

describe('guard', () => {
  test('a central reader sent to /users ends on /accessDenied', async ({ page }) => {
    await loginViaUi(page, 'reader1');
    await waitForPath(page, '/studies');
    await page.goto(appUrl('/users'));
    await waitForPath(page, '/accessDenied');
    await page.getByRole('heading', { name: MESSAGES.accessDeniedTitle }).waitFor();
    expect(await page.getByText(MESSAGES.accessDeniedHelp).isVisible()).toBe(true);
    expect(pathnameOf(page)).toBe('/accessDenied');
  });
});

describe('logout', () => {
  test('logout ends the session: /login, guarded pages redirect, users/info answers 401', async ({ page }) => {
    await loginViaUi(page, 'sponsor');
    await waitForPath(page, '/studies');
    await workAsTag(page).waitFor();
    expect((await fetchUserInfo(page)).status()).toBe(200);

    await chooseUserMenuItem(page, 'Logout');
    await waitForPath(page, '/login');
    await page.getByRole('button', { name: 'Log in', exact: true }).waitFor();

    await page.goto(appUrl('/studies'));
    await waitForPath(page, '/login');
    expect(new URL(page.url()).searchParams.get('redirect')).toBe('/studies');

    const info = await fetchUserInfo(page);
    expect(info.status()).toBe(401);
  });
});

describe('security headers', () => {
  // The test server allows its own origin to frame the app (the NOTO embedded test); the default
  // 'none' is the server's unit test's.
  test('the app page is served with a CSP whose frame-ancestors are only those configured', async ({ page }) => {
    const response = await page.goto(appUrl('/'));
    expect(response).not.toBeNull();
    expect(response!.status()).toBe(200);
    const csp = response!.headers()['content-security-policy'];
    expect(csp).toBeDefined();
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).not.toMatch(/frame-ancestors[^;]*\*/);
  });
});
