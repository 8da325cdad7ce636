import { CASE_MESSAGES, SIGNATURE_MESSAGES, SIGNATURE_TEXT, type CaseView } from '@lamina/domain';
import type { APIResponse, Page } from 'playwright-core';
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
import { atRest, e2eTest as test, saveScreenshot } from '../src/browser.js';
import { appUrl, demoPassword } from '../src/env.js';
import { DEMO_READY_TIMEOUT } from '../src/viewer.js';

/**
 * Issue 30, electronic signatures in the browser: in a study whose `signatures` setting is on, Rita
 * (reader1) marks her case scored. The confirmation shows the meaning, the signer and the Part 11
 * statement and asks for her password; a wrong one is refused in the dialog, the right one
 * completes the read, and the audit trail holds the signature (its SIGNATURE_APPLIED row names the
 * signatures row, the meaning and her printed name). The study, its slide and its case are this
 * test's own; the system admin passes the case's two QC steps through the API, signing them too.
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

/** A signing study with a copy of a demo slide in a Processed case read by reader1. */
async function signingCase(page: Page) {
  const reader = await userId(page, 'reader1');
  const study = await createStudyViaApi(page, {
    name: uniqueStudyName('E2E Signatures'),
    sponsor: 'Acme Therapeutics',
    indications: ['EOSINOPHILIC_ESOPHAGITIS'],
    segments: 1,
    anatomicalSegments: ['Esophagus'],
    modality: ['HISTOPATHOLOGY'],
    visitIds: ['SCREENING'],
    labVisitIds: ['SCR'],
    hpfClasses: [{ name: 'HPF', color: '#2D72D2', sortOrder: 0, enabled: true }],
    pointClasses: [{ name: 'Eosinophil', color: '#CD4246', sortOrder: 0, enabled: true }],
    signatures: true,
    readers: [reader],
  });
  expect(study.signatures).toBe(true);
  const headers = await mutationHeaders(page);

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
      data: { name: `E2E-SIG-${tag}.tif` },
    }),
  );
  await ok(
    page.request.patch(appUrl(`/api/images/${imageId}/study`), {
      headers,
      data: { value: study.id, reasonForChange: 'E2E: the signing study’s slide' },
    }),
  );
  const created = await ok<{ case: CaseView }>(
    page.request.post(appUrl('/api/cases'), {
      headers,
      data: {
        studyId: study.id,
        procId: `E2E-SIG-${tag}`,
        subjectId: `SUBJ-${tag}`,
        siteId: 'SITE-01',
        visitId: 'SCREENING',
        images: [imageId],
        readers: [reader],
      },
    }),
    201,
  );
  const caseId = created.case.id;
  const forward = (data: object) =>
    page.request.patch(appUrl(`/api/cases/${caseId}/status/forward`), { headers, data });
  // The QC passes are signatures too: without the password the server refuses.
  const unsigned = await forward({});
  expect(unsigned.status()).toBe(400);
  expect(((await unsigned.json()) as { message: string }).message).toBe(SIGNATURE_MESSAGES.required);
  for (let step = 0; step < 2; step++) await ok(forward({ signaturePassword: demoPassword() }));
  const processed = await ok<{ case: CaseView }>(page.request.get(appUrl(`/api/cases/${caseId}`)));
  expect(processed.case.status).toBe('PROCESSED');
  return { studyId: study.id, caseId };
}

/** The audit trail's rows of `action`, from the system admin's CSV of the study: each as column → cell. */
async function auditRows(page: Page, studyId: number, action: string): Promise<Record<string, string>[]> {
  const response = await page.request.get(appUrl(`/api/audit-trail?reportFormat=csv&studyId=${studyId}`));
  expect(response.status()).toBe(200);
  const [header = [], ...rows] = parseCsv(await response.text());
  return rows
    .map((row) => Object.fromEntries(header.map((column, i) => [column, row[i] ?? ''])))
    .filter((row) => row.Action === action);
}

/** RFC 4180 CSV: quoted cells may hold commas, quotes ("") and line breaks. */
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

describe('electronic signatures (issue 30)', () => {
  test(
    'a reader signs Mark as Scored with their password; a wrong one is refused in the dialog',
    { timeout: 300_000 },
    async ({ page }) => {
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      const { studyId, caseId } = await signingCase(page);
      await logout(page);

      await loginViaUi(page, 'reader1');
      await waitForPath(page, '/studies');
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
      await page.waitForURL(
        (url) => url.pathname.startsWith(`/studies/${studyId}`) && !url.pathname.includes('/cases/'),
      );
      await logout(page);

      // The signature is a record: the audit trail's SIGNATURE_APPLIED row of the case names it.
      await loginViaUi(page, 'sysadmin');
      await waitForPath(page, '/studies');
      const completed = await ok<{ case: CaseView }>(page.request.get(appUrl(`/api/cases/${caseId}`)));
      expect(completed.case.status).toBe('COMPLETED');
      const applied = await auditRows(page, studyId, 'SIGNATURE_APPLIED');
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
