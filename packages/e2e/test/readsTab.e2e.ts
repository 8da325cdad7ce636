import { roleByName } from '@lamina/domain';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { createStudyViaApi, logout, mutationHeaders, uniqueStudyName } from '../src/app.js';
import { VIEWPORT, e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import {
  EOE_READ_STUDY,
  asUser,
  caseOfSlideCopy,
  demoSlideId,
  drawHpfWithPoints,
  imageCentre,
  loginToStudies,
  markScored,
  passQc,
  peakEosinophilsEndpoint,
  uniqueTag,
  userIds,
} from '../src/reads.js';

/**
 * Issue 30, the study's Reads tab in the browser at 1280×800: a study of its own with a peak-count
 * endpoint, three cases (copies of a demo slide) read by Rita and Ravi through the API as a user
 * would (real annotation POSTs and Mark as Scored PATCHes); the ISC opens the tab and sees the values
 * side by side, the final ones, the agreement panel and both charts drawn by recharts in Chromium,
 * nothing wider than the window.
 */

interface ReadCase {
  caseId: number;
  imageId: number;
  procId: string;
  centre: [number, number];
}

/** reader1's and reader2's peak counts of the three cases: pairs (4, 6), (2, 2), (5, 3). */
const COUNTS: Record<'reader1' | 'reader2', number[]> = { reader1: [4, 2, 5], reader2: [6, 2, 3] };

/** The study, and three Processed cases each holding a copy of a demo slide, assigned to both readers. */
async function readStudy(page: Page) {
  const ids = await userIds(page, ['isc', 'reader1', 'reader2']);
  const study = await createStudyViaApi(page, {
    name: uniqueStudyName('E2E Reads'),
    ...EOE_READ_STUDY,
    endpoints: [peakEosinophilsEndpoint(4)],
    readers: [ids.reader1, ids.reader2],
    readonlyUsers: [{ id: ids.isc, roleId: roleByName('ISC').id }],
  });
  const headers = await mutationHeaders(page);
  const sourceId = await demoSlideId(page, headers);

  const cases: ReadCase[] = [];
  const tag = uniqueTag();
  for (let n = 1; n <= 3; n++) {
    const procId = `E2E-READS-${tag}-${n}`;
    const { caseId, imageId } = await caseOfSlideCopy(page, headers, {
      studyId: study.id,
      sourceId,
      procId,
      subjectId: `SUBJ-${tag}-${n}`,
      readers: [ids.reader1, ids.reader2],
      reason: 'E2E: the Reads tab study’s slide',
    });
    await passQc(page, headers, caseId);
    cases.push({ caseId, imageId, procId, centre: await imageCentre(page, imageId) });
  }
  return { study, cases };
}

/** A reader, in their own browser context, draws an HPF holding their count of Eosinophils on each case and marks it scored. */
async function readAll(
  browser: Browser,
  username: 'reader1' | 'reader2',
  study: { hpfClassId: number; pointClassId: number },
  cases: readonly ReadCase[],
): Promise<void> {
  await asUser(browser, username, async (page, headers) => {
    for (const [index, c] of cases.entries()) {
      await drawHpfWithPoints(page, headers, { ...study, ...c }, COUNTS[username][index] ?? 0);
      await markScored(page, headers, c.caseId);
    }
  });
}

describe('the study’s Reads tab (issue 30)', () => {
  test(
    'the ISC reads each case’s values side by side, the agreement and both charts, at 1280×800',
    { timeout: 300_000 },
    async ({ page, browser }) => {
      await loginToStudies(page, 'sysadmin');
      const { study, cases } = await readStudy(page);
      await logout(page);
      const classes = { hpfClassId: study.hpfClasses[0]!.id, pointClassId: study.pointClasses[0]!.id };
      await readAll(browser, 'reader1', classes, cases);
      await readAll(browser, 'reader2', classes, cases);

      await loginToStudies(page, 'isc');
      await page.goto(appUrl(`/studies/${study.id}/reads`));
      expect(await page.getByRole('tab', { selected: true }).textContent()).toBe('Reads');
      const table = page.getByRole('table', { name: 'Reads' });
      // The first case: Rita 4, Ravi 6, final 5 (their mean), both positive (≥ 4).
      const first = table.getByRole('row').filter({ hasText: cases[0]!.procId });
      await first.waitFor();
      expect(await table.locator('tbody tr').count()).toBe(3);
      expect(await first.locator('.lamina-read-final').textContent()).toBe('5Positive');
      expect(await first.getByText('Completed').count()).toBe(1);

      const panel = page.getByRole('region', { name: 'Agreement: Peak eosinophils per HPF' });
      await panel.getByRole('rowheader', { name: 'ICC(2,1)' }).waitFor();
      // Differences A − B: −2, 0, 2 → mean 0.
      const meanDifference = panel.getByRole('rowheader', { name: 'Mean difference (A − B)' }).locator('xpath=..');
      expect(await meanDifference.locator('td').textContent()).toBe('0');

      const scatter = page.getByRole('figure', { name: 'Reader A against reader B: Peak eosinophils per HPF' });
      const blandAltman = page.getByRole('figure', { name: 'Bland–Altman: Peak eosinophils per HPF' });
      await expect.poll(async () => scatter.locator('.recharts-scatter-symbol').count()).toBe(3);
      await expect.poll(async () => blandAltman.locator('.recharts-scatter-symbol').count()).toBe(3);
      expect(await blandAltman.locator('.lamina-chart-reference').count()).toBe(3);

      // Nothing is wider than the window: no horizontal scroll, both charts inside it.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORT.width);
      for (const chart of [scatter, blandAltman]) {
        await chart.scrollIntoViewIfNeeded();
        const box = await chart.boundingBox();
        expect(box && box.x >= 0 && box.x + box.width <= VIEWPORT.width).toBe(true);
      }
      await saveScreenshot(page, 'reads-tab.png', { fullPage: true });
    },
  );
});
