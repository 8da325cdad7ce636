import { IMAGE_ACTION_MESSAGES, ROLE_PERMISSIONS, type StudyImageRow, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeStudy, makeStudyImage, makeStudyRow, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { StudyImagesTab } from '../studies/images/StudyImagesTab';

beforeEach(() => setCsrfToken('token'));
afterEach(() => {
  cleanup();
  window.localStorage.clear();
});

const ISC = makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]);
const UPLOADER = makeUserAs('UPLOADER', [...ROLE_PERMISSIONS.UPLOADER]);
const STUDY = makeStudy({ id: 3, name: 'Study 3', anatomicalSegments: ['Rectum', 'Sigmoid colon'] });

function renderTab(images: StudyImageRow[], user: UserInfo, extra: Parameters<typeof mockFetch>[0] = {}) {
  const mock = mockFetch({
    'GET /api/studies/3/images': { body: { success: true, images, total: images.length } },
    'GET /api/studies/list': {
      body: {
        success: true,
        studies: [makeStudyRow({ id: 3, name: 'Study 3' }), makeStudyRow({ id: 4, name: 'Study 4' })],
        total: 2,
      },
    },
    ...extra,
  });
  renderRoutes([{ path: '*', element: <StudyImagesTab study={STUDY} /> }], { path: '/studies/3/images', user });
  return mock;
}

async function openRowMenu(name: string, item: string) {
  fireEvent.click(await screen.findByRole('button', { name: `Actions for ${name}` }));
  fireEvent.click(await screen.findByRole('menuitem', { name: item }));
}

describe('image row actions (doc 2 §2.5)', () => {
  it('the menu offers each action only with its permission', async () => {
    renderTab([makeStudyImage()], UPLOADER);
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for CMU-1-Small-Region.svs' }));
    await screen.findByRole('menuitem', { name: 'Edit' });
    const items = screen.getAllByRole('menuitem').map((m) => m.textContent);
    expect(items).toEqual(['Edit', 'Download']);
    expect(screen.queryByRole('checkbox', { name: 'Select all images of this page' })).toBeNull();
  });

  it('Edit Image: a changed value with a prior one needs a reason; a first value does not', async () => {
    const { calls } = renderTab([makeStudyImage({ accessionNumber: 'ACC-9', biopsyLocation: null })], ISC, {
      'PATCH /api/images/21': { body: { success: true, message: IMAGE_ACTION_MESSAGES.updated, imageId: 21 } },
    });
    await openRowMenu('CMU-1-Small-Region.svs', 'Edit');
    const dialog = await screen.findByRole('dialog', { name: 'Edit Image' });
    const save = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Save' });
    fireEvent.change(within(dialog).getByLabelText('Anatomical Segment'), { target: { value: 'Rectum' } });
    await waitFor(() => expect(save.disabled).toBe(false));
    fireEvent.change(within(dialog).getByLabelText('Accession #'), { target: { value: 'ACC-10' } });
    expect(save.disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText('Reason for change: Accession #'), { target: { value: 'Misread' } });
    await waitFor(() => expect(save.disabled).toBe(false));
    fireEvent.click(save);
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({
        accessionNumber: { value: 'ACC-10', reasonForChange: 'Misread' },
        biopsyLocation: { value: 'Rectum', reasonForChange: null },
      }),
    );
  });

  it('Move Image: the current study is disabled; Next previews the changes; Move moves', async () => {
    const { calls } = renderTab([makeStudyImage()], ISC, {
      'PATCH /api/images/21/study': (call) => ({
        body: {
          success: true,
          message: (call.body as { preview: boolean }).preview ? '' : IMAGE_ACTION_MESSAGES.moved,
          imageId: 21,
          changes: [{ label: 'Study Name', from: 'Study 3', to: 'Study 4' }],
        },
      }),
    });
    await openRowMenu('CMU-1-Small-Region.svs', 'Move');
    const dialog = await screen.findByRole('dialog', { name: 'Move Image' });
    const study = within(dialog).getByLabelText('Study');
    await within(dialog).findByRole('option', { name: 'Study 4' });
    expect(within(dialog).getByRole<HTMLOptionElement>('option', { name: 'Study 3 (current)' }).disabled).toBe(true);
    fireEvent.change(study, { target: { value: '4' } });
    const next = within(dialog).getByRole<HTMLButtonElement>('button', { name: 'Next' });
    expect(next.disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'Wrong study' } });
    fireEvent.click(next);
    await screen.findByText(IMAGE_ACTION_MESSAGES.moveConfirmation);
    const table = screen.getByRole('table', { name: 'Data that will change' });
    within(table).getByText('Study 4');
    fireEvent.click(screen.getByRole('button', { name: 'Move' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Move Image' })).toBeNull());
    const moves = calls.filter((c) => c.path === '/api/images/21/study').map((c) => c.body);
    expect(moves).toEqual([
      { value: 4, reasonForChange: 'Wrong study', preview: true },
      { value: 4, reasonForChange: 'Wrong study', preview: false },
    ]);
  });

  it('bulk archive: one call per image, one reason; a partial failure lists the images that failed', async () => {
    const images = [
      makeStudyImage({ id: 21, name: 'a.svs' }),
      makeStudyImage({ id: 22, name: 'b.svs' }),
      makeStudyImage({ id: 23, name: 'c.svs' }),
    ];
    const { calls } = renderTab(images, ISC, {
      'POST /api/images/21': { body: { success: true, message: IMAGE_ACTION_MESSAGES.archived, imageId: 21 } },
      'POST /api/images/22': { status: 409, body: { success: false, message: 'The image is already archived' } },
      'POST /api/images/23': { body: { success: true, message: IMAGE_ACTION_MESSAGES.archived, imageId: 23 } },
    });
    await screen.findByText('c.svs');
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select all images of this page' }));
    const bar = await screen.findByRole('region', { name: 'Selected images' });
    within(bar).getByText('3 selected');
    fireEvent.click(within(bar).getByRole('button', { name: 'Archive' }));
    const dialog = await screen.findByRole('dialog', { name: 'Archive images' });
    fireEvent.change(within(dialog).getByLabelText(/Reason for change/), { target: { value: 'Duplicate scans' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Archive' }));
    const failed = await within(dialog).findByRole('alert');
    expect(failed.textContent).toContain('b.svs: The image is already archived');
    within(dialog).getByText(/3 of 3 processed: 2 done, 1 failed/);
    expect(
      calls
        .filter((c) => c.method === 'POST')
        .map((c) => [c.path, (c.body as { reasonForChange: string }).reasonForChange]),
    ).toEqual([
      ['/api/images/21', 'Duplicate scans'],
      ['/api/images/22', 'Duplicate scans'],
      ['/api/images/23', 'Duplicate scans'],
    ]);
  });
});
