import {
  ADJUDICATION_TEXT,
  CASE_MESSAGES,
  roleByName,
  type CaseOutcomesResponse,
  type CaseView,
  type RoleName,
} from '@lamina/domain';
import type { APIResponse, Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import {
  createStudyViaApi,
  demoStudyId,
  loginViaUi,
  logout,
  mutationHeaders,
  uniqueStudyName,
  waitForPath,
} from '../src/app.js';
import { atRest, e2eTest as test, newTestContext, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import { DEMO_READY_TIMEOUT } from '../src/viewer.js';

/**
 * Issue 30, adjudication in the browser: two primary readers' reads of a case disagree by the
 * study's rule (a peak count of Eosinophils per HPF, positive from 1: Rita counts one, Noa none), so
 * the case waits in Pending Adjudication. The ISC opens it, reads the callout and assigns Ravi as
 * adjudicator in the dialog; Ravi opens the case, marks it scored, and the case is Completed with
 * his values as the final ones. The study, its image and the reads are this test's own, made
 * through the API as a user would (real annotation POSTs and Mark as Scored PATCHes).
 */

const toast = (page: Page, text: string) => page.locator('.bp6-toast').filter({ hasText: text });

async function ok<T>(response: Promise<APIResponse>, status = 200): Promise<T> {
  const answer = await response;
  expect(answer.status(), await answer.text()).toBe(status);
  return (await answer.json()) as T;
}

async function userId(page: Page, username: string): Promise<number> {
  const { users } = await ok<{ users: { id: number; username: string }[] }>(
    page.request.get(appUrl(`/api/users?name=${encodeURIComponent(username)}`)),
  );
  const user = users.find((u) => u.username === username);
  if (!user) throw new Error(`no user ${username}`);
  return user.id;
}

async function caseOf(page: Page, caseId: number): Promise<CaseView> {
  return (await ok<{ case: CaseView }>(page.request.get(appUrl(`/api/cases/${caseId}`)))).case;
}

/** A reader in their own browser context draws an HPF at the image's centre holding `points` Eosinophils, then marks the case scored. */
async function readAs(
  browser: Browser,
  username: string,
  c: { caseId: number; imageId: number; hpfClassId: number; pointClassId: number; centre: [number, number] },
  points: number,
): Promise<void> {
  const context = await newTestContext(browser);
  try {
    const page = await context.newPage();
    await loginViaUi(page, username);
    const headers = await mutationHeaders(page);
    const draw = (data: object) => ok(page.request.post(appUrl('/api/annotations'), { headers, data }));
    const [x, y] = c.centre;
    await draw({
      imageId: c.imageId,
      annotationType: 'HPF',
      annotationClassId: c.hpfClassId,
      geometry: { type: 'Point', coordinates: [x, y] },
    });
    for (let i = 0; i < points; i++)
      await draw({
        imageId: c.imageId,
        annotationType: 'POINT',
        annotationClassId: c.pointClassId,
        geometry: { type: 'Point', coordinates: [x + i * 4, y] },
      });
    const marked = await ok<{ message: string }>(
      page.request.patch(appUrl(`/api/cases/${c.caseId}/status/forward`), { headers, data: {} }),
    );
    // A primary reader is told only that the case was scored, never that it went to adjudication.
    expect(marked.message).toBe(CASE_MESSAGES.scored);
    // …and sees it as Processed.
    expect((await caseOf(page, c.caseId)).status).toBe('PROCESSED');
  } finally {
    await context.close();
  }
}

/** The study with the endpoint and the rule, a copy of a demo slide in a case read by Rita and Noa: the case pending adjudication. */
async function pendingCase(page: Page, browser: Browser) {
  const ids = Object.fromEntries(
    await Promise.all(['isc', 'reader1', 'reader2', 'noto'].map(async (u) => [u, await userId(page, u)] as const)),
  ) as Record<'isc' | 'reader1' | 'reader2' | 'noto', number>;
  const study = await createStudyViaApi(page, {
    name: uniqueStudyName('E2E Adjudication'),
    sponsor: 'Acme Therapeutics',
    indications: ['EOSINOPHILIC_ESOPHAGITIS'],
    segments: 1,
    anatomicalSegments: ['Esophagus'],
    modality: ['HISTOPATHOLOGY'],
    visitIds: ['SCREENING'],
    labVisitIds: ['SCR'],
    hpfClasses: [{ name: 'HPF', color: '#2D72D2', sortOrder: 0, enabled: true }],
    pointClasses: [{ name: 'Eosinophil', color: '#CD4246', sortOrder: 0, enabled: true }],
    endpoints: [
      {
        key: 'pec',
        label: 'Peak eosinophils per HPF',
        kind: 'PEAK_COUNT_PER_HPF',
        className: 'Eosinophil',
        threshold: 1,
        positiveWhen: 'GTE',
      },
    ],
    adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
    readers: [ids.reader1, ids.reader2],
    readonlyUsers: [{ id: ids.isc, roleId: roleByName('ISC').id }],
  });
  const headers = await mutationHeaders(page);
  const grant = (user: number, role: RoleName) =>
    ok(
      page.request.patch(appUrl('/api/users/studies/add'), {
        headers,
        data: { studyId: study.id, userId: user, roleId: roleByName(role).id },
      }),
    );
  await grant(ids.noto, 'NOTO');

  // A copy of a demo slide (processed once the demo is ready), moved into the new study.
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
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 5)}`.toUpperCase();
  const { imageId } = await ok<{ imageId: number }>(
    page.request.post(appUrl(`/api/images/${String(sourceId)}/copy`), {
      headers,
      data: { name: `E2E-ADJ-${tag}.tif` },
    }),
  );
  await ok(
    page.request.patch(appUrl(`/api/images/${imageId}/study`), {
      headers,
      data: { value: study.id, reasonForChange: 'E2E: the adjudication study’s slide' },
    }),
  );
  const procId = `E2E-ADJ-${tag}`;
  const created = await ok<{ case: CaseView }>(
    page.request.post(appUrl('/api/cases'), {
      headers,
      data: {
        studyId: study.id,
        procId,
        subjectId: `SUBJ-${tag}`,
        siteId: 'SITE-01',
        visitId: 'SCREENING',
        images: [imageId],
        readers: [ids.reader1, ids.noto],
      },
    }),
    201,
  );
  const caseId = created.case.id;
  for (let step = 0; step < 2; step++)
    await ok(page.request.patch(appUrl(`/api/cases/${caseId}/status/forward`), { headers, data: {} }));
  expect((await caseOf(page, caseId)).status).toBe('PROCESSED');

  const image = await ok<{ width: number; height: number }>(page.request.get(appUrl(`/api/images/${imageId}`)));
  const reading = {
    caseId,
    imageId,
    hpfClassId: study.hpfClasses[0]!.id,
    pointClassId: study.pointClasses[0]!.id,
    centre: [Math.round(image.width / 2), Math.round(image.height / 2)] as [number, number],
  };
  await readAs(browser, 'reader1', reading, 1);
  await readAs(browser, 'noto', reading, 0);
  expect((await caseOf(page, caseId)).status).toBe('PENDING_ADJUDICATION');
  return { studyId: study.id, caseId, procId };
}

describe('adjudication (issue 30)', () => {
  test(
    'the ISC assigns an adjudicator to a case whose reads disagree; the adjudicator marks it scored and it completes',
    { timeout: 300_000 },
    async ({ page, browser }) => {
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      const { studyId, caseId } = await pendingCase(page, browser);
      await logout(page);

      // The ISC: the status in its colour, the callout, and the dialog.
      await loginViaUi(page, 'isc');
      await waitForPath(page, '/studies');
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      const status = page.getByTestId('case-status');
      await expect.poll(async () => status.textContent()).toBe('Pending Adjudication');
      expect(await status.getAttribute('class')).toContain('bp6-intent-warning');
      const details = page.getByRole('region', { name: 'Case details' });
      await details.getByText(ADJUDICATION_TEXT.assignNeeded).waitFor();
      await details.getByRole('button', { name: 'Assign adjudicator' }).click();
      const dialog = page.getByRole('dialog', { name: 'Assign adjudicator' });
      const list = dialog.getByRole('menu', { name: 'Readers of the study' });
      // The study's readers who do not read the case: Ravi; not Rita nor Noa.
      await list.getByRole('menuitem', { name: /Ravi Reader/ }).waitFor();
      expect(await list.getByRole('menuitem', { name: /Rita Reader|Noa Noto/ }).count()).toBe(0);
      // The name search (the study's readers named so) lists him.
      const searched = page.waitForResponse((r) => /\/api\/studies\/\d+\/users\?name=Ravi$/.test(r.url()));
      await dialog.getByRole('searchbox').fill('Ravi');
      expect((await searched).status()).toBe(200);
      await expect
        .poll(async () => list.getByRole('menuitem').allInnerTexts())
        .toEqual([expect.stringMatching(/^Ravi Reader\s+\d+\/\d+ read$/)]);
      await list.getByRole('menuitem', { name: /Ravi Reader/ }).click();
      await dialog.getByLabel('Chosen adjudicator').getByText('Ravi Reader').waitFor();
      await dialog.getByLabel(/Reason for change/).fill('Rita and Noa disagree on active EoE');
      await atRest(dialog);
      await saveScreenshot(page, 'adjudication-assign-dialog.png');
      const assigned = page.waitForResponse((r) => r.url().endsWith(`/api/cases/${caseId}/adjudicator`));
      await dialog.getByRole('button', { name: 'Assign adjudicator', exact: true }).click();
      const response = await assigned;
      expect(response.status()).toBe(200);
      expect(response.request().postDataJSON()).toEqual({
        readerId: expect.any(Number) as number,
        reasonForChange: 'Rita and Noa disagree on active EoE',
      });
      await toast(page, CASE_MESSAGES.adjudicatorAssigned).waitFor();
      await dialog.waitFor({ state: 'detached' });
      await details.getByText(ADJUDICATION_TEXT.waitingFor('Ravi Reader')).waitFor();
      await details.getByRole('button', { name: 'Change adjudicator' }).waitFor();
      await details.getByRole('button', { name: 'Show details' }).click();
      const reads = details.getByRole('list', { name: 'Reads' });
      await reads.getByRole('listitem').filter({ hasText: 'Ravi Reader' }).getByText('Adjudicator').waitFor();
      await saveScreenshot(page, 'adjudication-assigned.png');
      await logout(page);

      // Ravi, the adjudicator: the case pending adjudication is his to mark.
      await loginViaUi(page, 'reader2');
      await waitForPath(page, '/studies');
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      await expect.poll(async () => status.textContent()).toBe('Pending Adjudication');
      // Blinded: no callout, no other reader.
      expect(await page.getByText(ADJUDICATION_TEXT.waitingFor('Ravi Reader')).count()).toBe(0);
      expect((await caseOf(page, caseId)).readers.map((r) => r.role)).toEqual(['ADJUDICATOR']);
      await page.getByRole('button', { name: 'Mark as Scored' }).click();
      const mark = page.getByRole('dialog', { name: 'Mark as Scored' });
      await mark.getByText(/your read as the adjudicator completes the case/).waitFor();
      await atRest(mark);
      await saveScreenshot(page, 'adjudication-mark-scored.png');
      const scored = page.waitForResponse((r) => r.url().endsWith(`/api/cases/${caseId}/status/forward`));
      await mark.getByRole('button', { name: 'Mark as Scored', exact: true }).click();
      expect((await scored).status()).toBe(200);
      await toast(page, CASE_MESSAGES.scoredComplete).waitFor();
      // His part done, on to the study.
      await page.waitForURL(
        (url) => url.pathname.startsWith(`/studies/${studyId}`) && !url.pathname.includes('/cases/'),
      );
      await logout(page);

      // The case is Completed, its final value the adjudicator's.
      await loginViaUi(page, 'isc');
      await waitForPath(page, '/studies');
      expect((await caseOf(page, caseId)).status).toBe('COMPLETED');
      const outcomes = await ok<CaseOutcomesResponse>(page.request.get(appUrl(`/api/cases/${caseId}/outcomes`)));
      expect(outcomes.final).toEqual([expect.objectContaining({ endpointKey: 'pec', adjudicated: true })]);
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      await expect.poll(async () => status.textContent()).toBe('Completed');
      expect(await page.getByText(ADJUDICATION_TEXT.waitingFor('Ravi Reader')).count()).toBe(0);
    },
  );
});
