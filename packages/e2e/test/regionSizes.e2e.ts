import { formatAreaUm2, formatLengthUm, formatMicrons, type CreateAnnotationResponse } from '@lamina/domain';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect } from 'vitest';
import { loginViaUi, mutationHeaders } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { openDemoCase } from '../src/viewer.js';

/**
 * Sizes in µm and the annotation opacity slider (issue 29, items 4 and 16), by hand in Chromium:
 * reader2 drags an ellipse on the celiac demo case; the panel gives its radii in µm and its area in
 * µm² while it is placed, the saved annotation carries the same area and its perimeter, and the
 * Annotations tab's row reads them. Then the opacity slider is moved with the keyboard: the
 * annotation layer fades at once and the preference is kept. What it drew is deleted again.
 */

const CELIAC_STUDY = 'DEMO-CD-002';
const PROC_ID = 'ENDO-2001';

async function openCase(page: Page): Promise<{ imageId: number; mpp: number }> {
  return openDemoCase(page, CELIAC_STUDY, PROC_ID, 'region-sizes-case.png');
}

/** Pixels of a part of the page that are the annotation yellow (#FFFF00) at full strength. */
async function yellowPixels(
  page: Page,
  clip: { x: number; y: number; width: number; height: number },
): Promise<number> {
  const png = await page.screenshot({ clip });
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let n = 0;
  for (let i = 0; i < data.length; i += info.channels)
    if ((data[i] ?? 0) > 200 && (data[i + 1] ?? 0) > 200 && (data[i + 2] ?? 255) < 40) n++;
  return n;
}

describe('sizes in µm and annotation opacity (issue 29)', () => {
  test(
    'an ellipse shows its radii in µm and area in µm² while placed, in the API and in the Annotations tab; the opacity slider fades the annotations',
    { timeout: 240_000 },
    async ({ page }) => {
      await loginViaUi(page, 'reader2');
      const { mpp } = await openCase(page);
      expect(mpp, 'the demo slide records its pixel size').toBeGreaterThan(0);
      let createdId: number | null = null;
      try {
        const box = await page.getByTestId('slide-map').boundingBox();
        if (!box) throw new Error('no map');
        await page.getByTestId('slide-map').click({ position: { x: box.width / 2, y: 40 } });
        await page.keyboard.press('o');
        const centre = { x: box.x + box.width / 2 - 60, y: box.y + box.height / 2 - 40 };
        await page.mouse.move(centre.x, centre.y);
        await page.mouse.down();
        await page.mouse.move(centre.x + 70, centre.y + 40, { steps: 8 });
        await page.mouse.move(centre.x + 90, centre.y + 50, { steps: 4 });
        await page.mouse.up();
        const panel = page.getByRole('region', { name: 'Add annotation' });
        const size = panel.getByTestId('ellipse-size');
        await expect
          .poll(async () => size.textContent(), { timeout: 10_000 })
          .toMatch(/^Radii [1-9][\d ]* µm × [1-9][\d ]* µm · [1-9][\d ]* µm²$/);
        await page.waitForTimeout(300); // the panel's radii are debounced (100 ms)
        const shown = (await size.textContent()) ?? '';
        await saveScreenshot(page, 'region-sizes-ellipse-panel.png');

        const saved = page.waitForResponse(
          (r) => r.url().endsWith('/api/annotations') && r.request().method() === 'POST',
        );
        await panel.getByRole('button', { name: 'Add annotation' }).click();
        const response = await saved;
        expect(response.status()).toBe(200);
        const a = ((await response.json()) as CreateAnnotationResponse).annotation;
        createdId = a.id;
        expect(a.annotationType).toBe('ELLIPSE');
        const rx = (a.radiusX ?? 0) * mpp;
        const ry = (a.radiusY ?? 0) * mpp;
        expect(rx).toBeGreaterThan(0);
        // The server's area is π·a·b at the slide's µm per pixel; the panel showed the same numbers.
        expect(a.area).toBeCloseTo(Math.PI * rx * ry, 6);
        expect(a.perimeter).toBeCloseTo(Math.PI * (3 * (rx + ry) - Math.sqrt((3 * rx + ry) * (rx + 3 * ry))), 6);
        expect(shown).toBe(`Radii ${formatMicrons(rx)} × ${formatMicrons(ry)} · ${formatAreaUm2(a.area ?? 0)}`);

        await page.getByRole('tab', { name: 'Annotations' }).click();
        const others = page.getByRole('region', { name: 'Other annotations' });
        const row = others.getByText(`Ellipse ${formatAreaUm2(a.area ?? 0)} · ${formatLengthUm(a.perimeter ?? 0)}`, {
          exact: true,
        });
        await row.waitFor();
        await saveScreenshot(page, 'region-sizes-annotations-tab.png');

        // The opacity slider, by keyboard: the annotation layer follows at once, the choice is kept.
        const slider = page.getByRole('slider', { name: 'Annotation opacity' });
        expect(await slider.getAttribute('aria-valuenow')).toBe('100');
        // The ellipse's stroke, pure yellow (#FFFF00) at full opacity, blends with the slide below it
        // at 60 %: its pixels are no longer yellow (blue ≈ 0.4 × the tissue's).
        const ellipseBox = { x: centre.x - 110, y: centre.y - 70, width: 220, height: 140 };
        await page.mouse.move(box.x + 20, box.y + 20);
        const before = await yellowPixels(page, ellipseBox);
        expect(before, 'the ellipse stroke is drawn').toBeGreaterThan(50);
        await slider.focus();
        for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowLeft');
        await expect.poll(async () => slider.getAttribute('aria-valuenow')).toBe('60');
        await expect.poll(async () => yellowPixels(page, ellipseBox)).toBeLessThan(before / 10);
        await expect
          .poll(() => page.evaluate(() => window.localStorage.getItem('lamina.viewer.annotationOpacity')))
          .toBe('60');
        await saveScreenshot(page, 'region-sizes-opacity.png');
        // Kept: the next visit opens at 60.
        await page.reload();
        await expect
          .poll(async () => page.getByRole('slider', { name: 'Annotation opacity' }).getAttribute('aria-valuenow'), {
            timeout: 60_000,
          })
          .toBe('60');
      } finally {
        if (createdId !== null) {
          const deleted = await page.request.delete(appUrl(`/api/annotations/${createdId}`), {
            headers: await mutationHeaders(page),
          });
          expect(deleted.status()).toBe(200);
        }
        await page.evaluate(() => window.localStorage.removeItem('lamina.viewer.annotationOpacity'));
      }
    },
  );
});
