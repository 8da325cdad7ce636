import type { ImImageRecord } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { fakeXhr, type FakeReply } from '../upload/fakeXhr';
import { ImportAnnotationsDialog } from './ImportAnnotationsDialog';
import { makeMld } from './mldTestData';

function mld(name: string, size = 1000): File {
  return new File([new Uint8Array(size)], name);
}

const signed = (name: string) => ({
  fileName: name,
  signedUrl: `/api/storage/mld/uploads/5/u-${name}/${name}?op=put&expires=1&sig=secret`,
  s3Key: `mld/uploads/5/u-${name}/${name}`,
});

const image: ImImageRecord = {
  id: 42,
  studyId: 3,
  caseId: 40,
  imageFilename: 'S3001_BASELINE_A.tif',
  studyName: 'DEMO-NASH-003',
  endoProcedureId: 'ENDO-3001',
};

function server(overrides: Parameters<typeof mockFetch>[0] = {}) {
  let nextId = 100;
  return mockFetch({
    'POST /api/mld/get-signed-urls': (call) => ({
      body: { success: true, urls: (call.body as { fileNames: string[] }).fileNames.map(signed) },
    }),
    'POST /api/mld': (call) => ({
      status: 201,
      body: {
        success: true,
        message: 'The file was uploaded and its import queued',
        mld: makeMld({ mldId: nextId++, mldName: (call.body as { name: string }).name, status: 'QUEUED' }),
      },
    }),
    'POST /api/imageManagement/images': { body: { success: true, results: [image], total: 1 } },
    ...overrides,
  });
}

function renderDialog() {
  const onClose = vi.fn();
  const onImported = vi.fn();
  renderWithProviders(<ImportAnnotationsDialog onClose={onClose} onImported={onImported} />, {
    user: makeUserAs('ISC', ['IM_AnnotationListTab_ImportAnnotations', 'IM_ImageListTab_ViewImageslistTab']),
  });
  return { onClose, onImported };
}

function choose(...files: File[]) {
  fireEvent.change(screen.getByLabelText('Choose .mld files'), { target: { files } });
}

const ok: FakeReply = { status: 200, headers: { ETag: '"abc"' } };

beforeEach(() => setCsrfToken('csrf'));
afterEach(cleanup);

describe('Import Annotations (doc 2 §2.3, §4)', () => {
  it('takes several .mld files at once and refuses other files by name', () => {
    server();
    renderDialog();
    const input = screen.getByLabelText<HTMLInputElement>('Choose .mld files');
    expect(input.accept).toBe('.mld');
    expect(input.multiple).toBe(true);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Upload' }).disabled).toBe(true);
    choose(mld('a.mld'), mld('notes.txt'), mld('B.MLD'));
    screen.getByText('Only .mld files can be imported: notes.txt');
    const list = screen.getByRole('list', { name: 'Files' });
    expect(list.textContent).toContain('a.mld');
    expect(list.textContent).toContain('B.MLD');
    expect(list.textContent).not.toContain('notes.txt');
    expect(screen.getAllByRole('progressbar', { name: /Progress of/ })).toHaveLength(2);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Upload' }).disabled).toBe(false);
  });

  it('signs the names, PUTs each file with progress, registers it (name, s3Key), refreshes and closes', async () => {
    const { calls } = server();
    const { requests } = fakeXhr(() => ok);
    const { onClose, onImported } = renderDialog();
    choose(mld('APP12_a.mld', 2000), mld('APP13_b.mld', 3000));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(calls.find((c) => c.path === '/api/mld/get-signed-urls')?.body).toEqual({
      fileNames: ['APP12_a.mld', 'APP13_b.mld'],
    });
    expect(requests.map((r) => [r.method, r.url.split('?')[0], r.size])).toEqual([
      ['PUT', '/api/storage/mld/uploads/5/u-APP12_a.mld/APP12_a.mld', 2000],
      ['PUT', '/api/storage/mld/uploads/5/u-APP13_b.mld/APP13_b.mld', 3000],
    ]);
    expect(calls.filter((c) => c.path === '/api/mld').map((c) => c.body)).toEqual([
      { name: 'APP12_a.mld', s3Key: 'mld/uploads/5/u-APP12_a.mld/APP12_a.mld' },
      { name: 'APP13_b.mld', s3Key: 'mld/uploads/5/u-APP13_b.mld/APP13_b.mld' },
    ]);
    expect(onImported).toHaveBeenCalledTimes(1);
    expect(onImported.mock.calls[0]?.[0]).toHaveLength(2);
    await screen.findByText('The file was uploaded and its import queued: 2 files');
  });

  it('links every file to the image chosen in the picker (imageId)', async () => {
    const { calls } = server();
    fakeXhr(() => ok);
    const { onClose } = renderDialog();
    choose(mld('x.mld'));
    const picker = screen.getByRole('combobox', { name: 'Image (optional)' });
    fireEvent.focus(picker);
    fireEvent.change(picker, { target: { value: 'S3001' } });
    await waitFor(() =>
      expect(
        calls.some(
          (c) => c.path === '/api/imageManagement/images' && (c.body as { searchText?: string }).searchText === 'S3001',
        ),
      ).toBe(true),
    );
    const name = 'S3001_BASELINE_A.tif · DEMO-NASH-003 · ENDO-3001';
    fireEvent.click(within(await screen.findByRole('option', { name })).getByText(name));
    screen.getByText('Every file of this upload is imported onto this image.');
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(calls.find((c) => c.path === '/api/mld')?.body).toEqual({
      name: 'x.mld',
      s3Key: 'mld/uploads/5/u-x.mld/x.mld',
      imageId: 42,
    });
  });

  it("Stop cancels the uploads: 'Cancelled upload of {file} to {url}', nothing registered", async () => {
    const { calls } = server();
    fakeXhr(() => 'hang');
    const { onClose, onImported } = renderDialog();
    choose(mld('slow.mld'), mld('slower.mld'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findAllByText(/Uploading/);
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }));
    await screen.findByText('Cancelled upload of slow.mld to /api/storage/mld/uploads/5/u-slow.mld/slow.mld');
    screen.getByText('Cancelled upload of slower.mld to /api/storage/mld/uploads/5/u-slower.mld/slower.mld');
    expect(document.body.textContent).not.toContain('sig=secret');
    expect(calls.some((c) => c.path === '/api/mld')).toBe(false);
    expect(onClose).not.toHaveBeenCalled();
    expect(onImported).not.toHaveBeenCalled();
    expect(within(screen.getByRole('list', { name: 'Files' })).getAllByText(/Cancelled/)).toHaveLength(2);
  });

  it("a failed upload shows 'Unable to upload MLD file' in red and the dialog stays; the others are registered", async () => {
    const { calls } = server();
    fakeXhr((r) => (r.url.includes('bad.mld') ? { status: 500 } : ok));
    const { onClose, onImported } = renderDialog();
    choose(mld('good.mld'), mld('bad.mld'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    const message = await screen.findByText('Error uploading bad.mld to /api/storage/mld/uploads/5/u-bad.mld/bad.mld');
    const callout = message.closest('.bp6-callout')!;
    expect(callout.className).toContain('bp6-intent-danger');
    within(callout as HTMLElement).getByText('Unable to upload MLD file');
    expect(calls.filter((c) => c.path === '/api/mld').map((c) => (c.body as { name: string }).name)).toEqual([
      'good.mld',
    ]);
    expect(onImported).toHaveBeenCalledTimes(1);
    expect(onClose).not.toHaveBeenCalled();
  });

  it("the server's refusal is shown as returned; no answer at all reads 'Unable to upload MLD file'", async () => {
    server({
      'POST /api/mld/get-signed-urls': {
        status: 400,
        body: { success: false, message: 'Only .mld files can be imported: x.mld ' },
      },
    });
    fakeXhr(() => ok);
    renderDialog();
    choose(mld('x.mld'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findByText('Only .mld files can be imported: x.mld');
    cleanup();
    server({ 'POST /api/mld/get-signed-urls': { status: 502, body: null } });
    renderDialog();
    choose(mld('x.mld'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    const callout = (await screen.findAllByText('Unable to upload MLD file'))[0]!.closest('.bp6-callout');
    expect(callout?.className).toContain('bp6-intent-danger');
  });
});
