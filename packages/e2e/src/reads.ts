import type { CaseView, StudyCreate } from '@lamina/domain';
import type { APIResponse, Browser, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { demoStudyId, loginViaUi, mutationHeaders, waitForPath } from './app.js';
import { newTestContext } from './browser.js';
import { appUrl } from './env.js';
import { DEMO_READY_TIMEOUT } from './viewer.js';

/**
 * What the reading tests share (adjudication, signatures, the Reads tab): a study of the test's own
 * made through the API as a user would, cases holding copies of a demo slide, reads drawn as real
 * annotation POSTs and Mark as Scored PATCHes, and the study's audit trail read back as CSV (which
 * annotationUndo.e2e.ts reads too).
 */

/** A Blueprint toast holding `text`. */
export const toast = (page: Page, text: string): Locator => page.locator('.bp6-toast').filter({ hasText: text });

/** Awaits an API answer, expects `status` (the body is the failure message) and answers its JSON. */
export async function ok<T>(response: Promise<APIResponse>, status = 200): Promise<T> {
  const answer = await response;
  expect(answer.status(), await answer.text()).toBe(status);
  return (await answer.json()) as T;
}

/** Logs in through the login page and waits for the studies list. */
export async function loginToStudies(page: Page, username: string): Promise<void> {
  await loginViaUi(page, username);
  await waitForPath(page, '/studies');
}

/** Waits until the browser has left the case viewer for a page of the study `studyId`. */
export async function waitForStudyPage(page: Page, studyId: number): Promise<void> {
  await page.waitForURL((url) => url.pathname.startsWith(`/studies/${studyId}`) && !url.pathname.includes('/cases/'));
}

export async function userId(page: Page, username: string): Promise<number> {
  const { users } = await ok<{ users: { id: number; username: string }[] }>(
    page.request.get(appUrl(`/api/users?name=${encodeURIComponent(username)}`)),
  );
  const user = users.find((u) => u.username === username);
  if (!user) throw new Error(`no user ${username}`);
  return user.id;
}

/** The ids of `usernames`, by username. */
export async function userIds<U extends string>(page: Page, usernames: readonly U[]): Promise<Record<U, number>> {
  return Object.fromEntries(
    await Promise.all(usernames.map(async (u) => [u, await userId(page, u)] as const)),
  ) as Record<U, number>;
}

/**
 * The settings the reading studies share: eosinophilic oesophagitis, one oesophageal segment, the
 * screening visit, an HPF class and an Eosinophil point class.
 */
export const EOE_READ_STUDY = {
  sponsor: 'Acme Therapeutics',
  indications: ['EOSINOPHILIC_ESOPHAGITIS'],
  segments: 1,
  anatomicalSegments: ['Esophagus'],
  modality: ['HISTOPATHOLOGY'],
  visitIds: ['SCREENING'],
  labVisitIds: ['SCR'],
  hpfClasses: [{ name: 'HPF', color: '#2D72D2', sortOrder: 0, enabled: true }],
  pointClasses: [{ name: 'Eosinophil', color: '#CD4246', sortOrder: 0, enabled: true }],
} satisfies Partial<StudyCreate>;

/** The endpoint 'pec': the peak count of Eosinophils per HPF, positive from `threshold`. */
export function peakEosinophilsEndpoint(threshold: number) {
  return {
    key: 'pec',
    label: 'Peak eosinophils per HPF',
    kind: 'PEAK_COUNT_PER_HPF',
    className: 'Eosinophil',
    threshold,
    positiveWhen: 'GTE',
  } as const;
}

/** An upper-case tag no other test or earlier run uses, for procedure ids and file names. */
export function uniqueTag(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 5)}`.toUpperCase();
}

/** The id of a demo slide (S100…) to copy, waiting until the demo is processed. */
export async function demoSlideId(page: Page, headers: Record<string, string>): Promise<number> {
  const demoStudy = await demoStudyId(page);
  let sourceId: number | undefined;
  await expect
    .poll(
      async () => {
        const listed = await ok<{ results?: { id: number; imageFilename?: string }[] }>(
          page.request.post(appUrl('/api/imageManagement/images'), {
            headers,
            data: { searchText: 'S100', studyFilter: { selectedIds: [demoStudy] }, pageSize: 20 },
          }),
        );
        sourceId = listed.results?.find((r) => /^S100\d_/.test(r.imageFilename ?? ''))?.id;
        return sourceId;
      },
      { timeout: DEMO_READY_TIMEOUT, interval: 2000 },
    )
    .toBeDefined();
  return sourceId as number;
}

/**
 * Copies the slide `sourceId` as `<procId>.tif`, moves the copy into the study (with `reason`) and
 * makes a case `procId` of it for `readers` (site SITE-01, visit SCREENING).
 */
export async function caseOfSlideCopy(
  page: Page,
  headers: Record<string, string>,
  c: { studyId: number; sourceId: number; procId: string; subjectId: string; readers: number[]; reason: string },
): Promise<{ caseId: number; imageId: number }> {
  const { imageId } = await ok<{ imageId: number }>(
    page.request.post(appUrl(`/api/images/${c.sourceId}/copy`), { headers, data: { name: `${c.procId}.tif` } }),
  );
  await ok(
    page.request.patch(appUrl(`/api/images/${imageId}/study`), {
      headers,
      data: { value: c.studyId, reasonForChange: c.reason },
    }),
  );
  const created = await ok<{ case: CaseView }>(
    page.request.post(appUrl('/api/cases'), {
      headers,
      data: {
        studyId: c.studyId,
        procId: c.procId,
        subjectId: c.subjectId,
        siteId: 'SITE-01',
        visitId: 'SCREENING',
        images: [imageId],
        readers: c.readers,
      },
    }),
    201,
  );
  return { caseId: created.case.id, imageId };
}

/** PATCH /api/cases/{id}/status/forward (a QC pass, or Mark as Scored) with `data`. */
export function forwardCase(
  page: Page,
  headers: Record<string, string>,
  caseId: number,
  data: object = {},
): Promise<APIResponse> {
  return page.request.patch(appUrl(`/api/cases/${caseId}/status/forward`), { headers, data });
}

/** Passes the case's Lab QC and ISC QC (with `data`, e.g. a signature password): the case is Processed. */
export async function passQc(
  page: Page,
  headers: Record<string, string>,
  caseId: number,
  data: object = {},
): Promise<void> {
  for (let step = 0; step < 2; step++) await ok(forwardCase(page, headers, caseId, data));
}

export async function caseOf(page: Page, caseId: number): Promise<CaseView> {
  return (await ok<{ case: CaseView }>(page.request.get(appUrl(`/api/cases/${caseId}`)))).case;
}

/** The centre of an image, in its pixels. */
export async function imageCentre(page: Page, imageId: number): Promise<[number, number]> {
  const image = await ok<{ width: number; height: number }>(page.request.get(appUrl(`/api/images/${imageId}`)));
  return [Math.round(image.width / 2), Math.round(image.height / 2)];
}

/** Where a reader draws: the image, the study's classes and the HPF's centre. */
export interface ReadTarget {
  imageId: number;
  hpfClassId: number;
  pointClassId: number;
  centre: [number, number];
}

/** Draws an HPF at the target's centre holding `points` Eosinophils (POST /api/annotations), 4 px apart. */
export async function drawHpfWithPoints(
  page: Page,
  headers: Record<string, string>,
  target: ReadTarget,
  points: number,
): Promise<void> {
  const draw = (data: object) => ok(page.request.post(appUrl('/api/annotations'), { headers, data }));
  const [x, y] = target.centre;
  await draw({
    imageId: target.imageId,
    annotationType: 'HPF',
    annotationClassId: target.hpfClassId,
    geometry: { type: 'Point', coordinates: [x, y] },
  });
  for (let i = 0; i < points; i++)
    await draw({
      imageId: target.imageId,
      annotationType: 'POINT',
      annotationClassId: target.pointClassId,
      geometry: { type: 'Point', coordinates: [x + i * 4, y] },
    });
}

/** Mark as Scored through the API (expects 200); answers the server's message. */
export async function markScored(page: Page, headers: Record<string, string>, caseId: number): Promise<string> {
  return (await ok<{ message: string }>(forwardCase(page, headers, caseId))).message;
}

/**
 * Runs `act` as `username` in a browser context of their own (logged in through the login page,
 * with the session's mutation headers), closed afterwards.
 */
export async function asUser<T>(
  browser: Browser,
  username: string,
  act: (page: Page, headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const context = await newTestContext(browser);
  try {
    const page = await context.newPage();
    await loginViaUi(page, username);
    return await act(page, await mutationHeaders(page));
  } finally {
    await context.close();
  }
}

/** The audit trail CSV of the study (the page's user needs to see it): each row as column → cell. */
export async function auditRows(page: Page, studyId: number): Promise<Record<string, string>[]> {
  const response = await page.request.get(appUrl(`/api/audit-trail?reportFormat=csv&studyId=${studyId}`));
  expect(response.status()).toBe(200);
  const [header = [], ...rows] = parseCsv(await response.text());
  return rows.map((row) => Object.fromEntries(header.map((column, i) => [column, row[i] ?? ''])));
}

/** RFC 4180 CSV: quoted cells may hold commas, quotes ("") and line breaks. Blank lines are left out. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows.filter((r) => r.some((c) => c !== ''));
}
