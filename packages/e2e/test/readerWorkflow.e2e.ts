import { CASE_MESSAGES, roleByName } from '@lamina/domain';
import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { demoStudyId, fetchUserInfo, loginViaUi, logout, mutationHeaders, waitForPath } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { demoCaseId } from '../src/viewer.js';

/**
 * Issue 29, items 8–10 (the reader's workflow): a reader's case list says which cases they scored
 * ("Scored {date}"); staff reopen one reader's read from the case viewer with a reason, and the case
 * is that reader's to mark again; a query sent to the Site role is answered in the image viewer by a
 * Site user on an image someone else uploaded.
 */

const casesRow = (page: Page, procId: string) =>
  page.getByRole('table', { name: 'Cases' }).getByRole('row').filter({ hasText: procId });

async function caseStatus(page: Page, caseId: number): Promise<string> {
  const response = await page.request.get(appUrl(`/api/cases/${caseId}`));
  return ((await response.json()) as { case: { status: string } }).case.status;
}

describe('the reader’s workflow (issue 29)', () => {
  test(
    'reader2 sees "Scored" on the case they read; the ISC reopens that read; the case is theirs to mark again',
    { timeout: 240_000 },
    async ({ page }) => {
      // ENDO-1004 is a demo case read to completion by reader2 alone.
      await loginViaUi(page, 'reader2');
      await waitForPath(page, '/studies');
      const studyId = await demoStudyId(page);
      const caseId = await demoCaseId(page, studyId, 'ENDO-1004');
      await page.goto(appUrl(`/studies/${studyId}/cases`));
      const row = casesRow(page, 'ENDO-1004');
      await row.getByText(/^Scored /).waitFor();
      await row.getByText('Completed').waitFor();
      await saveScreenshot(page, 'reader-workflow-scored-list.png');
      await logout(page);

      await loginViaUi(page, 'isc');
      await waitForPath(page, '/studies');
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      await page.getByRole('button', { name: 'Show details' }).click();
      const reads = page.getByRole('list', { name: 'Reads' });
      await reads.getByText(/^Scored /).waitFor();
      await reads.getByRole('button', { name: /^Reopen .*’s read$/ }).click();
      const dialog = page.getByRole('dialog', { name: 'Reopen read' });
      await dialog.getByText(/The case returns to Processed/).waitFor();
      const confirm = dialog.getByRole('button', { name: 'Reopen read', exact: true });
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel(/Reason for change/).fill('Line 3 must be redrawn');
      await saveScreenshot(page, 'reader-workflow-reopen-dialog.png');
      const reopened = page.waitForResponse((r) => /\/reads\/\d+\/reopen$/.test(r.url()));
      await confirm.click();
      expect((await reopened).status()).toBe(200);
      await page.locator('.bp6-toast').filter({ hasText: CASE_MESSAGES.readReopened }).waitFor();
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(async () => page.getByTestId('case-status').textContent()).toBe('Processed');
      await reads.getByText('Not scored').waitFor();
      expect(await reads.getByRole('button', { name: /^Reopen/ }).count()).toBe(0);
      await saveScreenshot(page, 'reader-workflow-reopened.png');
      await logout(page);

      await loginViaUi(page, 'reader2');
      await waitForPath(page, '/studies');
      expect(await caseStatus(page, caseId)).toBe('PROCESSED');
      await page.goto(appUrl(`/studies/${studyId}/cases`));
      await casesRow(page, 'ENDO-1004').getByText('Processed').waitFor();
      expect(
        await casesRow(page, 'ENDO-1004')
          .getByText(/^Scored /)
          .count(),
      ).toBe(0);
    },
  );

  test(
    'a Site user answers a query to Site in the viewer, on an image the demo uploader uploaded',
    { timeout: 240_000 },
    async ({ page }) => {
      await loginViaUi(page, 'isc');
      await waitForPath(page, '/studies');
      const studyId = await demoStudyId(page);
      const caseId = await demoCaseId(page, studyId, 'ENDO-1003');
      const demoCase = (await (await page.request.get(appUrl(`/api/cases/${caseId}`))).json()) as {
        case: { images: { id: number }[] };
      };
      const imageId = demoCase.case.images[0]!.id;
      const site = roleByName('Site').id;
      const metadata = (await (await page.request.get(appUrl(`/api/queries/metadata?studyId=${studyId}`))).json()) as {
        imageReasons: {
          withRoleId: number;
          values: { reasonOptionId: number; reasonText: string; children: unknown[] }[];
        }[];
      };
      const reason = metadata.imageReasons
        .find((r) => r.withRoleId === site)!
        .values.find((v) => v.children.length === 0)!;
      const opened = await page.request.post(appUrl('/api/queries/new'), {
        headers: await mutationHeaders(page),
        data: {
          queryObjectType: 'IMAGE',
          objectId: imageId,
          studyId,
          caseId: null,
          followUpInDays: 3,
          withRoleId: site,
          responseOptionId: reason.reasonOptionId,
          commentText: 'E2E: which block is this slide from?',
        },
      });
      expect(opened.status(), await opened.text()).toBe(201);
      const queryId = ((await opened.json()) as { query: { id: number } }).query.id;
      await logout(page);

      await loginViaUi(page, 'site');
      await waitForPath(page, '/studies');
      // The image is a colleague's: the demo slides are uploaded as the demo uploader.
      const image = (await (await page.request.get(appUrl(`/api/images/${imageId}`))).json()) as {
        uploaderId: number | null;
      };
      const me = (await (await fetchUserInfo(page)).json()) as { id: number };
      expect(image.uploaderId).not.toBeNull();
      expect(image.uploaderId).not.toBe(me.id);
      await page.goto(appUrl(`/studies/${studyId}/images/${imageId}?queryId=${queryId}`));
      await page.getByRole('tab', { name: /Queries/ }).click();
      const card = page.getByRole('article', { name: `Query ${queryId}` });
      await card.waitFor();
      await saveScreenshot(page, 'reader-workflow-site-query.png');
      await card.getByRole('button', { name: 'Mark as Resolved', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Mark as Resolved' });
      await dialog.locator('label.bp6-radio').first().click();
      const answered = page.waitForResponse((r) => r.url().endsWith(`/api/queries/${queryId}/resolve`));
      await dialog.getByRole('button', { name: 'Submit', exact: true }).click();
      expect((await answered).status()).toBe(200);
      await dialog.waitFor({ state: 'detached' });
    },
  );
});
