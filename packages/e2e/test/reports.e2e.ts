import { readFile } from 'node:fs/promises';
import { fileNamePart, REPORT_LABELS, REPORT_TYPES, type ReportType } from '@lamina/domain';
import type { Locator, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { DEMO_STUDY, loginViaUi, pageHeading, waitForPath } from '../src/app.js';
import { atRest, e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';

/** The reading study with line measurements: the celiac report's study. */
const CELIAC_STUDY = 'DEMO-CD-002';
const DATE = String.raw`\d{2}-[A-Z][a-z]{2}-\d{4}`;

function section(page: Page, title: string): Locator {
  return page.getByRole('region', { name: title, exact: true });
}

/** The titles of the report sections shown, in page order. */
async function sectionTitles(page: Page): Promise<string[]> {
  const titles = await page
    .locator('.lamina-report-section')
    .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('aria-label') ?? ''));
  return titles;
}

/** Chooses a study in a section's type-ahead by typing the start of its name and clicking it. */
async function chooseStudy(region: Locator, page: Page, name: string): Promise<string> {
  const input = region.getByRole('combobox', { name: /study/i });
  await input.fill(name);
  const option = page.getByRole('option', { name: new RegExp(`^${name}`) });
  await option.first().waitFor();
  const fullName = (await option.first().innerText()).trim();
  await option.first().click();
  expect(await input.inputValue()).toBe(fullName);
  return fullName;
}

/** Clicks a download button and answers the file's suggested name and bytes. */
async function download(region: Locator, page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    region.getByRole('button', { name: button }).click(),
  ]);
  const path = await file.path();
  return { name: file.suggestedFilename(), bytes: await readFile(path) };
}

/** The first line of a CSV (after the BOM): its header, split into cells. */
function csvHeader(bytes: Buffer): string[] {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const first = text.split(/\r?\n/)[0] ?? '';
  return first.split(',').map((c) => c.replace(/^"|"$/g, ''));
}

describe('Reports (issue 16)', () => {
  test(
    'a system admin downloads the audit trail as PDF and CSV and every report from /reports',
    { timeout: 180_000 },
    async ({ page }) => {
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      await page.goto(appUrl('/reports'));
      await pageHeading(page, 'Reports').waitFor();
      expect(await sectionTitles(page)).toEqual(['Audit Trail', ...REPORT_TYPES.map((t) => REPORT_LABELS[t])]);

      // The audit trail of the demo study, PDF and CSV, named as doc 1 §7 says.
      const audit = section(page, 'Audit Trail');
      const demo = await chooseStudy(audit, page, DEMO_STUDY);
      const demoPart = fileNamePart(demo);
      const auditName = (ext: string) =>
        new RegExp(`^${demoPart}_sysadmin_audit-trail_${DATE}_\\d{4}_[A-Za-z0-9+-]+\\.${ext}$`);
      const pdf = await download(audit, page, 'Download PDF');
      expect(pdf.name).toMatch(auditName('pdf'));
      expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const csv = await download(audit, page, 'Download CSV');
      expect(csv.name).toMatch(auditName('csv'));
      expect(csvHeader(csv.bytes).slice(0, 3)).toEqual(['Event', 'Time (UTC)', 'Time (local)']);
      expect(await audit.getByRole('alert').count()).toBe(0);

      // While a file streams: an indeterminate bar and the bytes so far (the network slowed to
      // 4 kB/s so the PDF takes seconds), and Cancel stops it without an error.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: 4000,
        uploadThroughput: -1,
      });
      await audit.getByRole('button', { name: 'Download PDF' }).click();
      const received = audit.getByRole('status');
      await expect
        .poll(() => received.textContent(), { timeout: 15_000 })
        .toMatch(/Download PDF: [1-9][\d.]* KB received/);
      expect(await audit.getByRole('progressbar', { name: /downloading/ }).isVisible()).toBe(true);
      expect(await audit.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true);
      await saveScreenshot(page, 'reports-sysadmin-progress.png');
      await audit.getByRole('button', { name: 'Cancel' }).click();
      await received.waitFor({ state: 'detached' });
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      expect(await audit.getByRole('alert').count()).toBe(0);
      expect(await audit.getByRole('button', { name: 'Download PDF' }).isEnabled()).toBe(true);

      // Every report of the demo study (the celiac one of the celiac study), with a date range on one.
      const reports: { type: ReportType; study: string }[] = REPORT_TYPES.map((type) => ({
        type,
        study: type === 'celiac-annotations' ? CELIAC_STUDY : DEMO_STUDY,
      }));
      for (const { type, study } of reports) {
        const region = section(page, REPORT_LABELS[type]);
        const name = await chooseStudy(region, page, study);
        if (type === 'query') {
          await region.getByLabel('Start date', { exact: true }).fill('01-Jan-2020');
          await region.getByLabel('End date', { exact: true }).fill('31-Dec-2099');
        }
        const file = await download(region, page, 'Download CSV');
        expect(file.name, type).toMatch(new RegExp(`^${fileNamePart(name)}_${type}_${DATE}\\.csv$`));
        expect(file.bytes.subarray(0, 3).toString('hex'), `${type} starts with the BOM`).toBe('efbbbf');
        expect(csvHeader(file.bytes).length, `${type} has a header line`).toBeGreaterThan(2);
        expect(await region.getByRole('alert').count()).toBe(0);
      }

      // Global: the image details of every study, without a study.
      const images = section(page, REPORT_LABELS['image-details']);
      await images.getByRole('button', { name: 'Clear study' }).click();
      const global = await download(images, page, 'Download CSV');
      expect(global.name).toMatch(new RegExp(`^Global_image-details_${DATE}\\.csv$`));

      // An impossible date disables the download and says why.
      const query = section(page, REPORT_LABELS.query);
      await query.getByLabel('Start date', { exact: true }).fill('31-Feb-2026');
      expect(await query.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true);
      await query.getByText('Dates are written DD-MMM-YYYY').first().waitFor();
      await page.getByRole('heading', { name: 'Reports' }).scrollIntoViewIfNeeded();
      await saveScreenshot(page, 'reports-sysadmin.png');
      await query.scrollIntoViewIfNeeded();
      await saveScreenshot(page, 'reports-sysadmin-date-error.png');
    },
  );

  test('a sponsor sees the image details and read outcomes sections and downloads the sponsor report', async ({
    page,
  }) => {
    await loginViaUi(page, 'sponsor');
    await waitForPath(page, '/studies');
    await page.goto(appUrl('/reports'));
    await pageHeading(page, 'Reports').waitFor();
    expect(await sectionTitles(page)).toEqual([
      REPORT_LABELS['image-details'],
      REPORT_LABELS['image-details-sponsor'],
      REPORT_LABELS['read-outcomes'],
    ]);
    expect(await page.getByRole('combobox', { name: 'User' }).count()).toBe(0);
    const sponsor = section(page, REPORT_LABELS['image-details-sponsor']);
    // No Global for a sponsor: a study first.
    expect(await sponsor.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true);
    const demo = await chooseStudy(sponsor, page, DEMO_STUDY);
    const file = await download(sponsor, page, 'Download CSV');
    expect(file.name).toMatch(new RegExp(`^${fileNamePart(demo)}_image-details-sponsor_${DATE}\\.csv$`));
    expect(csvHeader(file.bytes).length).toBeGreaterThan(2);
    await saveScreenshot(page, 'reports-sponsor.png');

    // The type-ahead from the keyboard: type, ↓ to the second study, Enter.
    const images = section(page, REPORT_LABELS['image-details']);
    const input = images.getByRole('combobox', { name: 'Study' });
    await input.fill('DEMO');
    const options = page.getByRole('option');
    await expect.poll(() => options.count()).toBeGreaterThan(1);
    await input.press('ArrowDown');
    await atRest(options.nth(1));
    await saveScreenshot(page, 'reports-sponsor-typeahead.png');
    const second = (await options.nth(1).innerText()).trim();
    await input.press('Enter');
    expect(await input.inputValue()).toBe(second);
    expect(await images.getByRole('button', { name: 'Download CSV' }).isEnabled()).toBe(true);
  });
});
