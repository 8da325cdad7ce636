import { ADJUDICATION_TEXT, CASE_MESSAGES, roleByName, type CaseOutcomesResponse, type RoleName } from '@lamina/domain';
import type { Browser, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { createStudyViaApi, logout, mutationHeaders, uniqueStudyName } from '../src/app.js';
import { atRest, e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl } from '../src/env.js';
import {
  EOE_READ_STUDY,
  asUser,
  caseOf,
  caseOfSlideCopy,
  demoSlideId,
  drawHpfWithPoints,
  imageCentre,
  loginToStudies,
  markScored,
  ok,
  passQc,
  peakEosinophilsEndpoint,
  toast,
  uniqueTag,
  userIds,
  waitForStudyPage,
  type ReadTarget,
} from '../src/reads.js';

/**
 * Issue 30, adjudication in the browser: two primary readers' reads of a case disagree by the
 * study's rule (a peak count of Eosinophils per HPF, positive from 1: Rita counts one, Noa none), so
 * the case waits in Pending Adjudication. The ISC opens it, reads the callout and assigns Ravi as
 * adjudicator in the dialog; Ravi opens the case, marks it scored, and the case is Completed with
 * his values as the final ones. The study, its image and the reads are this test's own, made
 * through the API as a user would (real annotation POSTs and Mark as Scored PATCHes).
 */

/** A reader in their own browser context draws an HPF at the image's centre holding `points` Eosinophils, then marks the case scored. */
async function readAs(
  browser: Browser,
  username: string,
  c: ReadTarget & { caseId: number },
  points: number,
): Promise<void> {
  await asUser(browser, username, async (page, headers) => {
    await drawHpfWithPoints(page, headers, c, points);
    // A primary reader is told only that the case was scored, never that it went to adjudication.
    expect(await markScored(page, headers, c.caseId)).toBe(CASE_MESSAGES.scored);
    // …and sees it as Processed.
    expect((await caseOf(page, c.caseId)).status).toBe('PROCESSED');
  });
}

/** The study with the endpoint and the rule, a copy of a demo slide in a case read by Rita and Noa: the case pending adjudication. */
async function pendingCase(page: Page, browser: Browser) {
  const ids = await userIds(page, ['isc', 'reader1', 'reader2', 'noto']);
  const study = await createStudyViaApi(page, {
    name: uniqueStudyName('E2E Adjudication'),
    ...EOE_READ_STUDY,
    endpoints: [peakEosinophilsEndpoint(1)],
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
  const sourceId = await demoSlideId(page, headers);
  const tag = uniqueTag();
  const procId = `E2E-ADJ-${tag}`;
  const { caseId, imageId } = await caseOfSlideCopy(page, headers, {
    studyId: study.id,
    sourceId,
    procId,
    subjectId: `SUBJ-${tag}`,
    readers: [ids.reader1, ids.noto],
    reason: 'E2E: the adjudication study’s slide',
  });
  await passQc(page, headers, caseId);
  expect((await caseOf(page, caseId)).status).toBe('PROCESSED');

  const reading = {
    caseId,
    imageId,
    hpfClassId: study.hpfClasses[0]!.id,
    pointClassId: study.pointClasses[0]!.id,
    centre: await imageCentre(page, imageId),
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
      await loginToStudies(page, 'sysadmin');
      const { studyId, caseId } = await pendingCase(page, browser);
      await logout(page);

      // The ISC: the status in its colour, the callout, and the dialog.
      await loginToStudies(page, 'isc');
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
      await loginToStudies(page, 'reader2');
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
      await waitForStudyPage(page, studyId);
      await logout(page);

      // The case is Completed, its final value the adjudicator's.
      await loginToStudies(page, 'isc');
      expect((await caseOf(page, caseId)).status).toBe('COMPLETED');
      const outcomes = await ok<CaseOutcomesResponse>(page.request.get(appUrl(`/api/cases/${caseId}/outcomes`)));
      expect(outcomes.final).toEqual([expect.objectContaining({ endpointKey: 'pec', adjudicated: true })]);
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      await expect.poll(async () => status.textContent()).toBe('Completed');
      expect(await page.getByText(ADJUDICATION_TEXT.waitingFor('Ravi Reader')).count()).toBe(0);
    },
  );
});
