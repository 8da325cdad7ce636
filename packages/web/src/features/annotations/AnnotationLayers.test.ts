import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stubResizeObserver } from '../viewer/olTestSupport';
import { ViewerEngine } from '../viewer/ViewerEngine';
import DoubleClickZoom from 'ol/interaction/DoubleClickZoom';
import { AnnotationLayers, ellipseRing, toImage, toMap } from './AnnotationLayers';
import { AnnotationStore } from './annotationStore';
import { DrawingMachine, OUTSIDE_SLIDE_MESSAGE } from './drawingMachine';
import { makeAnnotation } from './testData';
import { READER_COLORS } from '@lamina/domain';
import type CircleStyle from 'ol/style/Circle';
import type Style from 'ol/style/Style';
import { pointLook, rgba } from './annotationStyle';

let engine: ViewerEngine | undefined;
beforeEach(stubResizeObserver);
afterEach(() => engine?.destroy());

function setUp() {
  engine = new ViewerEngine(
    { id: 13, width: 8000, height: 6000, maxTmsZoom: 5, tileUrl: '/tiles/13/{z}/{x}/{y}', zStackSize: 1 },
    { animationMs: 0 },
  );
  const store = new AnnotationStore(13);
  store.setClasses([1], [10]);
  const machine = new DrawingMachine();
  const layers = new AnnotationLayers(
    engine.olMap,
    store,
    { celiac: false, mpp: 0.5, classColor: () => null, width: 8000, height: 6000 },
    machine,
  );
  return { store, layers, machine };
}

const rows = () => [
  makeAnnotation({ id: 1, annotationType: 'HPF', annotationClassId: 1, radius: 550 }),
  makeAnnotation({ id: 2, parentId: 1, annotationClassId: 10 }),
  makeAnnotation({ id: 3, parentId: null, annotationClassId: 10 }),
  makeAnnotation({
    id: 4,
    annotationType: 'LINE',
    geometry: {
      type: 'LineString',
      coordinates: [
        [0, 0],
        [10, 0],
      ],
    },
    length: 5,
  }),
];

describe('AnnotationLayers', () => {
  it('puts points and HPFs in the WebGL layer and the rest in the canvas layer, each in its own canvas', () => {
    const { store, layers } = setUp();
    store.load({ imageId: 13, locked: false, authors: [], annotations: rows() });
    expect(layers.counts).toEqual({ pointsAndHpfs: 3, others: 1 });
    expect(layers.glLayer.getClassName()).toBe('lamina-annotation-layer-gl');
    expect(layers.vectorLayer.getClassName()).toBe('lamina-annotation-layer');
    expect(engine?.olMap.getLayers().getArray()).toContain(layers.glLayer);
  });

  it('follows visibility, creates and deletes without rebuilding the rest', () => {
    const { store, layers } = setUp();
    store.load({ imageId: 13, locked: false, authors: [], annotations: rows() });
    store.setHidden({ kind: 'hpf', hpfId: 1 }, true);
    expect(layers.counts).toEqual({ pointsAndHpfs: 1, others: 1 });
    store.setHidden({ kind: 'hpf', hpfId: 1 }, false);
    store.add(makeAnnotation({ id: 5, parentId: null }));
    expect(layers.counts).toEqual({ pointsAndHpfs: 4, others: 1 });
    store.remove([1, 2, 4]);
    expect(layers.counts).toEqual({ pointsAndHpfs: 2, others: 0 });
  });

  it('draws each reader in their colour with every reader shown, class colours with one (issue 29 item 12)', () => {
    const { store, layers } = setUp();
    const hpfOf = (id: number, userId: number) =>
      makeAnnotation({ id, annotationType: 'HPF', annotationClassId: 1, radius: 550, userId, color: '#4A90E2' });
    store.load({
      imageId: 13,
      locked: false,
      authors: [
        { id: 9, displayName: 'Rita Reader' },
        { id: 10, displayName: 'Rob Reader' },
      ],
      annotations: [hpfOf(1, 9), hpfOf(2, 10), makeAnnotation({ id: 3, userId: 10, color: '#FF9F00' })],
    });
    // Without WebGL (jsdom) points and HPFs are canvas features: their style carries the colour.
    const colour = (id: number) => {
      const feature = layers.vectorLayer.getSource()?.getFeatureById(id);
      const style = layers.vectorLayer.getStyleFunction()?.(feature!, 1);
      const image = ([style].flat() as Style[])[0]?.getImage() as CircleStyle;
      // An HPF is a ring (its stroke), a point a disc (its fill).
      return id === 3 ? image.getFill()?.getColor() : image.getStroke()?.getColor();
    };
    expect(layers.webgl).toBe(false);
    expect([colour(1), colour(2)]).toEqual([READER_COLORS[0], READER_COLORS[1]]);
    expect(colour(3)).toBe(rgba(READER_COLORS[1], pointLook(false).opacity));
    store.setAuthor(10);
    expect([colour(2), colour(3)]).toEqual(['#4A90E2', rgba('#FF9F00', pointLook(false).opacity)]);
  });

  it('hides and shows with the Annotations checkbox; opacity applies to the annotation layers', () => {
    const { layers } = setUp();
    layers.setVisible(false);
    expect(layers.glLayer.getVisible()).toBe(false);
    expect(layers.vectorLayer.getVisible()).toBe(false);
    layers.setOpacity(0.4);
    expect(layers.glLayer.getOpacity()).toBe(0.4);
  });

  it('maps image pixels (y down) to the map (y up), and rotates an ellipse clockwise on screen', () => {
    expect(toMap([10, 20])).toEqual([10, -20]);
    expect(toImage([10, -20])).toEqual([10, 20]);
    const ring = ellipseRing([100, 100], 50, 10, 90, 4);
    // The x radius turned by 90° points down the image (y + 50): map y - 150.
    expect(ring[0]?.[0]).toBeCloseTo(100);
    expect(ring[0]?.[1]).toBeCloseTo(-150);
  });

  it("turns the map's double-click zoom off while a tool is active (issue 29, item 1)", () => {
    const { layers, machine } = setUp();
    const zooms = () =>
      (engine?.olMap.getInteractions().getArray() ?? [])
        .filter((i) => i instanceof DoubleClickZoom)
        .map((i) => i.getActive());
    expect(zooms()).toEqual([true]);
    machine.setTool('multiline');
    expect(zooms()).toEqual([false]);
    machine.setTool(null);
    expect(zooms()).toEqual([true]);
    machine.setTool('point');
    layers.destroy();
    expect(zooms()).toEqual([true]);
  });

  it("refuses a vertex outside the slide with 'Outside the slide' beside it (issue 29, item 2)", () => {
    const { machine } = setUp();
    const cue = () =>
      (engine?.olMap.getOverlays().getArray() ?? [])
        .map((o) => o.getElement())
        .filter((e): e is HTMLElement => !!e?.classList.contains('lamina-outside-cue'));
    machine.setTool('multiline');
    expect(cue().map((c) => c.hidden)).toEqual([true]);
    machine.click([8001, 10], 1);
    expect(machine.snapshot.draft.coords).toEqual([]);
    expect(cue()[0]?.hidden).toBe(false);
    expect(cue()[0]?.textContent).toBe(OUTSIDE_SLIDE_MESSAGE);
    expect(cue()[0]?.getAttribute('role')).toBe('status');
    machine.hover([7999, 10]);
    expect(cue()[0]?.hidden).toBe(true);
    machine.click([7999, 10], 1);
    expect(machine.snapshot.draft.coords).toEqual([[7999, 10]]);
  });
});
