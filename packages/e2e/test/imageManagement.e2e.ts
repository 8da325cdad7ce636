import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { DEMO_STUDY, demoStudyId, loginViaUi, logout, mutationHeaders, setChecked, waitForPath } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';

/** The demo slides exist once the demo slide is processed (up to ~2 min after the server starts). */
const DEMO_READY_TIMEOUT = 150_000;

async function headers(page: Page, table: string): Promise<string[]> {
  const cells = await page.getByRole('table', { name: table }).locator('thead th').allTextContents();
  return cells.map((c) => c.trim());
}

describe('Image Management (issue 12)', () => {
  test(
    'a lab technician filters by study and status and hides a column that stays hidden; a data manager sees its defaults',
    { timeout: 240_000 },
    async ({ page }) => {
      await loginViaUi(page, 'labtech');
      await waitForPath(page, '/studies');
      await page.goto(appUrl('/image-management/images'));
      const table = page.getByRole('table', { name: 'Images' });
      // The demo slides (and their case copies) are listed once processed: refresh until they are.
      await expect
        .poll(
          async () => {
            const listed = page.waitForResponse((r) => r.url().endsWith('/api/imageManagement/images'));
            await page.getByRole('button', { name: 'Refresh' }).click();
            await listed;
            return table.getByText(/^S100\d_/).count();
          },
          { timeout: DEMO_READY_TIMEOUT, interval: 2000 },
        )
        .toBeGreaterThan(0);
      const labHeaders = await headers(page, 'Images');
      expect(labHeaders).toContain('File Name');
      expect(labHeaders).toContain('QA Comments');
      expect(labHeaders).not.toContain('Status');

      // Filter: the demo study, then two statuses; the badge counts 1 + 2.
      await page.getByRole('button', { name: /Add Filter/ }).click();
      await page.getByRole('dialog', { name: 'Add Filter' }).getByText('Study Name').click();
      const study = page.getByRole('dialog', { name: 'Study Name' });
      await study.getByPlaceholder('Enter study name').fill(DEMO_STUDY);
      await setChecked(study.getByRole('checkbox', { name: new RegExp(DEMO_STUDY) }), true);
      await study.getByRole('button', { name: 'Back' }).click();
      await page.getByRole('dialog', { name: 'Add Filter' }).getByText('Status').click();
      const status = page.getByRole('dialog', { name: 'Status' });
      await setChecked(status.getByRole('checkbox', { name: 'Lab QC Pending' }), true);
      await setChecked(status.getByRole('checkbox', { name: 'Case Assignment Pending' }), true);
      await status.getByRole('button', { name: 'Done' }).click();
      await expect.poll(async () => page.getByTestId('filter-count').textContent()).toBe('3');
      await expect.poll(async () => table.locator('tbody tr').count()).toBeGreaterThan(0);
      // Every row is of the demo study.
      const studyNames = await table.locator('tbody tr td:nth-child(4)').allTextContents();
      expect(studyNames.every((name) => name.startsWith(DEMO_STUDY))).toBe(true);

      // Show/Hide Columns stages its ticks (issue 29 item 15): Cancel and Escape abandon them.
      const columns = page.getByRole('dialog', { name: 'Show/Hide Columns' });
      const openColumns = async () => {
        await page.getByRole('button', { name: /Show\/Hide Columns/ }).click();
        await columns.waitFor();
      };
      await openColumns();
      await setChecked(columns.getByRole('checkbox', { name: 'Accession Number' }), false);
      expect(await headers(page, 'Images')).toContain('Accession Number');
      await saveScreenshot(page, 'image-management-columns-staged.png');
      await columns.getByRole('button', { name: 'Cancel' }).click();
      await columns.waitFor({ state: 'detached' });
      expect(await headers(page, 'Images')).toContain('Accession Number');
      await openColumns();
      expect(await columns.getByRole('checkbox', { name: 'Accession Number' }).isChecked()).toBe(true);
      await setChecked(columns.getByRole('checkbox', { name: 'Accession Number' }), false);
      await page.keyboard.press('Escape');
      await columns.waitFor({ state: 'detached' });
      expect(await headers(page, 'Images')).toContain('Accession Number');
      // Hide Accession Number with Apply: gone, and still gone after a reload (the cookie).
      await openColumns();
      await setChecked(columns.getByRole('checkbox', { name: 'Accession Number' }), false);
      await columns.getByRole('button', { name: 'Apply' }).click();
      await columns.waitFor({ state: 'detached' });
      expect(await headers(page, 'Images')).not.toContain('Accession Number');
      await page.reload();
      await table.locator('tbody tr').first().waitFor();
      expect(await headers(page, 'Images')).not.toContain('Accession Number');
      // The filters are kept for the browser tab.
      expect(await page.getByTestId('filter-count').textContent()).toBe('3');
      await saveScreenshot(page, 'image-management-labtech.png');

      // Edit Column: set an empty QA comment (no reason asked), then change it (a reason is required).
      const row = table.locator('tbody tr').first();
      const editQa = async (value: string, reason?: string) => {
        await row.hover();
        await row.getByRole('button', { name: 'Edit QA Comments' }).click();
        const edit = page.getByRole('dialog', { name: 'Edit QA Comments' });
        await edit.getByLabel('New QA Comments').fill(value);
        const confirm = edit.getByRole('button', { name: 'Confirm' });
        if (reason !== undefined) {
          expect(await confirm.isDisabled()).toBe(true);
          await edit.getByLabel(/Reason for change/).fill(reason);
          await saveScreenshot(page, 'image-management-edit-column.png');
        } else expect(await edit.getByLabel(/Reason for change/).count()).toBe(0);
        await confirm.click();
        await edit.waitFor({ state: 'detached' });
        await row.getByText(value).waitFor();
      };
      const first = `E2E fold ${Date.now()}`;
      const current =
        (await row.getByRole('button', { name: 'Edit QA Comments' }).locator('xpath=..').textContent()) ?? '';
      await editQa(first, current.trim() === '-' || current.trim() === '' ? undefined : 'E2E: lab remark');
      await editQa(`${first} (checked)`, 'E2E: the fold was checked');

      // Sample data: the dialog's template with two good rows (two images by their unique names)
      // and one that matches nothing; the summary counts them.
      const listed = await page.request.post(appUrl('/api/imageManagement/images'), {
        headers: await mutationHeaders(page),
        data: { pageSize: 100 },
      });
      const names = ((await listed.json()) as { results: { imageFilename: string }[] }).results.map(
        (r) => r.imageFilename,
      );
      const unique = names.filter((n) => names.indexOf(n) === names.lastIndexOf(n)).slice(0, 2);
      expect(unique).toHaveLength(2);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      const select = page.getByRole('dialog', { name: 'Select Sample Data File' });
      const [templateDownload] = await Promise.all([
        page.waitForEvent('download'),
        select.getByRole('button', { name: 'Download the template' }).click(),
      ]);
      const template = (await readFile(await templateDownload.path(), 'utf8')).replace(/^\uFEFF/, '').trimEnd();
      const templateColumns = template.split(',');
      const sampleRow = (cells: Record<string, string>) => templateColumns.map((c) => cells[c] ?? '').join(',');
      const file = [
        template,
        sampleRow({ 'File Name': unique[0] ?? '', 'QA Comments': 'E2E sample import' }),
        sampleRow({ 'File Name': unique[1] ?? '', 'QA Comments': 'E2E sample import' }),
        sampleRow({ 'File Name': 'no-such-slide.svs', 'QA Comments': 'E2E sample import' }),
      ].join('\r\n');
      await select.getByLabel('Sample data file').setInputFiles({
        name: 'e2e-samples.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(file),
      });
      await select.getByRole('button', { name: 'Import' }).click();
      const summary = page.getByRole('dialog', { name: 'Sample Data Import Complete' });
      await summary.waitFor();
      expect(await summary.getByTestId('rows-updated').textContent()).toBe('2');
      expect(await summary.getByTestId('rows-failed').textContent()).toBe('1');
      await saveScreenshot(page, 'image-management-sample-import.png');
      await summary.locator('.bp6-dialog-footer').getByRole('button', { name: 'Close' }).click();
      await logout(page);

      // A data manager: the spec's defaults for DM (Histo Procedure ID; no file name, no upload date).
      await loginViaUi(page, 'dm');
      await page.goto(appUrl('/image-management/images'));
      await page.getByRole('table', { name: 'Images' }).locator('tbody tr').first().waitFor();
      const dmHeaders = await headers(page, 'Images');
      expect(dmHeaders).toContain('Histo Procedure ID');
      expect(dmHeaders).toContain('Visit ID');
      expect(dmHeaders).not.toContain('File Name');
      expect(dmHeaders).not.toContain('Upload Date');
      await page.goto(appUrl('/image-management/cases'));
      await page.getByRole('table', { name: 'Cases' }).locator('tbody tr').first().waitFor();
      const caseHeaders = await headers(page, 'Cases');
      expect(caseHeaders).toEqual(expect.arrayContaining(['Date Created', 'CR Assignment']));
      expect(caseHeaders).not.toContain('ISC QC');
      await saveScreenshot(page, 'image-management-dm-cases.png');

      // Export Report: the cases as CSV, named as the spec says, the DM's columns, parsed.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export Report' }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^image-mgmt-cases_\d{2}-[A-Z][a-z]{2}-\d{4}\.csv$/);
      const csv = await readFile(await download.path(), 'utf8');
      expect(csv.startsWith('\uFEFF')).toBe(true);
      const lines = csv.slice(1).trimEnd().split('\r\n');
      const header = (lines[0] ?? '').split(',');
      expect(header).toEqual(caseHeaders.filter((h) => h !== 'Actions'));
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.slice(1).some((line) => line.includes('ENDO-1001'))).toBe(true);
    },
  );

  test(
    'Edit Column offers the study’s segments as a list, and no pencil the server would refuse (issue 29 item 13)',
    { timeout: 240_000 },
    async ({ page }) => {
      // Its own images, whatever other files did to the demo data (issue 29 item 17g): a system
      // admin copies a demo slide twice, one copy left waiting for a case, the other put into a
      // new case.
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      const studyId = await demoStudyId(page);
      const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 5)}`.toUpperCase();
      const names = { free: `E2E-IM13-${tag}-FREE.tif`, inCase: `E2E-IM13-${tag}-CASE.tif` };
      let sourceId: number | undefined;
      await expect
        .poll(
          async () => {
            const listed = await page.request.post(appUrl('/api/imageManagement/images'), {
              headers: await mutationHeaders(page),
              data: { searchText: 'S100', studyFilter: { selectedIds: [studyId] }, pageSize: 20 },
            });
            const { results } = (await listed.json()) as { results?: { id: number; imageFilename?: string }[] };
            sourceId = results?.find((r) => /^S100\d_/.test(r.imageFilename ?? ''))?.id;
            return sourceId;
          },
          { timeout: DEMO_READY_TIMEOUT, interval: 2000 },
        )
        .toBeDefined();
      const copy = async (name: string) => {
        const response = await page.request.post(appUrl(`/api/images/${String(sourceId)}/copy`), {
          headers: await mutationHeaders(page),
          data: { name },
        });
        expect(response.status(), await response.text()).toBe(200);
        return ((await response.json()) as { imageId: number }).imageId;
      };
      await copy(names.free);
      const inCaseId = await copy(names.inCase);
      const created = await page.request.post(appUrl('/api/cases'), {
        headers: await mutationHeaders(page),
        data: {
          studyId,
          procId: `E2E-${tag}`,
          subjectId: `E2E-${tag}`,
          siteId: 'SITE-01',
          visitId: 'SCREENING',
          images: [inCaseId],
        },
      });
      expect(created.status(), await created.text()).toBe(201);
      await logout(page);

      await loginViaUi(page, 'labtech');
      await waitForPath(page, '/studies');
      await page.goto(appUrl('/image-management/images'));
      const table = page.getByRole('table', { name: 'Images' });
      await page.getByRole('textbox', { name: 'Search images' }).fill(`E2E-IM13-${tag}`);
      await expect
        .poll(
          async () => {
            await page.getByRole('button', { name: 'Refresh' }).click();
            return table
              .locator('tbody tr')
              .filter({ hasText: `E2E-IM13-${tag}` })
              .count();
          },
          { timeout: 30_000, interval: 1000 },
        )
        .toBe(2);

      // The image in a case: its Site ID is the case's; the pencil is disabled and says why.
      const inCase = table.locator('tbody tr').filter({ hasText: names.inCase }).first();
      await inCase.hover();
      const site = inCase.getByRole('button', { name: 'Edit Site ID' });
      expect(await site.getAttribute('aria-disabled')).toBe('true');
      for (const label of ['Subject ID', 'Lab Visit ID'])
        expect(await inCase.getByRole('button', { name: `Edit ${label}` }).getAttribute('aria-disabled')).toBe('true');
      expect(
        await inCase.getByRole('button', { name: 'Edit Accession Number' }).getAttribute('aria-disabled'),
      ).toBeNull();
      // The tooltip opens on the pointer's entering the pencil; one hover sometimes never showed
      // it (every run for a while, with older builds too), so each try leaves, enters and waits.
      const refusal = page.getByText(
        'Site ID can be edited only for an image without a case; edit the case to change it for its images',
      );
      await expect
        .poll(
          async () => {
            await page.mouse.move(0, 0);
            await site.hover({ force: true });
            return refusal.waitFor({ timeout: 2_000 }).then(
              () => true,
              () => false,
            );
          },
          { timeout: 30_000, interval: 100 },
        )
        .toBe(true);
      await saveScreenshot(page, 'image-management-refused-pencil.png');
      await site.click({ force: true });
      expect(await page.getByRole('dialog', { name: 'Edit Site ID' }).count()).toBe(0);
      await waitForPath(page, '/image-management/images');

      // An image waiting for a case: its segment is chosen from the demo study's segments.
      const free = table.locator('tbody tr').filter({ hasText: names.free }).first();
      await free.hover();
      await free.getByRole('button', { name: 'Edit Anatomical Segment' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit Anatomical Segment' });
      const select = edit.getByRole('combobox', { name: 'New Anatomical Segment' });
      await select.waitFor();
      const options = await select.locator('option').allTextContents();
      expect(options).toEqual(['Choose …', 'Rectum', 'Sigmoid colon', 'Descending colon']);
      const current = ((await edit.locator('p strong').first().textContent()) ?? '').trim();
      const next = current === 'Rectum' ? 'Sigmoid colon' : 'Rectum';
      await select.selectOption(next);
      if (current !== '-') await edit.getByLabel(/Reason for change/).fill('E2E: segment from the list');
      await saveScreenshot(page, 'image-management-segment-list.png');
      await edit.getByRole('button', { name: 'Confirm' }).click();
      await edit.waitFor({ state: 'detached' });
      await free.getByText(next, { exact: true }).waitFor();
    },
  );
});
