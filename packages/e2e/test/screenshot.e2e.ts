import { stat } from 'node:fs/promises';
import { describe, expect } from 'vitest';
import {
  eventually,
  expectedTabLabels,
  loginViaUi,
  pageHeading,
  visibleTabLabels,
  waitForPath,
  workAsTag,
} from '../src/app.js';
import { e2eTest as test, saveScreenshot, VIEWPORT } from '../src/browser.js';

describe('layout', () => {
  test('studies page of studyadmin at 1280×800 (test-results/studies-studyadmin.png)', async ({ page }) => {
    await loginViaUi(page, 'studyadmin');
    await waitForPath(page, '/studies');
    await pageHeading(page, 'Studies').waitFor();
    await workAsTag(page).waitFor();
    await eventually(() => visibleTabLabels(page)).toEqual(expectedTabLabels('StudyAdmin'));
    await page.getByRole('table', { name: 'Studies' }).getByRole('row').nth(1).waitFor();
    await page.evaluate(() => document.fonts.ready.then(() => undefined));

    const file = await saveScreenshot(page, 'studies-studyadmin.png');
    expect((await stat(file)).size).toBeGreaterThan(5_000);

    // The page fits the viewport's width: no horizontal scrolling.
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth).toBeLessThanOrEqual(VIEWPORT.width);

    // Header across the top, full width; every tab and the user menu inside it, on one row.
    const header = await page.locator('.lamina-header').boundingBox();
    expect(header).not.toBeNull();
    expect(header!.y).toBe(0);
    expect(header!.width).toBe(VIEWPORT.width);
    const boxes = await Promise.all(
      ['Studies', 'Image Management', 'Reports', 'Queries', 'Users'].map((name) =>
        page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).boundingBox(),
      ),
    );
    const userMenu = await page.getByTestId('user-menu').boundingBox();
    for (const box of [...boxes, userMenu]) {
      expect(box).not.toBeNull();
      expect(box!.y).toBeGreaterThanOrEqual(header!.y);
      expect(box!.y + box!.height).toBeLessThanOrEqual(header!.y + header!.height);
      expect(box!.x + box!.width).toBeLessThanOrEqual(VIEWPORT.width);
    }
    // Tabs left to right in display order, without overlapping.
    for (let i = 1; i < boxes.length; i++) {
      expect(boxes[i]!.x).toBeGreaterThanOrEqual(boxes[i - 1]!.x + boxes[i - 1]!.width);
    }

    // The page's heading sits below the header, inside the viewport.
    const heading = await pageHeading(page, 'Studies').boundingBox();
    expect(heading).not.toBeNull();
    expect(heading!.y).toBeGreaterThanOrEqual(header!.y + header!.height);
    expect(heading!.y + heading!.height).toBeLessThanOrEqual(VIEWPORT.height);
  });
});
