import { CASE_MESSAGES, ROLE_PERMISSIONS, type StudyCaseRow, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase, makeCaseRow, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { StudyCasesTab } from './StudyCasesTab';
import { scoredLabel } from './CaseReads';

beforeEach(() => setCsrfToken('token'));
afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const LABTECH = makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]);
const ISC = makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]);
const READER = makeUserAs('CR', [...ROLE_PERMISSIONS.CR]);
const STUDY = makeStudy({ id: 3, visitIds: ['SCREENING', 'WEEK 12'], labVisitIds: ['V1', 'V4'] });

function renderTab(rows: StudyCaseRow[], user: UserInfo, extra: Parameters<typeof mockFetch>[0] = {}) {
  const mock = mockFetch({
    'GET /api/studies/3/cases': { body: { success: true, cases: rows, total: rows.length } },
    'GET /api/studies/3/users': { body: { success: true, readers: [] } },
    'GET /api/users/suggest-readers': { body: { success: true, readers: [] } },
    'GET /api/studies/3/cases/images': { body: { success: true, images: [] } },
    ...extra,
  });
  renderRoutes(
    [
      { path: '/studies/3/cases', element: <StudyCasesTab study={STUDY} /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: '/studies/3/cases', user },
  );
  return mock;
}

const lastListQuery = (calls: ReturnType<typeof mockFetch>['calls']) =>
  Object.fromEntries(calls.filter((c) => c.path === '/api/studies/3/cases').at(-1)!.query);

describe('study page, Cases tab (doc 2 §2.4)', () => {
  it('lists cases newest first with the columns the user may see, two readers then an ellipsis', async () => {
    window.localStorage.setItem('caseRowsPerPage', '50');
    const { calls } = renderTab([makeCaseRow()], LABTECH);
    const table = await screen.findByRole('table', { name: 'Cases' });
    await within(table).findByText('ENDO-40');
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((th) => th.textContent),
    ).toEqual([
      'Endo Procedure ID',
      'Histo Procedure ID',
      'Created',
      'Subject ID',
      'Visit ID',
      'Status',
      'QC user',
      'Assigned readers',
      'Images',
      'Queries',
      'Actions',
    ]);
    expect(lastListQuery(calls)).toEqual({ page: '1', pageSize: '50', sort: '-createdAt' });
    within(table).getByText('Rita Reader, Ravi Reader, …');
    fireEvent.click(within(table).getByText('ENDO-40'));
    await waitFor(() => expect(screen.getByTestId('location').textContent).toBe('/studies/3/cases/40'));
  });

  it('a central reader sees neither the status filter, the blinded columns, readers nor queries', async () => {
    renderTab(
      [makeCaseRow({ subjectId: null, visitId: null, siteId: null, assignedReaders: null, openQueries: null })],
      READER,
    );
    const table = await screen.findByRole('table', { name: 'Cases' });
    await within(table).findByText('ENDO-40');
    const headers = within(table)
      .getAllByRole('columnheader')
      .map((th) => th.textContent);
    for (const hidden of ['Subject ID', 'Visit ID', 'QC user', 'Assigned readers', 'Queries'])
      expect(headers).not.toContain(hidden);
    expect(screen.queryByRole('combobox', { name: 'Status' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Create case' })).toBeNull();
  });

  it('filters by procedure ID, status and assignee; a new filter starts on page 1', async () => {
    const { calls } = renderTab([makeCaseRow()], ISC, {
      'GET /api/studies/3/users': {
        body: {
          success: true,
          readers: [
            {
              id: 9,
              username: 'reader1',
              firstName: 'Rita',
              lastName: 'Reader',
              displayName: 'Rita Reader',
              numReadCases: 0,
              numTotalCases: 1,
              readAt: null,
            },
          ],
        },
      },
    });
    await screen.findByText('ENDO-40');
    fireEvent.change(screen.getByRole('combobox', { name: 'Status' }), { target: { value: 'PENDING_QC' } });
    await waitFor(() => expect(lastListQuery(calls)).toMatchObject({ status: 'PENDING_QC', page: '1' }));
    await screen.findByRole('option', { name: 'Assigned to Rita Reader' });
    fireEvent.change(screen.getByRole('combobox', { name: 'Assignee' }), { target: { value: '9' } });
    await waitFor(() => expect(lastListQuery(calls)).toMatchObject({ assignee: '9' }));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search by Procedure ID' }), { target: { value: 'ENDO' } });
    await waitFor(() => expect(lastListQuery(calls)).toMatchObject({ procId: 'ENDO' }));
  });

  it('Revert status: offered only with earlier statuses; asks the spec’s confirmation; sends value and reason', async () => {
    const { calls } = renderTab(
      [
        makeCaseRow({
          id: 41,
          procId: 'ENDO-41',
          status: 'PROCESSED',
          prevWorkflowStatuses: ['PENDING_LAB_QC', 'PENDING_QC'],
        }),
        makeCaseRow({ id: 42, procId: 'ENDO-42' }),
      ],
      LABTECH,
      {
        'PATCH /api/cases/41/status/back': {
          body: {
            success: true,
            message: CASE_MESSAGES.reverted,
            case: makeCase({ id: 41, procId: 'ENDO-41', status: 'PENDING_QC' }),
          },
        },
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for case ENDO-42' }));
    await screen.findByRole('menuitem', { name: 'Edit' });
    expect(screen.queryByRole('menuitem', { name: 'Revert status' })).toBeNull();
    fireEvent.keyDown(document.activeElement ?? document.body, { key: 'Escape' });

    fireEvent.click(screen.getByRole('button', { name: 'Actions for case ENDO-41' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Revert status' }));
    const dialog = await screen.findByRole('dialog', { name: 'Revert Status' });
    const select = within(dialog).getByRole('combobox', { name: 'Set the status back to' });
    expect(
      within(select)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['Choose a status', 'Pending Lab QC', 'Pending QC']);
    fireEvent.change(select, { target: { value: 'PENDING_LAB_QC' } });
    const next = within(dialog).getByRole('button', { name: 'Continue' });
    expect((next as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'Blurry slide' } });
    fireEvent.click(next);
    await screen.findByText("Are you sure you want to set the status of case 'ENDO-41' back to 'Pending Lab QC'?");
    fireEvent.click(screen.getByRole('button', { name: 'Revert' }));
    await waitFor(() =>
      expect(calls.find((c) => c.path === '/api/cases/41/status/back')?.body).toEqual({
        value: 'PENDING_LAB_QC',
        reason: 'Blurry slide',
      }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Revert Status' })).toBeNull());
  });

  it('Create case: waits for a valid Endo Procedure ID and Subject ID; the server’s refusal shows in red', async () => {
    const { calls } = renderTab([], LABTECH, {
      'POST /api/cases': { status: 409, body: { success: false, message: CASE_MESSAGES.duplicateProcId } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Create case' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create Case' });
    const create = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Create case' });
    expect(create.disabled).toBe(true);
    const procId = within(dialog).getByLabelText('Endo Procedure ID');
    fireEvent.change(procId, { target: { value: 'ENDO<1>' } });
    fireEvent.blur(procId);
    await within(dialog).findByText('Endo Procedure ID must be alphanumeric');
    fireEvent.change(procId, { target: { value: 'ENDO-1' } });
    fireEvent.change(within(dialog).getByLabelText('Subject ID'), { target: { value: 'S-1' } });
    expect(
      within(dialog)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toContain('SCREENING → V1');
    fireEvent.change(within(dialog).getByLabelText('Visit ID'), { target: { value: 'WEEK 12' } });
    await waitFor(() => expect(create.disabled).toBe(false));
    fireEvent.click(create);
    expect(await within(dialog).findByRole('alert')).toHaveProperty('textContent', CASE_MESSAGES.duplicateProcId);
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      studyId: 3,
      procId: 'ENDO-1',
      subjectId: 'S-1',
      siteId: null,
      visitId: 'WEEK 12',
      readers: [],
      images: [],
    });
  });

  it('Edit case: a changed field asks its reason; only changed fields are sent', async () => {
    const existing = makeCase({ id: 43, procId: 'ENDO-43', subjectId: 'S-OLD' });
    const { calls } = renderTab([makeCaseRow({ id: 43, procId: 'ENDO-43' })], LABTECH, {
      'GET /api/cases/43': { body: { success: true, message: '', case: existing } },
      'PATCH /api/cases/43': {
        body: { success: true, message: CASE_MESSAGES.edited, case: { ...existing, subjectId: 'S-NEW' } },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for case ENDO-43' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Edit' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Case' });
    const save = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Save' });
    expect(save.disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText('Subject ID'), { target: { value: 'S-NEW' } });
    const reason = await within(dialog).findByLabelText('Reason for change: Subject ID');
    expect(save.disabled).toBe(true);
    // Save says why it waits (issue 20).
    expect(within(dialog).getByRole('status', { name: 'Why Save is disabled' }).textContent).toBe(
      '1 change needs a reason: Subject ID',
    );
    fireEvent.change(reason, { target: { value: 'Typo' } });
    await waitFor(() => expect(save.disabled).toBe(false));
    fireEvent.click(save);
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({
        subjectId: { value: 'S-NEW', reasonForChange: 'Typo' },
      }),
    );
  });

  it('a reader’s own read shows as "Scored {date}" (issue 29)', async () => {
    const readAt = '2025-03-05T09:30:00.000Z';
    renderTab(
      [
        makeCaseRow({ id: 44, procId: 'ENDO-44', status: 'PROCESSED', myReadAt: readAt }),
        makeCaseRow({ id: 45, procId: 'ENDO-45', status: 'PROCESSED', myReadAt: null }),
      ],
      READER,
    );
    const table = await screen.findByRole('table', { name: 'Cases' });
    const scored = (await within(table).findByText('ENDO-44')).closest('tr')!;
    within(scored).getByText(scoredLabel(readAt));
    within(scored).getByText('Processed');
    const notScored = within(table).getByText('ENDO-45').closest('tr')!;
    within(notScored).getByText('Processed');
    expect(within(notScored).queryByText(/^Scored/)).toBeNull();
  });
});
