import {
  celiacRatio,
  hpfRadiusPx,
  toAnnotationView,
  type AnnotationListResponse,
  type AnnotationView,
} from '@lamina/domain';
import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { loginViaUi } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { colourNear, openDemoCase, recordedView, screenOfPixel, VIEW_RECORDER } from '../src/viewer.js';

const CELIAC_STUDY = 'DEMO-CD-002';
const NASH_STUDY = 'DEMO-NASH-003';

interface Opened {
  imageId: number;
  mpp: number | null;
}

/** Opens a demo reading case in the case viewer as the logged-in reader; its (one) image. */
async function openCase(page: Page, study: string, procId: string): Promise<Opened> {
  const { imageId, physicalResolution } = await openDemoCase(page, study, procId, `annotations-${procId}.png`);
  return { imageId, mpp: physicalResolution };
}

async function listed(page: Page, imageId: number): Promise<AnnotationView[]> {
  const response = await page.request.get(appUrl(`/api/images/${imageId}/annotations`));
  expect(response.status()).toBe(200);
  return ((await response.json()) as AnnotationListResponse).annotations.map((a) => toAnnotationView(a));
}

async function mapCentre(page: Page): Promise<{ x: number; y: number }> {
  const box = await page.getByTestId('slide-map').boundingBox();
  if (!box) throw new Error('no map');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

const created = (page: Page) =>
  page.waitForResponse((r) => r.url().endsWith('/api/annotations') && r.request().method() === 'POST');

/** Chooses a class tool's class from its flyout. */
async function chooseClass(page: Page, tool: string, className: string): Promise<void> {
  await page
    .getByRole('toolbar', { name: 'Annotation tools' })
    .getByRole('button', { name: tool, exact: true })
    .click();
  // The class's own item ('IEL 3': its name and count), not one of another class whose name starts
  // alike ('IEL count 1'); the newest, should the previous flyout still be closing on a loaded machine.
  const escaped = className.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await page
    .getByRole('menuitem', { name: new RegExp(`^${escaped}( \\d+)?$`) })
    .last()
    .click();
}

/** Places an HPF of a class with a click and saves it through the 'Add annotation' panel. */
async function addHpf(page: Page, className: string, at: { x: number; y: number }): Promise<AnnotationView> {
  await chooseClass(page, 'HPF', className);
  await page.mouse.click(at.x, at.y);
  const saved = created(page);
  await page.getByRole('region', { name: 'Add annotation' }).getByRole('button', { name: 'Add annotation' }).click();
  const response = await saved;
  expect(response.status()).toBe(200);
  await page.keyboard.press('Escape');
  return ((await response.json()) as { annotation: AnnotationView }).annotation;
}

describe('annotations (issue 14)', () => {
  test(
    'reader1 draws on the celiac case; the tree, the celiac table and deletes; reader2 sees none, ISC all; NASH HPFs are twice the size',
    { timeout: 360_000 },
    async ({ page, browser }) => {
      await page.context().addInitScript(VIEW_RECORDER);
      await loginViaUi(page, 'reader1');
      const { imageId, mpp } = await openCase(page, CELIAC_STUDY, 'ENDO-2001');
      const before = (await listed(page, imageId)).length;

      // An HPF of the class 'IEL count' at the centre of the view, through the 'Add annotation' panel.
      const centre = await mapCentre(page);
      const hpf = await addHpf(page, 'IEL count', centre);
      expect(hpf.radius).toBeCloseTo(hpfRadiusPx(mpp, false), 6);

      // Three IEL points inside it (a few screen px from its centre), one outside.
      await chooseClass(page, 'Point', 'IEL');
      const hpfScreen = await screenOfPixel(page, hpf.geometry.coordinates as [number, number]);
      const radiusScreen = (hpf.radius ?? 0) / (await recordedView(page)).resolution;
      for (const [dx, dy] of [
        [-radiusScreen / 3, 0],
        [radiusScreen / 3, 0],
        [0, radiusScreen / 3],
        [radiusScreen * 1.6, 0],
      ] as const) {
        const saved = created(page);
        await page.mouse.click(hpfScreen.x + dx, hpfScreen.y + dy);
        expect((await saved).status()).toBe(200);
      }
      await page.keyboard.press('Escape');

      // A measurement line, dragged: its length in µm is the pixel length × the pixel size.
      await page
        .getByRole('toolbar', { name: 'Annotation tools' })
        .getByRole('button', { name: 'Measurement', exact: true })
        .click();
      const lineSaved = created(page);
      await page.mouse.move(centre.x - 150, centre.y + 120);
      await page.mouse.down();
      await page.mouse.move(centre.x - 50, centre.y + 140, { steps: 8 });
      await page.mouse.move(centre.x + 90, centre.y + 160, { steps: 8 });
      await page.mouse.up();
      const line = ((await (await lineSaved).json()) as { annotation: AnnotationView }).annotation;
      const [[x1, y1] = [0, 0], [x2, y2] = [0, 0]] = line.geometry.coordinates as number[][];
      expect(line.length).toBeCloseTo(Math.hypot((x2 ?? 0) - (x1 ?? 0), (y2 ?? 0) - (y1 ?? 0)) * (mpp ?? 0.2), 6);
      const res = (await recordedView(page)).resolution;
      expect(Math.hypot((x2 ?? 0) - (x1 ?? 0), (y2 ?? 0) - (y1 ?? 0)) / res).toBeCloseTo(Math.hypot(240, 40), -1);
      await page.keyboard.press('Escape');

      // Two line measurements: Unit 1 villus height (3 vertices), then Unit 1 crypt depth, auto-selected.
      const multilines: AnnotationView[] = [];
      // The tool stays active after a line (doc 3 §4): the second line is drawn without choosing it again.
      await page
        .getByRole('toolbar', { name: 'Annotation tools' })
        .getByRole('button', { name: 'Line Measurement', exact: true })
        .click();
      for (const points of [
        [
          [-200, -150],
          [-120, -110],
          [-60, -150],
        ],
        [
          [100, -160],
          [160, -100],
        ],
      ]) {
        const saved = created(page);
        for (const [dx = 0, dy = 0] of points) await page.mouse.click(centre.x + dx, centre.y + dy);
        await page.keyboard.press('Enter');
        multilines.push(((await (await saved).json()) as { annotation: AnnotationView }).annotation);
      }
      await page.keyboard.press('Escape');
      expect(multilines.map((m) => m.multilineCategory)).toEqual(['VILLUS_HEIGHT', 'CRYPT_DEPTH']);
      expect(multilines[0]?.annotationClassId).toBe(multilines[1]?.annotationClassId);
      await saveScreenshot(page, 'annotations-celiac-drawn.png');

      // The drawn HPF ring shows in its class colour (#4A90E2) on the screen.
      expect(await colourNear(page, { x: hpfScreen.x + radiusScreen, y: hpfScreen.y }, '#4A90E2', 3)).toBeGreaterThan(
        0.2,
      );

      // The tree: IEL count → HPF 1 (3 IEL) and the Orphan (1 IEL); the celiac table in whole µm.
      await page.getByRole('tab', { name: 'Annotations' }).click();
      const tree = page.getByRole('tree', { name: 'Annotation tree', exact: true });
      await expect.poll(async () => tree.getByRole('treeitem', { name: 'HPF 1' }).count()).toBe(1);
      const rowText = async (name: string) =>
        (
          await tree
            .getByRole('treeitem', { name, exact: true })
            .first()
            .locator('.lamina-tree-row')
            .first()
            .innerText()
        ).replace(/\s+/g, ' ');
      expect(await rowText('HPF 1')).toContain('3');
      expect(await rowText('Orphan')).toContain('1');
      const table = page.getByRole('table', { name: 'Celiac Line Measurements' });
      const unit1 = (await table.getByRole('row').filter({ hasText: 'Unit 1' }).innerText()).replace(/\s+/g, ' ');
      const vh = Math.round(multilines[0]?.length ?? 0);
      const cd = Math.round(multilines[1]?.length ?? 0);
      expect(unit1).toContain(`${vh}`);
      expect(unit1).toContain(`${cd}`);
      expect(unit1).toContain(celiacRatio(vh, cd));
      await saveScreenshot(page, 'annotations-celiac-tab.png');

      // Delete the HPF without its points: they become Orphans; a new HPF takes them; delete it with them.
      await tree.getByRole('button', { name: 'Delete menu of HPF 1' }).click();
      await page.getByRole('menuitem', { name: 'Delete HPF', exact: true }).click();
      await expect.poll(async () => (await rowText('Orphan')).includes('4')).toBe(true);
      let views = await listed(page, imageId);
      expect(views.filter((v) => v.annotationType === 'POINT' && v.parentId === null)).toHaveLength(4);

      await addHpf(page, 'IEL count', hpfScreen);
      await expect.poll(async () => tree.getByRole('treeitem', { name: 'HPF 1' }).count()).toBe(1);
      await tree.getByRole('button', { name: 'Delete menu of HPF 1' }).click();
      await page.getByRole('menuitem', { name: 'Delete HPF and its points' }).click();
      // An HPF with points asks first, naming how many go with it (issue 29 item 6).
      await page.getByRole('dialog').getByRole('button', { name: 'Delete HPF and 3 points' }).click();
      await expect
        .poll(async () => (await listed(page, imageId)).filter((v) => v.annotationType === 'POINT').length)
        .toBe(1);
      views = await listed(page, imageId);
      const mine = views.length;
      expect(mine - before).toBe(1 + 1 + 2); // the outside point, the line, two line measurements

      // reader2 reads the same case: none of reader1's work; ISC sees all of it.
      for (const [user, expected] of [
        ['reader2', 0],
        ['isc', mine],
      ] as const) {
        const context = await browser.newContext();
        const other = await context.newPage();
        await loginViaUi(other, user);
        const seen = await listed(other, imageId);
        expect(seen.filter((v) => v.userId !== null && views.some((m) => m.id === v.id)).length, user).toBe(expected);
        await context.close();
      }

      // NASH: an HPF is twice the celiac one's size at the same pixel size.
      const nash = await openCase(page, NASH_STUDY, 'ENDO-3001');
      const nashCentre = await mapCentre(page);
      const nashHpf = await addHpf(page, 'Lobular inflammation', nashCentre);
      expect(nashHpf.radius).toBeCloseTo(hpfRadiusPx(nash.mpp, true), 6);
      expect(nashHpf.radius).toBeCloseTo(2 * (hpf.radius ?? 0), 6);
      await saveScreenshot(page, 'annotations-nash-hpf.png');
    },
  );
});
