import type BaseEvent from 'ol/events/Event';
import type Geometry from 'ol/geom/Geometry';
import type XYZ from 'ol/source/XYZ';
import type Style from 'ol/style/Style';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stubResizeObserver } from './olTestSupport';
import {
  carriedView,
  FIRST_FRAME_WAIT_MS,
  SLIDE_EDGE,
  SLIDE_GLASS,
  ViewerEngine,
  type ViewerImage,
  type ViewState,
} from './ViewerEngine';

const CMU: ViewerImage = {
  id: 7,
  width: 2220,
  height: 2967,
  maxTmsZoom: 4,
  tileUrl: '/tiles/7/{z}/{x}/{y}?t=token',
  zStackSize: 1,
  objectivePower: 20,
  physicalResolution: 0.499,
};

let engine: ViewerEngine | undefined;
beforeEach(stubResizeObserver);
afterEach(() => {
  engine?.destroy();
  engine = undefined;
});

/** An engine with an 800 x 600 viewport and no DOM (nothing renders in jsdom). */
function create(image: ViewerImage = CMU): ViewerEngine {
  engine = new ViewerEngine(image, { animationMs: 0 });
  engine.setViewportSize([800, 600]);
  return engine;
}

describe('ViewerEngine', () => {
  it('opens at a view carried from another slide (the case viewer switching images) instead of fitting', () => {
    const first = create();
    first.execute({ type: 'zoomToMagnification', magnification: 10 }); // resolution 2
    first.execute({ type: 'pan', direction: 'right' });
    const carried = carriedView(first.getState(), CMU);
    first.destroy();
    const other: ViewerImage = { ...CMU, id: 8, width: 4440, height: 5934, maxTmsZoom: 5 };
    engine = new ViewerEngine(other, { animationMs: 0, initialView: carried });
    engine.setViewportSize([800, 600]);
    const state = engine.getState();
    expect(state.resolution).toBe(2);
    // The same place in proportion: the centre scales with the slide.
    expect(state.center[0] / other.width).toBeCloseTo(carried.centerFraction[0], 9);
    expect(-state.center[1] / other.height).toBeCloseTo(carried.centerFraction[1], 9);
  });

  it('builds the tile grid of the server: resolutions 2^(maxZoom - z), origin top-left, 256-px tiles', () => {
    const e = create();
    expect(e.tileGrid.getResolutions()).toEqual([16, 8, 4, 2, 1]);
    expect(e.tileGrid.getOrigin(0)).toEqual([0, 0]);
    expect(e.tileGrid.getTileSize(0)).toBe(256);
    expect(e.extent).toEqual([0, -2967, 2220, 0]);
    expect(e.projection.getUnits()).toBe('pixels');
    // Tile (4, 8, 11) is the bottom-right tile at full resolution: x and y count from the top-left.
    expect(e.tileGrid.getTileCoordForCoordAndZ([2219, -2966], 4)).toEqual([4, 8, 11]);
    expect(e.tileGrid.getTileCoordForCoordAndZ([1, -1], 0)).toEqual([0, 0, 0]);
    expect(e.tileUrlFor(4, 8, 11)).toBe('/tiles/7/4/8/11?t=token');
  });

  it('clips one pixel of the shown tile level off the right and bottom edges (padded edge tiles)', () => {
    const e = create();
    expect(e.clippedExtent(1)).toEqual([0, -2966, 2219, 0]);
    expect(e.clippedExtent(0.25)).toEqual([0, -2966, 2219, 0]);
    expect(e.clippedExtent(16)).toEqual([0, -2951, 2204, 0]);
    expect(e.clippedExtent(5)).toEqual([0, -2963, 2216, 0]);
  });

  it("lays white glass over the slide's extent only, under the tiles, with its edge line just outside (issue 29)", () => {
    const e = create();
    const layers = e.olMap.getLayers().getArray();
    // First and below the tile layers (zIndex -1): the glass shows in the clipped edge strip, never outside.
    expect(layers[0]).toBe(e.slideArea);
    expect(e.slideArea.getZIndex()).toBe(-1);
    expect(e.slideArea.getClassName()).toBe('lamina-tile-layer');
    const [glass] = e.slideArea.getSource()?.getFeatures() ?? [];
    expect(glass?.getGeometry()?.getExtent()).toEqual(e.extent);
    const styleFn = e.slideArea.getStyleFunction();
    if (!glass || !styleFn) throw new Error('no slide area');
    for (const resolution of [0.5, 1, 16]) {
      const styles = styleFn(glass, resolution) as Style[];
      expect(styles[0]?.getFill()?.getColor()).toBe(SLIDE_GLASS);
      expect(styles[0]?.getStroke()).toBeNull();
      const edge = styles[1];
      expect(edge?.getStroke()?.getWidth()).toBe(SLIDE_EDGE.widthPx);
      // The 1-px line's middle is half a screen pixel outside the extent at every zoom.
      const [minX, minY, maxX, maxY] = (edge?.getGeometry() as Geometry).getExtent();
      const half = resolution / 2;
      expect([minX, minY, maxX, maxY]).toEqual([-half, -2967 - half, 2220 + half, half]);
    }
  });

  it('opens fitted to the viewport, keeping the aspect, centred on the slide', () => {
    const state = create().getState();
    expect(state.resolution).toBeCloseTo(2967 / 600);
    expect(state.center).toEqual([1110, -1483.5]);
    expect(state.magnification).toBeCloseTo(20 / (2967 / 600));
  });

  it('zooms in and out by a factor of 2, the magnification label following', () => {
    const e = create();
    e.execute({ type: 'zoomToMagnification', magnification: 5 });
    expect(e.getState().resolution).toBe(4);
    expect(e.getState().zoom).toBe(2);
    e.execute({ type: 'zoomIn' });
    expect(e.getState()).toMatchObject({ resolution: 2, magnification: 10, zoom: 3, atMaxZoom: false });
    e.execute({ type: 'zoomIn' });
    expect(e.getState()).toMatchObject({ resolution: 1, magnification: 20, zoom: 4, atMaxZoom: true });
    e.execute({ type: 'zoomOut' });
    e.execute({ type: 'zoomOut' });
    expect(e.getState().magnification).toBe(5);
  });

  it('jumps to 1.25x … 40x from the objective power (40x on a 20x slide is a 2x digital zoom)', () => {
    const e = create();
    const seen: number[] = [];
    for (const magnification of [1.25, 2.5, 5, 10, 20, 40]) {
      e.execute({ type: 'zoomToMagnification', magnification });
      seen.push(e.getState().resolution);
    }
    expect(seen).toEqual([16, 8, 4, 2, 1, 0.5]);
  });

  it('keeps zoom within limits: twice the whole-slide tile out, 2x digital zoom in (issue 20: 40x on a 20x scan)', () => {
    const e = create();
    for (let i = 0; i < 12; i++) e.execute({ type: 'zoomOut' });
    expect(e.getState().resolution).toBe(32);
    expect(e.getState().digitalZoom).toBe(false);
    for (let i = 0; i < 20; i++) e.execute({ type: 'zoomIn' });
    expect(e.getState().resolution).toBe(0.5);
    expect(e.getState().magnification).toBe(40);
    expect(e.getState().digitalZoom).toBe(true);
  });

  it('pans 80 screen pixels per arrow, in slide pixels scaled by the resolution', () => {
    const e = create();
    e.execute({ type: 'zoomToMagnification', magnification: 10 }); // resolution 2
    const [x, y] = e.getState().center;
    e.execute({ type: 'pan', direction: 'right' });
    expect(e.getState().center).toEqual([x + 160, y]);
    e.execute({ type: 'pan', direction: 'down' });
    expect(e.getState().center).toEqual([x + 160, y - 160]);
    e.execute({ type: 'pan', direction: 'left' });
    e.execute({ type: 'pan', direction: 'up' });
    expect(e.getState().center).toEqual([x, y]);
  });

  it('reports the scale bar, a round length, from the microns per pixel, 2e-7 m when unknown', () => {
    const e = create();
    e.execute({ type: 'zoomToMagnification', magnification: 20 });
    // 100 px = 49.9 µm at 0.499 µm/px: the bar shows 20 µm, 40.08 px long.
    expect(e.getState().scaleBar).toMatchObject({ widthPx: 40.08, label: '20 µm' });
    e.execute({ type: 'zoomToMagnification', magnification: 5 });
    expect(e.getState().scaleBar).toMatchObject({ widthPx: 50.1, label: '100 µm' });
    engine?.destroy();
    const unknown = create({ ...CMU, physicalResolution: null, objectivePower: null });
    unknown.execute({ type: 'zoomIn' });
    const { resolution, scaleBar } = unknown.getState();
    expect(scaleBar.metres).toBeLessThanOrEqual(100 * resolution * 2e-7);
    expect(scaleBar.widthPx * resolution * 2e-7).toBeCloseTo(scaleBar.metres, 8);
    // Without a pixel size the length is an estimate, and says so (issue 20).
    expect(scaleBar.calibrated).toBe(false);
    expect(scaleBar.label).toMatch(/^≈ .+ (µm|mm) \(uncalibrated\)$/);
    // Without an objective power (nor pixel size) there is no magnification, and keys 1–6 do nothing.
    expect(unknown.getState().magnification).toBeNull();
    unknown.execute({ type: 'zoomToMagnification', magnification: 10 });
    expect(unknown.getState().resolution).toBe(resolution);
  });

  it('emits typed view events for every change', () => {
    const e = create();
    const states: ViewState[] = [];
    const off = e.on('view', (s) => states.push(s));
    e.execute({ type: 'zoomToMagnification', magnification: 10 });
    expect(states.at(-1)?.magnification).toBe(10);
    off();
    const count = states.length;
    e.execute({ type: 'zoomIn' });
    expect(states.length).toBe(count);
  });

  it('keeps one snapshot object until something changes (for useSyncExternalStore)', () => {
    const e = create();
    const first = e.snapshot;
    expect(e.snapshot).toBe(first);
    let notified = 0;
    e.subscribe(() => notified++);
    e.execute({ type: 'zoomIn' });
    expect(e.snapshot).not.toBe(first);
    expect(e.snapshot.view.resolution).toBeCloseTo(first.view.resolution / 2);
    e.execute({ type: 'toggleMiniMap' });
    expect(e.snapshot.miniMapExpanded).toBe(false);
    expect(notified).toBeGreaterThanOrEqual(2);
  });

  it('toggles the mini-map and the overlays, with events', () => {
    const e = create();
    const events: boolean[] = [];
    e.on('miniMap', ({ expanded }) => events.push(expanded));
    expect(e.isMiniMapExpanded).toBe(true);
    e.execute({ type: 'toggleMiniMap' });
    e.execute({ type: 'setMiniMapExpanded', expanded: true });
    expect(events).toEqual([false, true]);
    const overlays: boolean[] = [];
    e.on('overlays', ({ visible }) => overlays.push(visible));
    e.execute({ type: 'toggleOverlays' });
    expect(overlays).toEqual([false]);
  });

  it('has one tile layer per z-stack plane, showing the chosen one', () => {
    const e = create({ ...CMU, zStackSize: 3 });
    const planes: number[] = [];
    e.on('stack', ({ index }) => planes.push(index));
    expect(e.tileUrlFor(1, 0, 0)).toBe('/tiles/7/1/0/0?t=token');
    e.execute({ type: 'setStack', index: 2 });
    expect(e.stack).toBe(2);
    expect(e.tileUrlFor(1, 0, 0)).toBe('/tiles/7/1/0/0?t=token&stack=2');
    e.execute({ type: 'setStack', index: 9 });
    expect(planes).toEqual([2]);
  });

  it('swaps in a new tile URL (fresh token) for every plane', () => {
    const e = create({ ...CMU, zStackSize: 2 });
    e.setTileUrl('/tiles/7/{z}/{x}/{y}?t=fresh');
    expect(e.tileUrlFor(0, 0, 0)).toBe('/tiles/7/0/0/0?t=fresh');
    e.execute({ type: 'setStack', index: 1 });
    expect(e.tileUrlFor(0, 0, 0)).toBe('/tiles/7/0/0/0?t=fresh&stack=1');
  });
});

describe('ViewerEngine tile errors (doc 3 §8)', () => {
  afterEach(() => vi.useRealTimers());

  it('come out at most once per 2 s, so the session is re-checked at most that often', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T10:00:00Z'));
    const e = create();
    const seen: string[] = [];
    e.on('tileError', ({ url }) => seen.push(url));
    const source = (e as unknown as { layers: { getSource(): XYZ }[] }).layers[0]?.getSource();
    if (!source) throw new Error('no tile source');
    const fail = (key: string) =>
      source.dispatchEvent({ type: 'tileloaderror', tile: { getKey: () => key } } as unknown as BaseEvent);
    fail('a');
    fail('b');
    vi.setSystemTime(new Date('2026-11-25T10:00:01.900Z'));
    fail('c');
    expect(seen).toEqual(['a']);
    vi.setSystemTime(new Date('2026-11-25T10:00:02.100Z'));
    fail('d');
    expect(seen).toEqual(['a', 'd']);
  });
});

describe("ViewerEngine's first frame (issue 28: the sidebars wait for it)", () => {
  afterEach(() => vi.useRealTimers());
  const sourceOf = (e: ViewerEngine) => {
    const source = (e as unknown as { layers: { getSource(): XYZ }[] }).layers[0]?.getSource();
    if (!source) throw new Error('no tile source');
    return source;
  };

  it('is announced once, a second after the first tile requests when no complete frame came first', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const e = create();
    let announced = 0;
    e.on('firstFrame', () => (announced += 1));
    vi.advanceTimersByTime(5 * FIRST_FRAME_WAIT_MS);
    // No tile asked for yet (nothing renders here): no reason to give up waiting.
    expect(announced).toBe(0);
    expect(e.firstFrameShown).toBe(false);
    sourceOf(e).dispatchEvent({ type: 'tileloadstart' } as unknown as BaseEvent);
    vi.advanceTimersByTime(FIRST_FRAME_WAIT_MS - 1);
    expect(announced).toBe(0);
    vi.advanceTimersByTime(1);
    expect(announced).toBe(1);
    expect(e.firstFrameShown).toBe(true);
    // The source's next tiles (another plane, a fresh token) do not start another wait.
    sourceOf(e).dispatchEvent({ type: 'tileloadstart' } as unknown as BaseEvent);
    vi.advanceTimersByTime(5 * FIRST_FRAME_WAIT_MS);
    expect(announced).toBe(1);
  });

  it('is announced at mount when the map has no area to draw in (no tiles would come)', () => {
    const e = create();
    e.setViewportSize([0, 0]);
    let announced = 0;
    e.on('firstFrame', () => (announced += 1));
    e.mount(document.createElement('div'));
    expect(announced).toBe(1);
    expect(e.firstFrameShown).toBe(true);
  });

  it('stops waiting when destroyed', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const e = create();
    sourceOf(e).dispatchEvent({ type: 'tileloadstart' } as unknown as BaseEvent);
    e.destroy();
    engine = undefined;
    vi.advanceTimersByTime(5 * FIRST_FRAME_WAIT_MS);
    expect(e.firstFrameShown).toBe(false);
  });
});
