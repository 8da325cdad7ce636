import { REPORT_MESSAGES, ROLE_PERMISSIONS, type RoleName, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeStudyRow, makeUserAs, makeUserRow } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { ReportsPage } from './ReportsPage';

const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone;

const studies = [
  makeStudyRow({ id: 3, name: 'GUT-301', indications: ['CROHNS_DISEASE'] }),
  makeStudyRow({ id: 4, name: 'CELIAC-7', indications: ['CELIAC_DISEASE'] }),
];
const users = [makeUserRow({ id: 11, username: 'reader2', firstName: 'Rita', lastName: 'Reader' })];

const as = (role: RoleName, overrides: Partial<UserInfo> = {}) =>
  makeUserAs(role, [...ROLE_PERMISSIONS[role]], overrides);
const sysadmin = () => as('SystemAdmin', { isSystemAdmin: true });

interface FileReply {
  status?: number;
  body: BodyInit | null;
  headers?: Record<string, string>;
}

/**
 * The lists through mockFetch; the file routes (/api/audit-trail, /api/report/…) answer `file`,
 * recorded in `files` (path and query).
 */
function renderPage(user: UserInfo, file: (url: URL) => FileReply = () => okFile('a,b\r\n')) {
  const { fetchMock } = mockFetch({
    'GET /api/studies/list': { body: { success: true, studies, total: studies.length } },
    'GET /api/users': { body: { success: true, users, total: users.length } },
  });
  const files: URL[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input, 'http://localhost');
      if (!url.pathname.startsWith('/api/audit-trail') && !url.pathname.startsWith('/api/report'))
        return fetchMock(input, init);
      files.push(url);
      const reply = file(url);
      return Promise.resolve(new Response(reply.body, { status: reply.status ?? 200, headers: reply.headers }));
    }),
  );
  renderWithProviders(<ReportsPage />, { path: '/reports', user });
  return { files };
}

function okFile(body: string, fileName = 'GUT-301_query_05-Mar-2026.csv'): FileReply {
  return {
    body,
    headers: { 'Content-Type': 'text/csv', 'Content-Disposition': `attachment; filename="${fileName}"` },
  };
}

const section = (name: string) => screen.getByRole('region', { name });
/** The report sections' titles, in page order (the page itself is the region 'Reports'). */
const sectionTitles = () =>
  screen
    .getAllByRole('region')
    .map((r) => r.getAttribute('aria-label'))
    .filter((name) => name !== null);

/** Clicks an option of the open type-ahead list, where a user clicks: on its text. */
async function clickOption(name: string) {
  fireEvent.click(within(await screen.findByRole('option', { name })).getByText(name));
}

async function chooseStudy(region: HTMLElement, name: string) {
  const input = within(region).getByRole('combobox', { name: /Study/ });
  fireEvent.focus(input);
  await clickOption(name);
  await waitFor(() => expect((input as HTMLInputElement).value).toBe(name));
}

function typeDate(region: HTMLElement, label: 'Start date' | 'End date', value: string) {
  fireEvent.change(within(region).getByLabelText(label), { target: { value } });
}

afterEach(cleanup);

let saved: string[];
beforeEach(() => {
  saved = [];
  vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:report'), revokeObjectURL: vi.fn() }));
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push(this.download);
  });
});

describe('Reports page: sections by permission (doc 1 §2.9, §6)', () => {
  it('a system admin sees every section in the order of the spec, with the user filter', async () => {
    renderPage(sysadmin());
    await screen.findByRole('heading', { name: 'Reports' });
    expect(sectionTitles()).toEqual([
      'Audit Trail',
      'Image Details Report',
      'Sponsor Image Details Report',
      'HPF Annotations Report',
      'Celiac Annotations Report',
      'Query Report',
      'Access Report',
      'Read Outcomes Report',
    ]);
    const audit = section('Audit Trail');
    within(audit).getByRole('button', { name: 'Download PDF' });
    within(audit).getByRole('button', { name: 'Download CSV' });
    within(audit).getByRole('combobox', { name: 'User' });
  });

  it('a sponsor sees the two image details sections and the read outcomes, without the user filter', async () => {
    renderPage(as('SPONSOR'));
    await screen.findByRole('heading', { name: 'Reports' });
    expect(sectionTitles()).toEqual(['Image Details Report', 'Sponsor Image Details Report', 'Read Outcomes Report']);
    expect(screen.queryByRole('combobox', { name: 'User' })).toBeNull();
  });

  it('a project manager downloads the audit trail as PDF only', async () => {
    renderPage(as('PM'));
    const audit = await screen.findByRole('region', { name: 'Audit Trail' });
    within(audit).getByRole('button', { name: 'Download PDF' });
    expect(within(audit).queryByRole('button', { name: 'Download CSV' })).toBeNull();
  });

  it('a role without any report permission is told so', async () => {
    renderPage(makeUserAs('ISC', ['R_ViewReportsTab']));
    await screen.findByText('No reports');
    expect(sectionTitles()).toEqual([]);
  });
});

describe('Reports page: study required, Global for system admins (doc 1 §5)', () => {
  it('a data manager must choose a study first, and the button says why', async () => {
    renderPage(as('DM'));
    const images = await screen.findByRole('region', { name: 'Image Details Report' });
    const button = within(images).getByRole('button', { name: 'Download CSV' });
    expect(button).toHaveProperty('disabled', true);
    within(images).getByText(REPORT_MESSAGES.studyRequired);
    await chooseStudy(images, 'GUT-301');
    expect(button).toHaveProperty('disabled', false);
  });

  it('a system admin downloads the image details Global (no study), but not the other reports', async () => {
    const { files } = renderPage(sysadmin(), () => okFile('Study,Image\r\n', 'Global_image-details_05-Mar-2026.csv'));
    const images = await screen.findByRole('region', { name: 'Image Details Report' });
    expect(
      within(section('Sponsor Image Details Report')).getByRole('button', { name: 'Download CSV' }),
    ).toHaveProperty('disabled', false);
    expect(within(section('Query Report')).getByRole('button', { name: 'Download CSV' })).toHaveProperty(
      'disabled',
      true,
    );
    fireEvent.click(within(images).getByRole('button', { name: 'Download CSV' }));
    await waitFor(() => expect(saved).toEqual(['Global_image-details_05-Mar-2026.csv']));
    expect(files[0]?.pathname).toBe('/api/report/image-details');
    expect(Object.fromEntries(files[0]?.searchParams ?? [])).toEqual({ tz: TZ });
  });

  it('the audit trail needs a study except for a system admin', async () => {
    renderPage(as('ISC'));
    const audit = await screen.findByRole('region', { name: 'Audit Trail' });
    expect(within(audit).getByRole('button', { name: 'Download PDF' })).toHaveProperty('disabled', true);
  });

  it('the celiac report offers only celiac studies', async () => {
    renderPage(as('DM'));
    const celiac = await screen.findByRole('region', { name: 'Celiac Annotations Report' });
    fireEvent.focus(within(celiac).getByRole('combobox', { name: 'Celiac study' }));
    await screen.findByRole('option', { name: 'CELIAC-7' });
    expect(screen.queryByRole('option', { name: 'GUT-301' })).toBeNull();
  });
});

describe('Reports page: dates (doc 1 §5, §9: DD-MMM-YYYY)', () => {
  it('an invalid date disables the download and says why; a real one enables it again', async () => {
    renderPage(sysadmin());
    const images = await screen.findByRole('region', { name: 'Image Details Report' });
    const button = within(images).getByRole('button', { name: 'Download CSV' });
    typeDate(images, 'Start date', '31-Feb-2026');
    expect(button).toHaveProperty('disabled', true);
    expect(within(images).getAllByText(REPORT_MESSAGES.invalidDate).length).toBeGreaterThan(0);
    typeDate(images, 'Start date', '2026-03-01');
    expect(button).toHaveProperty('disabled', true);
    typeDate(images, 'Start date', '01-mar-2026');
    expect(button).toHaveProperty('disabled', false);
    expect(within(images).queryByText(REPORT_MESSAGES.invalidDate)).toBeNull();
  });

  it('an end date before the start date disables the download', async () => {
    renderPage(sysadmin());
    const images = await screen.findByRole('region', { name: 'Image Details Report' });
    typeDate(images, 'Start date', '10-Mar-2026');
    typeDate(images, 'End date', '09-Mar-2026');
    expect(within(images).getByRole('button', { name: 'Download CSV' })).toHaveProperty('disabled', true);
    expect(within(images).getAllByText(REPORT_MESSAGES.endBeforeStart).length).toBeGreaterThan(0);
    // The same day is a one-day range.
    typeDate(images, 'End date', '10-Mar-2026');
    expect(within(images).getByRole('button', { name: 'Download CSV' })).toHaveProperty('disabled', false);
  });

  it('the calendar writes the picked day as DD-MMM-YYYY', async () => {
    renderPage(sysadmin());
    const images = await screen.findByRole('region', { name: 'Image Details Report' });
    const picker = within(images).getByLabelText('Start date').parentElement?.querySelector('input[type="date"]');
    if (!picker) throw new Error('no date picker');
    fireEvent.change(picker, { target: { value: '2026-03-05' } });
    expect(within(images).getByLabelText<HTMLInputElement>('Start date').value).toBe('05-Mar-2026');
  });
});

describe('Reports page: the requests (doc 1 §7)', () => {
  it('a report of a study carries the dates, the time zone and the user', async () => {
    const { files } = renderPage(sysadmin());
    const query = await screen.findByRole('region', { name: 'Query Report' });
    await chooseStudy(query, 'GUT-301');
    const user = within(query).getByRole('combobox', { name: 'User' });
    fireEvent.focus(user);
    await clickOption('Rita Reader (reader2)');
    typeDate(query, 'Start date', '01-Mar-2026');
    typeDate(query, 'End date', '31-Mar-2026');
    fireEvent.click(within(query).getByRole('button', { name: 'Download CSV' }));
    await waitFor(() => expect(saved).toEqual(['GUT-301_query_05-Mar-2026.csv']));
    expect(files[0]?.pathname).toBe('/api/report/3/query');
    expect(Object.fromEntries(files[0]?.searchParams ?? [])).toEqual({
      startDate: '01-Mar-2026',
      endDate: '31-Mar-2026',
      userId: '11',
      tz: TZ,
    });
  });

  it('the read outcomes report (issue 30): a sponsor chooses the study, then downloads it', async () => {
    const { files } = renderPage(as('SPONSOR'), () => okFile('a,b\r\n', 'GUT-301_read-outcomes_05-Mar-2026.csv'));
    const outcomes = await screen.findByRole('region', { name: 'Read Outcomes Report' });
    const button = within(outcomes).getByRole('button', { name: 'Download CSV' });
    expect(button).toHaveProperty('disabled', true);
    within(outcomes).getByText(REPORT_MESSAGES.studyRequired);
    await chooseStudy(outcomes, 'GUT-301');
    fireEvent.click(button);
    await waitFor(() => expect(saved).toEqual(['GUT-301_read-outcomes_05-Mar-2026.csv']));
    expect(files[0]?.pathname).toBe('/api/report/3/read-outcomes');
  });

  it('the audit trail asks for the format and the study; keyboard chooses the study', async () => {
    const { files } = renderPage(as('DM'), () =>
      okFile('%PDF-1.7\n', 'GUT-301_dm_audit-trail_05-Mar-2026_1015_CET.pdf'),
    );
    const audit = await screen.findByRole('region', { name: 'Audit Trail' });
    const input = within(audit).getByRole('combobox', { name: 'Study' });
    fireEvent.focus(input);
    await screen.findByRole('option', { name: 'GUT-301' });
    fireEvent.keyDown(input, { key: 'ArrowDown' });
    fireEvent.keyDown(input, { key: 'ArrowUp' });
    fireEvent.keyDown(input, { key: 'Enter' });
    expect((input as HTMLInputElement).value).toBe('GUT-301');
    fireEvent.click(within(audit).getByRole('button', { name: 'Download CSV' }));
    await waitFor(() => expect(saved).toEqual(['GUT-301_dm_audit-trail_05-Mar-2026_1015_CET.pdf']));
    expect(files[0]?.pathname).toBe('/api/audit-trail');
    expect(Object.fromEntries(files[0]?.searchParams ?? [])).toEqual({ reportFormat: 'csv', studyId: '3', tz: TZ });
  });

  it('shows the bytes received while the file streams', async () => {
    let push: ((text: string) => void) | undefined;
    let close: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => controller.enqueue(new TextEncoder().encode(text));
        close = () => controller.close();
      },
    });
    renderPage(sysadmin(), () => ({
      body,
      headers: { 'Content-Disposition': 'attachment; filename="Global_image-details_05-Mar-2026.csv"' },
    }));
    const images = await screen.findByRole('region', { name: 'Image Details Report' });
    fireEvent.click(within(images).getByRole('button', { name: 'Download CSV' }));
    push?.('x'.repeat(2500));
    expect((await within(images).findByRole('status')).textContent).toMatch(/2\.5 KB received/);
    within(images).getByRole('progressbar', { name: /downloading/ });
    close?.();
    await waitFor(() => expect(saved).toEqual(['Global_image-details_05-Mar-2026.csv']));
    expect(within(images).queryByRole('progressbar', { name: /downloading/ })).toBeNull();
  });
});

describe('Reports page: errors, each in its own section (doc 1 §8)', () => {
  it("the server's message, in the section that failed", async () => {
    renderPage(as('DM'), () => ({
      status: 400,
      body: JSON.stringify({ success: false, message: REPORT_MESSAGES.celiacOnly }),
      headers: { 'Content-Type': 'application/json' },
    }));
    const hpf = await screen.findByRole('region', { name: 'HPF Annotations Report' });
    await chooseStudy(hpf, 'GUT-301');
    fireEvent.click(within(hpf).getByRole('button', { name: 'Download CSV' }));
    expect((await within(hpf).findByRole('alert')).textContent).toBe(REPORT_MESSAGES.celiacOnly);
    expect(within(section('Query Report')).queryByRole('alert')).toBeNull();
    expect(saved).toEqual([]);
  });

  it("without a message of the server's, the spec's 'Unable to fetch report {type}' and 'Unable to fetch audit trail {format}'", async () => {
    renderPage(sysadmin(), () => ({ status: 500, body: null }));
    const access = await screen.findByRole('region', { name: 'Access Report' });
    await chooseStudy(access, 'GUT-301');
    fireEvent.click(within(access).getByRole('button', { name: 'Download CSV' }));
    expect((await within(access).findByRole('alert')).textContent).toBe('Unable to fetch report access');
    const audit = section('Audit Trail');
    fireEvent.click(within(audit).getByRole('button', { name: 'Download PDF' }));
    expect((await within(audit).findByRole('alert')).textContent).toBe('Unable to fetch audit trail pdf');
  });
});
