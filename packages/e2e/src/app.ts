import {
  CSRF_HEADER,
  ROLE_PERMISSIONS,
  roleByName,
  visibleNavTabs,
  type RoleName,
  type StudyCreate,
  type StudyView,
} from '@lamina/domain';
import type { APIResponse, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { appUrl, demoPassword } from './env.js';

/** The demo account of each role and the role it works as right after login. */
export interface RoleAccount {
  username: string;
  role: RoleName;
  /**
   * Where login (to the default /studies) ends: /accessDenied without S_Main_ViewStudyPage, or the
   * assigned cases for a reader without it (NOTO, issue 20).
   */
  landsOn: '/studies' | '/accessDenied' | '/assigned';
}

export const ROLE_ACCOUNTS: readonly RoleAccount[] = [
  { username: 'sysadmin', role: 'SystemAdmin', landsOn: '/studies' },
  { username: 'studyadmin', role: 'StudyAdmin', landsOn: '/studies' },
  { username: 'isc', role: 'ISC', landsOn: '/studies' },
  { username: 'dm', role: 'DM', landsOn: '/studies' },
  { username: 'pm', role: 'PM', landsOn: '/studies' },
  { username: 'sponsor', role: 'SPONSOR', landsOn: '/studies' },
  { username: 'uploader', role: 'UPLOADER', landsOn: '/studies' },
  { username: 'labtech', role: 'LabTech', landsOn: '/studies' },
  { username: 'reader1', role: 'CR', landsOn: '/studies' },
  { username: 'site', role: 'Site', landsOn: '/studies' },
  { username: 'lis', role: 'LIS', landsOn: '/accessDenied' },
  { username: 'noto', role: 'NOTO', landsOn: '/assigned' },
];

/** Tab labels the domain's permission map gives a role. */
export function expectedTabLabels(role: RoleName): string[] {
  return visibleNavTabs(ROLE_PERMISSIONS[role]).map((tab) => tab.label);
}

export function displayNameOf(role: RoleName): string {
  return roleByName(role).displayName;
}

/** Opens /login (with `?redirect=` when given) and submits the form; does not wait for the outcome. */
export async function submitLogin(
  page: Page,
  username: string,
  options: { password?: string; redirect?: string; open?: boolean } = {},
): Promise<void> {
  if (options.open !== false) {
    const query = options.redirect === undefined ? '' : `?redirect=${encodeURIComponent(options.redirect)}`;
    await page.goto(appUrl(`/login${query}`));
  }
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(options.password ?? demoPassword());
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
}

/**
 * Logs in through the login page and waits until the browser has left /login. Guard redirects
 * after that (to /welcome, /accessDenied) are the caller's to wait for.
 */
export async function loginViaUi(
  page: Page,
  username: string,
  options: { password?: string; redirect?: string; open?: boolean } = {},
): Promise<void> {
  await submitLogin(page, username, options);
  await page.waitForURL((url) => url.pathname !== '/login');
}

/** Waits until the browser is on `pathname` (any query string); times out otherwise. */
export async function waitForPath(page: Page, pathname: string): Promise<void> {
  await page.waitForURL((url) => url.pathname === pathname);
}

export function pathnameOf(page: Page): string {
  return new URL(page.url()).pathname;
}

/** The header's top navigation tabs (links in the "Main" navigation). */
export function navTabs(page: Page): Locator {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link');
}

/** Labels of the visible top navigation tabs, in display order. */
export async function visibleTabLabels(page: Page): Promise<string[]> {
  const labels = await navTabs(page).filter({ visible: true }).allInnerTexts();
  return labels.map((label) => label.trim());
}

export function workAsTag(page: Page): Locator {
  return page.getByTestId('work-as-role');
}

/** The header's work-as role text, or null while there is none. */
export async function workAsText(page: Page): Promise<string | null> {
  const tag = workAsTag(page);
  if ((await tag.count()) === 0) return null;
  return (await tag.first().innerText()).trim();
}

/**
 * `expect.poll` with the patience of a page that loads and may redirect once more: the value is
 * read again until it matches or 15 s have passed, then the assertion fails with the last value.
 */
export function eventually<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 15_000, interval: 100 });
}

/** The main content's page heading (the h2 of a page, e.g. "Studies"). */
export function pageHeading(page: Page, name: string): Locator {
  return page.getByRole('main').getByRole('heading', { level: 2, name, exact: true });
}

/** GET /api/users/info from inside the page's context (same cookies as the page). */
export async function fetchUserInfo(page: Page): Promise<APIResponse> {
  return page.request.get(appUrl('/api/users/info'), { headers: { Accept: 'application/json' } });
}

export interface UserInfoBody {
  username: string;
  registered: boolean;
  actions: string[];
  workAsRole: { id: number; name: RoleName; displayName: string } | null;
  roles: { id: number; name: RoleName; displayName: string }[];
}

export async function userInfo(page: Page): Promise<UserInfoBody> {
  const response = await fetchUserInfo(page);
  if (response.status() !== 200)
    throw new Error(`GET /api/users/info answered ${response.status()}: ${await response.text()}`);
  return (await response.json()) as UserInfoBody;
}

/** Opens the header's user menu and clicks one of its items. */
export async function chooseUserMenuItem(page: Page, item: 'Work As...' | 'Logout'): Promise<void> {
  await page.getByTestId('user-menu').click();
  await page.getByRole('menuitem', { name: item, exact: true }).click();
}

/**
 * Switches the work-as role through the API (PUT /api/users/workAs with the CSRF token), for
 * restoring state after a test; the tests themselves switch through the UI.
 */
export async function workAsViaApi(page: Page, role: RoleName): Promise<void> {
  const csrf = await page.request.get(appUrl('/api/auth/csrf'));
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const response = await page.request.put(appUrl('/api/users/workAs'), {
    headers: { [CSRF_HEADER]: csrfToken, Origin: new URL(appUrl('/')).origin },
    data: { roleId: roleByName(role).id },
  });
  if (!response.ok()) throw new Error(`PUT /api/users/workAs answered ${response.status()}: ${await response.text()}`);
}

/** Headers a mutating API call from the page's context needs: the session's CSRF token and a same-site Origin. */
export async function mutationHeaders(page: Page): Promise<Record<string, string>> {
  const csrf = await page.request.get(appUrl('/api/auth/csrf'));
  if (!csrf.ok()) throw new Error(`GET /api/auth/csrf answered ${csrf.status()}: ${await csrf.text()}`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  return { [CSRF_HEADER]: csrfToken, Origin: new URL(appUrl('/')).origin };
}

/** A study name no other test or earlier run uses, e.g. `E2E Celiac 1767000000000-ab12`. */
export function uniqueStudyName(prefix: string): string {
  return `${prefix} ${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * POST /api/studies from the page's context (its user needs S_Main_CreateStudy), for tests whose
 * subject is not the configuration form; answers the created study.
 */
export async function createStudyViaApi(page: Page, config: StudyCreate): Promise<StudyView> {
  const response = await page.request.post(appUrl('/api/studies'), {
    headers: await mutationHeaders(page),
    data: config,
  });
  if (response.status() !== 201)
    throw new Error(`POST /api/studies answered ${response.status()}: ${await response.text()}`);
  return ((await response.json()) as { study: StudyView }).study;
}

/** GET /api/studies/{id} with the page's cookies: the status and, on 200, the study view. */
export async function fetchStudy(
  page: Page,
  id: number,
): Promise<{ status: number; study: StudyView | null; body: unknown }> {
  const response = await page.request.get(appUrl(`/api/studies/${id}`), { headers: { Accept: 'application/json' } });
  const body: unknown = await response.json().catch(() => null);
  return { status: response.status(), study: response.status() === 200 ? (body as StudyView) : null, body };
}

/** Names of the studies GET /api/studies/list answers the page's user for a name search. */
export async function listedStudyNames(page: Page, name: string): Promise<string[]> {
  const response = await page.request.get(appUrl(`/api/studies/list?name=${encodeURIComponent(name)}`), {
    headers: { Accept: 'application/json' },
  });
  if (response.status() !== 200)
    throw new Error(`GET /api/studies/list answered ${response.status()}: ${await response.text()}`);
  return ((await response.json()) as { studies: { name: string }[] }).studies.map((s) => s.name);
}

/**
 * Ticks or clears a Blueprint checkbox the way a user does: by clicking its label (the styled
 * indicator covers the real input, so Playwright's check() cannot click it). Waits for the state.
 */
export async function setChecked(checkbox: Locator, checked: boolean): Promise<void> {
  if ((await checkbox.isChecked()) !== checked) await checkbox.locator('xpath=ancestor::label[1]').click();
  await eventually(() => checkbox.isChecked()).toBe(checked);
}

/** The demo study every demo account can reach. */
export const DEMO_STUDY = 'DEMO-UC-001';

/** The id of the demo study, as the signed-in user sees it. */
export async function demoStudyId(page: Page, name = DEMO_STUDY): Promise<number> {
  const response = await page.request.get(appUrl(`/api/studies/list?name=${encodeURIComponent(name)}`));
  const { studies } = (await response.json()) as { studies: { id: number; name: string }[] };
  const study = studies.find((s) => s.name.startsWith(name));
  if (!study) throw new Error(`The demo study ${name} is not visible`);
  return study.id;
}

/** Logs out through the user menu and waits for the login page. */
export async function logout(page: Page): Promise<void> {
  await chooseUserMenuItem(page, 'Logout');
  await waitForPath(page, '/login');
}

/**
 * Logged in as `account` (the uploader by default), the demo study's Images tab with the 'Upload
 * images' dialog open: where every slide-upload test starts.
 */
export async function openDemoUploadDialog(
  page: Page,
  account = 'uploader',
): Promise<{ studyId: number; table: Locator; dialog: Locator }> {
  await loginViaUi(page, account);
  await waitForPath(page, '/studies');
  const studyId = await demoStudyId(page);
  await page.goto(appUrl(`/studies/${studyId}/images`));
  const table = page.getByRole('table', { name: 'Images' });
  await table.waitFor();
  await page.getByRole('button', { name: 'Upload image' }).click();
  return { studyId, table, dialog: page.getByRole('dialog') };
}
