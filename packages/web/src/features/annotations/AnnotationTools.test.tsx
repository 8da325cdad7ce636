import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { AnnotationListResponse, StudyView } from '@lamina/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeClass, makeConfig, makeImage, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { ImageViewerPage } from '../viewer/ImageViewerPage';
import { stubResizeObserver } from '../viewer/olTestSupport';
import { makeAnnotation } from './testData';

const VIEWER = ['AP_ImageViewer_ViewimageViewer', 'AP_ImageCaseViewer_ViewOverviewtab'];
const READER = [
  ...VIEWER,
  'AP_ImageCaseViewer_ViewAnnotationstab',
  'AP_ImageViewer_ViewAnnotationsToolbar',
  'AP_ImageViewer_EditCreateAnnotations',
  'AP_ImageViewer_DeleteAnnotations',
];
const ISC = [...VIEWER, 'AP_ImageCaseViewer_ViewAnnotationstab', 'AP_ImageViewer_ViewAnnotationsToolbar'];

const celiac = (): StudyView =>
  makeStudy({
    id: 3,
    indications: ['CELIAC_DISEASE'],
    hpfClasses: [makeClass({ id: 1, name: 'IEL count', type: 'HPF', color: '#4A90E2' })],
    pointClasses: [
      makeClass({ id: 10, name: 'Enterocyte', color: '#FF9F00', sortOrder: 0 }),
      makeClass({ id: 11, name: 'IEL', color: '#87FF01', sortOrder: 1 }),
      makeClass({ id: 12, name: 'Retired', sortOrder: 2, enabled: false }),
    ],
    multilineClasses: [makeClass({ id: 20, name: 'Unit 1', type: 'MULTILINE' })],
  });

function list(overrides: Partial<AnnotationListResponse> = {}): AnnotationListResponse {
  return {
    imageId: 7,
    locked: false,
    authors: [{ id: 7, displayName: 'Rita Reader' }],
    annotations: [
      makeAnnotation({ id: 1, imageId: 7, userId: 7, annotationClassId: 10 }),
      makeAnnotation({ id: 2, imageId: 7, userId: 7, annotationClassId: 10 }),
      makeAnnotation({ id: 3, imageId: 7, userId: 7, annotationClassId: 11 }),
      makeAnnotation({
        id: 4,
        imageId: 7,
        userId: 7,
        annotationType: 'FREEHAND',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [10, 0],
              [10, 10],
              [0, 0],
            ],
          ],
        },
      }),
    ],
    ...overrides,
  };
}

function renderViewer(actions: string[], study: StudyView = celiac(), annotations = list()) {
  const fetched = mockFetch({
    'GET /api/images/7': { body: makeImage() },
    'GET /api/studies/3': { body: study },
    'GET /api/images/7/annotations': { body: annotations },
  });
  renderRoutes([{ path: '/studies/:studyId/images/:id', element: <ImageViewerPage /> }], {
    path: '/studies/3/images/7',
    config: makeConfig(),
    user: makeUserAs('CR', actions, { id: 7 }),
  });
  return fetched;
}

afterEach(cleanup);
beforeEach(() => {
  stubResizeObserver();
  window.localStorage.clear();
  window.sessionStorage.clear();
});

const toolbar = () => screen.findByRole('toolbar', { name: 'Annotation tools' });

describe('annotation toolbar (doc 3 §2)', () => {
  it('offers every tool in a celiac study with line classes; Point opens its enabled classes with counts and colours', async () => {
    renderViewer(READER);
    const bar = await toolbar();
    const names = within(bar)
      .getAllByRole('button')
      .map((b) => b.getAttribute('aria-label'));
    expect(names).toEqual([
      'Measurement',
      'Line Measurement',
      'Text',
      'Ellipse',
      'HPF',
      'Point',
      'Freehand (1)',
      'Undo',
      'Redo',
    ]);
    // Nothing changed yet: Undo and Redo are there, disabled, their tooltips naming the keys.
    const undo = within(bar).getByRole<HTMLButtonElement>('button', { name: 'Undo' });
    expect(undo.disabled).toBe(true);
    expect(undo.title).toBe('Undo (Ctrl+Z)');
    expect(within(bar).getByRole('button', { name: 'Redo' }).title).toBe('Redo (Ctrl+Shift+Z or Ctrl+Y)');
    fireEvent.click(within(bar).getByRole('button', { name: 'Point' }));
    const flyout = await screen.findByRole('menu', { name: 'Point classes' });
    const items = within(flyout).getAllByRole('menuitem');
    expect(items.map((i) => i.textContent)).toEqual(['Enterocyte2', 'IEL1']);
    const swatch = items[0]!.querySelector('.lamina-class-swatch') as HTMLElement;
    expect(swatch.style.background).toBe('rgb(255, 159, 0)');
    fireEvent.click(items[1]!);
    await waitFor(() =>
      expect(within(bar).getByRole('button', { name: 'Point' }).getAttribute('aria-pressed')).toBe('true'),
    );
    expect(screen.getByRole('status').textContent).toContain('Click each point');
  });

  it('without the permission to create, the flyouts only show the classes and the tools are off', async () => {
    renderViewer(ISC);
    const bar = await toolbar();
    expect(within(bar).getByRole<HTMLButtonElement>('button', { name: 'Measurement' }).disabled).toBe(true);
    fireEvent.click(within(bar).getByRole('button', { name: 'HPF' }));
    const flyout = await screen.findByRole('menu', { name: 'HPF classes' });
    const item = within(flyout).getByRole('menuitem', { name: /IEL count/ });
    expect(item.getAttribute('aria-disabled')).toBe('true');
    fireEvent.keyDown(window, { key: 'h' });
    expect(within(bar).getByRole('button', { name: 'HPF' }).getAttribute('aria-pressed')).toBe('false');
  });

  it('has no Line Measurement outside celiac studies', async () => {
    renderViewer(READER, makeStudy({ id: 3, indications: ['NASH'] }));
    const bar = await toolbar();
    expect(within(bar).queryByRole('button', { name: 'Line Measurement' })).toBeNull();
    within(bar).getByRole('button', { name: 'HPF (0)' });
  });

  it('keys choose tools, Escape closes them; with annotations hidden (a) the toolbar goes and keys do nothing', async () => {
    renderViewer(READER);
    const bar = await toolbar();
    fireEvent.keyDown(window, { key: 'r' });
    expect(within(bar).getByRole('button', { name: 'Measurement' }).getAttribute('aria-pressed')).toBe('true');
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(within(bar).getByRole('button', { name: 'Measurement' }).getAttribute('aria-pressed')).toBe('false');
    fireEvent.keyDown(window, { key: 'a' });
    await waitFor(() => expect(screen.queryByRole('toolbar', { name: 'Annotation tools' })).toBeNull());
    fireEvent.keyDown(window, { key: 'p' });
    expect(screen.queryByRole('status')).toBeNull();
  });

  it('a locked read (scored) says so and offers no tool', async () => {
    renderViewer(READER, celiac(), list({ locked: true }));
    const bar = await toolbar();
    within(screen.getByTestId('annotation-controls')).getByText(/marked as scored/);
    expect(within(bar).getByRole<HTMLButtonElement>('button', { name: 'Text' }).disabled).toBe(true);
  });
});
