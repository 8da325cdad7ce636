import {
  CELIAC_DEFAULT_LINE_CLASSES,
  CELIAC_DEFAULT_POINT_CLASSES,
  INDICATION_LABELS,
  INDICATIONS,
  MESSAGES,
  STUDY_MESSAGES,
  type AnnotationClassView,
  type Indication,
} from '@lamina/domain';
import type { Locator, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import {
  createStudyViaApi,
  eventually,
  fetchStudy,
  loginViaUi,
  pageHeading,
  pathnameOf,
  setChecked,
  uniqueStudyName,
  waitForPath,
} from '../src/app.js';
import { e2eTest as test, saveScreenshot, VIEWPORT } from '../src/browser.js';
import { appUrl } from '../src/env.js';

/** The study the first test creates through the form; the edit test works on it. */
let celiacStudy: { id: number; name: string } | undefined;

const SEGMENTS = ['Duodenal bulb', 'Distal duodenum'];

function settingsForm(page: Page): Locator {
  return page.getByRole('form', { name: 'Study settings' });
}

function saveButton(page: Page): Locator {
  return page.getByRole('button', { name: 'Save Changes', exact: true });
}

function indication(page: Page, value: Indication): Locator {
  return settingsForm(page).getByRole('checkbox', { name: INDICATION_LABELS[value], exact: true });
}

/** One of the four class lists of the form: 'HPF', 'Point', 'Freehand' or 'Line measurement'. */
function classList(page: Page, label: string): Locator {
  return settingsForm(page).getByRole('list', { name: `${label} classes`, exact: true });
}

/** The classes a list of the form shows, in order: name (its input's value) and swatch colour. */
async function shownClasses(page: Page, label: string): Promise<{ name: string; color: string }[]> {
  const list = classList(page, label);
  if ((await list.count()) === 0) return [];
  const names = await list
    .getByRole('textbox')
    .evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
  const colours = await list
    .getByRole('button', { name: /: colour #[0-9A-F]{6}$/i })
    .evaluateAll((buttons) => buttons.map((b) => /#[0-9A-F]{6}$/i.exec(b.getAttribute('aria-label') ?? '')?.[0] ?? ''));
  return names.map((name, i) => ({ name, color: (colours[i] ?? '').toUpperCase() }));
}

/** A class list of the study view as name, colour and order (what the spec fixes). */
function classesOf(list: readonly AnnotationClassView[]): { name: string; color: string; sortOrder: number }[] {
  return [...list]
    .sort((a, b) => a.sortOrder - b.sortOrder)
    .map(({ name, color, sortOrder }) => ({ name, color: color.toUpperCase(), sortOrder }));
}

const expectedDefaults = (defaults: readonly { name: string; color: string }[]) =>
  defaults.map(({ name, color }, sortOrder) => ({ name, color, sortOrder }));

/** Opens the configuration form of a study from its study page, as a study admin would. */
async function openEditForm(page: Page, study: { id: number; name: string }): Promise<void> {
  await page.goto(appUrl(`/studies/${study.id}`));
  await pageHeading(page, study.name).waitFor();
  await page.getByRole('button', { name: 'Edit Study', exact: true }).click();
  await waitForPath(page, `/studies/${study.id}/configure/settings`);
  await pageHeading(page, `Edit Study: ${study.name}`).waitFor();
  await settingsForm(page).waitFor();
}

/** Clicks Save Changes and waits for the study page the form goes to; answers the study id. */
async function saveAndLandOnStudyPage(page: Page): Promise<number> {
  await saveButton(page).click();
  await page.waitForURL((url) => /^\/studies\/\d+$/.test(url.pathname));
  return Number(/^\/studies\/(\d+)$/.exec(pathnameOf(page))![1]);
}

/**
 * `<name>.png`: the form as a 1280×800 screen shows it, from the top; `<name>-full.png`: the whole
 * form in one window as tall as the page (a full-page capture would paint the sticky header and
 * footer at the scroll position, over the form). The page never scrolls sideways.
 */
async function screenshotForm(page: Page, name: string): Promise<void> {
  await page.evaluate(() => document.fonts.ready.then(() => window.scrollTo(0, 0)));
  await saveScreenshot(page, `${name}.png`);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORT.width);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: VIEWPORT.width, height });
  try {
    await saveScreenshot(page, `${name}-full.png`);
  } finally {
    await page.setViewportSize(VIEWPORT);
  }
}

describe('study configuration', () => {
  test('studyadmin creates a celiac study: one indication, default classes with the spec colours', async ({ page }) => {
    const name = uniqueStudyName('E2E Celiac');
    await loginViaUi(page, 'studyadmin');
    await waitForPath(page, '/studies');
    await pageHeading(page, 'Studies').waitFor();

    await page.getByRole('button', { name: 'Create Study', exact: true }).click();
    await waitForPath(page, '/studies/new/configure/settings');
    await pageHeading(page, 'Create Study').waitFor();
    const form = settingsForm(page);
    await form.waitFor();
    // A new study has no Users tab and no reasons for change; the empty form cannot be saved.
    expect(await page.getByRole('tab', { name: 'Users' }).count()).toBe(0);
    expect(await form.getByText('Reason for change').count()).toBe(0);
    expect(await saveButton(page).isDisabled()).toBe(true);
    // No red messages on the empty form (issue 20); Save says why it waits, and its link shows the field's.
    expect(await form.getByText(STUDY_MESSAGES.nameRequired, { exact: true }).count()).toBe(0);
    const why = page.getByRole('status', { name: 'Why Save is disabled' });
    expect(await why.textContent()).toContain('4 fields need attention');
    await why.getByRole('button', { name: 'Name', exact: true }).click();
    expect(await form.getByText(STUDY_MESSAGES.nameRequired, { exact: true }).isVisible()).toBe(true);

    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Sponsor', { exact: true }).fill('Gluten Free Pharma');

    // Indications: NASH and celiac each carry the one-indication hint and stand alone.
    for (const value of ['NASH', 'CELIAC_DISEASE'] as const) {
      const option = form.locator('.lamina-checkbox-option').filter({ hasText: INDICATION_LABELS[value] });
      expect((await option.innerText()).replace(/\s+/g, ' ').trim()).toBe(
        `${INDICATION_LABELS[value]} ${STUDY_MESSAGES.oneIndicationOnly}`,
      );
    }
    for (const value of INDICATIONS) expect(await indication(page, value).isEnabled()).toBe(true);
    // Another indication first: NASH and celiac can no longer be added to it.
    await setChecked(indication(page, 'CROHNS_DISEASE'), true);
    await eventually(() => indication(page, 'NASH').isDisabled()).toBe(true);
    expect(await indication(page, 'CELIAC_DISEASE').isDisabled()).toBe(true);
    expect(await indication(page, 'ULCERATIVE_COLITIS').isEnabled()).toBe(true);
    await setChecked(indication(page, 'CROHNS_DISEASE'), false);
    await eventually(() => indication(page, 'CELIAC_DISEASE').isEnabled()).toBe(true);

    // No celiac classes before celiac is chosen.
    expect(await shownClasses(page, 'Point')).toEqual([]);
    expect(await shownClasses(page, 'Line measurement')).toEqual([]);

    await setChecked(indication(page, 'CELIAC_DISEASE'), true);
    await eventually(() => indication(page, 'NASH').isDisabled()).toBe(true);
    expect(await indication(page, 'CELIAC_DISEASE').isChecked()).toBe(true);
    for (const value of INDICATIONS.filter((i) => i !== 'CELIAC_DISEASE')) {
      expect(await indication(page, value).isDisabled(), `${value} disabled beside celiac`).toBe(true);
      expect(await indication(page, value).isChecked()).toBe(false);
    }

    // The celiac defaults appear in the class lists before anything is saved.
    const pointDefaults = CELIAC_DEFAULT_POINT_CLASSES.map(({ name: n, color }) => ({ name: n, color }));
    const lineDefaults = CELIAC_DEFAULT_LINE_CLASSES.map(({ name: n, color }) => ({ name: n, color }));
    await eventually(() => shownClasses(page, 'Point')).toEqual(pointDefaults);
    expect(pointDefaults.map((c) => c.name)).toEqual(['Enterocyte', 'IEL']);
    expect(await shownClasses(page, 'Line measurement')).toEqual(lineDefaults);
    expect(lineDefaults.map((c) => c.name)).toEqual(['Unit 1', 'Unit 2', 'Unit 3', 'Unit 4', 'Unit 5']);
    expect(await shownClasses(page, 'HPF')).toEqual([]);
    expect(await shownClasses(page, 'Freehand')).toEqual([]);

    // Number of Anatomical Segments: one name input per segment.
    await form.getByLabel('Number of Anatomical Segments', { exact: true }).fill(String(SEGMENTS.length));
    await form.getByLabel('Segment 2 name', { exact: true }).waitFor();
    expect(await form.getByLabel(/^Segment \d+ name$/).count()).toBe(SEGMENTS.length);
    for (const [i, segment] of SEGMENTS.entries()) {
      await form.getByLabel(`Segment ${i + 1} name`, { exact: true }).fill(segment);
    }

    expect(await saveButton(page).isDisabled()).toBe(true); // no modality yet
    // Not touched yet, so no red message: Save names the field instead (issue 20).
    expect(await page.getByRole('status', { name: 'Why Save is disabled' }).textContent()).toBe(
      '1 field needs attention: Modality',
    );
    await setChecked(form.getByRole('checkbox', { name: 'Histopathology', exact: true }), true);
    await eventually(() => saveButton(page).isEnabled()).toBe(true);
    expect(await form.locator('.lamina-field-errors').count()).toBe(0);

    await screenshotForm(page, 'study-config');

    const id = await saveAndLandOnStudyPage(page);
    await pageHeading(page, name).waitFor();
    expect(await page.getByRole('button', { name: 'Edit Study', exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.lamina-hold-banner').count()).toBe(0);
    celiacStudy = { id, name };

    // What the server stored, read with the study admin's own session.
    const { status, study } = await fetchStudy(page, id);
    expect(status).toBe(200);
    expect(study).toMatchObject({
      id,
      name,
      sponsor: 'Gluten Free Pharma',
      indications: ['CELIAC_DISEASE'],
      segments: SEGMENTS.length,
      anatomicalSegments: SEGMENTS,
      modality: ['HISTOPATHOLOGY'],
      onHold: false,
    });
    expect(classesOf(study!.pointClasses)).toEqual(expectedDefaults(CELIAC_DEFAULT_POINT_CLASSES));
    expect(classesOf(study!.multilineClasses)).toEqual(expectedDefaults(CELIAC_DEFAULT_LINE_CLASSES));
    // The spec's colours, literally (not only the domain constants the form used).
    expect(Object.fromEntries(study!.pointClasses.map((c) => [c.name, c.color.toUpperCase()]))).toEqual({
      Enterocyte: '#FF9F00',
      IEL: '#87FF01',
    });
    expect(Object.fromEntries(study!.multilineClasses.map((c) => [c.name, c.color.toUpperCase()]))).toEqual({
      'Unit 1': '#87FF01',
      'Unit 2': '#FF001E',
      'Unit 3': '#FF9F00',
      'Unit 4': '#FDEB03',
      'Unit 5': '#013BFA',
    });
    for (const c of [...study!.pointClasses, ...study!.multilineClasses]) {
      expect(c).toMatchObject({ enabled: true, deleted: false, count: 0 });
    }
    expect(study!.pointClasses.map((c) => c.type)).toEqual(['POINT', 'POINT']);
    expect(new Set(study!.multilineClasses.map((c) => c.type))).toEqual(new Set(['MULTILINE']));
    expect(study!.hpfClasses).toEqual([]);
    expect(study!.freehandClasses).toEqual([]);
  });

  test('studyadmin edits the study: each change waits for its reason, then puts it on hold', async ({ page }) => {
    await loginViaUi(page, 'studyadmin');
    await waitForPath(page, '/studies');
    // Independent of the first test when it is run alone (or failed): a celiac study made through the API.
    const study =
      celiacStudy ??
      (await createStudyViaApi(page, {
        name: uniqueStudyName('E2E Celiac'),
        sponsor: 'Gluten Free Pharma',
        indications: ['CELIAC_DISEASE'],
        segments: 1,
        anatomicalSegments: ['Duodenum'],
        modality: ['HISTOPATHOLOGY'],
      }));
    const before = (await fetchStudy(page, study.id)).study!;
    expect(before.onHold).toBe(false);

    // 1. Sponsor: Save stays disabled until the sponsor's reason for change is entered.
    await openEditForm(page, study);
    const form = settingsForm(page);
    expect(await page.getByRole('tab', { name: 'Users' }).isVisible()).toBe(true);
    expect(await saveButton(page).isDisabled()).toBe(true); // nothing changed yet
    expect(await form.getByRole('textbox', { name: /^Reason for change/ }).count()).toBe(0);
    expect(await form.getByLabel('Sponsor', { exact: true }).inputValue()).toBe(before.sponsor ?? '');

    const sponsor = 'Gluten Free Pharma Holdings';
    await form.getByLabel('Sponsor', { exact: true }).fill(sponsor);
    const sponsorReason = form.getByRole('textbox', { name: 'Reason for change: Sponsor', exact: true });
    await sponsorReason.waitFor();
    // Only the changed field asks for a reason.
    expect(await form.getByRole('textbox', { name: /^Reason for change/ }).count()).toBe(1);
    expect(await form.getByText(MESSAGES.reasonForChangeRequired, { exact: true }).isVisible()).toBe(true);
    expect(await saveButton(page).isDisabled()).toBe(true);
    await sponsorReason.fill('   ');
    expect(await saveButton(page).isDisabled()).toBe(true); // blank is no reason
    await sponsorReason.fill('Sponsor merged into its holding company');
    await eventually(() => saveButton(page).isEnabled()).toBe(true);
    expect(await form.getByText(MESSAGES.reasonForChangeRequired, { exact: true }).count()).toBe(0);
    await screenshotForm(page, 'study-config-edit');

    expect(await saveAndLandOnStudyPage(page)).toBe(study.id);
    await pageHeading(page, study.name).waitFor();
    const afterSponsor = (await fetchStudy(page, study.id)).study!;
    expect(afterSponsor.sponsor).toBe(sponsor);
    expect(afterSponsor.onHold).toBe(false);
    // Nothing else changed; the celiac classes are still the defaults.
    expect(afterSponsor).toMatchObject({
      name: study.name,
      indications: before.indications,
      anatomicalSegments: before.anatomicalSegments,
      modality: before.modality,
    });
    expect(classesOf(afterSponsor.pointClasses)).toEqual(classesOf(before.pointClasses));
    expect(classesOf(afterSponsor.multilineClasses)).toEqual(classesOf(before.multilineClasses));

    // 2. On hold: Save waits for the hold reason and for the status' reason for change.
    await openEditForm(page, study);
    expect(await form.getByLabel('Sponsor', { exact: true }).inputValue()).toBe(sponsor);
    const onHold = form.getByRole('checkbox', { name: 'On Hold', exact: true });
    expect(await onHold.isChecked()).toBe(false);
    await setChecked(onHold, true);
    const holdReason = form.getByLabel('On Hold Reason', { exact: true });
    await holdReason.waitFor();
    const statusReason = form.getByRole('textbox', { name: 'Reason for change: On hold', exact: true });
    await statusReason.waitFor();
    expect(await form.getByText(STUDY_MESSAGES.onHoldReasonRequired, { exact: true }).isVisible()).toBe(true);
    expect(await saveButton(page).isDisabled()).toBe(true);

    const reason = `Drug supply paused ${Date.now()}`;
    await holdReason.fill(reason);
    await eventually(() => form.getByText(STUDY_MESSAGES.onHoldReasonRequired, { exact: true }).count()).toBe(0);
    expect(await form.getByText(`${reason.length}/178`, { exact: true }).isVisible()).toBe(true);
    expect(await saveButton(page).isDisabled()).toBe(true); // the reason for change is still missing
    await statusReason.fill('Sponsor paused dosing');
    await eventually(() => saveButton(page).isEnabled()).toBe(true);
    // Clearing the hold reason disables Save again.
    await holdReason.fill('');
    await eventually(() => saveButton(page).isDisabled()).toBe(true);
    expect(await form.getByText(STUDY_MESSAGES.onHoldReasonRequired, { exact: true }).isVisible()).toBe(true);
    await holdReason.fill(reason);
    await eventually(() => saveButton(page).isEnabled()).toBe(true);

    expect(await saveAndLandOnStudyPage(page)).toBe(study.id);
    await pageHeading(page, study.name).waitFor();
    const banner = page.locator('.lamina-hold-banner');
    await banner.waitFor();
    expect((await banner.innerText()).trim()).toBe(`On hold ${reason}`);

    const held = (await fetchStudy(page, study.id)).study!;
    expect(held).toMatchObject({ onHold: true, onHoldReason: reason, sponsor });

    // The studies list: status 'On hold', the reason as its tooltip.
    await page.goto(appUrl('/studies'));
    await pageHeading(page, 'Studies').waitFor();
    await page.getByRole('searchbox', { name: 'Search by name' }).fill(study.name);
    const table = page.getByRole('table', { name: 'Studies' });
    await eventually(() => table.getByRole('row').filter({ hasText: study.name }).count()).toBe(1);
    await eventually(() => table.locator('tbody tr').count()).toBe(1);
    const row = table.getByRole('row').filter({ hasText: study.name });
    const status = row.getByText('On hold', { exact: true });
    expect(await status.isVisible()).toBe(true);
    expect(await row.getByText('Active', { exact: true }).count()).toBe(0);
    await status.hover();
    const tooltip = page.locator('.bp6-tooltip').filter({ hasText: reason });
    await tooltip.waitFor();
    expect((await tooltip.innerText()).trim()).toBe(reason);
  });
});
