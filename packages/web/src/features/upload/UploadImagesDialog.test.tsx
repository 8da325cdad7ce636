import { BlueprintProvider } from '@blueprintjs/core';
import { SPEC_IMAGE_EXTENSIONS, type AppConfig } from '@lamina/domain';
import { QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import { makeConfig } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { testQueryClient } from '../../test/render';
import { unzipSync } from 'fflate';
import { readBlob, withBlobArrayBuffer } from './blobBytes';
import { fakeXhr, type FakeReply } from './fakeXhr';
import { UploadImagesDialog, type UploadImagesDialogProps } from './UploadImagesDialog';

afterEach(cleanup);
// A DICOM series is read a slice at a time with Blob.arrayBuffer(), which jsdom lacks.
withBlobArrayBuffer();

function file(name: string, size = 1000): File {
  return new File([new Uint8Array(size)], name, { type: 'image/tiff' });
}

/** A server without OpenSlide (issue 31): the spec's three, DICOM and .zip — no .ndpi. */
const WITHOUT_OPENSLIDE = [...SPEC_IMAGE_EXTENSIONS, '.dcm', '.zip'];

/**
 * The dialog with the config loaded as the shell has it (default: a server with OpenSlide, every
 * format); `config: null` leaves it unloaded, its GET to whatever fetch answers.
 */
function renderDialog(props: Partial<UploadImagesDialogProps> = {}, config: AppConfig | null = makeConfig()) {
  setCsrfToken('csrf');
  const onClose = vi.fn();
  const onUploaded = vi.fn();
  const queryClient = testQueryClient();
  if (config) queryClient.setQueryData(queryKeys.config, config);
  render(
    <BlueprintProvider>
      <QueryClientProvider client={queryClient}>
        <UploadImagesDialog studyId={3} isOpen onClose={onClose} onUploaded={onUploaded} {...props} />
      </QueryClientProvider>
    </BlueprintProvider>,
  );
  return { onClose, onUploaded };
}

const chooser = () => document.querySelector<HTMLInputElement>('input[type="file"]')!;

function choose(...files: File[]) {
  fireEvent.change(chooser(), { target: { files } });
}

const signedUrl = (name: string) => ({
  fileName: name,
  signedUrl: `/api/storage/uploads/3/u-${name}/${name}?op=put&expires=1&sig=secret`,
  s3Key: `uploads/3/u-${name}/${name}`,
});

/** The server side of a successful upload: signed URLs, image registration, notification. */
function serverReplies(overrides: Parameters<typeof mockFetch>[0] = {}) {
  return mockFetch({
    'POST /api/signed-urls': (call) => ({
      body: { success: true, data: { urls: (call.body as { fileNames: string[] }).fileNames.map(signedUrl) } },
    }),
    'POST /api/images': (call) => ({
      body: { success: true, image: { id: 99, name: (call.body as { name: string }).name } },
    }),
    'POST /api/images/notify-upload': { body: { success: true, message: 'Notified 1 study administrator' } },
    ...overrides,
  });
}

const ok: FakeReply = { status: 200, headers: { ETag: '"abc"' } };

describe('UploadImagesDialog', () => {
  it("is 'Upload images' with a chooser of the server's formats taking several files", () => {
    renderDialog();
    screen.getByText('Upload images');
    const input = chooser();
    expect(input.accept).toBe('.svs,.tif,.tiff,.ndpi,.scn,.bif,.svslide,.dcm,.zip');
    expect(input.multiple).toBe(true);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Upload' }).disabled).toBe(true);
    // The file chooser has the focus when the dialog opens (issue 20).
    expect(document.activeElement).toBe(input);
  });

  it('lists the accepted extensions under the chooser, and what a .zip may hold when the server takes one', () => {
    renderDialog();
    screen.getByText(/^Accepted files: \.svs, \.tif, \.tiff, \.ndpi, \.scn, \.bif, \.svslide, \.dcm, \.zip/);
    screen.getByText(/A \.zip: a MIRAX \.mrxs with its folder, a Hamamatsu \.vms with its images, or one DICOM series/);
    cleanup();
    renderDialog({}, makeConfig({ imageExtensions: [...SPEC_IMAGE_EXTENSIONS] }));
    expect(screen.getByText(/^Accepted files:/).textContent).toBe('Accepted files: .svs, .tif, .tiff');
    expect(screen.queryByText(/A \.zip/)).toBeNull();
  });

  it("is 'Replace image' taking exactly one file", () => {
    renderDialog({ imageToReplace: { id: 5, name: 'old.svs' } });
    screen.getByText('Replace image');
    expect(chooser().multiple).toBe(false);
    screen.getByText(/^Accepted files: .*\.zip \(one file\)/);
    choose(file('a.svs'), file('b.svs'));
    screen.getByText('A replacement takes exactly one file');
    expect(screen.getAllByRole('progressbar')).toHaveLength(1);
  });

  it('offers and accepts .ndpi when the server lists it, and uploads it', async () => {
    const { calls } = serverReplies();
    const { requests } = fakeXhr(() => ok);
    const { onClose } = renderDialog({}, makeConfig({ imageExtensions: [...SPEC_IMAGE_EXTENSIONS, '.ndpi'] }));
    expect(chooser().accept.split(',')).toContain('.ndpi');
    choose(file('CMU-1.NDPI', 1500));
    expect(screen.queryByText(/File type not supported/)).toBeNull();
    expect(screen.getByRole('list', { name: 'Files' }).textContent).toContain('CMU-1.NDPI');
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(requests.map((r) => r.url.split('?')[0])).toEqual(['/api/storage/uploads/3/u-CMU-1.NDPI/CMU-1.NDPI']);
    expect(calls.find((c) => c.path === '/api/images')?.body).toMatchObject({ name: 'CMU-1.NDPI' });
  });

  it('refuses .ndpi on a server without OpenSlide, naming the accepted list, keeping the accepted files', () => {
    renderDialog({}, makeConfig({ imageExtensions: WITHOUT_OPENSLIDE }));
    expect(chooser().accept).toBe('.svs,.tif,.tiff,.dcm,.zip');
    choose(file('slide.ndpi'), file('ok.SVS'), file('series.zip'));
    screen.getByText('File type not supported: slide.ndpi. Accepted files: .svs, .tif, .tiff, .dcm, .zip');
    const list = screen.getByRole('list', { name: 'Files' });
    expect(list.textContent).toContain('ok.SVS');
    expect(list.textContent).toContain('series.zip');
    expect(list.textContent).not.toContain('slide.ndpi');
  });

  it("refuses a replacement's file the server does not read", () => {
    renderDialog({ imageToReplace: { id: 5, name: 'old.svs' } }, makeConfig({ imageExtensions: WITHOUT_OPENSLIDE }));
    choose(file('new.scn'));
    screen.getByText('File type not supported: new.scn. Accepted files: .svs, .tif, .tiff, .dcm, .zip');
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Upload' }).disabled).toBe(true);
  });

  it("offers only the spec's three while the config is loading", () => {
    // The config's GET never answers: the dialog must not offer what the server may not read.
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>(() => undefined)),
    );
    renderDialog({}, null);
    expect(chooser().accept).toBe('.svs,.tif,.tiff');
    expect(screen.getByText(/^Accepted files:/).textContent).toBe('Accepted files: .svs, .tif, .tiff');
    choose(file('slide.ndpi'));
    screen.getByText('File type not supported: slide.ndpi. Accepted files: .svs, .tif, .tiff');
  });

  it('signs, PUTs each file with progress, registers it, notifies, refreshes and closes', async () => {
    const { calls } = serverReplies();
    const { requests } = fakeXhr(() => ok);
    const { onClose, onUploaded } = renderDialog();
    choose(file('a.svs', 2000), file('b.tiff', 3000));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(onUploaded).toHaveBeenCalledTimes(1);
    // The dialog goes at once; a toast says what was uploaded (issue 20).
    await screen.findByText('Uploaded 2 files (a.svs, b.tiff): processing has started');

    expect(calls.find((c) => c.path === '/api/signed-urls')?.body).toEqual({
      studyId: 3,
      fileNames: ['a.svs', 'b.tiff'],
    });
    expect(requests.map((r) => [r.method, r.url.split('?')[0], r.size])).toEqual([
      ['PUT', '/api/storage/uploads/3/u-a.svs/a.svs', 2000],
      ['PUT', '/api/storage/uploads/3/u-b.tiff/b.tiff', 3000],
    ]);
    const registered = calls.filter((c) => c.path === '/api/images').map((c) => c.body);
    expect(registered).toEqual([
      { name: 'a.svs', s3Key: 'uploads/3/u-a.svs/a.svs', studyId: 3, imageToReplaceId: null },
      { name: 'b.tiff', s3Key: 'uploads/3/u-b.tiff/b.tiff', studyId: 3, imageToReplaceId: null },
    ]);
    expect(calls.find((c) => c.path === '/api/images/notify-upload')?.body).toEqual({
      studyId: 3,
      numFiles: 2,
      failures: [],
    });
    expect(calls.every((c) => c.method === 'GET' || c.headers.get('x-csrf-token') === 'csrf')).toBe(true);
  });

  it('replaces an image: imageToReplaceId is sent', async () => {
    const { calls } = serverReplies();
    fakeXhr(() => ok);
    const { onClose } = renderDialog({ imageToReplace: { id: 5, name: 'old.svs' } });
    choose(file('new.svs'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(calls.find((c) => c.path === '/api/images')?.body).toMatchObject({ name: 'new.svs', imageToReplaceId: 5 });
  });

  it("shows 'Error uploading {file} to {url}' in a red callout and stays open", async () => {
    const { calls } = serverReplies();
    fakeXhr((r) => (r.url.includes('bad.svs') ? { status: 500 } : ok));
    const { onClose, onUploaded } = renderDialog();
    choose(file('good.svs'), file('bad.svs'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    const message = await screen.findByText('Error uploading bad.svs to /api/storage/uploads/3/u-bad.svs/bad.svs');
    expect(message.closest('.bp6-callout')?.className).toContain('bp6-intent-danger');
    screen.getByText('File upload failed');
    // The signature of the URL is not shown.
    expect(document.body.textContent).not.toContain('sig=secret');
    expect(onClose).not.toHaveBeenCalled();
    expect(onUploaded).toHaveBeenCalledTimes(1); // good.svs was registered
    expect(calls.find((c) => c.path === '/api/images/notify-upload')?.body).toEqual({
      studyId: 3,
      numFiles: 1,
      failures: ['bad.svs'],
    });
    expect(document.querySelector('.bp6-dialog-footer')?.textContent).toContain('Close');
  });

  it("shows 'Unable to create signed URLs' when the server cannot sign", async () => {
    serverReplies({ 'POST /api/signed-urls': { status: 500, body: null } });
    fakeXhr(() => ok);
    const { onClose } = renderDialog();
    choose(file('a.svs'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findByText('Unable to create signed URLs');
    expect(onClose).not.toHaveBeenCalled();
  });

  it("shows the server's refusal as returned (e.g. a file type it does not accept)", async () => {
    serverReplies({
      'POST /api/signed-urls': {
        status: 403,
        body: { success: false, message: 'You do not have permission to do this' },
      },
    });
    fakeXhr(() => ok);
    renderDialog();
    choose(file('a.svs'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findByText('You do not have permission to do this');
  });

  it("Stop cancels the uploads: 'Cancelled upload of {file} to {url}'", async () => {
    const { calls } = serverReplies();
    fakeXhr(() => 'hang');
    const { onClose, onUploaded } = renderDialog();
    choose(file('slow.svs'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Stop' }));
    await screen.findByText('Cancelled upload of slow.svs to /api/storage/uploads/3/u-slow.svs/slow.svs');
    expect(onClose).not.toHaveBeenCalled();
    expect(onUploaded).not.toHaveBeenCalled();
    expect(calls.some((c) => c.path === '/api/images')).toBe(false);
    expect(calls.some((c) => c.path === '/api/images/notify-upload')).toBe(false);
  });

  it("warns 'Warning: failed to send email notification of upload(s)' when notifying fails", async () => {
    serverReplies({ 'POST /api/images/notify-upload': { status: 500, body: null } });
    fakeXhr(() => ok);
    const { onClose, onUploaded } = renderDialog();
    choose(file('a.svs'));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    const warning = await screen.findByText('Warning: failed to send email notification of upload(s)');
    expect(warning.closest('.bp6-callout')?.className).toContain('bp6-intent-warning');
    expect(onUploaded).toHaveBeenCalled();
    expect(onClose).not.toHaveBeenCalled();
  });

  it('sends files above the threshold as a multipart upload (Uppy), others by signed PUT', async () => {
    const key = 'uploads/3/k1/big.svs';
    const { calls } = serverReplies({
      'POST /api/uploads/sign': (call) => {
        const r = call.body as { uploadId?: string; method: string };
        if (!r.uploadId) return { body: { url: `/api/storage/${key}?op=create`, key } };
        return {
          body: { url: `/api/storage/${key}?op=${r.method === 'PUT' ? 'part' : 'complete'}&uploadId=${r.uploadId}` },
        };
      },
    });
    fakeXhr((r) => {
      if (r.url.includes('op=create'))
        return {
          status: 200,
          body: '<InitiateMultipartUploadResult><UploadId>u</UploadId></InitiateMultipartUploadResult>',
        };
      if (r.url.includes('op=complete'))
        return {
          status: 200,
          body: `<CompleteMultipartUploadResult><Location>x</Location><Key>${key}</Key></CompleteMultipartUploadResult>`,
        };
      return ok;
    });
    const { onClose } = renderDialog({ multipartThreshold: 5000 });
    choose(file('small.svs', 100), file('big.svs', 6000));
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(calls.find((c) => c.path === '/api/signed-urls')?.body).toEqual({ studyId: 3, fileNames: ['small.svs'] });
    const registered = calls
      .filter((c) => c.path === '/api/images')
      .map((c) => c.body as { name: string; s3Key: string });
    expect(registered.find((b) => b.name === 'big.svs')?.s3Key).toBe(key);
  });

  it('sends .dcm files chosen together as one series .zip, saying so, and the other files as they are', async () => {
    const { calls } = serverReplies();
    const { requests } = fakeXhr(() => ok);
    const { onClose } = renderDialog();
    // Bytes only carried into the .zip and compared after, never decoded: any bytes do (distinct per file).
    const dcm = [0, 1, 2].map(
      (level) =>
        new File(
          [Uint8Array.from({ length: 400 + level }, (_, i) => (i + level * 7) & 0xff)],
          `CMU-1-level-${level}.dcm`,
        ),
    );
    choose(dcm[0]!, file('slide.svs', 900), dcm[1]!, dcm[2]!);
    screen.getByText(/\.dcm files chosen together are sent as one series/);
    const list = screen.getByRole('list', { name: 'Files' });
    expect(list.querySelectorAll('li')).toHaveLength(2);
    screen.getByText('3 DICOM files → one series: CMU-1.zip');
    expect(screen.getByText('4 files', { exact: false })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    await screen.findByText('Uploaded 2 files (CMU-1.zip, slide.svs): processing has started');

    expect(calls.find((c) => c.path === '/api/signed-urls')?.body).toEqual({
      studyId: 3,
      fileNames: ['CMU-1.zip', 'slide.svs'],
    });
    // The .svs goes while the series is being bundled: the PUTs' order is not fixed.
    const put = (name: string) =>
      requests.filter((r) => r.url.split('?')[0] === `/api/storage/uploads/3/u-${name}/${name}`);
    expect(requests).toHaveLength(2);
    expect(put('slide.svs').map((r) => r.size)).toEqual([900]);
    const [zip] = put('CMU-1.zip');
    expect(zip?.body).toBeInstanceOf(Blob);
    const entries = unzipSync(await readBlob(zip!.body as Blob));
    expect(Object.keys(entries)).toEqual(['CMU-1-level-0.dcm', 'CMU-1-level-1.dcm', 'CMU-1-level-2.dcm']);
    for (const f of dcm) expect(entries[f.name]).toEqual(await readBlob(f));
    const registered = calls.filter((c) => c.path === '/api/images').map((c) => (c.body as { name: string }).name);
    expect(registered.sort()).toEqual(['CMU-1.zip', 'slide.svs']);
  });

  it('sends a single .dcm as it is', async () => {
    const { calls } = serverReplies();
    const { requests } = fakeXhr(() => ok);
    const { onClose } = renderDialog();
    choose(file('single.dcm', 1200), file('slide.svs', 900));
    expect(screen.queryByText(/DICOM files → one series/)).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(calls.find((c) => c.path === '/api/signed-urls')?.body).toEqual({
      studyId: 3,
      fileNames: ['single.dcm', 'slide.svs'],
    });
    expect(requests.map((r) => [r.url.split('?')[0], r.size])).toEqual([
      ['/api/storage/uploads/3/u-single.dcm/single.dcm', 1200],
      ['/api/storage/uploads/3/u-slide.svs/slide.svs', 900],
    ]);
  });

  it('shows each file with a progress bar that fills', async () => {
    serverReplies();
    let release: (() => void) | undefined;
    fakeXhr(() => new Promise<FakeReply>((resolve) => (release = () => resolve(ok))));
    renderDialog();
    choose(file('a.svs'));
    screen.getByText(/Waiting/);
    fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
    await screen.findByText(/Uploading/);
    await waitFor(() => expect(release).toBeDefined());
    release?.();
    await waitFor(() => expect(screen.queryByText('Upload images')).toBeTruthy());
  });
});
