import { MESSAGES, ROLE_PERMISSIONS, visibleNavTabs } from '@lamina/domain';
import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import {
  chooseUserMenuItem,
  displayNameOf,
  eventually,
  expectedTabLabels,
  loginViaUi,
  userInfo,
  visibleTabLabels,
  waitForPath,
  workAsText,
  workAsViaApi,
} from '../src/app.js';
import { e2eTest as test } from '../src/browser.js';

function workAsDialog(page: Page) {
  return page.getByRole('dialog', { name: 'Work As...' });
}

/** Picks a role in the open Work As dialog and saves; resolves after the page has reloaded. */
async function switchRoleViaDialog(page: Page, roleDisplayName: string): Promise<void> {
  await chooseUserMenuItem(page, 'Work As...');
  const dialog = workAsDialog(page);
  await dialog.waitFor();
  // Click the radio's label, as a user does (Blueprint draws its own indicator over the input).
  const radio = dialog.getByRole('radio', { name: roleDisplayName, exact: true });
  await dialog
    .locator('label')
    .filter({ has: page.getByRole('radio', { name: roleDisplayName, exact: true }) })
    .click();
  expect(await radio.isChecked()).toBe(true);
  // A marker on window survives only as long as the document does: gone after a real reload.
  await page.evaluate(() => {
    (window as unknown as { __e2eBeforeSave?: boolean }).__e2eBeforeSave = true;
  });
  const reloaded = page.waitForEvent('load');
  await dialog.getByRole('button', { name: 'Save', exact: true }).click();
  await reloaded;
  expect(
    await page.evaluate(() => (window as unknown as { __e2eBeforeSave?: boolean }).__e2eBeforeSave),
  ).toBeUndefined();
}

describe('Work As', () => {
  test('dm switches to Project Manager and back', async ({ page }) => {
    await loginViaUi(page, 'dm');
    await waitForPath(page, '/studies');
    const dataManager = displayNameOf('DM');
    const projectManager = displayNameOf('PM');
    await eventually(() => workAsText(page)).toBe('Data Manager');

    let switched = false;
    try {
      // The dialog offers the other role only.
      await chooseUserMenuItem(page, 'Work As...');
      const dialog = workAsDialog(page);
      await dialog.getByRole('radio').first().waitFor();
      const offered = await dialog.locator('label:has(input[type="radio"])').allInnerTexts();
      expect(offered.map((label) => label.trim())).toEqual([projectManager]);
      await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });

      await switchRoleViaDialog(page, projectManager);
      switched = true;
      await eventually(() => workAsText(page)).toBe('Project Manager');
      await eventually(() => visibleTabLabels(page)).toEqual(expectedTabLabels('PM'));
      const asPm = await userInfo(page);
      expect(asPm.workAsRole?.name).toBe('PM');
      // DM and PM happen to share their tabs; the permissions are what tell them apart.
      expect([...asPm.actions].sort()).toEqual([...ROLE_PERMISSIONS.PM].sort());
      expect(visibleNavTabs(asPm.actions).map((tab) => tab.label)).toEqual(expectedTabLabels('PM'));

      // Back to Data Manager through the same dialog.
      await switchRoleViaDialog(page, dataManager);
      await eventually(() => workAsText(page)).toBe(dataManager);
      await eventually(() => visibleTabLabels(page)).toEqual(expectedTabLabels('DM'));
      const asDm = await userInfo(page);
      expect(asDm.workAsRole?.name).toBe('DM');
      expect([...asDm.actions].sort()).toEqual([...ROLE_PERMISSIONS.DM].sort());
      switched = false;
    } finally {
      // Leave dm working as DM for the other tests even when an assertion above failed.
      if (switched) await workAsViaApi(page, 'DM');
    }
  });

  test('pm, with a single role, is told there are no other roles and cannot save', async ({ page }) => {
    await loginViaUi(page, 'pm');
    await waitForPath(page, '/studies');
    await eventually(() => workAsText(page)).toBe(displayNameOf('PM'));

    await chooseUserMenuItem(page, 'Work As...');
    const dialog = workAsDialog(page);
    await dialog.getByText(MESSAGES.noOtherRoles, { exact: true }).waitFor();
    expect(await dialog.getByRole('radio').count()).toBe(0);
    expect(await dialog.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
  });
});
