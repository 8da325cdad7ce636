import { MESSAGES, ROLE_PERMISSIONS, visibleNavTabs } from '@lamina/domain';
import { describe, expect } from 'vitest';
import {
  displayNameOf,
  eventually,
  expectedTabLabels,
  loginViaUi,
  pageHeading,
  pathnameOf,
  ROLE_ACCOUNTS,
  userInfo,
  visibleTabLabels,
  workAsText,
} from '../src/app.js';
import { e2eTest as test } from '../src/browser.js';

describe('top navigation per role', () => {
  for (const account of ROLE_ACCOUNTS) {
    test(`${account.username} works as ${account.role} and sees exactly its tabs`, async ({ page }) => {
      await loginViaUi(page, account.username);
      // Login goes to /studies; the guard may send the browser on to /accessDenied. Wait for either page.
      const studies = pageHeading(page, 'Studies');
      const accessDenied = page.getByRole('main').getByRole('heading', { name: MESSAGES.accessDeniedTitle });
      const assigned = pageHeading(page, 'Your assigned cases');
      await studies.or(accessDenied).or(assigned).first().waitFor();
      await eventually(() => pathnameOf(page)).toBe(account.landsOn);
      if (account.landsOn === '/accessDenied') {
        // No S_Main_ViewStudyPage: the guard of /studies refused.
        expect(ROLE_PERMISSIONS[account.role]).not.toContain('S_Main_ViewStudyPage');
        expect(await accessDenied.isVisible()).toBe(true);
      } else if (account.landsOn === '/assigned') {
        // A reader without the studies page starts on the cases assigned to them.
        expect(ROLE_PERMISSIONS[account.role]).not.toContain('S_Main_ViewStudyPage');
        expect(await assigned.isVisible()).toBe(true);
      } else {
        expect(await studies.isVisible()).toBe(true);
      }

      await eventually(() => workAsText(page)).toBe(displayNameOf(account.role));

      // What the server says this session may do, read with the page's own cookies.
      const info = await userInfo(page);
      expect(info.username).toBe(account.username);
      expect(info.workAsRole?.name).toBe(account.role);
      // The server's permission map is the domain's: same actions as ROLE_PERMISSIONS[role].
      expect([...info.actions].sort()).toEqual([...ROLE_PERMISSIONS[account.role]].sort());

      const fromServer = visibleNavTabs(info.actions).map((tab) => tab.label);
      const fromDomain = expectedTabLabels(account.role);
      await eventually(() => visibleTabLabels(page)).toEqual(fromServer);
      expect(await visibleTabLabels(page)).toEqual(fromDomain);
      // Still on the landing page: nothing redirected in the meantime.
      expect(pathnameOf(page)).toBe(account.landsOn);
    });
  }
});
