import { ROLE_PERMISSIONS, visibleNavTabs } from '@lamina/domain';
import { describe, expect } from 'vitest';
import {
  displayNameOf,
  expectedTabLabels,
  loginViaUi,
  pageHeading,
  pathnameOf,
  ROLE_ACCOUNTS,
  userInfo,
  visibleTabLabels,
  waitForPath,
  workAsTag,
} from '../src/app.js';
import { e2eTest as test } from '../src/browser.js';

describe('top navigation per role', () => {
  for (const account of ROLE_ACCOUNTS) {
    test(`${account.username} works as ${account.role} and sees exactly its tabs`, async ({ page }) => {
      await loginViaUi(page, account.username);
      await waitForPath(page, account.landsOn);

      const roleName = displayNameOf(account.role);
      await workAsTag(page).filter({ hasText: roleName }).waitFor();
      expect((await workAsTag(page).innerText()).trim()).toBe(roleName);

      // What the server says this session may do, read with the page's own cookies.
      const info = await userInfo(page);
      expect(info.username).toBe(account.username);
      expect(info.workAsRole?.name).toBe(account.role);
      // The server's permission map is the domain's: same actions as ROLE_PERMISSIONS[role].
      expect([...info.actions].sort()).toEqual([...ROLE_PERMISSIONS[account.role]].sort());

      const fromServer = visibleNavTabs(info.actions).map((tab) => tab.label);
      const fromDomain = expectedTabLabels(account.role);
      await expect.poll(() => visibleTabLabels(page)).toEqual(fromServer);
      expect(await visibleTabLabels(page)).toEqual(fromDomain);

      if (account.landsOn === '/studies') {
        await pageHeading(page, 'Studies').waitFor();
      } else {
        // No S_Main_ViewStudyPage: the guard of /studies sent the browser to /accessDenied.
        expect(ROLE_PERMISSIONS[account.role]).not.toContain('S_Main_ViewStudyPage');
        await page.getByRole('heading', { name: 'Access denied' }).waitFor();
      }
      expect(pathnameOf(page)).toBe(account.landsOn);
    });
  }
});
