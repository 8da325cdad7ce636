import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { demoStudyId, loginViaUi, waitForPath } from '../src/app.js';
import { e2eTest as test } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { demoCaseId, expectTissue } from '../src/viewer.js';

/**
 * The viewers' critical path (issue 28): the document's early script (web src/early.ts) asks for the
 * session, the configuration, the image or case and the viewer's chunk before the app's bundle has
 * run; the app then takes those answers instead of asking again; the code arrives in a handful of
 * files (vitePlugins/routeChunks.ts) rather than forty.
 */

interface Entry {
  name: string;
  start: number;
  kind: 'resource' | 'mark';
}

/** The page's requests (path) and the app's start-up marks, from navigation. */
async function timeline(page: Page): Promise<Entry[]> {
  const rows = await page.evaluate(() =>
    [
      ...performance.getEntriesByType('resource').map((r) => ({ name: r.name, start: r.startTime, kind: 'resource' })),
      ...performance
        .getEntriesByType('mark')
        .filter((m) => m.name.startsWith('lamina:'))
        .map((m) => ({ name: m.name, start: m.startTime, kind: 'mark' })),
    ].sort((a, b) => a.start - b.start),
  );
  return rows.map((r) => ({
    ...r,
    kind: r.kind as Entry['kind'],
    name: r.kind === 'resource' ? new URL(r.name).pathname : r.name,
  }));
}

/**
 * The early script's first tiles (web lib/earlyTiles.ts) against the tiles the page asked the server
 * for: some were started, none was asked for twice (the viewer took the early script's images), and
 * the viewer asked for none the early script had not (its guess of the first frame was right).
 */
async function expectEarlyTiles(page: Page, entries: Entry[]): Promise<void> {
  const early = await page.evaluate(() =>
    ((window as unknown as { __laminaEarlyTiles?: HTMLImageElement[] }).__laminaEarlyTiles ?? []).map(
      (image) => new URL(image.src).pathname,
    ),
  );
  expect(early.length).toBeGreaterThan(0);
  const asked = entries.filter((e) => e.kind === 'resource' && e.name.startsWith('/tiles/')).map((e) => e.name);
  expect(asked.length).toBeGreaterThan(0);
  expect(
    asked.filter((tile, i) => asked.indexOf(tile) !== i),
    'tiles asked for twice',
  ).toEqual([]);
  expect(
    asked.filter((tile) => !early.includes(tile)),
    'tiles the viewer asked for that the early script had not',
  ).toEqual([]);
}

/** Logged in as the ISC: the demo study, its case ENDO-1004 and that case's first image. */
async function demoCaseAsIsc(page: Page): Promise<{ studyId: number; caseId: number; imageId: number }> {
  await loginViaUi(page, 'isc');
  await waitForPath(page, '/studies');
  const studyId = await demoStudyId(page);
  const caseId = await demoCaseId(page, studyId, 'ENDO-1004');
  const c = (await (await page.request.get(appUrl(`/api/cases/${caseId}`))).json()) as {
    case: { images: { id: number }[] };
  };
  const imageId = c.case.images[0]?.id;
  expect(imageId).toBeDefined();
  return { studyId, caseId, imageId: imageId ?? 0 };
}

const requestsOf = (entries: Entry[], path: string) => entries.filter((e) => e.kind === 'resource' && e.name === path);
const markAt = (entries: Entry[], name: string) => entries.find((e) => e.kind === 'mark' && e.name === name)?.start;

describe("the viewers' critical path (issue 28)", () => {
  test('the case viewer: data and code asked for by the document, each once, in a handful of files', async ({
    page,
  }) => {
    const { studyId, caseId, imageId } = await demoCaseAsIsc(page);

    // A full load of the viewer's URL, as from a bookmark or a link in an e-mail.
    await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
    await expectTissue(page, 'startup-case-viewer.png');
    const entries = await timeline(page);
    const main = markAt(entries, 'lamina:main');
    expect(markAt(entries, 'lamina:early')).toBeDefined();
    expect(main).toBeDefined();

    // Asked for once each: the app took the early answers instead of asking again.
    for (const path of ['/api/users/info', '/api/config', `/api/cases/${caseId}`]) {
      const requests = requestsOf(entries, path);
      expect(requests, path).toHaveLength(1);
      // …and by the document, before the app's own code had run.
      expect(requests[0]?.start, path).toBeLessThan(main ?? 0);
    }
    expect(requestsOf(entries, `/api/images/${imageId}`)).toHaveLength(1);

    // The code before the first tile: the entry, the runtime, the shell, the viewer and what the
    // viewer shares with other pages (the early script is in the document itself).
    const firstTile = entries.find((e) => e.kind === 'resource' && e.name.startsWith('/tiles/'));
    expect(firstTile).toBeDefined();
    const scripts = entries.filter(
      (e) => e.kind === 'resource' && e.name.endsWith('.js') && e.start < (firstTile?.start ?? 0),
    );
    expect(scripts.length, scripts.map((s) => s.name).join(', ')).toBeLessThanOrEqual(5);
    const viewerChunk = scripts.find((s) => /\/assets\/viewer-[\w-]+\.js$/.test(s.name));
    expect(viewerChunk, 'the viewer chunk').toBeDefined();
    // The viewer's chunk was asked for by the document, beside the shell, not after the app had run.
    expect(viewerChunk?.start).toBeLessThan(main ?? 0);
    await expectEarlyTiles(page, entries);

    // The sidebar's data (the study, the queries, the annotations) after the slide's first frame:
    // none of it ran between the tiles' requests and their drawing.
    const firstFrame = markAt(entries, 'lamina:viewer-first-frame');
    expect(firstFrame).toBeGreaterThan(firstTile?.start ?? Infinity);
    const sidebar = entries.filter(
      (e) =>
        e.kind === 'resource' &&
        (e.name === `/api/studies/${studyId}` ||
          e.name.startsWith('/api/queries/') ||
          e.name === `/api/images/${imageId}/annotations`),
    );
    expect(sidebar.map((e) => e.name)).toEqual(
      expect.arrayContaining([`/api/studies/${studyId}`, `/api/images/${imageId}/annotations`]),
    );
    for (const request of sidebar) expect(request.start, request.name).toBeGreaterThanOrEqual(firstFrame ?? Infinity);
  });

  test("the image viewer: the image asked for by the document, once, and the first frame's tiles with it", async ({
    page,
  }) => {
    const { studyId, imageId } = await demoCaseAsIsc(page);
    await page.goto(appUrl(`/studies/${studyId}/images/${imageId}`));
    await expectTissue(page, 'startup-image-viewer.png');
    const entries = await timeline(page);
    expect(requestsOf(entries, `/api/images/${imageId}`)).toHaveLength(1);
    expect(requestsOf(entries, `/api/images/${imageId}`)[0]?.start).toBeLessThan(markAt(entries, 'lamina:main') ?? 0);
    await expectEarlyTiles(page, entries);
  });

  test("another page loads none of the viewers' own code (OpenLayers, the engine, the annotations)", async ({
    page,
  }) => {
    const { studyId } = await demoCaseAsIsc(page);
    // A full load of the study's page: its chunk and what it imports, the viewers' shared parts among them.
    await page.goto(appUrl(`/studies/${studyId}`));
    await expect.poll(() => page.getByRole('tab', { name: /Cases/ }).count()).toBeGreaterThan(0);
    const scripts = (await timeline(page)).filter((e) => e.kind === 'resource' && e.name.endsWith('.js'));
    expect(scripts.some((s) => /\/assets\/StudyPage-[\w-]+\.js$/.test(s.name))).toBe(true);
    expect(scripts.filter((s) => /\/assets\/viewer-[\w-]+\.js$/.test(s.name)).map((s) => s.name)).toEqual([]);
  });
});
