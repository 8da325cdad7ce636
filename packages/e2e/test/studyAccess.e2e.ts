import {
  confirmStudyAccessText,
  removeStudyAccessText,
  STUDY_MESSAGES,
  USER_MESSAGES,
  type StudyAccessRow,
} from '@lamina/domain';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import {
  createStudyViaApi,
  displayNameOf,
  eventually,
  fetchStudy,
  listedStudyNames,
  loginViaUi,
  pageHeading,
  pathnameOf,
  uniqueStudyName,
  waitForPath,
} from '../src/app.js';
import { e2eTest as test, newTestContext } from '../src/browser.js';
import { appUrl } from '../src/env.js';

const READER = 'reader2';
const READER_NAME = 'Ravi Reader';
const CENTRAL_READER = displayNameOf('CR');

/** A page of its own (own cookies) logged in as `username`, closed with the test's browser context list. */
async function loggedInPage(browser: Browser, username: string, opened: (() => Promise<void>)[]): Promise<Page> {
  const context = await newTestContext(browser);
  context.setDefaultTimeout(15_000);
  context.setDefaultNavigationTimeout(30_000);
  opened.push(() => context.close());
  const page = await context.newPage();
  await loginViaUi(page, username);
  await waitForPath(page, '/studies');
  return page;
}

/** The Name cells of the studies table the page shows (the current page of the list). */
async function studiesTableNames(page: Page): Promise<string[]> {
  const table = page.getByRole('table', { name: 'Studies' });
  await table.waitFor();
  if ((await table.getAttribute('aria-busy')) !== 'false') return ['(loading)'];
  return (await table.locator('tbody tr td:first-child').allInnerTexts()).map((t) => t.trim());
}

async function searchStudies(page: Page, name: string): Promise<void> {
  await page.goto(appUrl('/studies'));
  await pageHeading(page, 'Studies').waitFor();
  await page.getByRole('searchbox', { name: 'Search by name' }).fill(name);
}

describe('study access', () => {
  test('sysadmin grants reader2 a new study as Central Reader, reader2 sees it; removing access hides it', async ({
    browser,
    page,
  }) => {
    const closers: (() => Promise<void>)[] = [];
    try {
      // A new study, made by a study admin (the form is the subject of studies.e2e.ts).
      const admin = await loggedInPage(browser, 'studyadmin', closers);
      const name = uniqueStudyName('E2E Access');
      const study = await createStudyViaApi(admin, {
        name,
        sponsor: 'Access Pharma',
        indications: ['CROHNS_DISEASE'],
        segments: 1,
        anatomicalSegments: ['Ileum'],
        modality: ['ENDOSCOPY'],
      });
      expect(study.readers).toEqual([]);

      // Before: reader2 does not see it, neither in the list nor directly.
      const reader = await loggedInPage(browser, READER, closers);
      expect(await listedStudyNames(reader, name)).toEqual([]);
      expect((await fetchStudy(reader, study.id)).status).toBe(404);

      // sysadmin: Users → reader2 → Study Access.
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users', exact: true }).click();
      await waitForPath(page, '/users');
      await pageHeading(page, 'Users').waitFor();
      await page.getByRole('searchbox', { name: 'Search by name' }).fill(READER);
      const usersTable = page.getByRole('table', { name: 'Users' });
      const readerRow = usersTable.getByRole('row').filter({ hasText: READER });
      await eventually(() => usersTable.locator('tbody tr').count()).toBe(1);
      await eventually(() => readerRow.count()).toBe(1);
      await readerRow.getByRole('button', { name: `Edit ${READER}`, exact: true }).click();
      await page.waitForURL((url) => /^\/users\/\d+\/settings$/.test(url.pathname));
      const userId = Number(/^\/users\/(\d+)\//.exec(pathnameOf(page))![1]);
      await pageHeading(page, READER_NAME).waitFor();

      await page.getByRole('tab', { name: 'Study Access', exact: true }).click();
      await waitForPath(page, `/users/${userId}/studyAccess`);
      const accessTable = page.getByRole('table', { name: 'Study access' });
      await accessTable.waitFor();
      expect(await accessTable.getByRole('row').filter({ hasText: name }).count()).toBe(0);

      // Choose the study and the role; '+ Add' needs both.
      const add = page.getByRole('button', { name: '+ Add', exact: true });
      expect(await add.isDisabled()).toBe(true);
      await page.getByLabel('Find study', { exact: true }).fill(name);
      await page.getByLabel('Study', { exact: true }).selectOption({ label: name });
      expect(await add.isDisabled()).toBe(true);
      await page.getByLabel('Role', { exact: true }).selectOption({ label: CENTRAL_READER });
      await eventually(() => add.isEnabled()).toBe(true);
      await add.click();

      const confirm = page.getByRole('dialog').filter({ hasText: USER_MESSAGES.confirmStudyAccessTitle });
      await confirm.waitFor();
      expect(USER_MESSAGES.confirmStudyAccessTitle).toBe('Confirm Study Access');
      expect(await confirm.getByRole('heading', { name: 'Confirm Study Access' }).isVisible()).toBe(true);
      const text = confirmStudyAccessText(CENTRAL_READER, name);
      expect(text).toBe(`The user will be assigned as Central Reader to ${name}.`);
      expect(await confirm.getByText(text, { exact: true }).isVisible()).toBe(true);
      await confirm.getByRole('button', { name: 'Confirm', exact: true }).click();
      await confirm.waitFor({ state: 'hidden' });

      const grantedRow = accessTable.getByRole('row').filter({ hasText: name });
      await eventually(() => grantedRow.count()).toBe(1);
      expect((await grantedRow.locator('td').allInnerTexts()).slice(0, 2).map((t) => t.trim())).toEqual([
        name,
        CENTRAL_READER,
      ]);
      // The form is reset for the next grant.
      expect(await add.isDisabled()).toBe(true);

      // The server holds the grant.
      const access = await page.request.get(appUrl(`/api/users/${userId}/studyAccess`));
      expect(access.status()).toBe(200);
      expect(((await access.json()) as StudyAccessRow[]).filter((r) => r.studyId === study.id)).toEqual([
        expect.objectContaining({ studyId: study.id, studyName: name, roleName: 'CR' }),
      ]);
      const asAdmin = (await fetchStudy(admin, study.id)).study!;
      expect(asAdmin.readers.map((r) => [r.username, r.roleName])).toEqual([[READER, 'CR']]);

      // reader2 (own browser context, logged in before the grant) now sees the study.
      await searchStudies(reader, name);
      // Only the searched study (the search is debounced; reader2 also sees the demo study).
      await eventually(() => studiesTableNames(reader)).toEqual([name]);
      expect(await listedStudyNames(reader, name)).toEqual([name]);
      await reader.getByRole('table', { name: 'Studies' }).getByRole('row').filter({ hasText: name }).click();
      await waitForPath(reader, `/studies/${study.id}/cases`);
      await pageHeading(reader, name).waitFor();
      // A central reader may not edit the study.
      expect(await reader.getByRole('button', { name: 'Edit Study', exact: true }).count()).toBe(0);

      // sysadmin removes the access again.
      await grantedRow.getByRole('button', { name: /^Remove Access/ }).click();
      const removeDialog = page.getByRole('dialog').filter({ hasText: USER_MESSAGES.removeStudyAccessQuestion });
      await removeDialog.waitFor();
      expect(USER_MESSAGES.removeStudyAccessQuestion).toBe('Are you sure you want to remove study access?');
      expect(
        await removeDialog.getByRole('heading', { name: 'Are you sure you want to remove study access?' }).isVisible(),
      ).toBe(true);
      expect(await removeDialog.getByText(removeStudyAccessText(name), { exact: true }).isVisible()).toBe(true);
      expect(removeStudyAccessText(name)).toBe(`The user will no longer have access to ${name}.`);
      await removeDialog.getByRole('button', { name: 'Remove Access', exact: true }).click();
      await removeDialog.waitFor({ state: 'hidden' });
      await eventually(() => grantedRow.count()).toBe(0);
      const after = await page.request.get(appUrl(`/api/users/${userId}/studyAccess`));
      const rows = (await after.json()) as StudyAccessRow[];
      expect(rows.filter((r) => r.studyId === study.id)).toEqual([]);
      // Only that grant went: reader2 keeps the demo study.
      expect(rows.length).toBeGreaterThan(0);

      // reader2 reloads: the study is gone from the list, and opening it directly says 'Study not found'.
      await reader.reload();
      await searchStudies(reader, name);
      await reader.getByText('No studies', { exact: true }).waitFor();
      expect(await studiesTableNames(reader)).toEqual([]);
      expect(await listedStudyNames(reader, name)).toEqual([]);
      // Other studies are still listed for reader2.
      expect((await listedStudyNames(reader, '')).length).toBeGreaterThan(0);

      await reader.goto(appUrl(`/studies/${study.id}`));
      const notFound = reader.getByText(STUDY_MESSAGES.studyNotFound, { exact: true });
      await notFound.waitFor();
      expect(STUDY_MESSAGES.studyNotFound).toBe('Study not found');
      expect(await pageHeading(reader, name).count()).toBe(0);
      expect((await fetchStudy(reader, study.id)).status).toBe(404);
      expect((await fetchStudy(reader, study.id)).body).toMatchObject({ message: 'Study not found' });
    } finally {
      for (const close of closers) await close();
    }
  });
});
