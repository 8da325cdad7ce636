import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QUERY_MESSAGES } from '@lamina/domain';
import type { Locator, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { demoStudyId, eventually, loginViaUi, logout, waitForPath } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { REPO_ROOT } from '../src/paths.js';
import { demoCaseId, expectTissue } from '../src/viewer.js';

/** A small real slide: the replacement LabTech uploads. */
const SLIDE = path.resolve(REPO_ROOT, '../shared/testdata/wsi/CMU-1-Small-Region.svs');

interface Stats {
  open: number;
  answered: number;
  closed: number;
  overdue: number;
}

/** The stats header of /queries/{tab} as the logged-in user sees it. */
async function readStats(page: Page, tab: 'cases' | 'images'): Promise<Stats> {
  await page.goto(appUrl(`/queries/${tab}`));
  const stat = (name: keyof Stats) => page.getByTestId(`stat-${name}`);
  await eventually(async () => (await stat('open').textContent())?.trim()).toMatch(/^\d+$/);
  const read = async (name: keyof Stats) => Number((await stat(name).textContent())?.trim());
  return {
    open: await read('open'),
    answered: await read('answered'),
    closed: await read('closed'),
    overdue: await read('overdue'),
  };
}

const wizard = (page: Page) => page.getByRole('region', { name: 'New query' });
const card = (page: Page, id: number) => page.getByRole('article', { name: `Query ${id}` });

/** Chooses a radio of a Blueprint RadioGroup by clicking its label (the indicator covers the input). */
async function chooseRadio(scope: Locator, label: string): Promise<void> {
  await scope.locator('label.bp6-radio').filter({ hasText: label }).click();
}

/** Goes through the create wizard in the open case viewer; answers the new query's id. */
async function createQuery(
  page: Page,
  options: { about: string | null; role: string; reason: string; subReason?: string; comment: string; shot?: string },
): Promise<number> {
  await page.getByRole('tab', { name: /Queries/ }).click();
  await page.getByRole('button', { name: 'New query' }).click();
  const w = wizard(page);
  await w.getByText(/Step 1 of 4/).waitFor();
  if (options.about !== null) await chooseRadio(w, options.about);
  await chooseRadio(w, options.role);
  await w.getByRole('button', { name: 'Next' }).click();
  await w.getByText(/Step 2 of 4/).waitFor();
  // Comments are mandatory.
  await w.getByLabel('Reason').selectOption({ label: options.reason });
  await w.getByRole('button', { name: 'Next' }).click();
  await w.getByText(QUERY_MESSAGES.commentsMandatory).waitFor();
  if (options.subReason) await w.getByLabel('Sub-reason').selectOption({ label: options.subReason });
  await w.getByLabel('Comments').fill(options.comment);
  if (options.shot) await saveScreenshot(page, options.shot);
  await w.getByRole('button', { name: 'Next' }).click();
  // Step 3: the follow-up date, 14 days out by default.
  const date = w.getByLabel('Follow up on');
  const expected = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
  expect(await date.inputValue()).toBe(expected);
  await w.getByRole('button', { name: 'Next' }).click();
  await w.getByText(/Step 4 of 4/).waitFor();
  const created = page.waitForResponse((r) => r.url().endsWith('/api/queries/new'));
  await w.getByRole('button', { name: 'Submit' }).click();
  const response = await created;
  expect(response.status(), await response.text()).toBe(201);
  const { query } = (await response.json()) as { query: { id: number } };
  await wizard(page).waitFor({ state: 'detached' });
  await card(page, query.id).waitFor();
  return query.id;
}

/** Opens the row of query `id` in a queries list: the viewer with ?queryId=. */
async function openFromList(page: Page, tab: 'cases' | 'images', id: number, pathPattern: RegExp): Promise<void> {
  await page.goto(appUrl(`/queries/${tab}`));
  const table = page.getByRole('table', { name: tab === 'cases' ? 'Case queries' : 'Image queries' });
  await table.waitFor();
  // The newest query is on the first page (the list opens newest first).
  const row = table.locator('tbody tr').first();
  await row.waitFor();
  await row.click();
  await page.waitForURL((url) => pathPattern.test(url.pathname) && url.searchParams.get('queryId') === String(id));
}

/** Submits one of a card's dialogs and waits for its call. */
async function act(page: Page, id: number, button: string, fill: (dialog: Locator) => Promise<void>, submit: string) {
  await card(page, id).getByRole('button', { name: button, exact: true }).click();
  const dialog = page.getByRole('dialog', { name: button });
  await fill(dialog);
  const answered = page.waitForResponse((r) => new RegExp(`/api/queries/${id}/`).test(r.url()));
  await dialog.getByRole('button', { name: submit, exact: true }).click();
  const response = await answered;
  expect(response.status(), await response.text()).toBe(200);
  await dialog.waitFor({ state: 'detached' });
}

const statusOf = (page: Page, id: number) => card(page, id).getByTestId('query-status');

describe('queries (issue 15)', () => {
  test(
    'reader1 → LabTech image query: LabTech replaces the image and resolves it, reader1 closes it; stats follow',
    { timeout: 360_000 },
    async ({ page }) => {
      const work = await mkdtemp(path.join(tmpdir(), 'lamina-e2e-query-'));
      const fileName = `e2e-${Date.now()}-replacement.svs`;
      await copyFile(SLIDE, path.join(work, fileName));
      try {
        // reader1: the stats before, then an image query to LabTech from the demo case viewer.
        await loginViaUi(page, 'reader1');
        await waitForPath(page, '/studies');
        const studyId = await demoStudyId(page);
        const caseId = await demoCaseId(page, studyId, 'ENDO-1002');
        const readerBefore = await readStats(page, 'images');
        await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
        await expectTissue(page, 'queries-reader1-case.png');
        const queryId = await createQuery(page, {
          about: 'The image',
          role: 'Lab Technician',
          reason: 'Blurry / out of focus',
          subReason: 'Whole slide',
          comment: 'Out of focus at 20x in the upper half',
          shot: 'queries-wizard-step2.png',
        });
        await expect(statusOf(page, queryId).textContent()).resolves.toBe('Open');
        // The opener may follow up, cancel and comment; the disclaimer is not for the issuer.
        const readerButtons = await card(page, queryId).getByRole('button').allInnerTexts();
        expect(readerButtons).toEqual(expect.arrayContaining(['Follow-up date', 'Cancel Query', 'Add Comment']));
        expect(readerButtons).not.toContain('Mark as Resolved');
        await saveScreenshot(page, 'queries-reader1-created.png');
        const readerOpen = await readStats(page, 'images');
        expect(readerOpen.open).toBe(readerBefore.open + 1);
        await logout(page);

        // LabTech: the query in /queries/images, the red dot in the viewer; replace the image and resolve.
        await loginViaUi(page, 'labtech');
        // Issue 29 item 14: with no case query waiting, /queries opens on the Images tab.
        const labCases = await readStats(page, 'cases');
        expect(labCases.open + labCases.answered).toBe(0);
        await page.goto(appUrl('/queries'));
        await waitForPath(page, '/queries/images');
        await page.getByRole('table', { name: 'Image queries' }).locator('tbody tr').first().waitFor();
        await saveScreenshot(page, 'queries-labtech-opens-on-images.png');
        const labBefore = await readStats(page, 'images');
        expect(labBefore.open).toBeGreaterThanOrEqual(1);
        const row = page.getByRole('table', { name: 'Image queries' }).locator('tbody tr').first();
        // The reason is cut to 34 characters; the whole of it on hover.
        await row.getByTitle('Blurry / out of focus – Whole slide').waitFor();
        await expect(row.getByTestId('row-status').textContent()).resolves.toBe('Open');
        await saveScreenshot(page, 'queries-labtech-list.png');
        await openFromList(page, 'images', queryId, /^\/studies\/\d+\/images\/\d+$/);
        const oldImage = Number(new URL(page.url()).pathname.split('/').at(-1));
        const queriesTab = page.getByRole('tab', { name: /Queries/ });
        await expect(queriesTab.getAttribute('aria-selected')).resolves.toBe('true');
        await queriesTab.getByLabel('needs attention').waitFor();
        await card(page, queryId).waitFor();
        await expect(card(page, queryId).getAttribute('class')).resolves.toContain('lamina-query-card-focused');
        await saveScreenshot(page, 'queries-labtech-viewer.png');

        await card(page, queryId).getByRole('button', { name: 'Replace image' }).click();
        const upload = page.getByRole('dialog', { name: 'Replace image' });
        await upload.getByLabel('Choose a file').setInputFiles(path.join(work, fileName));
        const registered = page.waitForResponse(
          (r) => r.url().endsWith('/api/images') && r.request().method() === 'POST',
        );
        await upload.getByRole('button', { name: 'Upload', exact: true }).click();
        expect((await registered).status()).toBe(200);
        await upload.waitFor({ state: 'detached', timeout: 60_000 });
        // The viewer shows the replacement, which carries the query over.
        await page.waitForURL((url) => {
          const id = Number(url.pathname.split('/').at(-1));
          return (
            /\/images\/\d+$/.test(url.pathname) &&
            id !== oldImage &&
            url.searchParams.get('queryId') === String(queryId)
          );
        });
        await card(page, queryId).waitFor();
        await act(page, queryId, 'Mark as Resolved', (d) => chooseRadio(d, 'Image replaced'), 'Submit');
        await eventually(() => statusOf(page, queryId).textContent()).toBe('Answered');
        await saveScreenshot(page, 'queries-labtech-resolved.png');
        const labAfter = await readStats(page, 'images');
        expect(labAfter.open).toBe(labBefore.open - 1);
        expect(labAfter.answered).toBe(labBefore.answered + 1);
        await logout(page);

        // reader1: the answered query is theirs to close.
        await loginViaUi(page, 'reader1');
        const readerAnswered = await readStats(page, 'images');
        expect(readerAnswered.answered).toBe(readerOpen.answered + 1);
        await openFromList(page, 'images', queryId, /^\/studies\/\d+\/images\/\d+$/);
        await page
          .getByRole('tab', { name: /Queries/ })
          .getByLabel('needs attention')
          .waitFor();
        await act(
          page,
          queryId,
          'Close Query',
          (d) => d.getByLabel('Details (optional)').fill('Sharp now'),
          'Close Query',
        );
        await eventually(() => statusOf(page, queryId).textContent()).toBe('Closed');
        await expect(card(page, queryId).getByRole('button', { name: 'Add Comment' }).count()).resolves.toBe(0);
        const readerAfter = await readStats(page, 'images');
        expect(readerAfter).toMatchObject({
          open: readerBefore.open,
          answered: readerBefore.answered,
          closed: readerBefore.closed + 1,
        });
        await saveScreenshot(page, 'queries-reader1-stats.png');
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  );

  test('an ISC case query to the Data Manager is marked unresolvable by dm', { timeout: 240_000 }, async ({ page }) => {
    await loginViaUi(page, 'isc');
    await waitForPath(page, '/studies');
    const studyId = await demoStudyId(page);
    const caseId = await demoCaseId(page, studyId, 'ENDO-1005');
    await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
    await page.getByTestId('case-status').waitFor();
    const queryId = await createQuery(page, {
      about: 'The case',
      role: 'Data Manager',
      reason: 'Visit ID mismatch',
      comment: 'The label says WEEK 24',
    });
    await logout(page);

    await loginViaUi(page, 'dm');
    const before = await readStats(page, 'cases');
    await openFromList(page, 'cases', queryId, new RegExp(`^/studies/${studyId}/cases/${caseId}$`));
    await card(page, queryId).waitFor();
    // The disclaimer is for whoever did not issue the query.
    await card(page, queryId).getByRole('button', { name: 'Add Comment' }).click();
    await page.getByRole('dialog', { name: 'Add Comment' }).getByText(QUERY_MESSAGES.disclaimer).waitFor();
    await page.getByRole('dialog', { name: 'Add Comment' }).getByRole('button', { name: 'Cancel' }).click();
    await act(
      page,
      queryId,
      'Mark Unresolvable',
      (d) => d.getByLabel('Reason').fill('The site has closed; the visit cannot be checked'),
      'Mark Unresolvable',
    );
    await eventually(() => statusOf(page, queryId).textContent()).toBe('Unresolvable');
    // The query named in the URL is open at its history.
    await card(page, queryId).getByText('The site has closed; the visit cannot be checked').waitFor();
    await saveScreenshot(page, 'queries-dm-unresolvable.png');
    const after = await readStats(page, 'cases');
    expect(after.open).toBe(before.open - 1);
    expect(after.closed).toBe(before.closed + 1);
  });

  test('a system admin tends the reason catalogue from the user menu', async ({ page }) => {
    await loginViaUi(page, 'sysadmin');
    await waitForPath(page, '/studies');
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: 'Query reasons' }).click();
    await waitForPath(page, '/admin/query-reasons');
    await page.getByLabel('Role queried').selectOption({ label: 'Lab Technician' });
    const tree = page.getByRole('list', { name: 'Reasons' });
    await tree.getByText('Blurry / out of focus', { exact: true }).waitFor();
    await page.getByRole('list', { name: 'Sub-reasons of Blurry / out of focus' }).getByText('Whole slide').waitFor();
    // A new sub-reason, then deactivated: it stays listed, marked Inactive.
    const text = `Stitching seams ${Date.now()}`;
    await page.getByRole('button', { name: 'Add a sub-reason to Blurry / out of focus' }).click();
    const add = page.getByRole('dialog', { name: 'Add a sub-reason to Blurry / out of focus' });
    await add.getByLabel('Reason text').fill(text);
    await add.getByRole('button', { name: 'Add', exact: true }).click();
    await add.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: `Deactivate ${text}` }).click();
    const deactivate = page.getByRole('dialog', { name: 'Deactivate reason' });
    await deactivate.getByLabel('Reason for change (optional)').fill('Not a focus problem');
    await deactivate.getByRole('button', { name: 'Deactivate', exact: true }).click();
    await deactivate.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: `Activate ${text}` }).waitFor();
    await saveScreenshot(page, 'queries-reason-catalogue.png');
  });
});
