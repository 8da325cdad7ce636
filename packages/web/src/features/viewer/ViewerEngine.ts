import Feature from 'ol/Feature';
import OlMap, { type FrameState } from 'ol/Map';
import View from 'ol/View';
import ViewHint from 'ol/ViewHint';
import OverviewMap from 'ol/control/OverviewMap';
import { easeOut } from 'ol/easing';
import { buffer } from 'ol/extent';
import { fromExtent } from 'ol/geom/Polygon';
import DragPan from 'ol/interaction/DragPan';
import { defaults as defaultInteractions } from 'ol/interaction/defaults';
import TileLayer from 'ol/layer/Tile';
import VectorLayer from 'ol/layer/Vector';
import Projection from 'ol/proj/Projection';
import VectorSource from 'ol/source/Vector';
import XYZ from 'ol/source/XYZ';
import Fill from 'ol/style/Fill';
import Stroke from 'ol/style/Stroke';
import Style from 'ol/style/Style';
import TileGrid from 'ol/tilegrid/TileGrid';
import { TILE_SIZE } from '@lamina/domain';
import { markStartup } from '../../lib/startupTiming';
import { TypedEmitter } from '../../lib/typedEmitter';
import { Glide, GLIDE_MS } from './viewerGlide';
import {
  fitResolution,
  fullResolutionPower,
  imageExtentOf,
  magnificationAt,
  maxViewResolution,
  metresPerPixel,
  MIN_RESOLUTION,
  MINI_MAP_PX,
  PAN_STEP_PX,
  resolutionForMagnification,
  scaleBarAt,
  isCalibrated,
  isDigitalZoom,
  stackTileUrl,
  tileResolutions,
  tmsZoomOf,
  type Extent,
  type ScaleBar,
} from './viewerGeometry';

/** What the engine needs of an image (a subset of the API's ImageView). */
export interface ViewerImage {
  id: number;
  width: number;
  height: number;
  maxTmsZoom: number;
  /** Template with {z}, {x}, {y} (and the tile token). */
  tileUrl: string;
  zStackSize: number;
  objectivePower?: number | null;
  physicalResolution?: number | null;
  magnifications?: readonly number[];
}

export type PanDirection = 'left' | 'right' | 'up' | 'down';

/** Every action of the toolbar, the keyboard and tests goes through one of these. */
export type ViewerCommand =
  | { type: 'zoomIn' }
  | { type: 'zoomOut' }
  | { type: 'zoomToFit' }
  | { type: 'zoomToMagnification'; magnification: number }
  | { type: 'pan'; direction: PanDirection; pixels?: number }
  | { type: 'setStack'; index: number }
  | { type: 'setMiniMapExpanded'; expanded: boolean }
  | { type: 'toggleMiniMap' }
  | { type: 'toggleOverlays' };

export interface ViewState {
  resolution: number;
  /** Fractional TMS zoom: maxTmsZoom at full resolution. */
  zoom: number;
  center: [number, number];
  /** Objective power at full resolution / downsample; null when the slide's power is unknown. */
  magnification: number | null;
  scaleBar: ScaleBar;
  /** Past full resolution (above the scan's native magnification): pixels enlarged only. */
  digitalZoom: boolean;
  /** Full resolution or closer (the z-stack slider shows only here). */
  atMaxZoom: boolean;
}

/** Everything the controls render, as one immutable snapshot (for useSyncExternalStore). */
export interface ViewerSnapshot {
  view: ViewState;
  miniMapExpanded: boolean;
  overlaysVisible: boolean;
  stack: number;
}

export interface ViewerEvents {
  /** Any change of the snapshot. */
  change: ViewerSnapshot;
  view: ViewState;
  miniMap: { expanded: boolean };
  overlays: { visible: boolean };
  stack: { index: number };
  /** A tile failed to load (throttled to one event per 2 s): e.g. the tile token expired. */
  tileError: { url: string };
  /**
   * Once: the slide's first complete frame is drawn (every tile of the view) — or
   * {@link FIRST_FRAME_WAIT_MS} after its first tiles were requested, whichever comes first; or, at
   * mount, the map has no area to draw in (no tiles would come: a hidden element, a test's DOM). The
   * viewers load their sidebars after it (issue 28), so that neither their rendering nor what they
   * ask the server for runs between the tiles' requests and their drawing.
   * {@link ViewerEngine.firstFrameShown} tells a late listener.
   */
  firstFrame: Record<string, never>;
}

/**
 * How long after the slide's first tile requests the `firstFrame` event waits at most for the
 * complete frame: on a slow link (or a tile that never answers) the sidebars come anyway.
 */
export const FIRST_FRAME_WAIT_MS = 1_000;

export interface ViewerEngineOptions {
  /** Animation of zoom and pan commands; 0 in tests. Default 200 ms. */
  animationMs?: number;
  miniMapExpanded?: boolean;
  /** Minimum time between two tileError events (doc 3 §8). Default 2000 ms. */
  tileErrorThrottleMs?: number;
  /**
   * Where to open instead of fitting the slide: the view of the image shown before (the case viewer
   * keeps it when switching images, doc 3 §2). The centre is a fraction of the slide's size.
   */
  initialView?: CarriedView | undefined;
}

/**
 * The DOM event the map's element fires after each frame the map draws (bubbling): whether every
 * tile of the view at the level shown is loaded and drawn, and where the view is. What the viewer
 * benchmark (scripts/bench/viewer.ts) and browser tests wait on; the engine's own listeners need none.
 */
export const VIEWER_FRAME_EVENT = 'lamina-viewer-frame';

export interface ViewerFrameDetail {
  /** Every tile of the view at the level drawn is loaded and drawn (no blank or coarser stand-in). */
  complete: boolean;
  center: [number, number];
  resolution: number;
}

/** A view carried from one slide to another: its resolution and its centre as a fraction of the size. */
export interface CarriedView {
  resolution: number;
  centerFraction: [number, number];
}

/** The view of a snapshot, to carry over to another slide. */
export function carriedView(
  state: { resolution: number; center: [number, number] },
  image: { width: number; height: number },
): CarriedView {
  return {
    resolution: state.resolution,
    centerFraction: [state.center[0] / image.width, -state.center[1] / image.height],
  };
}

/**
 * Tiles loading at once while the view moves (OpenLayers' default when it rests). OpenLayers 10
 * itself starts at most 2 a frame then, and none when the frame took over 8 ms — on a slow or busy
 * machine the tiles of a glide's end came only after it stopped (the `loadTilesWhileAnimating` and
 * `loadTilesWhileInteracting` options that lifted this are gone since OpenLayers 7).
 */
const TILES_LOADING_WHILE_MOVING = 16;

/** The slide's glass under its tiles: white, as the scanned background is (issue 29). */
export const SLIDE_GLASS = '#ffffff';
/** The line along the slide's edge, just outside it, on the grey outside the slide (viewer.css). */
export const SLIDE_EDGE = { color: 'rgba(28, 33, 39, 0.75)', widthPx: 1 } as const;

const GLASS_STYLE = new Style({ fill: new Fill({ color: SLIDE_GLASS }) });
const EDGE_STROKE = new Stroke({ color: SLIDE_EDGE.color, width: SLIDE_EDGE.widthPx });

/**
 * The layer of the slide's area (issue 29): white glass over the extent, under the tiles (so the
 * clipped edge strip and tiles still loading read as glass), and a line just outside the extent at
 * every zoom. Outside it the map shows its element's background (viewer.css: a mid grey), so nothing
 * beyond 0…width × 0…height looks like slide. It shares the tiles' canvas (className), so the
 * brightness filter applies to the glass too.
 */
export function slideAreaLayer(extent: Extent): VectorLayer<VectorSource> {
  const source = new VectorSource({ features: [new Feature(fromExtent(extent))] });
  return new VectorLayer({
    source,
    className: 'lamina-tile-layer',
    zIndex: -1,
    updateWhileAnimating: true,
    updateWhileInteracting: true,
    style: (_feature, resolution) => [
      GLASS_STYLE,
      // The line's middle half its width outside the extent: it covers no slide pixel.
      new Style({
        geometry: fromExtent(buffer(extent, (resolution * SLIDE_EDGE.widthPx) / 2)),
        stroke: EDGE_STROKE,
      }),
    ],
  });
}

const DIRECTION: Record<PanDirection, [number, number]> = {
  left: [-1, 0],
  right: [1, 0],
  up: [0, -1],
  down: [0, 1],
};

/**
 * The slide viewer as a service: wraps an OpenLayers map of the slide in pixel space
 * (see viewerGeometry) and exposes typed events and commands. React components render its state
 * and send it commands; they hold no map state of their own.
 */
export class ViewerEngine extends TypedEmitter<ViewerEvents> {
  readonly extent: Extent;
  readonly projection: Projection;
  readonly tileGrid: TileGrid;
  private readonly map: OlMap;
  private readonly view: View;
  private readonly sources: XYZ[];
  private readonly layers: TileLayer<XYZ>[];
  /** The slide's glass and edge under the tiles (slideAreaLayer). */
  readonly slideArea: VectorLayer<VectorSource>;
  private readonly overview: OverviewMap;
  private readonly power: number | null;
  private readonly mPerPixel: number;
  private readonly calibrated: boolean;
  private readonly animationMs: number;
  private readonly throttleMs: number;
  private lastTileError = -Infinity;
  private frameShown = false;
  private firstFrameTimer: ReturnType<typeof setTimeout> | undefined;
  private stackIndex = 0;
  private miniMapExpanded: boolean;
  private overlaysVisible = true;
  private fitted = false;
  private readonly initialView: CarriedView | undefined;
  private current: ViewerSnapshot;

  constructor(
    readonly image: ViewerImage,
    options: ViewerEngineOptions = {},
  ) {
    super();
    markStartup('viewer-engine');
    this.animationMs = options.animationMs ?? 200;
    this.throttleMs = options.tileErrorThrottleMs ?? 2000;
    this.miniMapExpanded = options.miniMapExpanded ?? true;
    this.initialView = options.initialView;
    this.power = fullResolutionPower(image);
    this.mPerPixel = metresPerPixel(image.physicalResolution);
    this.calibrated = isCalibrated(image.physicalResolution);
    this.extent = imageExtentOf(image.width, image.height);
    this.projection = new Projection({
      code: `lamina-image-${image.id}`,
      units: 'pixels',
      extent: this.extent,
      metersPerUnit: this.mPerPixel,
    });
    // Origin top-left, y counting down in tile coordinates: tile (z, x, y) is the server's.
    this.tileGrid = new TileGrid({
      extent: this.extent,
      origin: [0, 0],
      resolutions: tileResolutions(image.maxTmsZoom),
      tileSize: TILE_SIZE,
    });
    const stacks = Math.max(1, image.zStackSize);
    this.sources = Array.from({ length: stacks }, (_, i) => this.createSource(stackTileUrl(image.tileUrl, i)));
    // Clipping to the extent hides the padding of the edge tiles (TIFF tiles are stored whole).
    this.layers = this.sources.map(
      (source, i) =>
        // Tiles draw in their own canvas (className): brightness applies to them only, never to annotations.
        new TileLayer({
          source,
          extent: this.extent,
          visible: i === 0,
          preload: i === 0 ? 1 : 0,
          className: 'lamina-tile-layer',
        }),
    );
    this.slideArea = slideAreaLayer(this.extent);
    const [w, h] = [image.width, image.height];
    this.view = new View({
      projection: this.projection,
      extent: this.extent,
      constrainOnlyCenter: true,
      showFullExtent: true,
      center: [w / 2, -h / 2],
      resolution: fitResolution(w, h, [1024, 768]),
      maxResolution: maxViewResolution(image.maxTmsZoom),
      minResolution: MIN_RESOLUTION,
      constrainResolution: false,
      smoothResolutionConstraint: false,
    });
    const overviewResolution = Math.max(w, h) / (MINI_MAP_PX - 4);
    this.overview = new OverviewMap({
      layers: [
        slideAreaLayer(this.extent),
        new TileLayer({ source: this.sources[0], extent: this.clippedExtent(overviewResolution) }),
      ],
      collapsed: !this.miniMapExpanded,
      collapsible: true,
      // The whole slide, always (issue 29 item 17): OverviewMap recentres its view on the main
      // view when the box leaves it (at low zoom after a pan), which cropped the slide; an extent
      // of one point with constrainOnlyCenter keeps the centre on the slide's middle.
      view: new View({
        projection: this.projection,
        center: [w / 2, -h / 2],
        extent: [w / 2, -h / 2, w / 2, -h / 2],
        constrainOnlyCenter: true,
        resolution: overviewResolution,
        minResolution: overviewResolution,
        maxResolution: overviewResolution,
      }),
    });
    this.map = new OlMap({
      layers: [this.slideArea, ...this.layers],
      view: this.view,
      controls: [],
      interactions: defaultInteractions({
        keyboard: false,
        altShiftDragRotate: false,
        pinchRotate: false,
        dragPan: false,
      }).extend([new DragPan({ kinetic: new Glide((distance, angle) => this.glide(distance, angle)) })]),
    });
    this.current = this.makeSnapshot();
    this.view.on(['change:resolution', 'change:center'], () => {
      this.refresh();
      this.emit('view', this.current.view);
    });
    this.view.on('change:resolution', () => this.clipEdges());
    this.clipEdges();
    this.map.on('change:size', () => this.fitOnce());
    this.map.on('postrender', (event) => {
      this.loadTilesWhileMoving(event.frameState);
      this.announceFrame();
    });
  }

  /**
   * A flick's glide (see viewerGlide): `distance` screen pixels in the direction of `angle`, over
   * GLIDE_MS with ease-out. OpenLayers queues the tiles of where it ends from the first frame.
   */
  private glide(distance: number, angle: number): void {
    const [x, y] = this.view.getCenter() ?? [];
    const resolution = this.view.getResolution();
    if (x === undefined || y === undefined || !resolution) return;
    // Screen y grows downwards, the map's y upwards.
    const target: [number, number] = [
      x - distance * Math.cos(angle) * resolution,
      y + distance * Math.sin(angle) * resolution,
    ];
    this.view.animate({ center: this.view.getConstrainedCenter(target), duration: GLIDE_MS, easing: easeOut });
  }

  /** While the view is animated or dragged, keeps tiles loading as when it rests (see TILES_LOADING_WHILE_MOVING). */
  private loadTilesWhileMoving(frameState: FrameState | null): void {
    if (!frameState) return;
    const hints = frameState.viewHints;
    if (!hints[ViewHint.ANIMATING] && !hints[ViewHint.INTERACTING]) return;
    const queue = frameState.tileQueue;
    if (queue.isEmpty() || queue.getTilesLoading() >= TILES_LOADING_WHILE_MOVING) return;
    queue.reprioritize();
    queue.loadMoreTiles(TILES_LOADING_WHILE_MOVING, TILES_LOADING_WHILE_MOVING);
  }

  /** Fires VIEWER_FRAME_EVENT on the map's element for the frame just drawn. */
  private announceFrame(): void {
    const target = this.map.getTargetElement();
    if (!target) return;
    const centre = this.view.getCenter();
    const detail: ViewerFrameDetail = {
      complete: this.layers[this.stackIndex]?.getRenderer()?.renderComplete ?? false,
      center: [centre?.[0] ?? 0, centre?.[1] ?? 0],
      resolution: this.view.getResolution() ?? 1,
    };
    target.dispatchEvent(new CustomEvent(VIEWER_FRAME_EVENT, { bubbles: true, detail }));
    if (detail.complete) this.announceFirstFrame();
  }

  private makeSnapshot(): ViewerSnapshot {
    return {
      view: this.getState(),
      miniMapExpanded: this.miniMapExpanded,
      overlaysVisible: this.overlaysVisible,
      stack: this.stackIndex,
    };
  }

  private refresh(): void {
    this.current = this.makeSnapshot();
    this.emit('change', this.current);
  }

  /** The current snapshot; the same object until something changes. */
  get snapshot(): ViewerSnapshot {
    return this.current;
  }

  /** For useSyncExternalStore. */
  subscribe = (listener: () => void): (() => void) => this.on('change', listener);

  private createSource(url: string): XYZ {
    const source = new XYZ({ url, tileGrid: this.tileGrid, projection: this.projection, transition: 0 });
    source.once('tileloadstart', () => this.waitForFirstFrame());
    source.on('tileloaderror', (event) => {
      const now = Date.now();
      if (now - this.lastTileError < this.throttleMs) return;
      this.lastTileError = now;
      const tile = event.tile as { getKey?: () => string };
      this.emit('tileError', { url: tile.getKey?.() ?? '' });
    });
    return source;
  }

  /**
   * The extent the layers draw, less one pixel of the tile level shown at `resolution` on the right
   * and bottom: TIFF edge tiles are padded (black), and the canvas's smoothing would blend that
   * padding into the last row and column of the slide as a dark line.
   */
  clippedExtent(resolution: number): Extent {
    const z = this.tileGrid.getZForResolution(resolution, 0);
    const levelPixel = this.tileGrid.getResolution(z);
    const [minX, minY, maxX, maxY] = this.extent;
    return [minX, minY + levelPixel, maxX - levelPixel, maxY];
  }

  private clipEdges(): void {
    const extent = this.clippedExtent(this.view.getResolution() ?? 1);
    for (const layer of this.layers) layer.setExtent(extent);
  }

  /** Attaches the map (and the mini-map) to the page; `unmount` detaches them (mount again later). */
  mount(target: HTMLElement, miniMapTarget?: HTMLElement): void {
    if (miniMapTarget) this.overview.setTarget(miniMapTarget);
    this.map.addControl(this.overview);
    this.map.setTarget(target);
    markStartup('viewer-attached');
    this.fitOnce();
    const [width = 0, height = 0] = this.map.getSize() ?? [];
    if (width === 0 || height === 0) this.announceFirstFrame();
  }

  /** Whether the first complete frame was drawn, or waited for long enough (see the `firstFrame` event). */
  get firstFrameShown(): boolean {
    return this.frameShown;
  }

  private waitForFirstFrame(): void {
    if (this.frameShown || this.firstFrameTimer !== undefined) return;
    this.firstFrameTimer = setTimeout(() => this.announceFirstFrame(), FIRST_FRAME_WAIT_MS);
  }

  private announceFirstFrame(): void {
    if (this.frameShown) return;
    this.frameShown = true;
    clearTimeout(this.firstFrameTimer);
    markStartup('viewer-first-frame');
    this.emit('firstFrame', {});
  }

  unmount(): void {
    this.map.removeControl(this.overview);
    this.map.setTarget(undefined);
  }

  /**
   * The OpenLayers map, for the engine's own extensions (the annotation layers and drawing of
   * features/annotations, which are engine-side classes too). React never touches it.
   */
  get olMap(): OlMap {
    return this.map;
  }

  /** Sets the viewport size without a DOM (tests, server-side geometry). */
  setViewportSize(size: [number, number]): void {
    this.map.setSize(size);
  }

  destroy(): void {
    clearTimeout(this.firstFrameTimer);
    this.unmount();
    this.map.dispose();
    this.removeAllListeners();
  }

  /** The viewport size in pixels, [0, 0] before the map has one. */
  private viewportSize(): [number, number] {
    const size = this.map.getSize();
    return [size?.[0] ?? 0, size?.[1] ?? 0];
  }

  private fitOnce(): void {
    const [w, h] = this.viewportSize();
    if (this.fitted || w <= 0 || h <= 0) return;
    this.fitted = true;
    const carried = this.initialView;
    if (!carried) {
      this.zoomToFit(0);
      return;
    }
    const [fx, fy] = carried.centerFraction.map((f) => Math.min(1, Math.max(0, f))) as [number, number];
    this.view.setCenter([fx * this.image.width, -fy * this.image.height]);
    this.view.setResolution(
      Math.min(Math.max(carried.resolution, MIN_RESOLUTION), maxViewResolution(this.image.maxTmsZoom)),
    );
  }

  getState(): ViewState {
    const resolution = this.view.getResolution() ?? 1;
    const centre = this.view.getCenter();
    const center: [number, number] = [centre?.[0] ?? 0, centre?.[1] ?? 0];
    return {
      resolution,
      zoom: tmsZoomOf(resolution, this.image.maxTmsZoom),
      center,
      magnification: magnificationAt(resolution, this.power),
      scaleBar: scaleBarAt(resolution, this.mPerPixel, this.calibrated),
      digitalZoom: isDigitalZoom(resolution),
      atMaxZoom: resolution <= 1 + 1e-9,
    };
  }

  get objectivePower(): number | null {
    return this.power;
  }
  get stack(): number {
    return this.stackIndex;
  }
  get isMiniMapExpanded(): boolean {
    return this.miniMapExpanded;
  }
  get areOverlaysVisible(): boolean {
    return this.overlaysVisible;
  }

  execute(command: ViewerCommand): void {
    switch (command.type) {
      case 'zoomIn':
        return this.zoomBy(0.5);
      case 'zoomOut':
        return this.zoomBy(2);
      case 'zoomToFit':
        return this.zoomToFit(this.animationMs);
      case 'zoomToMagnification':
        return this.zoomToMagnification(command.magnification);
      case 'pan':
        return this.pan(command.direction, command.pixels ?? PAN_STEP_PX);
      case 'setStack':
        return this.setStack(command.index);
      case 'setMiniMapExpanded':
        return this.setMiniMapExpanded(command.expanded);
      case 'toggleMiniMap':
        return this.setMiniMapExpanded(!this.miniMapExpanded);
      case 'toggleOverlays':
        this.overlaysVisible = !this.overlaysVisible;
        this.refresh();
        this.emit('overlays', { visible: this.overlaysVisible });
        return;
    }
  }

  /** Where the running zoom animation ends: a zoom step taken during it starts from there. */
  private animationTarget: number | null = null;

  private setResolution(resolution: number, center?: [number, number]): void {
    const clamped = Math.min(Math.max(resolution, MIN_RESOLUTION), maxViewResolution(this.image.maxTmsZoom));
    this.animationTarget = clamped;
    this.view.cancelAnimations();
    if (this.animationMs > 0) {
      this.view.animate({ resolution: clamped, ...(center ? { center } : {}), duration: this.animationMs });
    } else {
      if (center) this.view.setCenter(center);
      this.view.setResolution(clamped);
    }
  }

  /**
   * One zoom step from where the view is going, not from where an animation happens to be: '+'
   * then '-' lands back on 10x, not on 9.98x.
   */
  private zoomBy(factor: number): void {
    const from =
      this.view.getAnimating() && this.animationTarget !== null ? this.animationTarget : this.view.getResolution();
    this.setResolution((from ?? 1) * factor);
  }

  private zoomToFit(duration: number): void {
    const [w, h] = this.viewportSize();
    const resolution = fitResolution(this.image.width, this.image.height, w > 0 && h > 0 ? [w, h] : [1024, 768]);
    const center: [number, number] = [this.image.width / 2, -this.image.height / 2];
    if (duration > 0) this.setResolution(resolution, center);
    else {
      this.view.setCenter(center);
      this.view.setResolution(resolution);
    }
  }

  /** Keys 1–6: 1.25x … 40x, computed from the objective power at full resolution. */
  private zoomToMagnification(magnification: number): void {
    if (!this.power || magnification <= 0) return;
    this.setResolution(resolutionForMagnification(magnification, this.power));
  }

  /** Moves the view by a number of screen pixels: 'up' shows what is above. */
  private pan(direction: PanDirection, pixels: number): void {
    const resolution = this.view.getResolution() ?? 1;
    const centre = this.view.getCenter();
    const [cx, cy] = [centre?.[0] ?? 0, centre?.[1] ?? 0];
    const [dx, dy] = DIRECTION[direction];
    const center: [number, number] = [cx + dx * pixels * resolution, cy - dy * pixels * resolution];
    this.view.cancelAnimations();
    if (this.animationMs > 0) this.view.animate({ center, duration: this.animationMs });
    else this.view.setCenter(center);
  }

  private setStack(index: number): void {
    const next = Math.min(Math.max(0, Math.round(index)), this.layers.length - 1);
    if (next === this.stackIndex) return;
    this.layers.forEach((layer, i) => layer.setVisible(i === next));
    this.stackIndex = next;
    this.refresh();
    this.emit('stack', { index: next });
  }

  private setMiniMapExpanded(expanded: boolean): void {
    this.miniMapExpanded = expanded;
    this.overview.setCollapsed(!expanded);
    this.refresh();
    this.emit('miniMap', { expanded });
  }

  /** A fresh tile URL (new token) after tiles failed, e.g. on expiry: every plane reloads. */
  setTileUrl(tileUrl: string): void {
    this.sources.forEach((source, i) => source.setUrl(stackTileUrl(tileUrl, i)));
  }

  /** The tile URL of (z, x, y) of the current plane, as the map requests it. */
  tileUrlFor(z: number, x: number, y: number): string | undefined {
    return this.sources[this.stackIndex]?.getTileUrlFunction()([z, x, y], 1, this.projection);
  }
}
