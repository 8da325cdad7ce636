import { CASE_MESSAGES, SIGNATURE_MESSAGES, SIGNATURE_TEXT } from '@lamina/domain';
import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { createStudyViaApi, logout, mutationHeaders, uniqueStudyName } from '../src/app.js';
import { atRest, e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl, demoPassword } from '../src/env.js';
import {
  EOE_READ_STUDY,
  auditRows,
  caseOf,
  caseOfSlideCopy,
  demoSlideId,
  forwardCase,
  loginToStudies,
  passQc,
  toast,
  uniqueTag,
  userId,
  waitForStudyPage,
} from '../src/reads.js';

/**
 * Issue 30, electronic signatures in the browser: in a study whose `signatures` setting is on, Rita
 * (reader1) marks her case scored. The confirmation shows the meaning, the signer and the Part 11
 * statement and asks for her password; a wrong one is refused in the dialog, the right one
 * completes the read, and the audit trail holds the signature (its SIGNATURE_APPLIED row names the
 * signatures row, the meaning and her printed name). The study, its slide and its case are this
 * test's own; the system admin passes the case's two QC steps through the API, signing them too.
 */

/** A signing study with a copy of a demo slide in a Processed case read by reader1. */
async function signingCase(page: Page) {
  const reader = await userId(page, 'reader1');
  const study = await createStudyViaApi(page, {
    name: uniqueStudyName('E2E Signatures'),
    ...EOE_READ_STUDY,
    signatures: true,
    readers: [reader],
  });
  expect(study.signatures).toBe(true);
  const headers = await mutationHeaders(page);

  const sourceId = await demoSlideId(page, headers);
  const tag = uniqueTag();
  const { caseId } = await caseOfSlideCopy(page, headers, {
    studyId: study.id,
    sourceId,
    procId: `E2E-SIG-${tag}`,
    subjectId: `SUBJ-${tag}`,
    readers: [reader],
    reason: 'E2E: the signing study’s slide',
  });
  // The QC passes are signatures too: without the password the server refuses.
  const unsigned = await forwardCase(page, headers, caseId);
  expect(unsigned.status()).toBe(400);
  expect(((await unsigned.json()) as { message: string }).message).toBe(SIGNATURE_MESSAGES.required);
  await passQc(page, headers, caseId, { signaturePassword: demoPassword() });
  expect((await caseOf(page, caseId)).status).toBe('PROCESSED');
  return { studyId: study.id, caseId };
}

describe('electronic signatures (issue 30)', () => {
  test(
    'a reader signs Mark as Scored with their password; a wrong one is refused in the dialog',
    { timeout: 300_000 },
    async ({ page }) => {
      await loginToStudies(page, 'sysadmin');
      const { studyId, caseId } = await signingCase(page);
      await logout(page);

      await loginToStudies(page, 'reader1');
      await page.goto(appUrl(`/studies/${studyId}/cases/${caseId}`));
      await page.getByRole('button', { name: 'Mark as Scored' }).click();
      const dialog = page.getByRole('dialog', { name: 'Mark as Scored' });
      const block = dialog.getByRole('region', { name: SIGNATURE_TEXT.heading });
      await block.getByText('“I completed this read”').waitFor();
      await block.getByText('Signer: Rita Reader (reader1)').waitFor();
      await block.getByText(SIGNATURE_TEXT.statement).waitFor();
      const password = dialog.getByLabel(/^Password/);
      const confirm = dialog.getByRole('button', { name: 'Mark as Scored', exact: true });
      expect(await password.getAttribute('type')).toBe('password');
      expect(await password.getAttribute('autocomplete')).toBe('current-password');
      // The password field has the focus; Confirm waits for it.
      await expect.poll(async () => password.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await confirm.isDisabled()).toBe(true);
      await atRest(dialog);
      await saveScreenshot(page, 'signature-mark-scored.png');

      // A wrong password: refused in the dialog, the field emptied, the reader still signed in here.
      await password.fill('not-the-password');
      const refused = page.waitForResponse((r) => r.url().endsWith(`/api/cases/${caseId}/status/forward`));
      await confirm.click();
      expect((await refused).status()).toBe(401);
      await dialog.getByRole('alert').getByText(SIGNATURE_MESSAGES.passwordIncorrect).waitFor();
      expect(await password.inputValue()).toBe('');
      await expect.poll(async () => password.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await confirm.isDisabled()).toBe(true);
      expect(new URL(page.url()).pathname).toBe(`/studies/${studyId}/cases/${caseId}`);
      await atRest(dialog);
      await saveScreenshot(page, 'signature-wrong-password.png');

      // The right one (Enter submits) completes the read, and on to the study.
      await password.fill(demoPassword());
      const signed = page.waitForResponse((r) => r.url().endsWith(`/api/cases/${caseId}/status/forward`));
      await password.press('Enter');
      const answer = await signed;
      expect(answer.status()).toBe(200);
      expect(answer.request().postDataJSON()).toEqual({ signaturePassword: demoPassword() });
      await toast(page, CASE_MESSAGES.scoredComplete).waitFor();
      await waitForStudyPage(page, studyId);
      await logout(page);

      // The signature is a record: the audit trail's SIGNATURE_APPLIED row of the case names it.
      await loginToStudies(page, 'sysadmin');
      expect((await caseOf(page, caseId)).status).toBe('COMPLETED');
      const applied = (await auditRows(page, studyId)).filter((row) => row.Action === 'SIGNATURE_APPLIED');
      const meanings = applied.map((row) => (JSON.parse(row['New Value'] ?? '{}') as { meaning?: string }).meaning);
      expect(meanings.sort()).toEqual(['I completed this read', 'ISC QC passed', 'Lab QC passed']);
      const read = applied.find((row) => row['New Value']?.includes('I completed this read'));
      expect(read).toMatchObject({ 'Object Type': 'case', 'Object ID': String(caseId) });
      expect(JSON.parse(read?.['New Value'] ?? '{}')).toMatchObject({
        signature: expect.any(Number) as number,
        printedName: 'Rita Reader',
        meaning: 'I completed this read',
        method: 'password',
        contentHash: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
      });
    },
  );
});
