import { roleByName, type CaseView } from '@lamina/domain';
import type { APIResponse, Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import {
  createStudyViaApi,
  demoStudyId,
  loginViaUi,
  logout,
  mutationHeaders,
  uniqueStudyName,
  waitForPath,
} from '../src/app.js';
import { VIEWPORT, e2eTest as test, newTestContext, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { DEMO_READY_TIMEOUT } from '../src/viewer.js';

/**
 * Issue 30, the study's Reads tab in the browser at 1280×800: a study of its own with a peak-count
 * endpoint, three cases (copies of a demo slide) read by Rita and Ravi through the API as a user
 * would (real annotation POSTs and Mark as Scored PATCHes); the ISC opens the tab and sees the values
 * side by side, the final ones, the agreement panel and both charts drawn by recharts in Chromium,
 * nothing wider than the window.
 */

async function ok<T>(response: Promise<APIResponse>, status = 200): Promise<T> {
  const answer = await response;
  expect(answer.status(), await answer.text()).toBe(status);
  return (await answer.json()) as T;
}

async function userId(page: Page, username: string): Promise<number> {
  const { users } = await ok<{ users: { id: number; username: string }[] }>(
    page.request.get(appUrl(`/api/users?name=${encodeURIComponent(username)}`)),
  );
  const user = users.find((u) => u.username === username);
  if (!user) throw new Error(`no user ${username}`);
  return user.id;
}

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
  const ids = Object.fromEntries(
    await Promise.all(['isc', 'reader1', 'reader2'].map(async (u) => [u, await userId(page, u)] as const)),
  ) as Record<'isc' | 'reader1' | 'reader2', number>;
  const study = await createStudyViaApi(page, {
    name: uniqueStudyName('E2E Reads'),
    sponsor: 'Acme Therapeutics',
    indications: ['EOSINOPHILIC_ESOPHAGITIS'],
    segments: 1,
    anatomicalSegments: ['Esophagus'],
    modality: ['HISTOPATHOLOGY'],
    visitIds: ['SCREENING'],
    labVisitIds: ['SCR'],
    hpfClasses: [{ name: 'HPF', color: '#2D72D2', sortOrder: 0, enabled: true }],
    pointClasses: [{ name: 'Eosinophil', color: '#CD4246', sortOrder: 0, enabled: true }],
    endpoints: [
      {
        key: 'pec',
        label: 'Peak eosinophils per HPF',
        kind: 'PEAK_COUNT_PER_HPF',
        className: 'Eosinophil',
        threshold: 4,
        positiveWhen: 'GTE',
      },
    ],
    readers: [ids.reader1, ids.reader2],
    readonlyUsers: [{ id: ids.isc, roleId: roleByName('ISC').id }],
  });
  const headers = await mutationHeaders(page);
  const demoStudy = await demoStudyId(page);
  let sourceId: number | undefined;
  await expect
    .poll(
      async () => {
        const listed = await ok<{ results?: { id: number; imageFilename?: string }[] }>(
          page.request.post(appUrl('/api/imageManagement/images'), {
            headers,
            data: { searchText: 'S100', studyFilter: { selectedIds: [demoStudy] }, pageSize: 20 },
          }),
        );
        sourceId = listed.results?.find((r) => /^S100\d_/.test(r.imageFilename ?? ''))?.id;
        return sourceId;
      },
      { timeout: DEMO_READY_TIMEOUT, interval: 2000 },
    )
    .toBeDefined();

  const cases: ReadCase[] = [];
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 5)}`.toUpperCase();
  for (let n = 1; n <= 3; n++) {
    const { imageId } = await ok<{ imageId: number }>(
      page.request.post(appUrl(`/api/images/${String(sourceId)}/copy`), {
        headers,
        data: { name: `E2E-READS-${tag}-${n}.tif` },
      }),
    );
    await ok(
      page.request.patch(appUrl(`/api/images/${imageId}/study`), {
        headers,
        data: { value: study.id, reasonForChange: 'E2E: the Reads tab study’s slide' },
      }),
    );
    const procId = `E2E-READS-${tag}-${n}`;
    const created = await ok<{ case: CaseView }>(
      page.request.post(appUrl('/api/cases'), {
        headers,
        data: {
          studyId: study.id,
          procId,
          subjectId: `SUBJ-${tag}-${n}`,
          siteId: 'SITE-01',
          visitId: 'SCREENING',
          images: [imageId],
          readers: [ids.reader1, ids.reader2],
        },
      }),
      201,
    );
    for (let step = 0; step < 2; step++)
      await ok(page.request.patch(appUrl(`/api/cases/${created.case.id}/status/forward`), { headers, data: {} }));
    const image = await ok<{ width: number; height: number }>(page.request.get(appUrl(`/api/images/${imageId}`)));
    cases.push({
      caseId: created.case.id,
      imageId,
      procId,
      centre: [Math.round(image.width / 2), Math.round(image.height / 2)],
    });
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
  const context = await newTestContext(browser);
  try {
    const page = await context.newPage();
    await loginViaUi(page, username);
    const headers = await mutationHeaders(page);
    const draw = (data: object) => ok(page.request.post(appUrl('/api/annotations'), { headers, data }));
    for (const [index, c] of cases.entries()) {
      const [x, y] = c.centre;
      await draw({
        imageId: c.imageId,
        annotationType: 'HPF',
        annotationClassId: study.hpfClassId,
        geometry: { type: 'Point', coordinates: [x, y] },
      });
      for (let i = 0; i < (COUNTS[username][index] ?? 0); i++)
        await draw({
          imageId: c.imageId,
          annotationType: 'POINT',
          annotationClassId: study.pointClassId,
          geometry: { type: 'Point', coordinates: [x + i * 4, y] },
        });
      await ok(page.request.patch(appUrl(`/api/cases/${c.caseId}/status/forward`), { headers, data: {} }));
    }
  } finally {
    await context.close();
  }
}

describe('the study’s Reads tab (issue 30)', () => {
  test(
    'the ISC reads each case’s values side by side, the agreement and both charts, at 1280×800',
    { timeout: 300_000 },
    async ({ page, browser }) => {
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      const { study, cases } = await readStudy(page);
      await logout(page);
      const classes = { hpfClassId: study.hpfClasses[0]!.id, pointClassId: study.pointClasses[0]!.id };
      await readAll(browser, 'reader1', classes, cases);
      await readAll(browser, 'reader2', classes, cases);

      await loginViaUi(page, 'isc');
      await waitForPath(page, '/studies');
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
