import {
  hpfRadiusPx,
  toAnnotationView,
  type AnnotationListResponse,
  type AnnotationView,
  type StudyView,
} from '@lamina/domain';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { DEMO_STUDY, demoStudyId, loginViaUi, mutationHeaders } from '../src/app.js';
import { e2eTest as test, newTestContext, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { colourNear, demoCaseId, expectTissue, screenOfPixel, VIEW_RECORDER } from '../src/viewer.js';

/**
 * The data manager's 'All readers' view (issue 29 item 12), in Chromium: reader1 and then reader2
 * each draw an HPF (through the API) on the demo study's case ENDO-1002 (assigned to both; no other
 * test annotates it). The DM's tree numbers each reader's HPFs as that reader sees them ('Ravi
 * Reader · HPF 1', not 'HPF 2') and names the reader, a legend names each reader's colour, and the
 * map draws each ring in its reader's colour; with one reader chosen, the class colours and plain
 * names come back. What the readers drew is deleted again.
 */

const PROC_ID = 'ENDO-1002';

async function list(page: Page, imageId: number): Promise<AnnotationListResponse & { views: AnnotationView[] }> {
  const response = await page.request.get(appUrl(`/api/images/${imageId}/annotations`));
  expect(response.status()).toBe(200);
  const body = (await response.json()) as AnnotationListResponse;
  return { ...body, views: body.annotations.map((a) => toAnnotationView(a)) };
}

interface ReaderWork {
  username: string;
  page: Page;
  hpf: AnnotationView;
  /** n of 'HPF n' in the reader's own view: the place of the HPF among the reader's own HPFs. */
  number: number;
}

/** A reader signs in (their own browser context) and draws an HPF of the class at an image pixel. */
async function drawAs(
  browser: Browser,
  username: string,
  imageId: number,
  classId: number,
  at: [number, number],
): Promise<ReaderWork> {
  const context = await newTestContext(browser);
  const page = await context.newPage();
  await loginViaUi(page, username);
  const response = await page.request.post(appUrl('/api/annotations'), {
    headers: await mutationHeaders(page),
    data: { imageId, annotationType: 'HPF', geometry: { type: 'Point', coordinates: at }, annotationClassId: classId },
  });
  expect(response.status(), await response.text()).toBe(200);
  const hpf = (await response.json()) as { annotation: AnnotationView };
  // What the reader's own list holds: only their own work and their own name (blinding).
  const own = await list(page, imageId);
  expect(own.views.every((v) => v.userId === hpf.annotation.userId)).toBe(true);
  expect(own.authors.map((a) => a.id)).toEqual([hpf.annotation.userId]);
  const hpfs = own.views.filter((v) => v.annotationType === 'HPF').map((v) => v.id);
  return { username, page, hpf: hpf.annotation, number: hpfs.indexOf(hpf.annotation.id) + 1 };
}

describe("the data manager's All readers view (issue 29 item 12)", () => {
  test(
    'each reader’s HPFs are numbered as that reader sees them, named by reader, drawn in the reader’s colour with a legend',
    { timeout: 300_000 },
    async ({ page, browser }) => {
      await page.context().addInitScript(VIEW_RECORDER);
      await loginViaUi(page, 'dm');
      const studyId = await demoStudyId(page, DEMO_STUDY);
      const caseId = await demoCaseId(page, studyId, PROC_ID);
      const kase = (await (await page.request.get(appUrl(`/api/cases/${caseId}`))).json()) as {
        case: { images: { id: number }[] };
      };
      const imageId = kase.case.images[0]?.id ?? 0;
      const image = (await (await page.request.get(appUrl(`/api/images/${imageId}`))).json()) as {
        width: number;
        height: number;
        physicalResolution: number | null;
      };
      const study = (await (await page.request.get(appUrl(`/api/studies/${studyId}`))).json()) as StudyView;
      const hpfClass = study.hpfClasses[0];
      if (!hpfClass) throw new Error('the demo study has no HPF class');

      // reader1 draws first, on the left; reader2 then, on the right: reader2's first HPF is the
      // image's second, which the all-readers view used to call 'HPF 2'. Each ring's outer edge
      // (where its colour is read) stays on the slide.
      const y = Math.round(image.height / 2);
      const r = hpfRadiusPx(image.physicalResolution, false);
      const left = Math.round(Math.max(r * 1.2, image.width * 0.25));
      const right = Math.round(Math.min(image.width - r * 1.2, image.width * 0.75));
      expect(right, 'two HPFs side by side fit on the slide').toBeGreaterThan(left);
      const work: ReaderWork[] = [];
      try {
        work.push(await drawAs(browser, 'reader1', imageId, hpfClass.id, [left, y]));
        work.push(await drawAs(browser, 'reader2', imageId, hpfClass.id, [right, y]));
        const [first, second] = work as [ReaderWork, ReaderWork];
        // Unless an earlier run left HPFs here, each is its reader's HPF 1.
        const all = await list(page, imageId);
        const nameOf = (w: ReaderWork) => all.authors.find((a) => a.id === w.hpf.userId)?.displayName ?? '';
        expect(nameOf(first)).not.toBe('');
        expect(nameOf(second)).not.toBe('');

        await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
        await expectTissue(page, 'reader-colours-opened.png');
        await page.getByRole('tab', { name: 'Annotations' }).click();
        const reader = page.getByRole('combobox', { name: 'Reader' });
        expect(await reader.inputValue()).toBe('');

        // The legend: each reader's name and colour.
        const legend = page.getByRole('list', { name: 'Reader colours' });
        await legend.waitFor();
        const colourOf = async (w: ReaderWork) =>
          (await legend
            .getByRole('listitem')
            .filter({ hasText: nameOf(w) })
            .getAttribute('data-color')) ?? '';
        const colours = [await colourOf(first), await colourOf(second)];
        expect(colours.every((c) => /^#[0-9A-F]{6}$/i.test(c))).toBe(true);
        expect(colours[0]).not.toBe(colours[1]);
        expect(colours).not.toContain(hpfClass.color);

        // The tree: 'Rita Reader · HPF 1' and 'Ravi Reader · HPF 1', the numbers each reader sees.
        const tree = page.getByRole('tree', { name: 'Annotation tree', exact: true });
        const label = (w: ReaderWork) => `${nameOf(w)} · HPF ${w.number}`;
        for (const w of work)
          await expect.poll(async () => tree.getByRole('treeitem', { name: label(w), exact: true }).count()).toBe(1);

        // The map: each ring (its left and right edge) in its reader's colour, not the other's.
        const ringPoint = async (w: ReaderWork, side: -1 | 1) => {
          const [cx = 0, cy = 0] = w.hpf.geometry.coordinates as number[];
          return screenOfPixel(page, [cx + side * (w.hpf.radius ?? 0), cy]);
        };
        const outer = [await ringPoint(first, -1), await ringPoint(second, 1)] as const;
        const map = await page.getByTestId('slide-map').boundingBox();
        for (const p of outer) {
          expect(p.x).toBeGreaterThan((map?.x ?? 0) + 4);
          expect(p.x).toBeLessThan((map?.x ?? 0) + (map?.width ?? 0) - 4);
        }
        await expect
          .poll(async () => colourNear(page, outer[0], colours[0] ?? ''), { timeout: 15_000 })
          .toBeGreaterThan(0.2);
        expect(await colourNear(page, outer[1], colours[1] ?? '')).toBeGreaterThan(0.2);
        expect(await colourNear(page, outer[0], colours[1] ?? '')).toBe(0);
        expect(await colourNear(page, outer[1], colours[0] ?? '')).toBe(0);
        await saveScreenshot(page, 'reader-colours-all-readers.png');

        // One reader chosen: their HPF in its class colour, named as they see it; no legend.
        await reader.selectOption({ label: nameOf(second) });
        await expect.poll(async () => legend.count()).toBe(0);
        await expect
          .poll(async () => tree.getByRole('treeitem', { name: `HPF ${second.number}`, exact: true }).count())
          .toBe(1);
        await expect
          .poll(async () => colourNear(page, outer[1], hpfClass.color), { timeout: 15_000 })
          .toBeGreaterThan(0.2);
        expect(await colourNear(page, outer[1], colours[1] ?? '')).toBe(0);
        // The other reader's ring is not drawn.
        expect(await colourNear(page, outer[0], colours[0] ?? '')).toBe(0);
        await saveScreenshot(page, 'reader-colours-one-reader.png');
      } finally {
        for (const w of work) {
          await w.page.request.delete(appUrl(`/api/annotations/${w.hpf.id}?deleteNested=true`), {
            headers: await mutationHeaders(w.page),
          });
          await w.page.context().close();
        }
      }
    },
  );
});
