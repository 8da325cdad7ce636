import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import type { AnnotationListResponse } from '@lamina/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeClass, makeConfig, makeImage, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { ImageViewerPage } from '../viewer/ImageViewerPage';
import { stubResizeObserver } from '../viewer/olTestSupport';
import { makeAnnotation } from './testData';

/**
 * A slide with thousands of HPFs: the tree must not render them all (the page spent seconds on
 * 48 000 elements, one delete popover per HPF, with the tab not even open).
 */
const ISC = [
  'AP_ImageViewer_ViewimageViewer',
  'AP_ImageCaseViewer_ViewOverviewtab',
  'AP_ImageCaseViewer_ViewAnnotationstab',
  'AP_ImageViewer_ViewAnnotationsToolbar',
];
const study = makeStudy({ id: 3, hpfClasses: [makeClass({ id: 1, name: 'Peak', type: 'HPF' })] });
const HPFS = 120;

function list(): AnnotationListResponse {
  return {
    imageId: 7,
    locked: false,
    authors: [{ id: 7, displayName: 'Rita Reader' }],
    annotations: Array.from({ length: HPFS }, (_, i) =>
      makeAnnotation({ id: i + 1, imageId: 7, userId: 7, annotationType: 'HPF', annotationClassId: 1, radius: 100 }),
    ),
  };
}

afterEach(cleanup);
beforeEach(() => {
  stubResizeObserver();
  window.localStorage.clear();
  window.sessionStorage.clear();
});

describe('Annotations tab with many HPFs', () => {
  it('is not rendered until opened; a large class starts collapsed and shows its HPFs a page at a time', async () => {
    mockFetch({
      'GET /api/images/7': { body: makeImage() },
      'GET /api/studies/3': { body: study },
      'GET /api/images/7/annotations': { body: list() },
      'GET /api/auth/csrf': { body: { csrfToken: 'tok' } },
    });
    renderRoutes([{ path: '/studies/:studyId/images/:id', element: <ImageViewerPage /> }], {
      path: '/studies/3/images/7',
      config: makeConfig(),
      user: makeUserAs('ISC', ISC, { id: 9 }),
    });
    const tab = await screen.findByRole('tab', { name: 'Annotations' });
    expect(screen.queryByRole('tree', { name: 'Annotation tree' })).toBeNull();
    fireEvent.click(tab);
    const root = await screen.findByRole('tree', { name: 'Annotation tree' });
    await within(root).findByRole('button', { name: 'Expand Peak' });
    expect(within(root).getAllByRole('treeitem')).toHaveLength(1);
    fireEvent.click(within(root).getByRole('button', { name: 'Expand Peak' }));
    expect(within(root).getAllByRole('treeitem')).toHaveLength(1 + 100);
    fireEvent.click(within(root).getByRole('button', { name: 'Show 20 more of 20' }));
    expect(within(root).getAllByRole('treeitem')).toHaveLength(1 + HPFS);
  });
});
