import type { AiLayers, AnnotationView } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type BaseLayer from 'ol/layer/Base';
import type ImageLayer from 'ol/layer/Image';
import type ImageStatic from 'ol/source/ImageStatic';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig, makeImage, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes, renderWithProviders } from '../../test/render';
import { ImageViewerPage } from '../viewer/ImageViewerPage';
import { stubResizeObserver } from '../viewer/olTestSupport';
import { SlideView, type ViewableImage } from '../viewer/SlideView';
import { ViewerEngine } from '../viewer/ViewerEngine';
import { AiAnnotationLayers } from './AiAnnotationLayers';
import { AnnotationProvider } from './AnnotationSession';
import { AnnotationStore } from './annotationStore';
import { makeAnnotation } from './testData';

const VIEWER = ['AP_ImageViewer_ViewimageViewer', 'AP_ImageCaseViewer_ViewOverviewtab'];
const READER = [
  ...VIEWER,
  'AP_ImageCaseViewer_ViewAnnotationstab',
  'AP_ImageViewer_ViewAnnotationsToolbar',
  'AP_ImageViewer_EditCreateAnnotations',
  'AP_ImageViewer_DeleteAnnotations',
  'AP_ImageViewer_AcceptAIAnnotations',
];

const MLD = { id: 9, name: 'APP12_S1001_A.mld', appSequenceId: '12' };
const image = () => makeImage({ mldFile: MLD });

/** AI objects of image 7: an HPF of 'Inflamed field' holding two lymphocytes, one outside, a tissue region. */
function aiRows(): AnnotationView[] {
  const ai = (o: Partial<AnnotationView>) => makeAnnotation({ imageId: 7, userId: null, source: 'VisioPharm', ...o });
  return [
    ai({ id: 101, annotationType: 'HPF', annotationClassId: 501, color: '#FF0000', radius: 300 }),
    ai({ id: 102, annotationClassId: 502, color: '#00FF00', parentId: 101 }),
    ai({ id: 103, annotationClassId: 502, color: '#00FF00', parentId: 101 }),
    ai({ id: 104, annotationClassId: 502, color: '#00FF00', geometry: { type: 'Point', coordinates: [2000, 2000] } }),
    ai({
      id: 105,
      annotationType: 'FREEHAND',
      annotationClassId: 503,
      color: '#0000FF',
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [10, 10],
            [500, 10],
            [500, 400],
            [10, 10],
          ],
        ],
      },
    }),
  ];
}

function aiLayers(overrides: Partial<AiLayers> = {}): AiLayers {
  return {
    success: true,
    imageId: 7,
    acceptAiAnnotations: false,
    imports: [
      {
        mldId: 9,
        name: MLD.name,
        appSequenceId: '12',
        numLayers: 3,
        counts: { hpfs: 1, points: 3, regions: 1, lines: 0 },
        heatmap: { name: 'Density', url: '/api/mld/9/heatmap' },
        completedAt: '2026-11-20T10:00:00.000Z',
      },
    ],
    classes: [
      { id: 501, name: 'Inflamed field', color: '#FF0000', count: 1 },
      { id: 502, name: 'Lymphocyte', color: '#00FF00', count: 3 },
      { id: 503, name: 'Tissue', color: '#0000FF', count: 1 },
    ],
    ...overrides,
  };
}

function server(extra: Parameters<typeof mockFetch>[0] = {}) {
  return mockFetch({
    'GET /api/images/7': { body: image() },
    'GET /api/studies/3': { body: makeStudy({ id: 3 }) },
    'GET /api/images/7/annotations': { body: { imageId: 7, locked: false, authors: [], annotations: [] } },
    'GET /api/images/7/ai-layers': { body: aiLayers() },
    'GET /api/images/7/ai-annotations': { body: { imageId: 7, annotations: aiRows() } },
    'GET /api/auth/csrf': { body: { csrfToken: 'tok' } },
    'PATCH /api/images/7/accept-ai-annotations': (call) => ({
      body: {
        success: true,
        message: (call.body as { acceptAiAnnotations: boolean }).acceptAiAnnotations ? 'Accepted' : 'Rejected',
        imageId: 7,
      },
    }),
    ...extra,
  });
}

function renderViewer(actions = READER) {
  return renderRoutes([{ path: '/studies/:studyId/images/:id', element: <ImageViewerPage /> }], {
    path: '/studies/3/images/7',
    config: makeConfig(),
    user: makeUserAs('CR', actions, { id: 7 }),
  });
}

async function aiSection() {
  fireEvent.click(await screen.findByRole('tab', { name: 'Annotations' }));
  return screen.findByRole('region', { name: 'Imported AI annotations' });
}

/** Each visible row of a tree as 'name count'. */
const rows = (root: HTMLElement) =>
  within(root)
    .getAllByRole('treeitem')
    .map((item) => {
      const row = item.querySelector('.lamina-tree-row')!;
      return `${row.querySelector('.lamina-tree-name')?.textContent} ${row.querySelector('.lamina-tree-count')?.textContent}`;
    });

let engine: ViewerEngine | undefined;
afterEach(() => {
  cleanup();
  engine?.destroy();
  engine = undefined;
});
beforeEach(() => {
  stubResizeObserver();
  window.localStorage.clear();
  window.sessionStorage.clear();
});

describe('the imported AI annotation tree (doc 3 §2)', () => {
  it('shows the import with its APP sequence, the AI classes with counts, and class → HPF → point counts', async () => {
    server();
    renderViewer();
    const section = await aiSection();
    await within(section).findByText(MLD.name);
    expect(within(section).getByTestId('app-sequence').textContent).toBe('12');
    expect(section.textContent).toContain('heatmap');
    const classes = within(section).getByRole('tree', { name: 'AI classes' });
    expect(rows(classes)).toEqual(['Inflamed field 1', 'Lymphocyte 3', 'Tissue 1']);
    const tree = within(section).getByRole('tree', { name: 'AI annotation tree' });
    within(section).getByText('AI HPFs (1) · points (3)');
    expect(rows(tree)).toEqual(['Inflamed field 1', 'HPF 1 2', 'Orphan 1']);
    fireEvent.click(within(tree).getByRole('button', { name: 'Expand HPF 1' }));
    fireEvent.click(within(tree).getByRole('button', { name: 'Expand Orphan' }));
    expect(rows(tree)).toEqual(['Inflamed field 1', 'HPF 1 2', 'Lymphocyte 2', 'Orphan 1', 'Lymphocyte 1']);
    // Read-only for everyone: no delete menu, although this reader may delete their own annotations.
    expect(within(section).queryByRole('button', { name: /Delete/ })).toBeNull();
    // The readers' own tree holds none of them.
    screen.getByText('HPFs (0) · points (0)');
  });

  it('each node has a visibility checkbox', async () => {
    server();
    renderViewer();
    const section = await aiSection();
    const tissue = await within(section).findByRole<HTMLInputElement>('checkbox', { name: 'Show Tissue' });
    expect(tissue.checked).toBe(true);
    fireEvent.click(tissue);
    expect(tissue.checked).toBe(false);
    const hpf = within(section).getByRole<HTMLInputElement>('checkbox', { name: 'Show HPF 1' });
    fireEvent.click(hpf);
    expect(hpf.checked).toBe(false);
  });

  it("'Include AI annotation counts in reports' is the image's acceptAiAnnotations, set by PATCH accept-ai-annotations", async () => {
    const { calls } = server();
    renderViewer();
    const section = await aiSection();
    const box = await within(section).findByRole<HTMLInputElement>('checkbox', {
      name: 'Include AI annotation counts in reports',
    });
    expect(box.checked).toBe(false);
    expect(box.disabled).toBe(false);
    fireEvent.click(box);
    await waitFor(() => expect(box.checked).toBe(true));
    const patch = calls.find((c) => c.path === '/api/images/7/accept-ai-annotations');
    expect(patch?.method).toBe('PATCH');
    expect(patch?.body).toEqual({ acceptAiAnnotations: true });
    expect(calls.filter((c) => c.path === '/api/images/7')).toHaveLength(1); // the image is not fetched again
  });

  it('the checkbox is read-only without the accept permission (an ISC sees the choice made)', async () => {
    server({ 'GET /api/images/7/ai-layers': { body: aiLayers({ acceptAiAnnotations: true }) } });
    renderViewer([...VIEWER, 'AP_ImageCaseViewer_ViewAnnotationstab']);
    const section = await aiSection();
    const box = await within(section).findByRole<HTMLInputElement>('checkbox', {
      name: 'Include AI annotation counts in reports',
    });
    expect(box.checked).toBe(true);
    expect(box.disabled).toBe(true);
  });

  it('an image without an import asks for no AI layers and shows no AI section', async () => {
    const { calls } = server({ 'GET /api/images/7': { body: makeImage() } });
    renderViewer();
    fireEvent.click(await screen.findByRole('tab', { name: 'Annotations' }));
    await screen.findByRole('tree', { name: 'Annotation tree' });
    expect(screen.queryByRole('region', { name: 'Imported AI annotations' })).toBeNull();
    expect(calls.some((c) => c.path.includes('/ai-'))).toBe(false);
  });
});

const layerNamed = (name: string) =>
  engine?.olMap
    .getLayers()
    .getArray()
    .filter((l: BaseLayer) => l.getClassName() === name) ?? [];

describe('the AI layers on the map (issue 17)', () => {
  function makeEngine() {
    engine = new ViewerEngine(
      { id: 7, width: 2220, height: 2967, maxTmsZoom: 4, tileUrl: '/tiles/7/{z}/{x}/{y}', zStackSize: 1 },
      { animationMs: 0 },
    );
    return engine;
  }

  it("draws the AI objects through the annotation layers (their own, under the readers'), with the heatmap over the slide", () => {
    const map = makeEngine().olMap;
    const interactions = map.getInteractions().getLength();
    const store = new AnnotationStore(7);
    store.setClasses([501], [502]);
    const layers = new AiAnnotationLayers(map, store, {
      width: 2220,
      height: 2967,
      mpp: 0.5,
      classColor: () => null,
      heatmaps: ['/api/mld/9/heatmap'],
    });
    store.load({ imageId: 7, locked: true, authors: [], annotations: aiRows() });
    expect(layers.objects.counts).toEqual({ pointsAndHpfs: 4, others: 1 });
    expect(layers.objects.vectorLayer.getClassName()).toBe('lamina-ai-annotation-layer');
    expect(layers.objects.glLayer.getClassName()).toBe('lamina-ai-annotation-layer-gl');
    expect(layers.objects.vectorLayer.getZIndex()).toBeLessThan(10);
    // Never editable: no drawing interaction joins the map.
    expect(map.getInteractions().getLength()).toBe(interactions);
    const [heatmap] = layers.heatmaps;
    expect(heatmap?.getSource()?.getUrl()).toBe('/api/mld/9/heatmap');
    expect(heatmap?.getSource()?.getImageExtent()).toEqual([0, -2967, 2220, 0]);
    expect(heatmap?.getZIndex()).toBeLessThan(layers.objects.glLayer.getZIndex() ?? 0);

    layers.setOpacity(0.4);
    layers.setVisible(false);
    for (const layer of [layers.objects.glLayer, layers.objects.vectorLayer, heatmap as ImageLayer<ImageStatic>]) {
      expect(layer.getOpacity()).toBe(0.4);
      expect(layer.getVisible()).toBe(false);
    }
    // A hidden AI class leaves the map.
    store.setHidden({ kind: 'class', classId: 503 }, true);
    expect(layers.objects.counts.others).toBe(0);
    layers.destroy();
    expect(layerNamed('lamina-ai-heatmap')).toHaveLength(0);
    expect(layerNamed('lamina-ai-annotation-layer')).toHaveLength(0);
  });

  it('the annotation opacity slider (issue 29 item 16) sets the readers’ layers live and keeps the preference', async () => {
    window.localStorage.setItem('lamina.viewer.annotationOpacity', '40');
    server();
    renderWithProviders(
      <AnnotationProvider imageId={7} studyId={3} mpp={0.499}>
        <SlideView image={image() as ViewableImage} engine={makeEngine()} />
      </AnnotationProvider>,
      { config: makeConfig(), user: makeUserAs('CR', READER, { id: 7 }) },
    );
    // Opens at the stored value: the layers and the slider.
    await waitFor(() => expect(layerNamed('lamina-annotation-layer')).toHaveLength(1));
    await waitFor(() => expect(layerNamed('lamina-ai-annotation-layer')).toHaveLength(1));
    // The readers' layers as they are now (the tools remake them when the study's classes arrive).
    const readers = () => [...layerNamed('lamina-annotation-layer'), ...layerNamed('lamina-annotation-layer-gl')];
    const slider = await screen.findByRole('slider', { name: 'Annotation opacity' });
    expect(readers()).toHaveLength(2);
    for (const layer of readers()) expect(layer.getOpacity()).toBeCloseTo(0.4);
    expect(slider.getAttribute('aria-valuenow')).toBe('40');
    expect(within(screen.getByTestId('annotation-opacity')).getByText('Opacity')).toBeTruthy();
    // The keyboard moves it (Blueprint's handle); the layers follow at once, not the AI layers.
    for (let i = 0; i < 5; i++) fireEvent.keyDown(slider, { key: 'ArrowRight', which: 39, keyCode: 39 });
    expect(slider.getAttribute('aria-valuenow')).toBe('45');
    expect(readers()).toHaveLength(2);
    for (const layer of readers()) expect(layer.getOpacity()).toBeCloseTo(0.45);
    expect(layerNamed('lamina-annotation-draft')[0]?.getOpacity()).toBe(1);
    expect(layerNamed('lamina-ai-annotation-layer')[0]?.getOpacity()).toBe(0);
    // Kept once it rests (debounced 100 ms, doc 3 §9).
    await waitFor(() => expect(window.localStorage.getItem('lamina.viewer.annotationOpacity')).toBe('45'));
    // Hidden annotations ('a'): no slider.
    fireEvent.keyDown(window, { key: 'a' });
    expect(screen.queryByTestId('annotation-opacity')).toBeNull();
  });

  it("the slide view attaches them at the stored AI opacity (0 when nothing was set) and 'i' hides and shows them", async () => {
    server();
    const viewed = image() as ViewableImage;
    renderWithProviders(
      <AnnotationProvider imageId={7} studyId={3} mpp={0.499}>
        <SlideView image={viewed} engine={makeEngine()} />
      </AnnotationProvider>,
      { config: makeConfig(), user: makeUserAs('CR', READER, { id: 7 }) },
    );
    await waitFor(() => expect(layerNamed('lamina-ai-annotation-layer')).toHaveLength(1));
    const [objects] = layerNamed('lamina-ai-annotation-layer');
    const [heatmap] = layerNamed('lamina-ai-heatmap');
    expect(objects?.getOpacity()).toBe(0);
    expect(heatmap?.getOpacity()).toBe(0);
    expect(objects?.getVisible()).toBe(true);
    const checkbox = screen.getByRole<HTMLInputElement>('checkbox', { name: 'AI layers' });
    expect(checkbox.checked).toBe(true);
    fireEvent.keyDown(window, { key: 'i' });
    expect(checkbox.checked).toBe(false);
    expect(objects?.getVisible()).toBe(false);
    expect(heatmap?.getVisible()).toBe(false);
    expect(screen.queryByTestId('ai-opacity')).toBeNull();
    fireEvent.keyDown(window, { key: 'i' });
    expect(objects?.getVisible()).toBe(true);
    // The slider sets their opacity (kept once it rests, doc 3 §9).
    const slider = screen.getByRole('slider', { name: 'AI annotation opacity' });
    expect(slider.getAttribute('aria-valuenow')).toBe('0');
    for (let i = 0; i < 5; i++) fireEvent.keyDown(slider, { key: 'ArrowRight', which: 39, keyCode: 39 });
    await waitFor(() => expect(objects?.getOpacity()).toBeCloseTo(0.05));
    expect(heatmap?.getOpacity()).toBeCloseTo(0.05);
  });
});
