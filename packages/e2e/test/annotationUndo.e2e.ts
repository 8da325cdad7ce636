import { toAnnotationView, type AnnotationListResponse, type AnnotationView } from '@lamina/domain';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { loginViaUi, mutationHeaders } from '../src/app.js';
import { e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { asUser, auditRows } from '../src/reads.js';
import { openDemoCase } from '../src/viewer.js';

/**
 * Undo, redo and the safe delete (issue 29 items 5 and 6), by hand in Chromium: reader2 draws an HPF
 * with two points and a measurement line on the NASH demo case (no other test draws as reader2
 * there), then undoes and redoes with Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y, deletes the HPF with its
 * points from the Annotations tab (a confirmation naming the points, then the 'Annotation deleted'
 * toast whose Undo restores them) and uses the toolbar's Undo. After every step the server's list is
 * checked, and at the end the audit trail holds each undo's and redo's rows. What it drew is deleted
 * again.
 */

const NASH_STUDY = 'DEMO-NASH-003';
const PROC_ID = 'ENDO-3001';

async function listed(page: Page, imageId: number): Promise<AnnotationView[]> {
  const response = await page.request.get(appUrl(`/api/images/${imageId}/annotations`));
  expect(response.status()).toBe(200);
  return ((await response.json()) as AnnotationListResponse).annotations.map((a) => toAnnotationView(a));
}

/** The reader's annotations on the image as [id, type, parent], in id order. */
async function serverState(page: Page, imageId: number): Promise<[number, string, number | null][]> {
  return (await listed(page, imageId)).map((a) => [a.id, a.annotationType, a.parentId]);
}

const answered = (page: Page, method: string, path: RegExp) =>
  page.waitForResponse((r) => r.request().method() === method && path.test(new URL(r.url()).pathname));

async function chooseClass(page: Page, tool: string, className: string): Promise<void> {
  await page
    .getByRole('toolbar', { name: 'Annotation tools' })
    .getByRole('button', { name: tool, exact: true })
    .click();
  await page
    .getByRole('menuitem', { name: new RegExp(`^${className}( \\d+)?$`) })
    .last()
    .click();
}

/** Presses a key and waits for the server call it makes. */
async function pressFor(page: Page, key: string, method: string, path: RegExp): Promise<void> {
  const call = answered(page, method, path);
  await page.keyboard.press(key);
  expect((await call).status(), `${key}: ${method} ${String(path)}`).toBe(200);
}

/** The audit trail's (Action, Object ID) pairs of annotations, from the system admin's CSV of the study. */
async function auditedAnnotationActions(browser: Browser, studyId: number): Promise<[string, string][]> {
  return asUser(browser, 'sysadmin', async (admin) =>
    (await auditRows(admin, studyId))
      .filter((row) => row['Object Type'] === 'annotation')
      .map((row): [string, string] => [row.Action ?? '', row['Object ID'] ?? '']),
  );
}

describe('undo, redo and the safe delete (issue 29 items 5 and 6)', () => {
  test(
    'a reader undoes and redoes drawing and deleting with the keys, the toast and the toolbar; the server and the audit trail follow',
    { timeout: 300_000 },
    async ({ page, browser }) => {
      await loginViaUi(page, 'reader2');
      const { studyId, imageId } = await openDemoCase(page, NASH_STUDY, PROC_ID, 'annotation-undo-case.png');
      const initial = await serverState(page, imageId);
      const drawn: number[] = [];
      try {
        const toolbar = page.getByRole('toolbar', { name: 'Annotation tools' });
        const undoButton = toolbar.getByRole('button', { name: 'Undo', exact: true });
        const redoButton = toolbar.getByRole('button', { name: 'Redo', exact: true });
        expect(await undoButton.isDisabled()).toBe(true);
        expect(await undoButton.getAttribute('title')).toBe('Undo (Ctrl+Z)');
        expect(await redoButton.isDisabled()).toBe(true);

        const box = await page.getByTestId('slide-map').boundingBox();
        if (!box) throw new Error('no map');
        const centre = { x: box.x + box.width / 2, y: box.y + box.height / 2 };

        // Draw: an HPF (through the 'Add annotation' panel), two points in it, a measurement line.
        await chooseClass(page, 'HPF', 'Lobular inflammation');
        await page.mouse.click(centre.x, centre.y);
        let saved = answered(page, 'POST', /^\/api\/annotations$/);
        await page
          .getByRole('region', { name: 'Add annotation' })
          .getByRole('button', { name: 'Add annotation' })
          .click();
        const hpf = ((await (await saved).json()) as { annotation: AnnotationView }).annotation;
        drawn.push(hpf.id);
        await page.keyboard.press('Escape');
        await chooseClass(page, 'Point', 'Inflammatory focus');
        const points: AnnotationView[] = [];
        for (const dx of [-4, 4]) {
          saved = answered(page, 'POST', /^\/api\/annotations$/);
          await page.mouse.click(centre.x + dx, centre.y + 2);
          points.push(((await (await saved).json()) as { annotation: AnnotationView }).annotation);
        }
        drawn.push(...points.map((p) => p.id));
        expect(points.map((p) => p.parentId)).toEqual([hpf.id, hpf.id]);
        await page.keyboard.press('Escape');
        await toolbar.getByRole('button', { name: 'Measurement', exact: true }).click();
        saved = answered(page, 'POST', /^\/api\/annotations$/);
        await page.mouse.move(centre.x - 200, centre.y + 150);
        await page.mouse.down();
        await page.mouse.move(centre.x - 100, centre.y + 160, { steps: 6 });
        await page.mouse.move(centre.x + 20, centre.y + 170, { steps: 6 });
        await page.mouse.up();
        const line = ((await (await saved).json()) as { annotation: AnnotationView }).annotation;
        drawn.push(line.id);
        await page.keyboard.press('Escape');
        const all: [number, string, number | null][] = [
          ...initial,
          [hpf.id, 'HPF', null],
          [points[0]?.id ?? 0, 'POINT', hpf.id],
          [points[1]?.id ?? 0, 'POINT', hpf.id],
          [line.id, 'LINE', null],
        ];
        expect(await serverState(page, imageId)).toEqual(all);
        await expect.poll(async () => undoButton.getAttribute('title')).toBe('Undo adding the line (Ctrl+Z)');

        // Ctrl+Z deletes the line on the server; Ctrl+Shift+Z brings it back under its id.
        await pressFor(page, 'Control+z', 'DELETE', new RegExp(`^/api/annotations/${line.id}$`));
        expect(await serverState(page, imageId)).toEqual(all.slice(0, -1));
        await expect.poll(async () => redoButton.isEnabled()).toBe(true);
        await pressFor(page, 'Control+Shift+Z', 'POST', new RegExp(`^/api/annotations/${line.id}/restore$`));
        expect(await serverState(page, imageId)).toEqual(all);

        // Delete the HPF with its points from the Annotations tab: asked first, then the undo toast.
        await page.getByRole('tab', { name: 'Annotations' }).click();
        const tree = page.getByRole('tree', { name: 'Annotation tree', exact: true });
        await tree.getByRole('button', { name: 'Delete menu of HPF 1' }).click();
        await page.getByRole('menuitem', { name: 'Delete HPF and its points' }).click();
        const dialog = page.getByRole('dialog');
        expect(await dialog.textContent()).toContain('This HPF holds 2 points; they are deleted with it.');
        await saveScreenshot(page, 'annotation-undo-confirm.png');
        const deleted = answered(page, 'DELETE', new RegExp(`^/api/annotations/${hpf.id}$`));
        await dialog.getByRole('button', { name: 'Delete HPF and 2 points' }).click();
        expect((await deleted).status()).toBe(200);
        const toast = page.locator('.bp6-toast', { hasText: 'Annotation deleted with its 2 points' });
        await toast.waitFor();
        expect(await serverState(page, imageId)).toEqual([...initial, [line.id, 'LINE', null]]);
        await saveScreenshot(page, 'annotation-undo-toast.png');
        const restored = answered(page, 'POST', new RegExp(`^/api/annotations/${hpf.id}/restore$`));
        await toast.getByRole('button', { name: 'Undo' }).click();
        expect((await restored).status()).toBe(200);
        expect(await serverState(page, imageId)).toEqual(all);
        await expect.poll(async () => tree.getByRole('treeitem', { name: 'HPF 1' }).count()).toBe(1);

        // Ctrl+Y redoes the delete (with its points), Ctrl+Z undoes it again.
        await pressFor(page, 'Control+y', 'DELETE', new RegExp(`^/api/annotations/${hpf.id}$`));
        expect(await serverState(page, imageId)).toEqual([...initial, [line.id, 'LINE', null]]);
        await pressFor(page, 'Control+z', 'POST', new RegExp(`^/api/annotations/${hpf.id}/restore$`));
        expect(await serverState(page, imageId)).toEqual(all);

        // The toolbar's Undo takes the line away; its Redo names what it would redo.
        await expect.poll(async () => undoButton.getAttribute('title')).toBe('Undo adding the line (Ctrl+Z)');
        const lineGone = answered(page, 'DELETE', new RegExp(`^/api/annotations/${line.id}$`));
        await undoButton.click();
        expect((await lineGone).status()).toBe(200);
        expect(await serverState(page, imageId)).toEqual(all.slice(0, -1));
        await expect
          .poll(async () => redoButton.getAttribute('title'))
          .toBe('Redo adding the line (Ctrl+Shift+Z or Ctrl+Y)');
        await page.mouse.move(box.x + 20, box.y + 20);
        await saveScreenshot(page, 'annotation-undo-toolbar.png');

        // The audit trail: every undo and redo is a change of its own, with its rows.
        const audited = await auditedAnnotationActions(browser, studyId);
        const of = (id: number) => audited.filter(([, objectId]) => objectId === String(id)).map(([action]) => action);
        expect(of(line.id)).toEqual([
          'ANNOTATION_CREATED',
          'ANNOTATION_DELETED',
          'ANNOTATION_RESTORED',
          'ANNOTATION_DELETED',
        ]);
        const hpfLife = [
          'ANNOTATION_CREATED',
          'ANNOTATION_DELETED',
          'ANNOTATION_RESTORED',
          'ANNOTATION_DELETED',
          'ANNOTATION_RESTORED',
        ];
        expect(of(hpf.id)).toEqual(hpfLife);
        for (const p of points) expect(of(p.id)).toEqual(hpfLife);
      } finally {
        const headers = await mutationHeaders(page);
        for (const id of drawn.reverse())
          await page.request.delete(appUrl(`/api/annotations/${id}?deleteNested=true`), { headers });
        expect(await serverState(page, imageId)).toEqual(initial);
      }
    },
  );
});
