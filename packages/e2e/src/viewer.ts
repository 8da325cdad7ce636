import { hexToRgb } from '@lamina/domain';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { expect } from 'vitest';
import { saveScreenshot } from './browser.js';
import { demoStudyId } from './app.js';
import { appUrl } from './env.js';

/** What the viewer tests share: the demo cases, and whether the slide shows tissue. */

/**
 * Zooms the focused viewer in with '+', a step at a time, until `reached` or the zoom limit (view
 * resolution 0.5: one digital step beyond the scan's full resolution). After each press the next
 * check waits for a frame drawn closer in (the engine's 'lamina-viewer-frame' events carry the
 * view's resolution; the magnification readout cannot tell, it shows '—' without a scan power).
 */
export async function zoomInUntil(page: Page, reached: () => Promise<boolean>): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __laminaFrames?: number[] };
    if (w.__laminaFrames) return;
    const frames: number[] = (w.__laminaFrames = []);
    document.addEventListener(
      'lamina-viewer-frame',
      (e) => frames.push((e as CustomEvent<{ resolution: number }>).detail.resolution),
      true,
    );
  });
  const latest = () =>
    page.evaluate(() => (window as unknown as { __laminaFrames: number[] }).__laminaFrames.at(-1) ?? null);
  let resolution = await latest();
  while (!(await reached())) {
    if (resolution !== null && resolution <= 0.5 + 1e-9) return;
    const from = resolution;
    await page.keyboard.press('+');
    await expect
      .poll(
        async () => {
          const now = await latest();
          return now !== null && (from === null || now < from);
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    resolution = await latest();
  }
}

/** The demo cases exist once the demo slide is processed (up to ~2 min after the server starts). */
export const DEMO_READY_TIMEOUT = 150_000;

/**
 * The demo z-stack slide's name begins so (server demoZStack.ts). viewer.e2e.ts opens it; other
 * tests that take "any image waiting for a case" leave it alone, or archiving their case would
 * archive it too and the z-stack test would wait for it in vain (CI of stop 33).
 */
export const DEMO_ZSTACK_PREFIX = 'DEMO-zstack';

/** The id of a demo case by its Endo Procedure ID, waiting for the demo cases to exist. */
export async function demoCaseId(page: Page, studyId: number, procId: string): Promise<number> {
  let id: number | undefined;
  await expect
    .poll(
      async () => {
        const response = await page.request.get(appUrl(`/api/studies/${studyId}/cases?procId=${procId}`));
        const { cases } = (await response.json()) as { cases?: { id: number; procId: string | null }[] };
        id = cases?.find((c) => c.procId === procId)?.id;
        return id;
      },
      { timeout: DEMO_READY_TIMEOUT, interval: 2000 },
    )
    .toBeDefined();
  return id as number;
}

/**
 * Share of the pixels of a screenshot that are stained tissue (the demo slide's pinks and purples:
 * red and blue well above green), not the white of an empty canvas nor the grey of the controls.
 */
export async function tissueFraction(png: Buffer): Promise<number> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let tissue = 0;
  for (let i = 0; i < data.length; i += info.channels) {
    const [r, g, b] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
    if (r - g > 30 && b - g > 15) tissue++;
  }
  return tissue / (info.width * info.height);
}

/** The slide is drawn when its tile canvas shows tissue. */
export async function expectTissue(page: Page, name: string): Promise<void> {
  const map = page.getByTestId('slide-map');
  await expect.poll(async () => tissueFraction(await map.screenshot()), { timeout: 20_000 }).toBeGreaterThan(0.05);
  await saveScreenshot(page, name);
}

/** A demo case opened in the case viewer, with the first image it shows. */
export interface OpenedCase {
  studyId: number;
  caseId: number;
  imageId: number;
  /** µm per pixel (0 when the slide records none). */
  mpp: number;
  /** µm per pixel as the server gives it (null when the slide records none). */
  physicalResolution: number | null;
  width: number;
  height: number;
}

/**
 * Opens the demo case `procId` of the demo study `study` in the case viewer and waits for tissue
 * on its first image (a screenshot named `screenshot` is kept).
 */
export async function openDemoCase(page: Page, study: string, procId: string, screenshot: string): Promise<OpenedCase> {
  const studyId = await demoStudyId(page, study);
  const caseId = await demoCaseId(page, studyId, procId);
  const c = (await (await page.request.get(appUrl(`/api/cases/${caseId}`))).json()) as {
    case: { images: { id: number }[] };
  };
  const imageId = c.case.images[0]?.id;
  if (!imageId) throw new Error(`case ${procId} has no image`);
  const image = (await (await page.request.get(appUrl(`/api/images/${imageId}`))).json()) as {
    physicalResolution: number | null;
    width: number;
    height: number;
  };
  await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
  await expectTissue(page, screenshot);
  return {
    studyId,
    caseId,
    imageId,
    mpp: image.physicalResolution ?? 0,
    physicalResolution: image.physicalResolution,
    width: image.width,
    height: image.height,
  };
}

/** Records the viewer's view (resolution: slide px per screen px; centre) from the engine's frame events; add with addInitScript. */
export const VIEW_RECORDER = `
  window.__view = null;
  document.addEventListener('lamina-viewer-frame', (e) => { window.__view = e.detail; }, true);
`;

/** The view VIEW_RECORDER saw last. */
export async function recordedView(page: Page): Promise<{ resolution: number; center: [number, number] }> {
  return page.evaluate(
    () => (globalThis as unknown as { __view: { resolution: number; center: [number, number] } }).__view,
  );
}

/** Screen point (relative to the page) of an image pixel (y down), from the recorded view. */
export async function screenOfPixel(page: Page, px: readonly number[]): Promise<{ x: number; y: number }> {
  const box = await page.getByTestId('slide-map').boundingBox();
  if (!box) throw new Error('no map');
  const v = await recordedView(page);
  return {
    x: box.x + box.width / 2 + ((px[0] ?? 0) - v.center[0]) / v.resolution,
    y: box.y + box.height / 2 + ((px[1] ?? 0) + v.center[1]) / v.resolution,
  };
}

/** Share of the pixels within `radius` of a screen point close to a colour (a screenshot of the page). */
export async function colourNear(page: Page, at: { x: number; y: number }, hex: string, radius = 3): Promise<number> {
  const png = await page.screenshot();
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const [r0, g0, b0] = hexToRgb(hex) ?? [0, 0, 0];
  let near = 0;
  let all = 0;
  for (let y = Math.round(at.y - radius); y <= at.y + radius; y++)
    for (let x = Math.round(at.x - radius); x <= at.x + radius; x++) {
      if (x < 0 || y < 0 || x >= info.width || y >= info.height) continue;
      all++;
      const i = (y * info.width + x) * info.channels;
      if (Math.abs((data[i] ?? 0) - r0) + Math.abs((data[i + 1] ?? 0) - g0) + Math.abs((data[i + 2] ?? 0) - b0) < 90)
        near++;
    }
  return all ? near / all : 0;
}
