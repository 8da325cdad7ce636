import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ANNOTATION_MESSAGES, READER_COLORS, type AnnotationListResponse, type AnnotationView } from '@lamina/domain';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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

const study = makeStudy({
  id: 3,
  indications: ['CELIAC_DISEASE'],
  hpfClasses: [makeClass({ id: 1, name: 'IEL count', type: 'HPF', color: '#4A90E2' })],
  pointClasses: [
    makeClass({ id: 10, name: 'Enterocyte', color: '#FF9F00', sortOrder: 0 }),
    makeClass({ id: 11, name: 'IEL', color: '#87FF01', sortOrder: 1 }),
  ],
  multilineClasses: [
    makeClass({ id: 20, name: 'Unit 1', type: 'MULTILINE', sortOrder: 0 }),
    makeClass({ id: 21, name: 'Unit 2', type: 'MULTILINE', sortOrder: 1 }),
  ],
});

const a = (overrides: Partial<AnnotationView>) => makeAnnotation({ imageId: 7, userId: 7, ...overrides });
const line = (coordinates: [number, number][]) => ({ type: 'LineString' as const, coordinates });

function annotations(): AnnotationListResponse {
  return {
    imageId: 7,
    locked: false,
    authors: [
      { id: 7, displayName: 'Rita Reader' },
      { id: 8, displayName: 'Rob Reader' },
    ],
    annotations: [
      a({ id: 1, annotationType: 'HPF', annotationClassId: 1, radius: 550 }),
      a({ id: 2, annotationType: 'HPF', annotationClassId: null, radius: 550, text: 'Edge field' }),
      a({ id: 3, parentId: 1, annotationClassId: 10 }),
      a({ id: 4, parentId: 1, annotationClassId: 10 }),
      a({ id: 5, parentId: 1, annotationClassId: 11 }),
      a({ id: 6, parentId: null, annotationClassId: 10 }),
      a({ id: 7, parentId: 2, annotationClassId: null, userId: 8 }),
      a({
        id: 8,
        annotationType: 'LINE',
        geometry: line([
          [0, 0],
          [246.8, 0],
        ]),
        length: 123.4,
      }),
      a({
        id: 9,
        annotationType: 'MULTILINE',
        annotationClassId: 20,
        multilineCategory: 'VILLUS_HEIGHT',
        geometry: line([
          [0, 0],
          [500.8, 0],
        ]),
        length: 250.4,
      }),
      a({
        id: 10,
        annotationType: 'MULTILINE',
        annotationClassId: 20,
        multilineCategory: 'CRYPT_DEPTH',
        geometry: line([
          [0, 0],
          [200.4, 0],
        ]),
        length: 100.2,
      }),
    ],
  };
}

/** A reader's list names only the reader (the server's rule); the others' names every author. */
function listFor(role: string): AnnotationListResponse {
  const body = annotations();
  return role === 'CR' ? { ...body, authors: body.authors.filter((x) => x.id === 7) } : body;
}

function renderTab(actions: string[], role = 'CR', extra: Parameters<typeof mockFetch>[0] = {}) {
  const fetched = mockFetch({
    'GET /api/images/7': { body: makeImage() },
    'GET /api/studies/3': { body: study },
    'GET /api/images/7/annotations': { body: listFor(role) },
    'GET /api/auth/csrf': { body: { csrfToken: 'tok' } },
    ...extra,
  });
  renderRoutes([{ path: '/studies/:studyId/images/:id', element: <ImageViewerPage /> }], {
    path: '/studies/3/images/7',
    config: makeConfig(),
    user: makeUserAs(role, actions, { id: 7 }),
  });
  return fetched;
}

/** Opens the sidebar's Annotations tab once the image is there. */
async function openTab() {
  fireEvent.click(await screen.findByRole('tab', { name: 'Annotations' }));
}

const tree = async () => {
  await openTab();
  return screen.findByRole('tree', { name: 'Annotation tree' });
};
/** Each visible tree row as 'name count'. */
const rows = (root: HTMLElement) =>
  within(root)
    .getAllByRole('treeitem')
    .map((item) => {
      const row = item.querySelector('.lamina-tree-row')!;
      return `${row.querySelector('.lamina-tree-name')?.textContent} ${row.querySelector('.lamina-tree-count')?.textContent}`;
    });

afterEach(cleanup);
beforeEach(() => {
  stubResizeObserver();
  window.localStorage.clear();
  window.sessionStorage.clear();
});

describe('Annotations tab (doc 3 §2)', () => {
  it("shows classes → HPFs → point classes with counts, 'Other' and the 'Orphan'", async () => {
    renderTab(READER);
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('Orphan 1'));
    expect(rows(root)).toEqual(['IEL count 1', 'HPF 1 3', 'Other 1', 'Edge field 1', 'Orphan 1']);
    fireEvent.click(within(root).getByRole('button', { name: 'Expand HPF 1' }));
    fireEvent.click(within(root).getByRole('button', { name: 'Expand Edge field' }));
    expect(rows(root)).toEqual([
      'IEL count 1',
      'HPF 1 3',
      'Enterocyte 2',
      'IEL 1',
      'Other 1',
      'Edge field 1',
      'Other 1',
      'Orphan 1',
    ]);
  });

  it('lists the other annotations with their µm, and the celiac table with Vh:Cd', async () => {
    renderTab(READER);
    await openTab();
    const others = await screen.findByRole('region', { name: 'Other annotations' });
    await within(others).findByText('Line 123 µm');
    within(others).getByText('Unit 1 Villus Height 250 µm');
    within(others).getByText('Unit 1 Crypt Depth 100 µm');
    const table = screen.getByRole('table', { name: 'Celiac Line Measurements' });
    const cells = within(table)
      .getAllByRole('row')
      .map((r) =>
        within(r)
          .queryAllByRole('cell')
          .map((c) => c.textContent?.trim()),
      );
    expect(cells.slice(1)).toEqual([
      ['Unit 1', '250 µm', '100 µm', '2.5'],
      ['Unit 2', '—', '—', '—'],
    ]);
  });

  it('shows each region’s area in µm² and perimeter in µm (issue 29 item 4); none without a pixel size', async () => {
    const square = {
      type: 'Polygon' as const,
      coordinates: [
        [
          [0, 0],
          [200, 0],
          [200, 100],
          [0, 100],
          [0, 0],
        ] as [number, number][],
      ],
    };
    const body = listFor('CR');
    body.annotations.push(
      a({ id: 20, annotationType: 'FREEHAND', geometry: square, area: 5000, perimeter: 300 }),
      a({
        id: 21,
        annotationType: 'ELLIPSE',
        radiusX: 140,
        radiusY: 80,
        text: 'Abscess',
        area: 12_345.4,
        perimeter: 456.2,
      }),
      a({ id: 22, annotationType: 'FREEHAND', geometry: square, area: null, perimeter: null }),
    );
    Object.assign(body.annotations[0]!, { area: 238_000.2, perimeter: 1729.4 });
    renderTab(READER, 'CR', { 'GET /api/images/7/annotations': { body } });
    await openTab();
    const others = await screen.findByRole('region', { name: 'Other annotations' });
    await within(others).findByText('Freehand 5 000 µm² · 300 µm');
    // An HPF's row names its area and perimeter on hover; one without (no pixel size) names none.
    const root = screen.getByRole('tree', { name: 'Annotation tree' });
    expect(within(root).getByText('HPF 1').getAttribute('title')).toBe('238 000 µm² · 1729 µm');
    expect(within(root).getByText('Edge field').getAttribute('title')).toBeNull();
    within(others).getByText('Ellipse “Abscess” 12 345 µm² · 456 µm');
    within(others).getByText('Freehand');
    within(others).getByRole('button', { name: 'Delete Freehand 5 000 µm² · 300 µm' });
  });

  it("'Delete HPF and its points' asks first naming the points, sends deleteNested=true; the toast's Undo restores", async () => {
    const { calls } = renderTab(READER, 'CR', {
      'POST /api/annotations/1/restore': {
        body: {
          success: true,
          message: 'Annotation restored',
          annotations: annotations().annotations.filter((x) => [1, 3, 4, 5].includes(x.id ?? 0)),
          reparented: [],
        },
      },
      'DELETE /api/annotations/1': (call) => ({
        body:
          call.query.get('deleteNested') === 'true'
            ? { success: true, message: 'Annotation deleted', deletedIds: [1, 3, 4, 5], reparented: [] }
            : {
                success: true,
                message: 'Annotation deleted',
                deletedIds: [1],
                reparented: [3, 4, 5].map((id) => ({ id, parentId: null })),
              },
      }),
    });
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('HPF 1 3'));
    fireEvent.click(within(root).getByRole('button', { name: 'Delete menu of HPF 1' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Delete HPF and its points' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog.textContent).toContain('This HPF holds 3 points; they are deleted with it.');
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete HPF and 3 points' }));
    await waitFor(() => expect(rows(root)).toEqual(['IEL count 0', 'Other 1', 'Edge field 1', 'Orphan 1']));
    const deletion = calls.find((c) => c.method === 'DELETE');
    expect(deletion?.path).toBe('/api/annotations/1');
    expect(deletion?.query.get('deleteNested')).toBe('true');

    // The toast says what went and offers Undo: the server restores the HPF with its points.
    const toast = (await screen.findByText('Annotation deleted with its 3 points')).closest(
      '.bp6-toast',
    ) as HTMLElement;
    fireEvent.click(within(toast).getByRole('button', { name: 'Undo' }));
    await waitFor(() => expect(rows(root)).toContain('HPF 1 3'));
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/annotations/1/restore']);
  });

  it("'Delete HPF' sends deleteNested=false: its points become orphans", async () => {
    const { calls } = renderTab(READER, 'CR', {
      'DELETE /api/annotations/1': {
        body: {
          success: true,
          message: 'Annotation deleted',
          deletedIds: [1],
          reparented: [3, 4, 5].map((id) => ({ id, parentId: null })),
        },
      },
    });
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('HPF 1 3'));
    fireEvent.click(within(root).getByRole('button', { name: 'Delete menu of HPF 1' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Delete HPF' }));
    await waitFor(() => expect(rows(root)).toEqual(['IEL count 0', 'Other 1', 'Edge field 1', 'Orphan 4']));
    expect(calls.find((c) => c.method === 'DELETE')?.query.get('deleteNested')).toBe('false');
  });

  it('a delete shows the undo toast at once; an undo the server refuses (read locked meanwhile) shows its message and changes nothing here', async () => {
    const locked = `${ANNOTATION_MESSAGES.unableToRestore}: ${ANNOTATION_MESSAGES.lockedScored}`;
    const { calls } = renderTab(READER, 'CR', {
      // The list read again: the server holds the line deleted and the read locked.
      'GET /api/images/7/annotations': [
        { body: annotations() },
        { body: { ...annotations(), locked: true, annotations: annotations().annotations.filter((x) => x.id !== 8) } },
      ],
      'DELETE /api/annotations/8': {
        body: { success: true, message: 'Annotation deleted', deletedIds: [8], reparented: [] },
      },
      'POST /api/annotations/8/restore': { status: 409, body: { success: false, message: locked } },
    });
    await openTab();
    const others = await screen.findByRole('region', { name: 'Other annotations' });
    fireEvent.click(await within(others).findByRole('button', { name: 'Delete Line 123 µm' }));
    await screen.findByText('Annotation deleted');
    await waitFor(() => expect(within(others).queryByText('Line 123 µm')).toBeNull());
    const bar = screen.getByRole('toolbar', { name: 'Annotation tools' });
    const undo = within(bar).getByRole<HTMLButtonElement>('button', { name: 'Undo' });
    expect(undo.title).toBe('Undo deleting the line (Ctrl+Z)');

    // Ctrl+Z with the focus on the sidebar's button (not typing): the server refuses.
    fireEvent.keyDown(within(others).getAllByRole('button')[0]!, { key: 'z', ctrlKey: true });
    await screen.findByText(locked);
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/annotations/8/restore']);
    // The line stays deleted here as on the server; the list is read again and shows the lock, which
    // forgets the history.
    await waitFor(() => expect(undo.disabled).toBe(true));
    expect(within(others).queryByText('Line 123 µm')).toBeNull();
    expect(calls.filter((c) => c.path === '/api/images/7/annotations')).toHaveLength(2);
    expect(undo.title).toBe(`Undo (Ctrl+Z) — ${ANNOTATION_MESSAGES.lockedScored}`);
  });

  it('copies the counts as tab-separated rows', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    renderTab(READER);
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('Orphan 1'));
    fireEvent.click(screen.getByRole('button', { name: 'Copy counts' }));
    await waitFor(() => expect(writeText).toHaveBeenCalled());
    expect(writeText.mock.calls[0]).toEqual([
      [
        'HPF class\tHPF\tPoint class\tCount',
        'IEL count\tHPF 1\tEnterocyte\t2',
        'IEL count\tHPF 1\tIEL\t1',
        'Other\tEdge field\tOther\t1',
        '\tOrphan\tEnterocyte\t1',
      ].join('\n'),
    ]);
  });

  it('a node’s checkbox hides it; ISC filters by reader and has no delete menu', async () => {
    renderTab(ISC, 'ISC');
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('Orphan 1'));
    expect(within(root).queryByRole('button', { name: /Delete menu/ })).toBeNull();
    // Every reader shown: the HPF is named by its reader (issue 29 item 12).
    const show = within(root).getByRole<HTMLInputElement>('checkbox', { name: 'Show Rita Reader · HPF 1' });
    expect(show.checked).toBe(true);
    fireEvent.click(show);
    expect(show.checked).toBe(false);
    fireEvent.change(screen.getByRole('combobox', { name: 'Reader' }), { target: { value: '8' } });
    // Rob's point lies in Rita's HPF, which the filter leaves out: it shows as an orphan.
    await waitFor(() => expect(rows(root)).toEqual(['IEL count 0', 'Orphan 1']));
  });

  it('all readers (issue 29 item 12): each reader’s HPFs numbered from 1 and named by reader, a colour legend; one reader: neither', async () => {
    const body = annotations();
    // Rob's HPFs, drawn after Rita's: his first is 'HPF 1' to him, so here too.
    body.annotations.push(
      a({ id: 30, annotationType: 'HPF', annotationClassId: 1, radius: 550, userId: 8 }),
      a({ id: 31, annotationType: 'HPF', annotationClassId: 1, radius: 550, userId: 8 }),
    );
    renderTab(ISC, 'ISC', { 'GET /api/images/7/annotations': { body } });
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('Orphan 1'));
    expect(rows(root)).toEqual([
      'IEL count 3',
      'Rita Reader · HPF 1 3',
      'Rob Reader · HPF 1 0',
      'Rob Reader · HPF 2 0',
      'Other 1',
      'Rita Reader · Edge field 1',
      'Orphan 1',
    ]);
    const legend = screen.getByRole('list', { name: 'Reader colours' });
    const entries = within(legend)
      .getAllByRole('listitem')
      .map((li) => [li.textContent, li.dataset.color]);
    expect(entries).toEqual([
      ['Rita Reader', READER_COLORS[0]],
      ['Rob Reader', READER_COLORS[1]],
    ]);
    // The HPF rows' swatches are their reader's colour, as on the map.
    const swatch = (name: string) =>
      (within(root).getByRole('treeitem', { name }).querySelector('.lamina-class-swatch') as HTMLElement).style
        .background;
    expect(swatch('Rob Reader · HPF 1')).toBe(swatch('Rob Reader · HPF 2'));
    expect(swatch('Rob Reader · HPF 1')).not.toBe(swatch('Rita Reader · HPF 1'));

    fireEvent.change(screen.getByRole('combobox', { name: 'Reader' }), { target: { value: '8' } });
    await waitFor(() => expect(rows(root)).toEqual(['IEL count 2', 'HPF 1 0', 'HPF 2 0', 'Orphan 1']));
    expect(screen.queryByRole('list', { name: 'Reader colours' })).toBeNull();
    expect(swatch('HPF 1')).toBe(
      within(root).getByRole('treeitem', { name: 'IEL count' }).querySelector<HTMLElement>('.lamina-class-swatch')!
        .style.background,
    );
  });

  it('a reader with only their own annotations gets no reader filter, no legend and no reader names', async () => {
    renderTab(READER, 'CR', {
      'GET /api/images/7/annotations': { body: { ...annotations(), authors: [{ id: 7, displayName: 'Rita Reader' }] } },
    });
    const root = await tree();
    await waitFor(() => expect(rows(root)).toContain('HPF 1 3'));
    expect(screen.queryByRole('combobox', { name: 'Reader' })).toBeNull();
    expect(screen.queryByRole('list', { name: 'Reader colours' })).toBeNull();
    expect(root.textContent).not.toContain('Rita Reader');
  });
});
