import { MESSAGES, roleByName } from '@lamina/domain';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import {
  eventually,
  fetchUserInfo,
  loginViaUi,
  mutationHeaders,
  pageHeading,
  pathnameOf,
  submitLogin,
  waitForPath,
} from '../src/app.js';
import { e2eTest as test, newTestContext } from '../src/browser.js';
import { appUrl } from '../src/env.js';

const DEMO_STUDY = 'DEMO-UC-001';
const NEW_PASSWORD = 'my own passphrase for Lamina';

/** A page in a context of its own (own cookies), closed by the test's `finally`. */
async function freshPage(browser: Browser, opened: BrowserContext[]): Promise<Page> {
  const context = await newTestContext(browser);
  context.setDefaultTimeout(15_000);
  context.setDefaultNavigationTimeout(30_000);
  opened.push(context);
  return context.newPage();
}

/**
 * As the page's system admin: POST /api/users, then Data Manager access to the demo study so the
 * account has a page to land on. Answers the username and the one-time password.
 */
async function createAccountViaApi(page: Page): Promise<{ username: string; initialPassword: string }> {
  const username = `e2e.pw-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.org`;
  const created = await page.request.post(appUrl('/api/users'), {
    headers: await mutationHeaders(page),
    data: { username, firstName: 'Pat', lastName: 'Passwordson', organizationId: null },
  });
  if (created.status() !== 201)
    throw new Error(`POST /api/users answered ${created.status()}: ${await created.text()}`);
  const { user, initialPassword } = (await created.json()) as { user: { id: number }; initialPassword: string };

  const list = await page.request.get(appUrl(`/api/studies/list?name=${encodeURIComponent(DEMO_STUDY)}`));
  const study = ((await list.json()) as { studies: { id: number }[] }).studies[0];
  if (!study) throw new Error(`the demo study ${DEMO_STUDY} is not listed`);
  const granted = await page.request.patch(appUrl('/api/users/studies/add'), {
    headers: await mutationHeaders(page),
    data: { studyId: study.id, userId: user.id, roleId: roleByName('DM').id },
  });
  if (granted.status() !== 200)
    throw new Error(`PATCH /api/users/studies/add answered ${granted.status()}: ${await granted.text()}`);
  return { username, initialPassword };
}

describe('forced password change', () => {
  test('a new account changes its one-time password at first login, then logs in with the new one', async ({
    browser,
    page,
  }) => {
    await loginViaUi(page, 'sysadmin');
    await waitForPath(page, '/studies');
    const account = await createAccountViaApi(page);

    const opened: BrowserContext[] = [];
    try {
      // First login with the one-time password: straight to /changePassword, the redirect kept.
      const user = await freshPage(browser, opened);
      await loginViaUi(user, account.username, { password: account.initialPassword, redirect: '/studies' });
      await waitForPath(user, '/changePassword');
      expect(new URL(user.url()).searchParams.get('redirect')).toBe('/studies');
      await user.getByText(MESSAGES.passwordChangeRequired, { exact: true }).waitFor();
      // Meanwhile the server refuses everything else, and other pages lead back here.
      const refused = await user.request.get(appUrl('/api/studies/list'), { headers: { Accept: 'application/json' } });
      expect(refused.status()).toBe(403);
      expect(await refused.json()).toEqual({ success: false, message: MESSAGES.passwordChangeRequired });
      await user.goto(appUrl('/studies'));
      await waitForPath(user, '/changePassword');

      const submit = user.getByRole('button', { name: 'Change password', exact: true });
      await user.getByLabel('Current password', { exact: true }).fill(account.initialPassword);
      await user.getByLabel('New password', { exact: true }).fill('too short');
      await user.getByText(MESSAGES.passwordTooShort, { exact: true }).waitFor();
      expect(await submit.isDisabled()).toBe(true);
      await user.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await user.getByLabel('Confirm new password', { exact: true }).fill(NEW_PASSWORD);
      await eventually(() => submit.isEnabled()).toBe(true);
      await submit.click();

      await waitForPath(user, '/studies');
      await user.getByText(MESSAGES.passwordChanged, { exact: true }).waitFor();
      await pageHeading(user, 'Studies').waitFor();
      await user.getByRole('table', { name: 'Studies' }).getByText(DEMO_STUDY, { exact: false }).waitFor();
      const info = (await (await fetchUserInfo(user)).json()) as { mustChangePassword: boolean };
      expect(info.mustChangePassword).toBe(false);

      // The one-time password no longer logs in; the new one does, with no detour.
      const again = await freshPage(browser, opened);
      await submitLogin(again, account.username, { password: account.initialPassword });
      await again.getByRole('alert').filter({ hasText: MESSAGES.invalidLogin }).waitFor();
      expect(pathnameOf(again)).toBe('/login');
      await loginViaUi(again, account.username, { password: NEW_PASSWORD, open: false });
      await waitForPath(again, '/studies');
      await pageHeading(again, 'Studies').waitFor();
      expect(pathnameOf(again)).toBe('/studies');
    } finally {
      for (const context of opened) await context.close();
    }
  });
});
