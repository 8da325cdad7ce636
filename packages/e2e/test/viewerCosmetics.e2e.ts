import { ANNOTATION_MESSAGES, type CreateAnnotationResponse } from '@lamina/domain';
import type { Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect } from 'vitest';
import { loginViaUi, mutationHeaders } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { openDemoCase } from '../src/viewer.js';

/**
 * The viewer's cosmetic items of issue 29 item 17, measured in Chromium at 1280x800: the lock
 * banner stays readable over the map's length labels, the sidebar's download icons are not
 * clipped, the Microscope toggle shows its on state, the mini-map shows the whole slide after a
 * pan at the lowest zoom, and the celiac table's cells keep to one line. Reader2 works on the
 * celiac demo case (ENDO-2001); the one line drawn is deleted again, and the lock is the
 * annotation list's `locked` flag set in this browser only (the read itself is not marked).
 */

const CELIAC_STUDY = 'DEMO-CD-002';
const PROC_ID = 'ENDO-2001';

type Box = { x: number; y: number; width: number; height: number };

async function boxOf(locator: Locator): Promise<Box> {
  const box = await locator.boundingBox();
  if (!box) throw new Error('not on screen');
  return box;
}

async function raw(png: Buffer) {
  return sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
}

/** Share of the pixels that differ (any channel by more than 24) between two same-size screenshots. */
async function differingShare(a: Buffer, b: Buffer): Promise<number> {
  const [x, y] = [await raw(a), await raw(b)];
  let differ = 0;
  for (let i = 0; i < x.data.length; i += 3)
    if ([0, 1, 2].some((c) => Math.abs((x.data[i + c] ?? 0) - (y.data[i + c] ?? 0)) > 24)) differ++;
  return differ / (x.info.width * x.info.height);
}

/** Where the default line colour (#FFFF00) is right-most on the map: the end of a horizontal line. */
async function yellowRightEnd(page: Page): Promise<{ x: number; y: number } | null> {
  const map = page.getByTestId('slide-map');
  const origin = await boxOf(map);
  const { data, info } = await raw(await map.screenshot());
  let best: { x: number; y: number } | null = null;
  for (let y = 0; y < info.height; y++)
    for (let x = 0; x < info.width; x++) {
      const i = (y * info.width + x) * 3;
      if ((data[i] ?? 0) > 220 && (data[i + 1] ?? 0) > 220 && (data[i + 2] ?? 255) < 60 && (!best || x > best.x))
        best = { x, y };
    }
  return best && { x: origin.x + best.x, y: origin.y + best.y };
}

/** Drags the map (the default pan) by (dx, dy) screen pixels from a point of it. */
async function dragMap(page: Page, from: { x: number; y: number }, dx: number, dy: number): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + dx / 2, from.y + dy / 2, { steps: 6 });
  await page.mouse.move(from.x + dx, from.y + dy, { steps: 6 });
  await page.waitForTimeout(200); // rest, so the release leaves no glide
  await page.mouse.up();
  await page.waitForTimeout(600);
}

/**
 * The mini-map's slide: the bounding box of its pixels that are not the outside grey (#7a8088)
 * nor the view's red box (#d33d17), in mini-map pixels.
 */
async function slideInMiniMap(miniMap: Locator): Promise<{ left: number; top: number; right: number; bottom: number }> {
  const { data, info } = await raw(await miniMap.screenshot());
  let [left, top, right, bottom] = [Infinity, Infinity, -Infinity, -Infinity];
  // Not the outermost pixels: at a fractional position the clip takes a row of the panel too.
  for (let y = 1; y < info.height - 1; y++)
    for (let x = 1; x < info.width - 1; x++) {
      const i = (y * info.width + x) * 3;
      const [r, g, b] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
      const outside = Math.abs(r - 0x7a) < 14 && Math.abs(g - 0x80) < 14 && Math.abs(b - 0x88) < 14;
      const box = r > 170 && g < 110 && b < 80;
      if (outside || box) continue;
      left = Math.min(left, x);
      top = Math.min(top, y);
      right = Math.max(right, x);
      bottom = Math.max(bottom, y);
    }
  return { left, top, right, bottom };
}

describe('viewer cosmetics (issue 29 item 17)', () => {
  test(
    'the Microscope toggle shows its state; the mini-map shows the whole slide after a pan at the lowest zoom',
    { timeout: 240_000 },
    async ({ page }) => {
      await loginViaUi(page, 'reader2');
      const { width, height } = await openDemoCase(page, CELIAC_STUDY, PROC_ID, 'cosmetics-case.png');

      // Microscope: off, then pressed (Blueprint's active, primary), then off again.
      const microscope = page.getByRole('button', { name: 'Microscope' });
      const look = async () =>
        microscope.evaluate((el) => ({
          pressed: el.getAttribute('aria-pressed'),
          active: el.classList.contains('bp6-active'),
          background: getComputedStyle(el).backgroundColor,
        }));
      if ((await microscope.getAttribute('aria-pressed')) === 'true') await microscope.click();
      const off = await look();
      expect(off).toMatchObject({ pressed: 'false', active: false });
      await microscope.click();
      await page.getByTestId('microscope-mode').waitFor();
      const on = await look();
      expect(on).toMatchObject({ pressed: 'true', active: true });
      expect(on.background, 'the pressed toggle looks different').not.toBe(off.background);
      await page.mouse.move(0, 0);
      await saveScreenshot(page, 'cosmetics-microscope-on.png');
      await microscope.click();
      expect(await look()).toMatchObject({ pressed: 'false', active: false });

      // Mini-map: the lowest zoom, then pans to a corner; the whole slide stays in the overview,
      // centred, its longer side 176 px of the 180 (ViewerEngine's overview resolution).
      const miniMap = page.getByTestId('mini-map');
      if (await miniMap.isHidden()) await page.getByRole('button', { name: 'Mini-map' }).click();
      await page.getByTestId('slide-map').focus();
      for (let i = 0; i < 12; i++) await page.keyboard.press('-');
      await page.waitForTimeout(800);
      for (let i = 0; i < 6; i++) {
        await page.keyboard.press('ArrowRight');
        await page.keyboard.press('ArrowDown');
      }
      await page.waitForTimeout(1000);
      await saveScreenshot(page, 'cosmetics-minimap-panned.png');
      const slide = await slideInMiniMap(miniMap);
      const expected = { w: (176 * width) / Math.max(width, height), h: (176 * height) / Math.max(width, height) };
      expect(slide.right - slide.left + 1).toBeGreaterThan(expected.w - 4);
      expect(slide.bottom - slide.top + 1).toBeGreaterThan(expected.h - 4);
      expect(Math.abs((slide.left + slide.right) / 2 - 89.5), 'centred across').toBeLessThan(3);
      expect(Math.abs((slide.top + slide.bottom) / 2 - 89.5), 'centred down').toBeLessThan(3);
    },
  );

  test(
    'the lock banner stays readable over a length label; the celiac table keeps each cell on one line',
    { timeout: 240_000 },
    async ({ page }) => {
      await loginViaUi(page, 'reader2');
      // This browser reads the case as locked (the reader's read marked), whatever the server says.
      await page.route(/\/api\/images\/\d+\/annotations$/, async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { locked: boolean };
        await route.fulfill({ response, json: { ...body, locked: true } });
      });
      const { imageId, width, height } = await openDemoCase(page, CELIAC_STUDY, PROC_ID, 'cosmetics-locked.png');
      let lineId: number | null = null;
      try {
        const created = await page.request.post(appUrl('/api/annotations'), {
          headers: await mutationHeaders(page),
          data: {
            imageId,
            annotationType: 'LINE',
            geometry: {
              type: 'LineString',
              coordinates: [
                [width / 2 - width / 8, height / 2],
                [width / 2 + width / 8, height / 2],
              ],
            },
          },
        });
        expect(created.status(), await created.text()).toBe(200);
        lineId = ((await created.json()) as CreateAnnotationResponse).annotation.id;
        await page.reload();
        const banner = page.locator('.lamina-annotation-messages .bp6-callout').filter({
          hasText: ANNOTATION_MESSAGES.lockedScored,
        });
        await banner.waitFor();
        await expect.poll(async () => yellowRightEnd(page), { timeout: 20_000 }).not.toBeNull();

        // The line's end (its label 14 px above) is dragged under the banner.
        const bannerBox = await boxOf(banner);
        const end = (await yellowRightEnd(page)) as { x: number; y: number };
        const target = { x: bannerBox.x + bannerBox.width / 2 + 30, y: bannerBox.y + bannerBox.height / 2 + 14 };
        const grip = { x: end.x - 40, y: end.y + 40 };
        await dragMap(page, grip, target.x - end.x, target.y - end.y);
        await page.mouse.move(0, 0);
        await saveScreenshot(page, 'cosmetics-lock-banner-over-label.png');
        const clip = await boxOf(banner);
        const over = await page.screenshot({ clip });
        // Nor does it lie over the bottom-left controls (the opacity slider's end was under it).
        for (const panel of await page.locator('.lamina-viewer-controls > :not([hidden])').all()) {
          const p = await boxOf(panel);
          const apart =
            p.x + p.width <= clip.x ||
            clip.x + clip.width <= p.x ||
            p.y + p.height <= clip.y ||
            clip.y + clip.height <= p.y;
          expect(apart, 'the banner clear of the controls').toBe(true);
        }
        // The banner is what the pointer meets there, above the map.
        const onTop = await banner.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return hit !== null && el.contains(hit);
        });
        expect(onTop).toBe(true);

        // Elsewhere on the map, the banner looks the same: nothing of the map shows through it.
        await dragMap(page, { x: target.x - 200, y: target.y - 150 }, -250, -200);
        const away = await page.screenshot({ clip });
        expect(await differingShare(over, away), 'the banner is the same over the label and away').toBeLessThan(0.01);

        // The celiac table: every header and cell on one line, inside the sidebar.
        await page.getByRole('tab', { name: 'Annotations' }).click();
        const table = page.getByRole('table', { name: 'Celiac Line Measurements' });
        await table.waitFor();
        await table.scrollIntoViewIfNeeded();
        await saveScreenshot(page, 'cosmetics-celiac-table.png');
        // The lines of a cell: the distinct tops of its text's boxes (the colour swatch is no text).
        const lines = await table.evaluate((t) =>
          Array.from(t.querySelectorAll('th, td'), (cell) => {
            const tops = new Set<number>();
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              const range = document.createRange();
              range.selectNodeContents(node);
              for (const r of Array.from(range.getClientRects()))
                if (r.width > 0 && (node.textContent ?? '').trim()) tops.add(Math.round(r.top / 4));
            }
            return { text: (cell.textContent ?? '').trim(), lines: tops.size };
          }),
        );
        expect(lines.some((c) => c.text.includes('Unit 1'))).toBe(true);
        for (const cell of lines) expect(cell.lines, cell.text).toBeLessThanOrEqual(1);
        const sidebar = await boxOf(page.locator('.lamina-viewer-sidebar'));
        const tableBox = await boxOf(table);
        expect(tableBox.x + tableBox.width).toBeLessThanOrEqual(sidebar.x + sidebar.width);
      } finally {
        if (lineId !== null) {
          const deleted = await page.request.delete(appUrl(`/api/annotations/${lineId}`), {
            headers: await mutationHeaders(page),
          });
          expect(deleted.status()).toBe(200);
        }
      }
    },
  );

  test('the sidebar’s download buttons are inside the sidebar at 1280x800', { timeout: 240_000 }, async ({ page }) => {
    await loginViaUi(page, 'sysadmin');
    // The widest row: a long file name with both tags (its status and 'Hidden from readers'), in
    // this browser's copy of the case only.
    await page.route(/\/api\/cases\/\d+$/, async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { case?: { images: { name: string; ignored: boolean }[] } };
      for (const image of body.case?.images ?? []) {
        image.name = `${image.name.replace(/\.tif$/, '')}_RESCANNED_AFTER_REVIEW.tif`;
        image.ignored = true;
      }
      await route.fulfill({ response, json: body });
    });
    await openDemoCase(page, CELIAC_STUDY, PROC_ID, 'cosmetics-sysadmin-case.png');
    await page.locator('.lamina-case-image-row').getByText('Hidden from readers').waitFor();
    const sidebar = page.locator('.lamina-viewer-sidebar');
    const downloads = sidebar.getByRole('button', { name: /^Download / });
    await downloads.first().waitFor();
    await saveScreenshot(page, 'cosmetics-sidebar-downloads.png');
    const edge = await boxOf(sidebar);
    // The sidebar's own width: a vertical scroll bar takes from the right.
    const inner = await sidebar.evaluate((el) => el.clientWidth);
    for (const button of await downloads.all()) {
      const box = await boxOf(button);
      expect(box.x).toBeGreaterThanOrEqual(edge.x);
      expect(box.x + box.width, 'the icon is not cut by the sidebar’s edge').toBeLessThanOrEqual(edge.x + inner);
      // Nor does it stick out of its box (the Case details box's border ran through it).
      const own = await button.evaluate((el) => {
        const r = (el.closest('.lamina-viewer-box') as HTMLElement).getBoundingClientRect();
        return r.right;
      });
      expect(box.x + box.width).toBeLessThanOrEqual(own);
    }
    expect(await sidebar.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  });
});
