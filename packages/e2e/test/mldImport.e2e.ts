import { hexToRgb } from '@lamina/domain';
import { colorRef, writePixelMld } from '@lamina/test-support/mldWriter';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect } from 'vitest';
import { demoStudyId, eventually, loginViaUi, logout, waitForPath } from '../src/app.js';
import { atRest, e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { demoCaseId, expectTissue, tissueFraction } from '../src/viewer.js';

/** The NASH reading study's case, assigned to reader1 (no other test imports onto its slide). */
const NASH_STUDY = 'DEMO-NASH-003';
const PROC_ID = 'ENDO-3001';
/** The AI classes' colours: far from the slide's pinks and purples, so a screenshot tells them apart. */
const FIELD = '#00FFFF';
const CELL = '#FFFF00';
const TISSUE = '#00A0FF';

/** The AI layers' drawn count (the map's 'lamina-ai-annotations-drawn' event). */
const RECORDER = `
  window.__aiDrawn = null;
  document.addEventListener('lamina-ai-annotations-drawn', (e) => { window.__aiDrawn = e.detail.count; }, true);
`;

/** A heatmap as Visiopharm embeds it: a small TIFF, transparent but for a warm blob. */
async function heatmapTiff(): Promise<Uint8Array> {
  const width = 64;
  const height = 48;
  const pixels = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const d = Math.hypot((x - 40) / 14, (y - 20) / 10);
      const i = (y * width + x) * 4;
      pixels.set([255, Math.round(80 + 120 * Math.max(0, 1 - d)), 0, d < 1 ? Math.round(200 * (1 - d)) : 0], i);
    }
  return sharp(pixels, { raw: { width, height, channels: 4 } })
    .tiff({ compression: 'deflate' }) // JPEG, sharp's default, has no alpha
    .toBuffer();
}

/** Share of a screenshot's pixels within a small distance of a colour. */
async function colourShare(png: Buffer, hex: string): Promise<number> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const [r0, g0, b0] = hexToRgb(hex) ?? [0, 0, 0];
  let near = 0;
  for (let i = 0; i < data.length; i += info.channels)
    if (Math.abs((data[i] ?? 0) - r0) + Math.abs((data[i + 1] ?? 0) - g0) + Math.abs((data[i + 2] ?? 0) - b0) < 60)
      near++;
  return near / (info.width * info.height);
}

const mapShot = (page: Page) => page.getByTestId('slide-map').screenshot();

/** Each visible row of a tree as 'name count'. */
async function treeRows(page: Page, name: string): Promise<string[]> {
  const tree = page.getByRole('tree', { name, exact: true });
  const rows = tree.locator('.lamina-tree-row');
  const texts: string[] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    texts.push(
      `${await row.locator('.lamina-tree-name').innerText()} ${await row.locator('.lamina-tree-count').innerText()}`,
    );
  }
  return texts;
}

describe('imported AI annotations (issue 17)', () => {
  test(
    'an ISC imports a generated .mld for a demo slide and watches it complete; reader1 shows, hides and fades the AI layers and includes their counts',
    { timeout: 360_000 },
    async ({ page }) => {
      await page.context().addInitScript(RECORDER);
      await loginViaUi(page, 'isc');
      await waitForPath(page, '/studies');
      const studyId = await demoStudyId(page, NASH_STUDY);
      const caseId = await demoCaseId(page, studyId, PROC_ID);
      const theCase = (await (await page.request.get(appUrl(`/api/cases/${caseId}`))).json()) as {
        case: { images: { id: number }[] };
      };
      const imageId = theCase.case.images[0]?.id;
      if (!imageId) throw new Error(`${PROC_ID} has no image`);
      const image = (await (await page.request.get(appUrl(`/api/images/${imageId}`))).json()) as {
        name: string;
        width: number;
        height: number;
      };

      // The file names its slide by the [ImageInfo] path (a Windows path, as Visiopharm writes it),
      // at the slide's own size: two HPFs, six lymphocytes (four in HPFs, two outside), a tissue region.
      const { width: w, height: h } = image;
      const r = Math.round(Math.min(w, h) * 0.09);
      const mld = writePixelMld({
        size: { width: w, height: h },
        imagePath: `D:\\Visiopharm\\Images\\${image.name}`,
        classes: [
          { layer: 'ROI', names: [{ name: 'Inflamed field', color: colorRef(FIELD) }] },
          {
            layer: 'Label',
            names: [
              { name: 'Lymphocyte', color: colorRef(CELL) },
              { name: 'Tissue', color: colorRef(TISSUE) },
            ],
          },
        ],
        circles: [
          { x: w * 0.35, y: h * 0.45, radius: r, classIndex: 1, layer: 'ROI' },
          { x: w * 0.65, y: h * 0.55, radius: r, classIndex: 1, layer: 'ROI' },
        ],
        points: [
          [0.35, 0.45],
          [0.36, 0.46],
          [0.34, 0.44],
          [0.65, 0.55],
          [0.1, 0.1],
          [0.9, 0.9],
        ].map(([fx, fy]) => ({ x: w * (fx ?? 0), y: h * (fy ?? 0), classIndex: 1, layer: 'Label' })),
        polygons: [
          {
            points: [
              [w * 0.2, h * 0.25],
              [w * 0.8, h * 0.25],
              [w * 0.8, h * 0.75],
              [w * 0.2, h * 0.75],
            ],
            classIndex: 2,
            layer: 'Label',
          },
        ],
        heatmap: { name: 'Lymphocyte density', tiff: await heatmapTiff() },
      });
      const fileName = `APP7_${image.name.replace(/\.[^.]+$/, '')}.mld`;

      // Image Management → Annotations → Import Annotations.
      await page.goto(appUrl('/image-management/annotations'));
      await page.getByText('Layers are imported from .mld files').waitFor();
      await page.getByRole('button', { name: 'Import Annotations' }).click();
      const dialog = page.getByRole('dialog', { name: 'Import Annotations' });
      await dialog.getByLabel('Choose .mld files').setInputFiles([
        { name: fileName, mimeType: 'application/octet-stream', buffer: Buffer.from(mld) },
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an mld') },
      ]);
      await dialog.getByText('Only .mld files can be imported: notes.txt').waitFor();
      await expect.poll(async () => dialog.getByRole('progressbar').count()).toBe(1);
      await saveScreenshot(page, 'mld-import-dialog.png');
      await dialog.getByRole('button', { name: 'Upload' }).click();
      await dialog.waitFor({ state: 'detached' });

      // The row appears and reaches Complete by itself (the tab polls while it is pending).
      const table = page.getByRole('table', { name: 'Imported annotations' });
      const row = table.locator('tbody tr').filter({ hasText: fileName });
      await row.waitFor();
      await eventually(async () => (await row.getByTestId('mld-status').innerText()).trim()).toMatch(
        /^(Uploaded|Queued|Processing|Complete)$/,
      );
      await expect
        .poll(async () => (await row.getByTestId('mld-status').innerText()).trim(), { timeout: 90_000, interval: 500 })
        .toBe('Complete');
      const cells = await row.locator('td').allInnerTexts();
      expect(cells[0]).toContain(fileName);
      expect(cells[0]).toMatch(/\d+\.\d\d kB/);
      expect(cells[2]).toBe('7');
      expect(cells[3]).toBe('3');
      expect(await row.getByRole('link', { name: image.name }).getAttribute('href')).toBe(
        `/studies/${studyId}/images/${imageId}`,
      );
      expect(await row.getByRole('link', { name: new RegExp(PROC_ID) }).getAttribute('href')).toBe(
        `/studies/${studyId}/cases/${caseId}`,
      );
      expect(cells[7]).toBe('isc');
      await saveScreenshot(page, 'mld-annotations-tab-complete.png');
      await logout(page);

      // reader1 opens the case: the AI objects load (drawn, at opacity 0 until the slider moves).
      await loginViaUi(page, 'reader1');
      await waitForPath(page, '/studies');
      const heatmap = page.waitForResponse((res) => /\/api\/mld\/\d+\/heatmap$/.test(res.url()));
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      await expectTissue(page, 'mld-reader-opened.png');
      const heat = await heatmap;
      expect(heat.status()).toBe(200);
      expect(heat.headers()['content-type']).toBe('image/png');
      await eventually(() =>
        page.evaluate(() => (globalThis as unknown as { __aiDrawn: number | null }).__aiDrawn),
      ).toBe(9);
      const slider = page.getByRole('slider', { name: 'AI annotation opacity' });
      expect(await slider.getAttribute('aria-valuenow')).toBe('0');
      expect(await colourShare(await mapShot(page), FIELD)).toBeLessThan(0.0005);

      // The AI opacity slider: moved to its right end, the AI HPF rings show.
      const track = page.getByTestId('ai-opacity').locator('.bp6-slider');
      const box = await track.boundingBox();
      if (!box) throw new Error('no AI opacity slider');
      await page.mouse.click(box.x + box.width - 2, box.y + box.height / 2);
      await eventually(async () => Number(await slider.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(95);
      await eventually(async () => colourShare(await mapShot(page), FIELD)).toBeGreaterThan(0.002);
      const shown = await mapShot(page);
      expect(await colourShare(shown, CELL)).toBeGreaterThan(0);
      // The heatmap is drawn over the slide with its transparency: the tissue still shows through.
      expect(await tissueFraction(shown)).toBeGreaterThan(0.03);
      await saveScreenshot(page, 'mld-reader-ai-layers.png');

      // 'i' hides the AI layers (and the slider), and shows them again.
      await page.getByTestId('slide-map').focus();
      await page.keyboard.press('i');
      const aiCheckbox = page.getByRole('checkbox', { name: 'AI layers' });
      await eventually(() => aiCheckbox.isChecked()).toBe(false);
      await expect.poll(async () => slider.count()).toBe(0);
      await eventually(async () => colourShare(await mapShot(page), FIELD)).toBeLessThan(0.0005);
      await saveScreenshot(page, 'mld-reader-ai-hidden.png');
      await page.keyboard.press('i');
      await eventually(() => aiCheckbox.isChecked()).toBe(true);
      await eventually(async () => colourShare(await mapShot(page), FIELD)).toBeGreaterThan(0.002);

      // The Annotations tab: the imported AI annotation tree with its counts and APP sequence.
      await page.getByRole('tab', { name: 'Annotations' }).click();
      const section = page.getByRole('region', { name: 'Imported AI annotations' });
      await section.getByText(fileName).waitFor();
      expect(await section.getByTestId('app-sequence').innerText()).toBe('7');
      expect(await treeRows(page, 'AI classes')).toEqual(['Inflamed field 2', 'Lymphocyte 6', 'Tissue 1']);
      expect(await treeRows(page, 'AI annotation tree')).toEqual([
        'Inflamed field 2',
        'HPF 1 3',
        'HPF 2 1',
        'Orphan 2',
      ]);
      await section.getByRole('button', { name: 'Expand HPF 1' }).click();
      expect(await treeRows(page, 'AI annotation tree')).toContain('Lymphocyte 3');
      expect(await section.getByRole('button', { name: /Delete/ }).count()).toBe(0);

      // 'Include AI annotation counts in reports' is the image's setting (the ISC's): a reader sees it
      // and cannot change it — a second reader would read their choice there (issue 26).
      const include = section.getByRole('checkbox', { name: 'Include AI annotation counts in reports' });
      expect(await include.isChecked()).toBe(false);
      expect(await include.isDisabled()).toBe(true);
      await section.scrollIntoViewIfNeeded();
      await saveScreenshot(page, 'mld-reader-ai-tree.png');

      // Mark as Scored asks the reader about the AI counts, starting from the image's setting (doc 3 §4);
      // the choice goes with their read.
      await page.getByRole('button', { name: 'Mark as Scored' }).click();
      const scored = page.getByRole('dialog', { name: 'Mark as Scored' });
      await scored.getByText('This image has imported AI annotations. Include or exclude their counts?').waitFor();
      expect(await scored.getByRole('radio', { name: 'Exclude imported AI annotation counts' }).isChecked()).toBe(true);
      // Chosen by its label, as a user does: Blueprint's indicator covers the radio input itself.
      await scored.getByText('Include imported AI annotation counts').click();
      expect(await scored.getByRole('radio', { name: 'Include imported AI annotation counts' }).isChecked()).toBe(true);
      await atRest(scored);
      await saveScreenshot(page, 'mld-reader-mark-as-scored.png');
      await scored.getByRole('button', { name: 'Cancel' }).click();
      await scored.waitFor({ state: 'detached' });
    },
  );
});
