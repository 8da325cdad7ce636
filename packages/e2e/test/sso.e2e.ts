import { CSRF_HEADER, roleByName } from '@lamina/domain';
import { startTestProvider, type TestAccount, type TestProvider } from '@lamina/test-support/oidcProvider';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { e2eTest as test } from '../src/browser.js';
import { freePort, startServer, type RunningServer } from '../src/server.js';

/**
 * Single sign-on in Chromium (issue 19): a Lamina server of its own, configured for a real OpenID
 * Connect provider (oidc-provider) started here. The user clicks the login page's SSO button, logs
 * in at the provider's form, lands in the app as the account whose username is the provider's
 * e-mail address, and logs out through the provider back to /login.
 */

const PASSWORD = 'e2e-Lamina-SSO-Pass-2026';
const EMAIL = `e2e.sso-${Date.now().toString(36)}@example.org`;
const accounts: Record<string, TestAccount> = { 'grace.sso': { email: EMAIL.toUpperCase(), emailVerified: true } };

let provider: TestProvider;
let server: RunningServer;

beforeAll(async () => {
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  provider = await startTestProvider(appUrl, accounts);
  server = await startServer(PASSWORD, {
    port,
    env: {
      PUBLIC_URL: appUrl,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
      OIDC_NAME: 'Test Identity',
    },
  });
});

afterAll(async () => {
  await server?.stop();
  await provider?.close();
});

const url = (pathname: string) => new URL(pathname, server.baseUrl).toString();

/** A mutating call from the page's session: its CSRF token and a same-site Origin. */
async function mutate(page: Page, method: 'post' | 'patch', pathname: string, data: object) {
  const { csrfToken } = (await (await page.request.get(url('/api/auth/csrf'))).json()) as { csrfToken: string };
  const response = await page.request[method](url(pathname), {
    headers: { [CSRF_HEADER]: csrfToken, Origin: server.baseUrl },
    data,
  });
  if (!response.ok()) throw new Error(`${pathname} answered ${response.status()}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * As sysadmin (password login, through the API): an account named by the e-mail address, with Data
 * Manager access to the demo study. It keeps its one-time password: single sign-on is not held by it.
 */
async function registerAccount(page: Page): Promise<number> {
  const login = await page.request.post(url('/api/auth/login'), { data: { username: 'sysadmin', password: PASSWORD } });
  expect(login.status()).toBe(200);
  const created = await mutate(page, 'post', '/api/users', {
    username: EMAIL,
    firstName: 'Grace',
    lastName: 'Single',
    organizationId: null,
  });
  const userId = (created.user as { id: number }).id;
  const list = await page.request.get(url('/api/studies/list?name=DEMO-UC-001'));
  const study = ((await list.json()) as { studies: { id: number }[] }).studies[0];
  if (!study) throw new Error('the demo study is not listed');
  await mutate(page, 'patch', '/api/users/studies/add', { studyId: study.id, userId, roleId: roleByName('DM').id });
  await mutate(page, 'post', '/api/auth/logout', {});
  return userId;
}

describe('single sign-on (OpenID Connect)', () => {
  test('the SSO button logs in at the provider, lands as the matched user, and logout goes through the provider', async ({
    page,
  }) => {
    const userId = await registerAccount(page);

    await page.goto(url('/login?redirect=%2Fstudies'));
    const button = page.getByRole('button', { name: 'Log in with Test Identity' });
    await button.waitFor();
    // Keyboard reachable: focus it and press Enter.
    await button.focus();
    await page.keyboard.press('Enter');

    // The provider's own login form.
    await page.waitForURL((u) => u.origin === provider.issuer);
    await page.locator('input[name="login"]').fill('grace.sso');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();

    // Back in Lamina, as the account the e-mail names, on the page asked for (no password prompt).
    await page.waitForURL((u) => u.origin === server.baseUrl && u.pathname === '/studies');
    await page.getByTestId('work-as-role').waitFor();
    const info = (await (await page.request.get(url('/api/users/info'))).json()) as {
      id: number;
      username: string;
      mustChangePassword: boolean;
    };
    expect(info).toMatchObject({ id: userId, username: EMAIL, mustChangePassword: false });
    expect(await page.getByTestId('user-menu').innerText()).toContain('Grace Single');

    // Logout: the local session ends, then the provider asks and logs out, and sends us to /login.
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: 'Logout', exact: true }).click();
    await page.waitForURL((u) => u.origin === provider.issuer);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL((u) => u.origin === server.baseUrl && u.pathname === '/login');
    await page.getByRole('button', { name: 'Log in with Test Identity' }).waitFor();
    expect(provider.logouts()).toBe(1);
    expect((await page.request.get(url('/api/users/info'))).status()).toBe(401);
  });
});
