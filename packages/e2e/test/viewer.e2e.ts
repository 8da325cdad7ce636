import { CASE_MESSAGES, MESSAGES } from '@lamina/domain';
import type { Frame, Locator, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { demoStudyId, loginViaUi, logout, mutationHeaders, waitForPath } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { DEMO_READY_TIMEOUT, DEMO_ZSTACK_PREFIX, demoCaseId, expectTissue, zoomInUntil } from '../src/viewer.js';
import { appUrl } from '../src/env.js';

async function caseStatus(page: Page, caseId: number): Promise<string> {
  const response = await page.request.get(appUrl(`/api/cases/${caseId}`));
  return ((await response.json()) as { case: { status: string } }).case.status;
}

const dialog = (scope: Page | Frame, name: string): Locator => scope.getByRole('dialog', { name });

/** Presses the top bar's case action and its confirmation ('Confirm Case Status Change', or 'Mark as Scored'). */
async function confirmCaseAction(scope: Page | Frame, action: string): Promise<void> {
  await scope.getByRole('button', { name: action, exact: true }).click();
  const title = action === 'Mark as Scored' ? action : 'Confirm Case Status Change';
  await dialog(scope, title).getByRole('button', { name: action, exact: true }).click();
}

/** The view the viewer keeps of an image (doc 3 §3): its resolution and centre. */
async function storedView(page: Page): Promise<string> {
  return page.evaluate(() => window.localStorage.getItem('lamina.viewer.views') ?? '');
}

describe('viewer, QC and scoring (issue 13)', () => {
  test(
    'the demo z-stack slide: at full resolution the z-stack slider chooses the focal plane',
    { timeout: 240_000 },
    async ({ page }) => {
      await loginViaUi(page, 'labtech');
      await waitForPath(page, '/studies');
      // The demo z-stack is made from a real test slide after the demo slide; wait until processed.
      let image: { id: number; studyId: number; zStackSize: number } | undefined;
      await expect
        .poll(
          async () => {
            const response = await page.request.post(appUrl('/api/imageManagement/images'), {
              headers: await mutationHeaders(page),
              data: { searchText: DEMO_ZSTACK_PREFIX },
            });
            const { results } = (await response.json()) as { results?: { id: number }[] };
            const found = results?.[0];
            if (!found) return undefined;
            const view = (await (await page.request.get(appUrl(`/api/images/${found.id}`))).json()) as {
              studyId: number | null;
              processingStatus: string;
              zStackSize: number;
            };
            if (view.processingStatus !== 'SUCCESS' || view.studyId === null) return undefined;
            image = { id: found.id, studyId: view.studyId, zStackSize: view.zStackSize };
            return image;
          },
          { timeout: DEMO_READY_TIMEOUT, interval: 2000 },
        )
        .toBeDefined();
      const { id, studyId, zStackSize } = image as { id: number; studyId: number; zStackSize: number };
      expect(zStackSize).toBeGreaterThan(2);
      await page.goto(appUrl(`/studies/${studyId}/images/${id}`));
      await expectTissue(page, 'viewer-zstack-fitted.png');
      expect(await page.getByRole('slider', { name: 'Z-stack plane' }).count()).toBe(0);
      await page.getByTestId('slide-map').focus();
      // Zoom in to the scan's full resolution (the slider shows only there).
      const plane = page.getByRole('slider', { name: 'Z-stack plane' });
      await zoomInUntil(page, async () => (await plane.count()) > 0);
      await plane.waitFor();
      // Another plane: its tiles come from the server's plane (?stack=n) and show tissue too.
      const stacked = page.waitForResponse((r) => /\/tiles\/.*[?&]stack=2/.test(r.url()) && r.status() === 200);
      await plane.focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      await expect.poll(async () => plane.getAttribute('aria-valuenow')).toBe('2');
      await stacked;
      await expectTissue(page, 'viewer-zstack-plane-2.png');
    },
  );

  test(
    'lab QC → ISC QC → reader1 reads (pan, 10x, microscope) and marks scored → reader2 completes; NOTO embedded',
    { timeout: 360_000 },
    async ({ page }) => {
      // Lab technician: pass the lab QC of a demo case from the case viewer.
      await loginViaUi(page, 'labtech');
      await waitForPath(page, '/studies');
      const studyId = await demoStudyId(page);
      const caseId = await demoCaseId(page, studyId, 'ENDO-1001');
      const caseUrl = appUrl(`/studies/${studyId}/cases/${caseId}`);
      await page.goto(caseUrl);
      await expectTissue(page, 'viewer-labtech-case.png');
      await confirmCaseAction(page, 'Pass Lab QC');
      await expect.poll(async () => page.getByTestId('case-status').textContent()).toBe('Pending QC');
      await logout(page);

      // ISC: reader2 joins reader1 on the case (through the API: the dialog has its own test), and
      // a processed demo case goes to the NOTO reader alone; then ISC QC from the case viewer.
      await loginViaUi(page, 'isc');
      const headers = await mutationHeaders(page);
      const readerIds = async (...names: string[]) => {
        const ids: number[] = [];
        for (const name of names) {
          const response = await page.request.get(appUrl(`/api/studies/${studyId}/users?name=${name}`));
          const { readers } = (await response.json()) as { readers: { id: number; username: string }[] };
          const reader = readers.find((r) => r.username === name);
          if (!reader) throw new Error(`${name} is not a reader of the demo study`);
          ids.push(reader.id);
        }
        return ids;
      };
      const assign = async (id: number, names: string[]) => {
        const response = await page.request.patch(appUrl(`/api/cases/${id}`), {
          headers,
          data: { readers: { ids: await readerIds(...names), reasonForChange: 'E2E reading' } },
        });
        expect(response.status(), await response.text()).toBe(200);
      };
      await assign(caseId, ['reader1', 'reader2']);
      const notoCaseId = await demoCaseId(page, studyId, 'ENDO-1003');
      await assign(notoCaseId, ['noto']);
      await page.goto(caseUrl);
      await confirmCaseAction(page, 'Pass ISC QC');
      await expect.poll(async () => page.getByTestId('case-status').textContent()).toBe('Processed');
      await logout(page);

      // reader1: open the case, pan with the arrow keys, 10x with '4', microscope mode, mark scored.
      await loginViaUi(page, 'reader1');
      await page.goto(caseUrl);
      await expectTissue(page, 'viewer-reader1-case.png');
      const map = page.getByTestId('slide-map');
      await map.focus();
      await page.keyboard.press('4');
      await expect.poll(async () => page.getByTestId('magnification').textContent()).toBe('10x');
      await expect.poll(async () => storedView(page)).not.toBe('');
      const before = await storedView(page);
      for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowDown');
      // The view moved (and is kept: the next visit opens here).
      await expect.poll(async () => storedView(page)).not.toBe(before);
      await page.getByRole('button', { name: 'Microscope' }).click();
      await page.getByTestId('microscope-mode').waitFor();
      await expectTissue(page, 'viewer-reader1-10x-microscope.png');
      // Blinded: only the procedure IDs in the case details.
      const details = (await page.getByRole('region', { name: 'Case details' }).textContent()) ?? '';
      for (const hidden of ['Subject ID', 'Site ID', 'Visit ID', 'CR Assigned']) expect(details).not.toContain(hidden);
      // The zoom is kept for the next visit (doc 3 §3).
      await page.reload();
      await expect.poll(async () => page.getByTestId('magnification').textContent()).toBe('10x');
      await page.getByRole('button', { name: 'Microscope' }).click();
      await confirmCaseAction(page, 'Mark as Scored');
      await waitForPath(page, `/studies/${studyId}`);
      expect(await caseStatus(page, caseId)).toBe('PROCESSED');
      await logout(page);

      // reader2: the last assigned reader's mark completes the case.
      await loginViaUi(page, 'reader2');
      await page.goto(caseUrl);
      await expectTissue(page, 'viewer-reader2-case.png');
      await confirmCaseAction(page, 'Mark as Scored');
      await waitForPath(page, `/studies/${studyId}`);
      await page.locator('.bp6-toast').filter({ hasText: CASE_MESSAGES.scoredComplete }).waitFor();
      expect(await caseStatus(page, caseId)).toBe('COMPLETED');
      await page.goto(appUrl(`/studies/${studyId}/cases`));
      await page
        .getByRole('table', { name: 'Cases' })
        .getByRole('row')
        .filter({ hasText: 'ENDO-1001' })
        .getByText('Completed')
        .waitFor();
      await logout(page);

      // NOTO, embedded in an iframe of the same origin: no close button; the mark ends on /successMessage.
      await loginViaUi(page, 'noto');
      await waitForPath(page, '/assigned');
      await page.getByText('ENDO-1003').waitFor();
      await page.goto(appUrl('/api/auth/session'));
      await page.evaluate(
        (src) => {
          document.body.innerHTML = `<iframe id="noto" src="${src}" style="width:1260px;height:780px;border:0"></iframe>`;
        },
        appUrl(`/studies/${studyId}/cases/${notoCaseId}?embeddedBy=NOTO`),
      );
      const frame =
        page.frame({ url: /embeddedBy=NOTO/ }) ?? (await (await page.waitForSelector('#noto')).contentFrame());
      if (!frame) throw new Error('the embedded frame did not load');
      await frame.getByTestId('slide-map').waitFor();
      expect(await frame.getByRole('button', { name: 'Close' }).count()).toBe(0);
      await saveScreenshot(page, 'viewer-noto-embedded.png');
      await confirmCaseAction(frame, 'Mark as Scored');
      await expect.poll(() => new URL(frame.url()).pathname).toBe('/successMessage');
      await frame.getByText(MESSAGES.imageMarkedScored).waitFor();
      expect(await caseStatus(page, notoCaseId)).toBe('COMPLETED');
    },
  );
});
