import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect } from 'vitest';
import type { Response } from 'playwright-core';
import { openDemoUploadDialog } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { REPO_ROOT } from '../src/paths.js';

const SLIDE = path.resolve(REPO_ROOT, '../shared/testdata/wsi/CMU-1-Small-Region.svs');
/** The demo study every demo account can reach. */

/** Processing of a 2 MB slide takes seconds; the worker may still be busy with the demo slide. */
const PROCESSING_TIMEOUT = 120_000;

/**
 * Share of the picture that is H&E tissue: pixels clearly redder than green (eosin pink, haematoxylin
 * purple), which neither the white slide background nor the viewer's grey surround are.
 */
async function tissueShare(png: Buffer): Promise<{ share: number; width: number; height: number }> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let tissue = 0;
  for (let i = 0; i < data.length; i += 3) {
    const r = data[i]!;
    const g = data[i + 1]!;
    const b = data[i + 2]!;
    if (r - g > 25 && b - g > 10) tissue++;
  }
  return { share: tissue / (info.width * info.height), width: info.width, height: info.height };
}

describe('slide upload (issue 3)', () => {
  test(
    'uploader uploads CMU-1-Small-Region.svs through the dialog, watches it process and sees its tiles in the viewer',
    { timeout: 240_000 },
    async ({ page }) => {
      const work = await mkdtemp(path.join(tmpdir(), 'lamina-e2e-upload-'));
      const fileName = `e2e-${Date.now()}-CMU-1-Small-Region.svs`;
      const file = path.join(work, fileName);
      await copyFile(SLIDE, file);
      try {
        // The dialog: choose the file, Upload, a progress bar per file, and the dialog closes when done.
        const { studyId, table, dialog } = await openDemoUploadDialog(page);
        await expect(dialog.getByRole('heading', { name: 'Upload images' }).count()).resolves.toBe(1);
        await dialog.getByLabel('Choose files').setInputFiles(file);
        await dialog.getByTitle(fileName).waitFor(); // the file's row in the progress list
        const registered = page.waitForResponse(
          (r) => r.url().endsWith('/api/images') && r.request().method() === 'POST',
        );
        await dialog.getByRole('button', { name: 'Upload', exact: true }).click();
        expect((await registered).status()).toBe(200);
        await dialog.waitFor({ state: 'detached', timeout: 60_000 });

        // The list shows the new image and, when the worker is done, Succeeded.
        const row = table.getByRole('row').filter({ hasText: fileName });
        await row.waitFor();
        await row.getByTitle('Succeeded').waitFor({ timeout: PROCESSING_TIMEOUT });

        // The viewer draws the slide from tiles.
        const tiles: Response[] = [];
        page.on('response', (r) => {
          if (new URL(r.url()).pathname.startsWith('/tiles/')) tiles.push(r);
        });
        await row.getByText(fileName).click();
        await page.waitForURL((url) => new RegExp(`^/studies/${studyId}/images/\\d+$`).test(url.pathname));
        const map = page.getByTestId('slide-map');
        await map.locator('canvas').first().waitFor();
        await expect.poll(() => tiles.filter((r) => r.status() === 200).length, { timeout: 30_000 }).toBeGreaterThan(0);
        expect(tiles.every((r) => r.status() === 200 && r.headers()['content-type'] === 'image/jpeg')).toBe(true);

        // Tissue fills a good part of the map once the tiles are drawn (screenshot kept for a look).
        await expect
          .poll(async () => (await tissueShare(await map.screenshot())).share, { timeout: 30_000, interval: 500 })
          .toBeGreaterThan(0.08); // about 0.14 at 1280×800: the tissue covers about half of the slide
        await saveScreenshot(page, 'viewer-uploaded-slide.png');
        await expect(page.getByText('Image processing failed').count()).resolves.toBe(0);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  );
});
