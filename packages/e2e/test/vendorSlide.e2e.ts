import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect } from 'vitest';
import type { Page, Response } from 'playwright-core';
import {
  maxTmsZoom,
  toAnnotationView,
  type AnnotationListResponse,
  type CreateAnnotationResponse,
} from '@lamina/domain';
import { appUrl } from '../src/env.js';
import { loginViaUi, openDemoUploadDialog } from '../src/app.js';
import { e2eTest as test, newTestContext, saveScreenshot } from '../src/browser.js';
import { REPO_ROOT } from '../src/paths.js';
import { colourNear, recordedView, screenOfPixel, VIEW_RECORDER, zoomInUntil } from '../src/viewer.js';
import {
  channelMeans,
  meanAbsoluteDifference,
  openslideRegion,
  referenceTile,
  type RgbImage,
} from '../../server/test/support/openslide.js';

/**
 * A vendor slide from upload to annotation in the browser (issue 31): the Hamamatsu NanoZoomer test
 * slide (.ndpi, fluorescence: black with DAPI-blue nuclei) is uploaded through the dialog, which
 * offers .ndpi, processes to Succeeded through OpenSlide, and the viewer's tiles — fitted and at
 * full resolution — have the pixels of OpenSlide's rendering of the same level. A system admin
 * (the one non-reader role that may draw outside a case) then puts a point on a nucleus in the
 * image viewer, and the API keeps it on that nucleus in slide pixels.
 */

const SLIDE = path.resolve(REPO_ROOT, '../shared/testdata/wsi/test3-DAPI-2-387.ndpi');
/** Level 0 as openslide-show-properties gives it. */
const WIDTH = 3968;
const HEIGHT = 4864;
const MAX_ZOOM = maxTmsZoom(WIDTH, HEIGHT);
const PROCESSING_TIMEOUT = 120_000;
/** The demo study's first point class (demoSeed.ts) and its colour. */
const POINT_CLASS = 'Neutrophil';
const POINT_COLOUR = '#87FF01';

/** OpenSlide's rendering of each whole level, read once when first needed. */
function openslideLevels(): (level: number) => Promise<RgbImage> {
  const levels = new Map<number, Promise<RgbImage>>();
  return (level) => {
    let image = levels.get(level);
    if (!image) levels.set(level, (image = openslideRegion(SLIDE, level)));
    return image;
  };
}

interface TileCheck {
  z: number;
  x: number;
  y: number;
  /** Per channel, |served mean − OpenSlide's mean| over the tile's part inside the level. */
  meanShift: [number, number, number];
  /** Per channel, the mean absolute difference pixel by pixel. */
  mad: [number, number, number];
  /** Per channel, the mean absolute difference of the means of 8 × 8 px blocks (whole blocks inside the level). */
  blockMad: [number, number, number];
  /** OpenSlide's blue mean there: tiles of nuclei, not only of black background. */
  blue: number;
}

/** A tile the viewer received against OpenSlide's level of the same downsample (2^(MAX_ZOOM − z)). */
async function checkTile(
  level: (k: number) => Promise<RgbImage>,
  z: number,
  x: number,
  y: number,
  body: Buffer,
): Promise<TileCheck> {
  const reference = await level(MAX_ZOOM - z);
  const { data, info } = await sharp(body).raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height, info.channels]).toEqual([256, 256, 3]);
  const { data: ref, width, height } = referenceTile(reference, x, y);
  const served = { data, width: 256, height: 256 };
  const expected = { data: ref, width: 256, height: 256 };
  const rect = { left: 0, top: 0, width, height };
  const a = channelMeans(served, rect);
  const b = channelMeans(expected, rect);
  return {
    z,
    x,
    y,
    meanShift: [0, 1, 2].map((c) => Math.abs(a[c]! - b[c]!)) as [number, number, number],
    mad: meanAbsoluteDifference(served, expected, rect),
    blockMad: meanAbsoluteDifference(blockMeans(served, 8), blockMeans(expected, 8), {
      left: 0,
      top: 0,
      width: Math.floor(width / 8),
      height: Math.floor(height / 8),
    }),
    blue: b[2],
  };
}

/** An image's means over n × n px blocks (width and height multiples of n), rounded. */
function blockMeans(image: RgbImage, n: number): RgbImage {
  const width = image.width / n;
  const height = image.height / n;
  const data = Buffer.alloc(width * height * 3);
  for (let by = 0; by < height; by++)
    for (let bx = 0; bx < width; bx++) {
      const rect = { left: bx * n, top: by * n, width: n, height: n };
      channelMeans(image, rect).forEach((v, c) => (data[(by * width + bx) * 3 + c] = Math.round(v)));
    }
  return { data, width, height };
}

/** Per channel, the worst value of `pick` among `checks`. */
const worst = (checks: TileCheck[], pick: (c: TileCheck) => [number, number, number]) =>
  [0, 1, 2].map((c) => Math.max(0, ...checks.map((check) => pick(check)[c]!)));

/**
 * The brightest nucleus of a region: the centre of the 21 × 21 px window (about 5 µm, a DAPI
 * nucleus's core) of highest mean blue, searched every 2 px; in the region's pixels.
 */
function brightestNucleus(region: RgbImage): { x: number; y: number; blue: number } {
  const { width, height, data } = region;
  const sum = new Float64Array((width + 1) * (height + 1));
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      sum[(y + 1) * (width + 1) + x + 1] =
        data[(y * width + x) * 3 + 2]! +
        sum[y * (width + 1) + x + 1]! +
        sum[(y + 1) * (width + 1) + x]! -
        sum[y * (width + 1) + x]!;
  const r = 10;
  let best = { x: 0, y: 0, blue: -1 };
  for (let y = r; y < height - r; y += 2)
    for (let x = r; x < width - r; x += 2) {
      const at = (yy: number, xx: number) => sum[yy * (width + 1) + xx]!;
      const blue = (at(y + r + 1, x + r + 1) - at(y - r, x + r + 1) - at(y + r + 1, x - r) + at(y - r, x - r)) / 441;
      if (blue > best.blue) best = { x, y, blue };
    }
  return best;
}

/** Mean colour of the page's screenshot in a (2r+1)² square around a point. */
async function screenColour(page: Page, at: { x: number; y: number }, r = 2): Promise<[number, number, number]> {
  const { data, info } = await sharp(await page.screenshot())
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const sums = [0, 0, 0];
  let n = 0;
  for (let y = Math.round(at.y) - r; y <= Math.round(at.y) + r; y++)
    for (let x = Math.round(at.x) - r; x <= Math.round(at.x) + r; x++, n++)
      for (let c = 0; c < 3; c++) sums[c]! += data[(y * info.width + x) * info.channels + c]!;
  return sums.map((s) => s / n) as [number, number, number];
}

/** Waits until the view stops changing (a zoom animates), then answers it. */
async function settledView(page: Page): Promise<{ resolution: number; center: [number, number] }> {
  let last = JSON.stringify(await recordedView(page));
  await expect
    .poll(
      async () => {
        const now = JSON.stringify(await recordedView(page));
        const same = now === last;
        last = now;
        return same;
      },
      { timeout: 10_000, interval: 400 },
    )
    .toBe(true);
  return recordedView(page);
}

describe('vendor slides through OpenSlide (issue 31)', () => {
  test(
    'a Hamamatsu .ndpi uploads, processes, shows OpenSlide’s pixels in the viewer and takes a point on a nucleus where it was clicked',
    { timeout: 240_000 },
    async ({ page, browser }) => {
      const level = openslideLevels();
      const work = await mkdtemp(path.join(tmpdir(), 'lamina-e2e-ndpi-'));
      const fileName = `e2e-${Date.now()}-test3-DAPI-2-387.ndpi`;
      const file = path.join(work, fileName);
      await copyFile(SLIDE, file);
      try {
        // 1. The uploader's dialog offers .ndpi; the slide processes to Succeeded.
        const { studyId, table, dialog } = await openDemoUploadDialog(page);
        const hint = dialog.getByText('Accepted files:');
        await hint.waitFor();
        expect((await hint.innerText()).split(/[:,]\s*/)).toContain('.ndpi');
        await dialog.getByLabel('Choose files').setInputFiles(file);
        await dialog.getByTitle(fileName).waitFor();
        expect(await dialog.getByText('File type not supported').count()).toBe(0);
        const registered = page.waitForResponse(
          (r) => r.url().endsWith('/api/images') && r.request().method() === 'POST',
        );
        await dialog.getByRole('button', { name: 'Upload', exact: true }).click();
        expect((await registered).status()).toBe(200);
        await dialog.waitFor({ state: 'detached', timeout: 60_000 });
        const row = table.getByRole('row').filter({ hasText: fileName });
        await row.waitFor();
        await row.getByTitle('Succeeded').waitFor({ timeout: PROCESSING_TIMEOUT });

        // 2. The viewer's tiles against OpenSlide, fitted and at full resolution.
        const checks: Promise<TileCheck>[] = [];
        page.on('response', (r: Response) => {
          const match = /^\/tiles\/\d+\/(\d+)\/(\d+)\/(\d+)$/.exec(new URL(r.url()).pathname);
          if (!match || r.status() !== 200) return;
          const [z, x, y] = match.slice(1).map(Number) as [number, number, number];
          checks.push(r.body().then((body) => checkTile(level, z, x, y, body)));
        });
        await row.getByText(fileName).click();
        await page.waitForURL((url) => new RegExp(`^/studies/${studyId}/images/\\d+$`).test(url.pathname));
        const imageId = Number(new URL(page.url()).pathname.split('/').at(-1));
        const image = (await (await page.request.get(appUrl(`/api/images/${imageId}`))).json()) as {
          width: number;
          height: number;
        };
        expect([image.width, image.height]).toEqual([WIDTH, HEIGHT]);
        const map = page.getByTestId('slide-map');
        await map.locator('canvas').first().waitFor();
        // The fitted view's tiles are in when the map shows the slide's nuclei (blue over black).
        await expect
          .poll(async () => blueShare(await map.screenshot()), { timeout: 30_000, interval: 500 })
          .toBeGreaterThan(0.05);
        const fitted = await Promise.all(checks);
        expect(fitted.length).toBeGreaterThan(0);
        await saveScreenshot(page, 'viewer-ndpi-fitted.png');
        expect(await page.getByText('Image processing failed').count()).toBe(0);

        await map.focus();
        const atFull = async () => (await Promise.all(checks)).some((c) => c.z === MAX_ZOOM);
        await zoomInUntil(page, atFull);
        await expect.poll(atFull, { timeout: 30_000 }).toBe(true);
        const results = await Promise.all(checks);
        const reduced = results.filter((r) => r.z < MAX_ZOOM);
        const full = results.filter((r) => r.z === MAX_ZOOM);
        console.info(
          `NDPI tiles: ${reduced.length} reduced (z ${[...new Set(reduced.map((r) => r.z))].join(',')}), ${full.length} full; ` +
            `worst mean shift reduced ${fmt(worst(reduced, (r) => r.meanShift))} full ${fmt(worst(full, (r) => r.meanShift))}; ` +
            `worst MAD reduced ${fmt(worst(reduced, (r) => r.mad))} full ${fmt(worst(full, (r) => r.mad))}; ` +
            `worst 8-px block MAD ${fmt(worst(results, (r) => r.blockMad))}; ` +
            `most blue reduced ${Math.max(...reduced.map((r) => r.blue)).toFixed(1)} full ${Math.max(...full.map((r) => r.blue)).toFixed(1)}`,
        );
        // Both sets hold tiles of nuclei, so the comparison is not one of black against black.
        expect(Math.max(...reduced.map((r) => r.blue))).toBeGreaterThan(20);
        expect(Math.max(...full.map((r) => r.blue))).toBeGreaterThan(20);
        // Every tile: channel means within 3 grey levels of OpenSlide's, and its 8-px blocks' means
        // too, so the nuclei are where OpenSlide has them. Pixel by pixel only at full resolution,
        // ≤ 6: the tiles are JPEG (quality 85) with chroma at half resolution (4:2:0), and nuclei are
        // nearly pure blue, all chroma, which the subsampling smears at their edges. Every tile of
        // the slide, made so (level 0 halved, PIL JPEG 85 4:2:0) and compared to OpenSlide's level,
        // stays within: means 1.8, 8-px blocks 2.4, full-resolution pixels 5.3 — but pixels reach 19
        // at the smallest levels, where a nucleus is 1–2 px (seen here too: z 0 tile, blue 19.2).
        for (const [c, value] of worst(results, (r) => r.meanShift).entries())
          expect(value, `channel ${c}'s mean shift`).toBeLessThanOrEqual(3);
        for (const [c, value] of worst(results, (r) => r.blockMad).entries())
          expect(value, `channel ${c}'s 8-px block means`).toBeLessThanOrEqual(3);
        for (const [c, value] of worst(full, (r) => r.mad).entries())
          expect(value, `channel ${c} of the full-resolution tiles`).toBeLessThanOrEqual(6);

        // 3. A system admin draws a point on a nucleus in the image viewer.
        const adminContext = await newTestContext(browser);
        try {
          const admin = await adminContext.newPage();
          await admin.addInitScript(VIEW_RECORDER);
          await loginViaUi(admin, 'sysadmin');
          await admin.goto(appUrl(`/studies/${studyId}/images/${imageId}`));
          const adminMap = admin.getByTestId('slide-map');
          await adminMap.locator('canvas').first().waitFor();
          await expect.poll(async () => (await recordedView(admin)) !== null).toBe(true);
          const toolbar = admin.getByRole('toolbar', { name: 'Annotation tools' });
          await toolbar.waitFor();
          // In to 2 slide px per screen px or closer: a nucleus (about 8 µm, 35 px) is 15 screen px or more.
          await adminMap.focus();
          await settledView(admin);
          await zoomInUntil(admin, async () => (await recordedView(admin)).resolution <= 2);
          const view = await settledView(admin);
          await expect
            .poll(async () => blueShare(await adminMap.screenshot()), { timeout: 20_000, interval: 500 })
            .toBeGreaterThan(0.02);

          // The brightest nucleus within 120 screen px of the view's centre, in OpenSlide's level 0.
          const reach = Math.round(120 * view.resolution);
          const around = {
            left: Math.round(view.center[0]) - reach,
            top: Math.round(-view.center[1]) - reach,
            width: 2 * reach,
            height: 2 * reach,
          };
          const region = await openslideRegion(SLIDE, 0, around);
          const nucleus = brightestNucleus(region);
          expect(nucleus.blue, 'a nucleus near the centre of the view').toBeGreaterThan(120);
          const target: [number, number] = [around.left + nucleus.x, around.top + nucleus.y];
          const at = await screenOfPixel(admin, target);
          // The viewer draws that nucleus where the view's centre and zoom put it.
          const [r, g, b] = await screenColour(admin, at);
          expect(
            b,
            `blue at the nucleus's screen point (${r.toFixed(0)}, ${g.toFixed(0)}, ${b.toFixed(0)})`,
          ).toBeGreaterThan(80);

          await toolbar.getByRole('button', { name: 'Point', exact: true }).click();
          await admin
            .getByRole('menuitem', { name: new RegExp(`^${POINT_CLASS}( \\d+)?$`) })
            .last()
            .click();
          const saved = admin.waitForResponse(
            (res) => res.url().endsWith('/api/annotations') && res.request().method() === 'POST',
          );
          await admin.mouse.click(at.x, at.y);
          const response = await saved;
          expect(response.status(), await response.text()).toBe(200);
          const created = ((await response.json()) as CreateAnnotationResponse).annotation;
          await admin.keyboard.press('Escape');
          // The viewer draws the point there, in its class's colour, over the nucleus.
          await expect.poll(() => colourNear(admin, at, POINT_COLOUR, 2)).toBeGreaterThan(0.5);
          await saveScreenshot(admin, 'viewer-ndpi-point.png');

          // The API keeps the point in slide pixels on the clicked nucleus.
          const listed = await admin.request.get(appUrl(`/api/images/${imageId}/annotations`));
          expect(listed.status()).toBe(200);
          const kept = ((await listed.json()) as AnnotationListResponse).annotations
            .map((a) => toAnnotationView(a))
            .find((a) => a.id === created.id);
          expect(kept?.annotationType).toBe('POINT');
          const [px = NaN, py = NaN] = kept?.geometry.coordinates as number[];
          console.info(
            `NDPI point: nucleus at ${target.join(',')} (blue ${nucleus.blue.toFixed(0)}), kept at ${px.toFixed(1)},${py.toFixed(1)}, view resolution ${view.resolution.toFixed(3)}`,
          );
          expect(Math.abs(px - target[0])).toBeLessThan(1.5 * view.resolution);
          expect(Math.abs(py - target[1])).toBeLessThan(1.5 * view.resolution);
          const i = ((Math.round(py) - around.top) * region.width + (Math.round(px) - around.left)) * 3 + 2;
          expect(region.data[i], 'OpenSlide’s blue under the kept point').toBeGreaterThan(80);
        } finally {
          await adminContext.close();
        }
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  );
});

const fmt = (values: number[]) => values.map((v) => v.toFixed(2)).join('/');

/** Share of a screenshot's pixels that are DAPI blue: blue well above red and green. */
async function blueShare(png: Buffer): Promise<number> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let blue = 0;
  for (let i = 0; i < data.length; i += info.channels) {
    const [r, g, b] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
    if (b > 60 && b - r > 40 && b - g > 40) blue++;
  }
  return blue / (info.width * info.height);
}
