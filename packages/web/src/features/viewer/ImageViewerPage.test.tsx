import { formatDate } from '../../util/formatDate';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig, makeImage, makeUser, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { closeTarget, ImageViewerPage } from './ImageViewerPage';
import { stubResizeObserver } from './olTestSupport';

function renderViewer(path = '/studies/3/images/7', user = makeUser()) {
  return renderRoutes(
    [
      { path: '/studies/:studyId/images/:id', element: <ImageViewerPage /> },
      { path: '/studies/:id/:tab', element: <p>study page</p> },
      { path: '/image-management/:tab', element: <p>image management</p> },
    ],
    { path, config: makeConfig(), user },
  );
}

afterEach(cleanup);
beforeEach(() => {
  stubResizeObserver();
  window.localStorage.clear();
  window.sessionStorage.clear();
});

describe('ImageViewerPage', () => {
  it("shows 'No image(s) found' for a 404", async () => {
    mockFetch({ 'GET /api/images/7': { status: 404, body: { success: false, message: 'Image not found' } } });
    renderViewer();
    await screen.findByText('No image(s) found');
    expect(screen.queryByTestId('slide-map')).toBeNull();
  });

  it("shows 'No image(s) found' for an id that is not a number, without a request", async () => {
    const { calls } = mockFetch({});
    renderViewer('/studies/3/images/abc');
    await screen.findByText('No image(s) found');
    expect(calls.filter((c) => c.path.startsWith('/api/images'))).toHaveLength(0);
  });

  it('shows a load error in a danger callout', async () => {
    mockFetch({ 'GET /api/images/7': { status: 500, body: { success: false, message: 'Database down' } } });
    renderViewer();
    const title = await screen.findByText('Unable to fetch image', undefined, { timeout: 4000 });
    expect(title.closest('.bp6-callout')?.className).toContain('bp6-intent-danger');
    screen.getByText('Database down');
  });

  it("shows 'Image processing...' with the progress, polls every 2 s, then draws the slide", async () => {
    const { calls } = mockFetch({
      'GET /api/images/7': [
        {
          body: makeImage({
            processingStatus: 'SUBMITTED',
            status: 'PROCESSING',
            processingProgress: 40,
            tileUrl: null,
            extent: null,
          }),
        },
        { body: makeImage() },
      ],
    });
    renderViewer();
    await screen.findByText('Image processing...');
    screen.getByText('40%');
    const bar = document.querySelector('.bp6-progress-meter') as HTMLElement;
    expect(bar.style.width).toBe('40%');
    await screen.findByTestId('slide-map', undefined, { timeout: 3500 });
    expect(calls.filter((c) => c.path === '/api/images/7')).toHaveLength(2);
  });

  it("shows 'Image processing failed' with the status message on FAIL", async () => {
    mockFetch({
      'GET /api/images/7': {
        body: makeImage({
          processingStatus: 'FAIL',
          status: 'FAIL_PROCESSING',
          statusMessage: 'The file is not a TIFF or SVS slide',
          tileUrl: null,
        }),
      },
    });
    renderViewer();
    const title = await screen.findByText('Image processing failed');
    expect(title.closest('.bp6-callout')?.className).toContain('bp6-intent-danger');
    screen.getByText('The file is not a TIFF or SVS slide');
  });

  it('draws a processed slide with the mini-map, zoom buttons, magnification and scale bar', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    expect(document.querySelector('.lamina-viewer-title')?.textContent).toBe('CMU-1-Small-Region.svs');
    const magnification = screen.getByTestId('magnification');
    // No viewport size in jsdom: the engine starts fitted to 1024 x 768 → 2967/768 ≈ 3.86 → 5.18x.
    expect(magnification.textContent).toBe('5.18x');
    fireEvent.click(screen.getByRole('button', { name: 'Zoom in' }));
    await waitFor(() => expect(magnification.textContent).toBe('10.4x'));
    fireEvent.click(screen.getByRole('button', { name: 'Zoom out' }));
    await waitFor(() => expect(magnification.textContent).toBe('5.18x'));
    // 100 px = 193 µm at 3.86 × 0.499 µm/px: the bar shows the round 100 µm, 51.87 px long (issue 29).
    // The bar follows the view's snapshot, which may come a render after the readout under load.
    await waitFor(() => {
      within(screen.getByTestId('scale-bar')).getByText('100 µm');
      expect((document.querySelector('.lamina-scale-bar-line') as HTMLElement).style.width).toBe('51.87px');
    });
  });

  it('toggles the mini-map and remembers the choice', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    const toggle = screen.getByRole('button', { name: 'Mini-map' });
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByTestId('mini-map').hidden).toBe(false);
    fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(screen.getByTestId('mini-map').hidden).toBe(true);
    expect(window.localStorage.getItem('lamina.viewer.miniMapExpanded')).toBe('false');
  });

  it('answers the keyboard: 1–6 jump to a magnification, +/- zoom; ignored while typing in a field', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    const magnification = screen.getByTestId('magnification');
    fireEvent.keyDown(window, { key: '4' });
    await waitFor(() => expect(magnification.textContent).toBe('10x'), { timeout: 5000 }); // zoom animates: slower on a loaded machine
    fireEvent.keyDown(window, { key: '+' });
    await waitFor(() => expect(magnification.textContent).toBe('20x'), { timeout: 5000 }); // zoom animates: slower on a loaded machine
    fireEvent.keyDown(window, { key: '-' });
    await waitFor(() => expect(magnification.textContent).toBe('10x'), { timeout: 5000 }); // zoom animates: slower on a loaded machine
    const input = document.createElement('input');
    document.body.appendChild(input);
    input.focus();
    fireEvent.keyDown(input, { key: '1' });
    expect(magnification.textContent).toBe('10x');
    input.remove();
    fireEvent.keyDown(window, { key: 'c' });
    expect(screen.getByTestId('viewer-controls').hidden).toBe(true);
  });

  it('lists the keyboard shortcuts in a dialog: ? opens it, and so does its button (doc 3 §2)', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    const input = document.createElement('input');
    document.body.appendChild(input);
    input.focus();
    fireEvent.keyDown(input, { key: '?' });
    expect(screen.queryByRole('dialog', { name: 'Keyboard shortcuts' })).toBeNull();
    input.remove();
    fireEvent.keyDown(window, { key: '?' });
    const dialog = await screen.findByRole('dialog', { name: 'Keyboard shortcuts' });
    within(dialog).getByText('Jump to 1.25x, 2.5x, 5x, 10x, 20x, 40x');
    fireEvent.keyDown(dialog, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Keyboard shortcuts' })).toBeNull());
    fireEvent.click(screen.getByRole('button', { name: 'Keyboard shortcuts' }));
    await screen.findByRole('dialog', { name: 'Keyboard shortcuts' });
  });

  it('microscope mode dims the surround and brightness filters the tiles; both are remembered (doc 3 §9)', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    const map = await screen.findByTestId('slide-map');
    expect(screen.queryByTestId('microscope-mode')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Microscope' }));
    screen.getByTestId('microscope-mode');
    expect(window.localStorage.getItem('lamina.viewer.microscope')).toBe('true');
    expect(map.style.getPropertyValue('--lamina-tile-filter')).toBe('brightness(100%)');
    const handle = screen.getByRole('slider', { name: 'Brightness' });
    for (let i = 0; i < 5; i++) fireEvent.keyDown(handle, { key: 'ArrowRight', which: 39, keyCode: 39 });
    await waitFor(() => expect(map.style.getPropertyValue('--lamina-tile-filter')).toBe('brightness(105%)'));
    expect(window.localStorage.getItem('lamina.viewer.brightness')).toBe('5');
  });

  it("the brightness slider's arrows move the slider, not the slide; its other keys stay shortcuts (issue 29 item 7)", async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    const map = await screen.findByTestId('slide-map');
    const magnification = screen.getByTestId('magnification');
    const before = magnification.textContent;
    const filter = map.style.getPropertyValue('--lamina-tile-filter');
    const handle = screen.getByRole('slider', { name: 'Brightness' });
    handle.focus();
    fireEvent.keyDown(handle, { key: 'ArrowLeft', which: 37, keyCode: 37 });
    // The slider moved…
    await waitFor(() => expect(map.style.getPropertyValue('--lamina-tile-filter')).not.toBe(filter));
    // …and the slide did not, over longer than a pan's animation (inherent: a window in which
    // nothing may happen, which no event can announce).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(magnification.textContent).toBe(before);
    // A digit is no key of the slider's: with the focus still there, '4' jumps to 10x (doc 3 §2:
    // only inputs and textareas are exempt).
    fireEvent.keyDown(handle, { key: '4' });
    await waitFor(() => expect(magnification.textContent).not.toBe(before));
  });

  it('the z-stack slider shows only at maximum zoom of a slide with several focal planes, and chooses the plane', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage({ zStackSize: 3 }) } });
    renderViewer();
    await screen.findByTestId('slide-map');
    expect(screen.queryByRole('slider', { name: 'Z-stack plane' })).toBeNull();
    fireEvent.keyDown(window, { key: '6' });
    const plane = await screen.findByRole('slider', { name: 'Z-stack plane' }, { timeout: 5000 });
    expect(plane.getAttribute('aria-valuenow')).toBe('0');
    fireEvent.keyDown(plane, { key: 'ArrowRight', which: 39, keyCode: 39 });
    await waitFor(() => expect(plane.getAttribute('aria-valuenow')).toBe('1'));
    fireEvent.keyDown(window, { key: '1' });
    await waitFor(() => expect(screen.queryByRole('slider', { name: 'Z-stack plane' })).toBeNull(), { timeout: 5000 });
  });

  it('a slide of one focal plane has no z-stack slider, even at maximum zoom', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    fireEvent.keyDown(window, { key: '6' });
    await waitFor(() => expect(screen.getByTestId('magnification').textContent).toBe('40x digital'), { timeout: 5000 });
    expect(screen.queryByRole('slider', { name: 'Z-stack plane' })).toBeNull();
  });

  it('says in the image details when a slide records no pixel size (issue 20)', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage({ physicalResolution: null, pixelSize: null }) } });
    renderViewer();
    expect((await screen.findByTestId('pixel-size')).textContent).toBe('Uncalibrated: no pixel size');
    expect(screen.getByTestId('scale-bar').textContent).toMatch(/^≈ .*\(uncalibrated\)$/);
  });

  it('closes to the study images page', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    await screen.findByText('study page');
  });

  it('closes to image management when the image has no study', () => {
    expect(closeTarget(null)).toBe('/image-management/images');
    expect(closeTarget(3)).toBe('/studies/3/images');
  });
});

describe('ImageViewerPage: layers, persisted view, sidebar, label panel', () => {
  it("the Annotations checkbox shows or hides the annotations; 'a' toggles it, not while typing", async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    const checkbox = screen.getByRole<HTMLInputElement>('checkbox', { name: 'Annotations' });
    expect(checkbox.checked).toBe(true);
    fireEvent.keyDown(window, { key: 'a' });
    expect(checkbox.checked).toBe(false);
    const input = document.createElement('input');
    document.body.appendChild(input);
    input.focus();
    fireEvent.keyDown(input, { key: 'a' });
    expect(checkbox.checked).toBe(false);
    input.remove();
    // Another slide (the case viewer's next image) opens with the annotations still hidden.
    cleanup();
    mockFetch({ 'GET /api/images/8': { body: makeImage({ id: 8 }) } });
    renderViewer('/studies/3/images/8');
    await screen.findByTestId('slide-map');
    const next = screen.getByRole<HTMLInputElement>('checkbox', { name: 'Annotations' });
    expect(next.checked).toBe(false);
    fireEvent.click(next);
    expect(next.checked).toBe(true);
  });

  it('the AI opacity slider shows only with AI annotations, at 0 by default; i hides the AI layers', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    await screen.findByTestId('slide-map');
    expect(screen.queryByTestId('ai-opacity')).toBeNull();
    cleanup();
    mockFetch({
      'GET /api/images/7': { body: makeImage({ mldFile: { id: 1, name: 'ses1_4_Result.mld', appSequenceId: '4' } }) },
    });
    renderViewer();
    await screen.findByTestId('slide-map');
    const slider = screen.getByRole('slider', { name: 'AI annotation opacity' });
    expect(slider.getAttribute('aria-valuenow')).toBe('0');
    fireEvent.keyDown(slider, { key: 'ArrowRight', which: 39, keyCode: 39 });
    await waitFor(() => expect(window.localStorage.getItem('lamina.viewer.aiOpacity')).toBe('1'));
    fireEvent.keyDown(window, { key: 'i' });
    expect(screen.queryByTestId('ai-opacity')).toBeNull();
  });

  it('the Overview shows the image details to a user with the overview permission or to the uploader', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage({ accessionNumber: 'ACC-7', uploaderId: 1 }) } });
    renderViewer(
      '/studies/3/images/7',
      makeUserAs('ISC', ['AP_ImageViewer_ViewimageViewer', 'AP_ImageCaseViewer_ViewOverviewtab']),
    );
    const details = await screen.findByLabelText('Image details');
    within(details).getByText('CMU-1-Small-Region.svs');
    within(details).getByRole('button', { name: 'ACC-7' });
    cleanup();
    // Neither the permission nor the uploader (fixture users are id 7): no sidebar.
    mockFetch({ 'GET /api/images/7': { body: makeImage({ uploaderId: 1 }) } });
    renderViewer('/studies/3/images/7', makeUserAs('Viewer', ['AP_ImageViewer_ViewimageViewer']));
    await screen.findByTestId('slide-map');
    expect(screen.queryByRole('complementary', { name: 'Sidebar' })).toBeNull();
    cleanup();
    mockFetch({ 'GET /api/images/7': { body: makeImage({ uploaderId: 7 }) } });
    renderViewer('/studies/3/images/7', makeUserAs('Site', ['AP_ImageViewer_ViewimageViewer']));
    await screen.findByLabelText('Image details');
  });

  it("the Overview's Upload Date shows the time for an image uploaded today, the date before (doc 3 §9)", async () => {
    const today = new Date();
    today.setHours(9, 5, 0, 0);
    mockFetch({ 'GET /api/images/7': { body: makeImage({ uploaderId: 1, uploadedAt: today.toISOString() }) } });
    const overview = makeUserAs('ISC', ['AP_ImageViewer_ViewimageViewer', 'AP_ImageCaseViewer_ViewOverviewtab']);
    renderViewer('/studies/3/images/7', overview);
    const details = await screen.findByLabelText('Image details');
    expect(within(details).getByText('Upload Date').nextElementSibling?.textContent).toBe(formatDate(today));
    expect(formatDate(today)).toMatch(/9:05/);
    cleanup();
    mockFetch({ 'GET /api/images/7': { body: makeImage({ uploaderId: 1, uploadedAt: '2025-03-04T17:06:00.000Z' }) } });
    renderViewer('/studies/3/images/7', overview);
    const older = await screen.findByLabelText('Image details');
    expect(within(older).getByText('Upload Date').nextElementSibling?.textContent).toMatch(/^Mar 4,? 2025$/);
  });

  it('the label button opens the Macro/Label panel: 300 px images, a hover lens, a red callout on error', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage({ hasLabel: true, hasMacro: true }) } });
    renderViewer();
    await screen.findByTestId('slide-map');
    fireEvent.click(screen.getByRole('button', { name: 'Label and macro images' }));
    const panel = screen.getByRole('region', { name: 'Label and macro images' });
    const label = within(panel).getByRole<HTMLImageElement>('img', { name: 'Label image of the slide' });
    expect(label.getAttribute('src')).toBe('/api/images/7/label');
    expect(label.width).toBe(300);
    fireEvent.pointerMove(label, { clientX: 10, clientY: 10 });
    expect(within(panel).getByTestId('label-lens').style.backgroundImage).toContain('/api/images/7/label');
    fireEvent.pointerLeave(label);
    expect(within(panel).queryByTestId('label-lens')).toBeNull();
    fireEvent.error(within(panel).getByRole('img', { name: 'Macro image of the slide' }));
    const callout = within(panel).getByText('The macro image could not be loaded');
    expect(callout.closest('.bp6-callout')?.className).toContain('bp6-intent-danger');
  });

  it('no label button without the label permission (the server sends hasLabel false)', async () => {
    mockFetch({ 'GET /api/images/7': { body: makeImage({ hasLabel: false, hasMacro: false }) } });
    renderViewer();
    await screen.findByTestId('slide-map');
    expect(screen.queryByRole('button', { name: 'Label and macro images' })).toBeNull();
  });
});
