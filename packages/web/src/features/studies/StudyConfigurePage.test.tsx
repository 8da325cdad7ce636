import { MESSAGES, roleByName, STUDY_MESSAGES, type RoleName, type StudyView } from '@lamina/domain';
import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeClass, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { StudyConfigurePage } from './StudyConfigurePage';

const ADMIN = makeUserAs('StudyAdmin', ['S_Main_ViewStudyPage', 'S_Main_EditStudy', 'S_Main_CreateStudy']);

beforeEach(() => setCsrfToken('token'));
afterEach(() => cleanup());

function renderConfigure(path: string, replies: Parameters<typeof mockFetch>[0] = {}) {
  const mock = mockFetch(replies);
  renderRoutes(
    [
      { path: '/studies/:id/configure/:tab?', element: <StudyConfigurePage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path, user: ADMIN },
  );
  return mock;
}

function renderEdit(study: StudyView, replies: Parameters<typeof mockFetch>[0] = {}) {
  return renderConfigure(`/studies/${study.id}/configure/settings`, {
    [`GET /api/studies/${study.id}`]: { body: study },
    ...replies,
  });
}

const saveButton = () => screen.getByRole('button', { name: 'Save Changes' });
const isDisabled = (el: HTMLElement) => el.hasAttribute('disabled');
const textbox = (name: string) => screen.getByRole('textbox', { name });
const type = (el: HTMLElement, value: string) => fireEvent.change(el, { target: { value } });
const checkbox = (name: string) => screen.getByRole<HTMLInputElement>('checkbox', { name });

describe('create a study', () => {
  it('shows the rule messages and enables Save once every rule passes, then creates and opens the study', async () => {
    const { calls } = renderConfigure('/studies/new/configure', {
      'POST /api/studies': {
        status: 201,
        body: { success: true, message: STUDY_MESSAGES.studyCreated, study: makeStudy({ id: 77 }) },
      },
    });
    screen.getByRole('heading', { level: 2, name: 'Create Study' });
    expect(screen.queryByRole('tab', { name: 'Users' })).toBeNull();
    // No red messages on an empty form (issue 20): Save says why it is disabled, and its links lead
    // to the fields, whose messages then show.
    for (const message of [STUDY_MESSAGES.nameRequired, STUDY_MESSAGES.indicationRequired]) {
      expect(screen.queryByText(message)).toBeNull();
    }
    expect(isDisabled(saveButton())).toBe(true);
    const why = screen.getByRole('status', { name: 'Why Save is disabled' });
    expect(why.textContent).toBe('4 fields need attention: Name, Indications, Number of Anatomical Segments, Modality');
    fireEvent.click(within(why).getByRole('button', { name: 'Name' }));
    screen.getByText(STUDY_MESSAGES.nameRequired);
    expect(screen.queryByText(STUDY_MESSAGES.modalityRequired)).toBeNull();
    expect(screen.queryByRole('textbox', { name: /^Reason for change/ })).toBeNull();

    type(textbox('Name'), 'NEW-1');
    fireEvent.click(checkbox("Crohn's Disease"));
    type(screen.getByLabelText('Number of Anatomical Segments'), '2');
    type(textbox('Segment 1 name'), 'Ileum');
    type(textbox('Segment 2 name'), 'Colon');
    fireEvent.click(checkbox('Histopathology'));
    expect(isDisabled(saveButton())).toBe(false);

    fireEvent.click(saveButton());
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/77');
    const post = calls.find((c) => c.method === 'POST');
    expect(post?.body).toMatchObject({
      name: 'NEW-1',
      indications: ['CROHNS_DISEASE'],
      segments: 2,
      anatomicalSegments: ['Ileum', 'Colon'],
      modality: ['HISTOPATHOLOGY'],
      onHold: false,
    });
  });

  it('needs an on-hold reason when on hold and counts its characters', () => {
    renderConfigure('/studies/new/configure/settings');
    // The section and its field no longer share the title 'Status' (issue 20).
    screen.getByText('Study status');
    screen.getByText('On hold');
    expect(screen.queryByText('Status', { exact: true })).toBeNull();
    fireEvent.click(checkbox('On Hold'));
    screen.getByText(STUDY_MESSAGES.onHoldReasonRequired);
    const reason = screen.getByLabelText('On Hold Reason');
    expect(reason.getAttribute('maxlength')).toBe('178');
    type(reason, 'Waiting');
    screen.getByText('7/178');
    expect(screen.queryByText(STUDY_MESSAGES.onHoldReasonRequired)).toBeNull();
  });

  it('goes back to /studies on Discard Changes', async () => {
    renderConfigure('/studies/new/configure/settings');
    fireEvent.click(screen.getByRole('button', { name: 'Discard Changes' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies');
  });
});

describe('indications', () => {
  it('adds the celiac default classes and disables the other indications', () => {
    renderConfigure('/studies/new/configure/settings');
    expect(screen.getAllByText(STUDY_MESSAGES.oneIndicationOnly)).toHaveLength(2);
    fireEvent.click(checkbox('Celiac Disease'));
    const point = screen.getByRole('list', { name: 'Point classes' });
    expect(
      within(point)
        .getAllByRole('textbox')
        .map((i) => (i as HTMLInputElement).value),
    ).toEqual(['Enterocyte', 'IEL']);
    const line = screen.getByRole('list', { name: 'Line measurement classes' });
    expect(
      within(line)
        .getAllByRole('textbox')
        .map((i) => (i as HTMLInputElement).value),
    ).toEqual(['Unit 1', 'Unit 2', 'Unit 3', 'Unit 4', 'Unit 5']);
    expect(checkbox("Crohn's Disease").disabled).toBe(true);
    expect(checkbox('Nonalcoholic Steatohepatitis (NASH)').disabled).toBe(true);
  });

  it('unticking Celiac Disease takes its untouched default classes back; an edited one stays (issue 20)', () => {
    renderConfigure('/studies/new/configure/settings');
    fireEvent.click(checkbox('Celiac Disease'));
    const point = screen.getByRole('list', { name: 'Point classes' });
    type(within(point).getAllByRole('textbox')[1]!, 'IEL (edited)');
    fireEvent.click(checkbox('Celiac Disease'));
    fireEvent.click(checkbox('Ulcerative Colitis'));
    expect(
      within(screen.getByRole('list', { name: 'Point classes' }))
        .getAllByRole('textbox')
        .map((i) => (i as HTMLInputElement).value),
    ).toEqual(['IEL (edited)']);
    expect(screen.queryByRole('list', { name: 'Line measurement classes' })).toBeNull();
  });

  it('a fractional segment count is named in the product’s words, beside the other messages (issue 20)', () => {
    renderConfigure('/studies/new/configure/settings');
    type(textbox('Name'), ' ');
    type(screen.getByLabelText('Number of Anatomical Segments'), '1.5');
    screen.getByText(STUDY_MESSAGES.segmentsRange);
    screen.getByText(STUDY_MESSAGES.nameRequired);
    expect(screen.queryByText(/must be int/)).toBeNull();
  });

  it('leaves only NASH when NASH is chosen', () => {
    renderConfigure('/studies/new/configure/settings');
    fireEvent.click(checkbox("Crohn's Disease"));
    fireEvent.click(checkbox('Ulcerative Colitis'));
    expect(checkbox('Nonalcoholic Steatohepatitis (NASH)').disabled).toBe(true);
    fireEvent.click(checkbox('Ulcerative Colitis'));
    fireEvent.click(checkbox("Crohn's Disease"));
    fireEvent.click(checkbox('Nonalcoholic Steatohepatitis (NASH)'));
    expect(checkbox('Nonalcoholic Steatohepatitis (NASH)').checked).toBe(true);
    expect(checkbox("Crohn's Disease").checked).toBe(false);
    expect(checkbox("Crohn's Disease").disabled).toBe(true);
  });
});

describe('lists of the settings', () => {
  it('disables protocol ID Add for empty or duplicate text', () => {
    renderConfigure('/studies/new/configure/settings');
    const add = screen.getByRole('button', { name: 'Add protocol ID' });
    expect(isDisabled(add)).toBe(true);
    type(textbox('Protocol IDs'), '   ');
    expect(isDisabled(add)).toBe(true);
    type(textbox('Protocol IDs'), ' P-1 ');
    expect(isDisabled(add)).toBe(false);
    fireEvent.click(add);
    screen.getByRole('button', { name: 'Remove protocol ID P-1' });
    type(textbox('Protocol IDs'), 'P-1');
    expect(isDisabled(add)).toBe(true);
    type(textbox('Protocol IDs'), 'P-2');
    expect(isDisabled(add)).toBe(false);
  });

  it('refuses a visit pair whose lab visit ID is taken, with the rule message', () => {
    renderConfigure('/studies/new/configure/settings');
    const add = screen.getByRole('button', { name: 'Add visit pair' });
    expect(isDisabled(add)).toBe(true);
    type(textbox('Visit ID'), 'V1');
    type(textbox('Lab Visit ID (optional)'), 'L1');
    fireEvent.click(add);
    screen.getByRole('table', { name: 'Visit ID pairs' });
    type(textbox('Visit ID'), 'V2');
    type(textbox('Lab Visit ID (optional)'), 'L1');
    screen.getByText(STUDY_MESSAGES.visitPairNotUnique);
    expect(isDisabled(add)).toBe(true);
    type(textbox('Lab Visit ID (optional)'), '');
    expect(screen.queryByText(STUDY_MESSAGES.visitPairNotUnique)).toBeNull();
    fireEvent.click(add);
    expect(within(screen.getByRole('table', { name: 'Visit ID pairs' })).getAllByRole('row')).toHaveLength(3);
  });

  it('offers Delete only for a class without annotations; deleting a saved class sends it marked deleted', async () => {
    const study = makeStudy({
      pointClasses: [
        makeClass({ id: 1, name: 'Used', count: 3 }),
        makeClass({ id: 2, name: 'Unused', sortOrder: 1, count: 0 }),
      ],
    });
    const { calls } = renderEdit(study, {
      'PUT /api/studies/3': { body: { success: true, message: STUDY_MESSAGES.studyUpdated, study } },
    });
    await screen.findByRole('list', { name: 'Point classes' });
    expect(screen.queryByRole('button', { name: 'Delete Point class Used' })).toBeNull();
    screen.getByText('3 annotations');
    fireEvent.click(screen.getByRole('button', { name: 'Delete Point class Unused' }));
    expect(within(screen.getByRole('list', { name: 'Point classes' })).getAllByRole('listitem')).toHaveLength(1);
    type(textbox('Reason for change: Point classes'), 'Not needed');
    fireEvent.click(saveButton());
    await screen.findByTestId('location');
    const put = calls.find((c) => c.method === 'PUT');
    expect(put?.body).toEqual({
      pointClasses: {
        value: [
          { id: 1, name: 'Used', color: '#87FF01', sortOrder: 0, enabled: true, deleted: false },
          { id: 2, name: 'Unused', color: '#87FF01', sortOrder: 1, enabled: true, deleted: true },
        ],
        reasonForChange: 'Not needed',
      },
    });
  });

  it('adds, renames, reorders and disables classes', () => {
    renderConfigure('/studies/new/configure/settings');
    const name = textbox('New HPF class name');
    type(name, 'Crypt');
    fireEvent.click(screen.getByRole('button', { name: 'Add HPF class' }));
    type(textbox('New HPF class name'), 'Villus');
    fireEvent.click(screen.getByRole('button', { name: 'Add HPF class' }));
    type(textbox('New HPF class name'), 'crypt');
    expect(isDisabled(screen.getByRole('button', { name: 'Add HPF class' }))).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Move HPF class Villus up' }));
    const list = screen.getByRole('list', { name: 'HPF classes' });
    expect(
      within(list)
        .getAllByRole('textbox')
        .map((i) => (i as HTMLInputElement).value),
    ).toEqual(['Villus', 'Crypt']);
    type(textbox('HPF class 2 name'), '');
    screen.getByText(STUDY_MESSAGES.classNameInvalid);
    fireEvent.click(screen.getByRole('checkbox', { name: 'HPF class Villus enabled' }));
    expect(screen.getByRole<HTMLInputElement>('checkbox', { name: 'HPF class Villus enabled' }).checked).toBe(false);
  });
});

describe('edit a study', () => {
  it('keeps Save disabled until each changed field has its reason, then sends only the changes', async () => {
    const study = makeStudy();
    const { calls } = renderEdit(study, {
      'PUT /api/studies/3': { body: { success: true, message: STUDY_MESSAGES.studyUpdated, study } },
    });
    const name = await screen.findByRole('textbox', { name: 'Name' });
    screen.getByRole('heading', { level: 2, name: 'Edit Study: GUT-301' });
    expect(isDisabled(saveButton())).toBe(true);

    type(name, 'GUT-302');
    fireEvent.click(checkbox('On Hold'));
    type(screen.getByLabelText('On Hold Reason'), 'Sponsor audit');
    expect(screen.getAllByText(MESSAGES.reasonForChangeRequired)).toHaveLength(2);
    expect(isDisabled(saveButton())).toBe(true);
    expect(screen.getByRole('status', { name: 'Why Save is disabled' }).textContent).toBe(
      '2 changes need a reason: Name, On hold',
    );

    type(textbox('Reason for change: Name'), 'Typo in protocol');
    expect(isDisabled(saveButton())).toBe(true);
    expect(screen.getByRole('status', { name: 'Why Save is disabled' }).textContent).toBe(
      '1 change needs a reason: On hold',
    );
    type(textbox('Reason for change: On hold'), 'Audit');
    expect(screen.queryByRole('status', { name: 'Why Save is disabled' })).toBeNull();
    expect(isDisabled(saveButton())).toBe(false);

    fireEvent.click(saveButton());
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3');
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      name: { value: 'GUT-302', reasonForChange: 'Typo in protocol' },
      onHold: { value: true, reasonForChange: 'Audit' },
      onHoldReason: { value: 'Sponsor audit', reasonForChange: 'Audit' },
    });
  });

  it('drops the reason input when the change is undone', async () => {
    renderEdit(makeStudy());
    const name = await screen.findByRole('textbox', { name: 'Name' });
    type(name, 'Other');
    textbox('Reason for change: Name');
    type(name, 'GUT-301');
    expect(screen.queryByRole('textbox', { name: 'Reason for change: Name' })).toBeNull();
  });

  it("shows the server's refusal in a red callout titled Error", async () => {
    renderEdit(makeStudy(), {
      'PUT /api/studies/3': { status: 409, body: { success: false, message: STUDY_MESSAGES.nameTaken } },
    });
    type(await screen.findByRole('textbox', { name: 'Name' }), 'Taken');
    type(textbox('Reason for change: Name'), 'Rename');
    fireEvent.click(saveButton());
    const message = await screen.findByText(STUDY_MESSAGES.nameTaken);
    const callout = message.closest('.bp6-callout');
    expect(callout?.classList.contains('bp6-intent-danger')).toBe(true);
    within(callout as HTMLElement).getByText('Error');
    expect(screen.queryByTestId('location')).toBeNull();
  });

  it("shows 'Study not found' as a warning", async () => {
    renderConfigure('/studies/9/configure/settings', {
      'GET /api/studies/9': { status: 404, body: { success: false, message: STUDY_MESSAGES.studyNotFound } },
    });
    const warning = await screen.findByText(STUDY_MESSAGES.studyNotFound);
    expect(warning.closest('.bp6-callout')?.classList.contains('bp6-intent-warning')).toBe(true);
  });

  it('lists uploaders, readers and read-only users on the Users tab, with links to their study access', async () => {
    const user = (id: number, username: string, roleName: RoleName) => ({
      id,
      username,
      firstName: null,
      lastName: null,
      roleId: roleByName(roleName).id,
      roleName,
      organizationName: 'Site 12',
    });
    renderEdit(
      makeStudy({
        uploaders: [user(5, 'up@x.org', 'UPLOADER')],
        readers: [user(6, 'cr@x.org', 'CR')],
        readonlyUsers: [],
      }),
    );
    fireEvent.click(await screen.findByRole('tab', { name: 'Users' }));
    await screen.findByRole('table', { name: 'Uploaders' });
    screen.getByRole('table', { name: 'Readers' });
    screen.getByText('No read-only users');
    // Roles by their display names, as on the Study Access tab.
    within(screen.getByRole('table', { name: 'Uploaders' })).getByText('Uploader');
    within(screen.getByRole('table', { name: 'Readers' })).getByText('Central Reader');
    expect(screen.getByRole('link', { name: 'Study access of cr@x.org' }).getAttribute('href')).toBe(
      '/users/6/studyAccess',
    );
  });
});
