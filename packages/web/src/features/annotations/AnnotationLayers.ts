import {
  ANNOTATION_COLORS,
  HPF_WEIGHT,
  HPF_WEIGHT_HIGHLIGHTED,
  formatLengthUm,
  polylineLengthUm,
  type AnnotationView,
  type Position,
} from '@lamina/domain';
import Feature, { type FeatureLike } from 'ol/Feature';
import type OlMap from 'ol/Map';
import type MapBrowserEvent from 'ol/MapBrowserEvent';
import Overlay from 'ol/Overlay';
import CircleGeometry from 'ol/geom/Circle';
import type Geometry from 'ol/geom/Geometry';
import LineString from 'ol/geom/LineString';
import Point from 'ol/geom/Point';
import Polygon from 'ol/geom/Polygon';
import DoubleClickZoom from 'ol/interaction/DoubleClickZoom';
import PointerInteraction from 'ol/interaction/Pointer';
import VectorLayer from 'ol/layer/Vector';
import VectorSource from 'ol/source/Vector';
import CircleStyle from 'ol/style/Circle';
import Fill from 'ol/style/Fill';
import Stroke from 'ol/style/Stroke';
import Style from 'ol/style/Style';
import Text from 'ol/style/Text';
import type { AnnotationSnapshot, AnnotationStore, Highlight } from './annotationStore';
import { NONE, OTHER, pointLook, pointStyle, rgba, rgbaFloats } from './annotationStyle';
import { GlAnnotationLayer, GlObjects } from './glAnnotationLayer';
import { OUTSIDE_SLIDE_MESSAGE, type DrawingMachine, type DrawingSnapshot } from './drawingMachine';

/** The colour of a shape being drawn whose pointer is outside the slide, and of the cue's text. */
export const OUTSIDE_COLOUR = '#ff5a36';

/** Image pixel (x, y down) → map coordinate (x, -y): the map has y up (ViewerEngine). */
export const toMap = (p: readonly number[]): [number, number] => [p[0] ?? 0, -(p[1] ?? 0)];
export const toImage = (c: readonly number[]): Position => [c[0] ?? 0, -(c[1] ?? 0)];

/** An ellipse as a ring of map coordinates (64 vertices), rotated clockwise on screen by `rotation` degrees. */
export function ellipseRing(centre: Position, rx: number, ry: number, rotation: number, n = 64): [number, number][] {
  const t = (rotation * Math.PI) / 180;
  const ring: [number, number][] = [];
  for (let i = 0; i <= n; i++) {
    const a = (2 * Math.PI * i) / n;
    const x = rx * Math.cos(a);
    const y = ry * Math.sin(a);
    // Rotation in image pixels (y down: clockwise on screen), then y flipped for the map.
    ring.push([centre[0] + x * Math.cos(t) - y * Math.sin(t), -(centre[1] + x * Math.sin(t) + y * Math.cos(t))]);
  }
  return ring;
}

/**
 * The DOM event the map's element fires (bubbling) once the annotation layers hold every loaded
 * object and the WebGL layer has drawn them (its buffers built): what `npm run bench:annotations`
 * times the load by. `detail.count` is the number of objects in the layers.
 */
export const ANNOTATIONS_DRAWN_EVENT = 'lamina-annotations-drawn';

export interface AnnotationsDrawnDetail {
  count: number;
}

/** The same for the imported AI annotations' layers (issue 17). */
export const AI_ANNOTATIONS_DRAWN_EVENT = 'lamina-ai-annotations-drawn';

/**
 * Whose annotations a set of layers draws: the readers' (editable, on top) or the imported AI
 * annotations (read-only: no drawing interaction; their own canvases, below the readers').
 */
const LAYER_KINDS = {
  readers: { className: 'lamina-annotation-layer', zIndex: 10, event: ANNOTATIONS_DRAWN_EVENT },
  ai: { className: 'lamina-ai-annotation-layer', zIndex: 6, event: AI_ANNOTATIONS_DRAWN_EVENT },
} as const;

export interface LayerOptions {
  celiac: boolean;
  /** µm per pixel of the slide (lengths of lines being drawn). */
  mpp: number | null;
  /** Colour of an annotation class by id (multilines and freehands whose row carries none). */
  classColor: (classId: number | null) => string | null;
  /** Image size: a vertex outside it is refused while drawing. */
  width: number;
  height: number;
  /** Default 'readers'. */
  kind?: keyof typeof LAYER_KINDS;
}

/** Points and HPFs: the types the WebGL layer draws (the canvas layer without WebGL 2). */
const isPointOrHpf = (type: string | undefined): boolean => type === 'POINT' || type === 'HPF';

const TEXT_FILL = new Fill({ color: '#ffffff' });
const TEXT_STROKE = new Stroke({ color: 'rgba(0,0,0,0.85)', width: 3 });

function label(text: string, extra: Partial<ConstructorParameters<typeof Text>[0]> = {}): Text {
  return new Text({
    text,
    font: '600 13px system-ui, sans-serif',
    fill: TEXT_FILL,
    stroke: TEXT_STROKE,
    overflow: true,
    ...extra,
  });
}

/**
 * The annotation layers of one slide, engine side (no React): points and HPFs in an instanced
 * WebGL layer (GlAnnotationLayer: 200,000 objects pan and zoom without stalls; a canvas layer
 * where the browser has no WebGL 2), the other types and the shape being drawn in canvas vector
 * layers. Each layer has its own canvas (className), so the tiles' brightness
 * filter never applies to them. It follows the store: loaded data, patches, per-node visibility,
 * the reader filter and the tab's hover highlight.
 */
export class AnnotationLayers {
  private readonly vectorSource = new VectorSource();
  private readonly draftSource = new VectorSource();
  readonly glLayer: GlAnnotationLayer;
  /** False without WebGL 2: points and HPFs go to the canvas layer (asked on first need, see GlAnnotationLayer). */
  private get useGl(): boolean {
    return this.glLayer.available;
  }
  private glCount = 0;
  readonly vectorLayer: VectorLayer<VectorSource>;
  readonly draftLayer: VectorLayer<VectorSource>;
  /** Every annotation's feature, made once (visibility adds and removes them from their source). */
  private readonly features = new Map<number, Feature>();
  private readonly drawn = new Set<number>();
  private highlightedId: number | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly interaction: DrawingInteraction | null;
  private readonly drawnEvent: string;
  /** 'Outside the slide' beside the pointer while a vertex there would be refused. */
  private readonly outsideCue: Overlay | null = null;

  constructor(
    private readonly map: OlMap,
    private readonly store: AnnotationStore,
    private readonly options: LayerOptions,
    drawing?: DrawingMachine,
  ) {
    const kind = LAYER_KINDS[options.kind ?? 'readers'];
    this.drawnEvent = kind.event;
    this.glLayer = new GlAnnotationLayer(pointLook(options.celiac).radius, `${kind.className}-gl`);
    this.glLayer.setZIndex(kind.zIndex);
    this.glLayer.onDrawn = () => this.announceDrawn();
    this.vectorLayer = new VectorLayer({
      source: this.vectorSource,
      className: kind.className,
      style: (feature, resolution) => this.styleOf(feature, resolution),
      updateWhileAnimating: true,
      updateWhileInteracting: true,
      zIndex: kind.zIndex + 1,
    });
    this.draftLayer = new VectorLayer({
      source: this.draftSource,
      className: options.kind === 'ai' ? `${kind.className}-draft` : 'lamina-annotation-draft',
      style: (feature) => this.draftStyle(feature),
      updateWhileAnimating: true,
      updateWhileInteracting: true,
      zIndex: kind.zIndex + 2,
    });
    for (const layer of [this.glLayer, this.vectorLayer, this.draftLayer]) map.addLayer(layer);
    this.unsubscribe.push(
      store.on('data', (change) => {
        if (change.kind === 'reset') this.rebuild();
        else this.patch(change.added, change.removed, change.reparented);
      }),
      store.on('visibility', () => this.syncVisibility()),
      store.on('highlight', (highlight) => this.setHighlight(highlight)),
    );
    if (store.snapshot.loaded) this.rebuild();
    this.interaction = drawing ? new DrawingInteraction(drawing) : null;
    if (drawing && this.interaction) {
      drawing.setBounds(options.width, options.height);
      map.addInteraction(this.interaction);
      this.outsideCue = makeOutsideCue();
      map.addOverlay(this.outsideCue);
      this.unsubscribe.push(
        drawing.on('change', (snapshot) => {
          this.drawDraft(snapshot);
          this.showOutside(snapshot);
          this.setDoubleClickZoom(snapshot.tool === null);
        }),
      );
    }
  }

  /** The Annotations checkbox and the 'a' key. */
  setVisible(visible: boolean): void {
    for (const layer of [this.glLayer, this.vectorLayer, this.draftLayer]) layer.setVisible(visible);
  }

  /** Annotation opacity 0…1 (doc 3 §9). */
  setOpacity(opacity: number): void {
    for (const layer of [this.glLayer, this.vectorLayer]) layer.setOpacity(opacity);
  }

  /** Space held while drawing: the map pans instead of drawing. */
  setPanning(panning: boolean): void {
    if (this.interaction) this.interaction.panOnly = panning;
  }

  destroy(): void {
    for (const off of this.unsubscribe) off();
    if (this.interaction) {
      this.map.removeInteraction(this.interaction);
      this.setDoubleClickZoom(true);
    }
    if (this.outsideCue) this.map.removeOverlay(this.outsideCue);
    for (const layer of [this.glLayer, this.vectorLayer, this.draftLayer]) {
      this.map.removeLayer(layer);
      layer.dispose();
    }
  }

  /**
   * The map's double-click zoom is off while a tool is active: two quick clicks are a multiline's
   * end or two points, never a zoom that moves the slide under the next click (issue 29, item 1).
   */
  private setDoubleClickZoom(active: boolean): void {
    for (const interaction of this.map.getInteractions().getArray())
      if (interaction instanceof DoubleClickZoom && interaction.getActive() !== active) interaction.setActive(active);
  }

  /** The cue beside the pointer while it (or a refused vertex) is outside the slide. */
  private showOutside({ outside }: DrawingSnapshot): void {
    const cue = this.outsideCue;
    if (!cue) return;
    cue.setPosition(outside ? toMap(outside) : undefined);
    const element = cue.getElement();
    if (element) element.hidden = outside === null;
  }

  /** How many points and HPFs, and other objects, the layers draw (tests, the bench). */
  get counts(): { pointsAndHpfs: number; others: number } {
    let canvasPoints = 0;
    for (const f of this.vectorSource.getFeatures()) {
      const type = (f.get('annotation') as AnnotationView | undefined)?.annotationType;
      if (isPointOrHpf(type)) canvasPoints++;
    }
    return {
      pointsAndHpfs: this.glCount + canvasPoints,
      others: this.vectorSource.getFeatures().length - canvasPoints,
    };
  }

  /** Whether points and HPFs draw through WebGL (false: the canvas fallback). */
  get webgl(): boolean {
    return this.useGl;
  }

  private isGl(a: AnnotationView): boolean {
    // The type first: a freehand or a line never sets WebGL up.
    return isPointOrHpf(a.annotationType) && this.useGl;
  }

  private readonly colours = new Map<string, number[]>();

  /** An annotation's own colour, else its class's (the class colours of one reader's view). */
  private readonly classColourOf = (a: AnnotationView): string | null =>
    a.color ?? this.options.classColor(a.annotationClassId);

  /** The readers' colours the canvas features were last styled with (the all-readers view). */
  private styledReaders: AnnotationSnapshot['readers'] = null;

  /** Points and HPFs packed for the WebGL layer, from the store, in one pass (every change). */
  private syncGl(): void {
    const annotations = this.store.snapshot.annotations;
    if (!this.glLayer.ready && !annotations.some((a) => isPointOrHpf(a.annotationType))) {
      // Nothing for WebGL yet: no context is made for it (a frame still announces the rebuild).
      this.glCount = 0;
      this.glLayer.changed();
      return;
    }
    if (!this.useGl) return;
    const { celiac } = this.options;
    const pointOpacity = pointLook(celiac).opacity;
    const points = new GlObjects(annotations.length, 0);
    const hpfs = new GlObjects(64, 1);
    let count = 0;
    for (const a of annotations) {
      const hpf = a.annotationType === 'HPF';
      if (!hpf && a.annotationType !== 'POINT') continue;
      const g = a.geometry;
      if (g.type !== 'Point') continue;
      const colour = this.store.colourOf(a, this.classColourOf);
      const key = `${hpf ? 'h' : 'p'}${colour}`;
      let rgbaValue = this.colours.get(key);
      if (!rgbaValue) {
        rgbaValue = rgbaFloats(colour, hpf ? 1 : pointOpacity, hpf ? ANNOTATION_COLORS.hpf : ANNOTATION_COLORS.default);
        this.colours.set(key, rgbaValue);
      }
      const visible = this.store.isDrawn(a);
      if (visible) count++;
      (hpf ? hpfs : points).push(
        g.coordinates[0],
        -g.coordinates[1],
        a.radius ?? 0,
        a.id,
        a.annotationClassId ?? OTHER,
        a.parentId ?? OTHER,
        visible,
        rgbaValue,
      );
    }
    this.glCount = count;
    this.glLayer.setObjects(points, hpfs);
  }

  /** A canvas feature (every type but points and HPFs, and those too without WebGL 2). */
  private featureOf(a: AnnotationView): Feature {
    const feature = new Feature({ geometry: this.geometryOf(a), annotation: a });
    feature.setId(a.id);
    return feature;
  }

  private geometryOf(a: AnnotationView): Geometry {
    const g = a.geometry;
    if (a.annotationType === 'ELLIPSE' && g.type === 'Point') {
      const rotation = a.tilt === null ? 0 : a.tilt - 90;
      return new Polygon([ellipseRing(g.coordinates, a.radiusX ?? 1, a.radiusY ?? 1, rotation)]);
    }
    if (g.type === 'Point') return new Point(toMap(g.coordinates));
    if (g.type === 'LineString') return new LineString(g.coordinates.map(toMap));
    return new Polygon(g.coordinates.map((ring) => ring.map(toMap)));
  }

  /** The whole list (load or reload): the WebGL layer's arrays, the canvas features made once. */
  private rebuild(): void {
    this.styledReaders = this.store.snapshot.readers;
    this.features.clear();
    this.drawn.clear();
    this.vectorSource.clear(true);
    const vector: Feature[] = [];
    for (const a of this.store.snapshot.annotations) {
      if (this.isGl(a)) continue;
      const feature = this.featureOf(a);
      this.features.set(a.id, feature);
      if (!this.store.isDrawn(a)) continue;
      this.drawn.add(a.id);
      vector.push(feature);
    }
    this.vectorSource.addFeatures(vector);
    this.syncGl();
    this.drawnPending = true;
  }

  /** A rebuild not yet announced by ANNOTATIONS_DRAWN_EVENT. */
  private drawnPending = false;

  /** After a rebuild, the first frame the WebGL layer draws (its buffers are uploaded at once). */
  private announceDrawn(): void {
    if (!this.drawnPending) return;
    const target = this.map.getTargetElement();
    if (!target) return;
    this.drawnPending = false;
    const detail: AnnotationsDrawnDetail = { count: this.glCount + this.drawn.size };
    target.dispatchEvent(new CustomEvent(this.drawnEvent, { bubbles: true, detail }));
  }

  private patch(added: AnnotationView[], removed: number[], reparented: AnnotationView[]): void {
    let gl = reparented.length > 0;
    for (const id of removed) {
      const feature = this.features.get(id);
      this.features.delete(id);
      if (feature && this.drawn.delete(id)) this.vectorSource.removeFeature(feature);
      if (!feature) gl = true;
    }
    for (const a of added) {
      if (this.isGl(a)) {
        gl = true;
        continue;
      }
      const feature = this.featureOf(a);
      this.features.set(a.id, feature);
      if (this.store.isDrawn(a)) {
        this.drawn.add(a.id);
        this.vectorSource.addFeature(feature);
      }
    }
    if (gl) this.syncGl();
  }

  /** Adds and removes the canvas features whose visibility changed; the WebGL layer's flags anew. */
  private syncVisibility(): void {
    const add: Feature[] = [];
    const remove: Feature[] = [];
    for (const [id, feature] of this.features) {
      const a = this.store.get(id);
      if (!a) continue;
      const want = this.store.isDrawn(a);
      if (want === this.drawn.has(id)) continue;
      if (want) {
        this.drawn.add(id);
        add.push(feature);
      } else {
        this.drawn.delete(id);
        remove.push(feature);
      }
    }
    if (remove.length) this.vectorSource.removeFeatures(remove);
    if (add.length) this.vectorSource.addFeatures(add);
    // Every reader shown, or one again: the canvas features take their reader's or class colours.
    const readers = this.store.snapshot.readers;
    if (readers !== this.styledReaders) {
      this.styledReaders = readers;
      this.vectorSource.changed();
    }
    this.syncGl();
  }

  /** The tab's hover: uniforms of the WebGL layer (no upload), a restyle of the canvas feature. */
  private setHighlight(highlight: Highlight | null): void {
    const vars = { hpf: NONE, hpfClass: NONE, pointHpf: NONE, pointClass: NONE };
    let annotation: number | null = null;
    if (highlight?.kind === 'hpfClass') vars.hpfClass = highlight.classId ?? OTHER;
    else if (highlight?.kind === 'hpf') vars.hpf = highlight.hpfId ?? OTHER;
    else if (highlight?.kind === 'points') {
      vars.pointHpf = highlight.hpfId ?? OTHER;
      vars.pointClass = highlight.classId ?? OTHER;
    } else if (highlight?.kind === 'annotation') {
      annotation = highlight.id;
    }
    this.glLayer.setHighlight(vars);
    const prior = this.highlightedId;
    this.highlightedId = annotation;
    if (prior !== null) this.features.get(prior)?.changed();
    if (annotation !== null) this.features.get(annotation)?.changed();
  }

  private readonly styleCache = new Map<string, Style | Style[]>();

  private styleOf(feature: FeatureLike, resolution: number): Style | Style[] {
    const a = feature.get('annotation') as AnnotationView | undefined;
    if (!a) return [];
    const lit = this.highlightedId === a.id;
    const width = lit ? 4 : 2;
    const colour = this.store.colourOf(a, this.classColourOf);
    switch (a.annotationType) {
      // Without WebGL 2 only: the same look as the WebGL layer, slower at scale.
      case 'HPF':
        return new Style({
          image: new CircleStyle({
            radius: (a.radius ?? 0) / resolution,
            stroke: new Stroke({
              color: colour ?? ANNOTATION_COLORS.hpf,
              width: lit ? HPF_WEIGHT_HIGHLIGHTED : HPF_WEIGHT,
            }),
          }),
        });
      case 'POINT':
        // The spec's size at full resolution, never under the on-screen minimum, with its ring.
        return pointStyle(colour, this.options.celiac, lit, resolution);
      case 'LINE':
      case 'MULTILINE': {
        const multi = a.annotationType === 'MULTILINE';
        const stroke = new Stroke({
          color: colour ?? (multi ? ANNOTATION_COLORS.multiline : ANNOTATION_COLORS.default),
          width,
          ...(multi && a.multilineCategory === 'CRYPT_DEPTH' ? { lineDash: [10, 7] } : {}),
        });
        const coords = a.geometry.type === 'LineString' ? a.geometry.coordinates : [];
        const length = a.length ?? polylineLengthUm(coords, this.options.mpp);
        const end = coords[coords.length - 1];
        return [
          new Style({ stroke }),
          new Style({
            geometry: end ? new Point(toMap(end)) : undefined,
            text: label(formatLengthUm(length), { offsetY: -14 }),
          }),
        ];
      }
      case 'TEXT':
        return new Style({
          image: new CircleStyle({
            radius: lit ? 6 : 4,
            // A text's marker is yellow, or its reader's colour in the all-readers view.
            fill: new Fill({
              color: this.styledReaders ? (colour ?? ANNOTATION_COLORS.default) : ANNOTATION_COLORS.default,
            }),
          }),
          text: label(a.text ?? '', { offsetY: -16 }),
        });
      case 'ELLIPSE':
      case 'FREEHAND': {
        const key = `${a.annotationType}:${colour}:${lit}`;
        const cached = this.styleCache.get(key);
        const style =
          cached ??
          new Style({
            stroke: new Stroke({ color: colour ?? ANNOTATION_COLORS.default, width }),
            fill: new Fill({ color: rgba(colour, a.annotationType === 'FREEHAND' ? 0.12 : 0) }),
          });
        if (!cached) this.styleCache.set(key, style);
        if (a.text) return [style as Style, new Style({ text: label(a.text) })];
        return style;
      }
      default:
        return [];
    }
  }

  private readonly draftStroke = new Stroke({ color: ANNOTATION_COLORS.default, width: 2, lineDash: [6, 4] });

  private readonly outsideStroke = new Stroke({ color: OUTSIDE_COLOUR, width: 2, lineDash: [6, 4] });

  private draftStyle(feature: FeatureLike): Style | Style[] {
    const kind = feature.get('kind') as string;
    if (feature.get('outside') === true && kind !== 'length')
      return new Style({ stroke: this.outsideStroke, fill: new Fill({ color: 'rgba(255,90,54,0.08)' }) });
    if (kind === 'length') return new Style({ text: label(feature.get('text') as string, { offsetY: -14 }) });
    if (kind === 'marker')
      return new Style({
        image: new CircleStyle({ radius: 5, fill: new Fill({ color: ANNOTATION_COLORS.default }) }),
      });
    if (kind === 'hpf')
      return new Style({ stroke: new Stroke({ color: ANNOTATION_COLORS.hpf, width: 3, lineDash: [8, 6] }) });
    return new Style({ stroke: this.draftStroke, fill: new Fill({ color: 'rgba(255,255,0,0.08)' }) });
  }

  /** The shape being drawn, from the drawing machine's snapshot. */
  private drawDraft({ tool, draft, state, outside }: DrawingSnapshot): void {
    this.draftSource.clear(true);
    if (!tool || !state) return;
    const features: Feature[] = [];
    const { coords, pointer } = draft;
    if ((tool === 'line' || tool === 'multiline') && coords.length > 0) {
      const line = pointer && state === 'PLACING' ? [...coords, pointer] : coords;
      features.push(new Feature({ geometry: new LineString(line.map(toMap)), kind: 'line' }));
      const end = line[line.length - 1] ?? coords[0];
      features.push(
        new Feature({
          geometry: new Point(toMap(end ?? [0, 0])),
          kind: 'length',
          text: formatLengthUm(polylineLengthUm(line, this.options.mpp)),
        }),
      );
    } else if (tool === 'freehand' && coords.length > 1) {
      features.push(new Feature({ geometry: new LineString(coords.map(toMap)), kind: 'line' }));
    } else if (tool === 'ellipse' && coords[0] && (draft.radiusX > 0 || draft.radiusY > 0)) {
      const ring = ellipseRing(
        coords[0],
        draft.radiusX || draft.radiusY,
        draft.radiusY || draft.radiusX,
        draft.rotation,
      );
      features.push(new Feature({ geometry: new Polygon([ring]), kind: 'shape' }));
    } else if (tool === 'hpf') {
      const at = coords[0] ?? pointer;
      const radius = this.hpfPreviewRadius;
      if (at && radius > 0)
        features.push(new Feature({ geometry: new CircleGeometry(toMap(at), radius), kind: 'hpf' }));
    } else if (tool === 'text' && coords[0]) {
      features.push(new Feature({ geometry: new Point(toMap(coords[0])), kind: 'marker' }));
    }
    if (outside) for (const feature of features) feature.set('outside', true);
    this.draftSource.addFeatures(features);
  }

  /** The HPF radius the server will compute (hpfRadiusPx), for the cursor. */
  hpfPreviewRadius = 0;
}

const pixelOf = (event: MapBrowserEvent): [number, number] => [event.pixel[0] ?? 0, event.pixel[1] ?? 0];

/** Screen pixels within which two clicks are the same place. */
const TOLERANCE_PX = 4;
/** A press released within this many screen pixels is a click (OpenLayers alone allows 1 px). */
const CLICK_SLOP_PX = 6;
/** Two clicks within this time and distance are a double click (the browsers' usual 500 ms). */
const DOUBLE_CLICK_MS = 500;
const DOUBLE_CLICK_PX = 12;

/** The 'Outside the slide' cue: a map overlay beside the pointer, announced to screen readers. */
function makeOutsideCue(): Overlay {
  const element = document.createElement('div');
  element.className = 'lamina-outside-cue';
  element.setAttribute('role', 'status');
  element.textContent = OUTSIDE_SLIDE_MESSAGE;
  element.hidden = true;
  Object.assign(element.style, {
    background: OUTSIDE_COLOUR,
    color: '#ffffff',
    font: '600 12px system-ui, sans-serif',
    padding: '2px 6px',
    borderRadius: '3px',
    pointerEvents: 'none',
    whiteSpace: 'nowrap',
    boxShadow: '0 1px 3px rgba(0,0,0,0.4)',
  });
  return new Overlay({ element, offset: [14, 14], positioning: 'top-left', stopEvent: false });
}

/**
 * Feeds the drawing machine from the map's pointer events. It sits on top of the default
 * interactions: a press the tool takes stops the map's panning; with Space held (panOnly) every
 * press pans. Clicks are its own (a press released within CLICK_SLOP_PX), and so are double clicks
 * (a second click within DOUBLE_CLICK_MS and DOUBLE_CLICK_PX): OpenLayers' emulated clicks are
 * lost when the hand moves a pixel during a click and its double click is 250 ms, so a slower
 * double click was two clicks and a shaky one no click at all. A click a tool takes stops
 * OpenLayers' own click and double click (no zoom). Positions are never moved to the slide: the
 * machine refuses those outside it.
 */
class DrawingInteraction extends PointerInteraction {
  panOnly = false;
  private lastPixel: [number, number] | null = null;
  private downPixel: [number, number] | null = null;
  private lastClick: { pixel: [number, number]; time: number } | null = null;

  constructor(private readonly machine: DrawingMachine) {
    super();
  }

  private position(event: MapBrowserEvent): Position {
    return toImage(event.coordinate);
  }

  private tolerance(event: MapBrowserEvent): number {
    return TOLERANCE_PX * (event.frameState?.viewState.resolution ?? 1);
  }

  /** A press and release of the main button within CLICK_SLOP_PX: a click, or a double click's second. */
  private takeClick(event: MapBrowserEvent): boolean {
    const down = this.downPixel;
    this.downPixel = null;
    const pixel = pixelOf(event);
    if (!down || this.panOnly || Math.hypot(pixel[0] - down[0], pixel[1] - down[1]) > CLICK_SLOP_PX) return false;
    const time = event.originalEvent.timeStamp || performance.now();
    const last = this.lastClick;
    const double =
      last !== null &&
      time - last.time <= DOUBLE_CLICK_MS &&
      Math.hypot(pixel[0] - last.pixel[0], pixel[1] - last.pixel[1]) <= DOUBLE_CLICK_PX;
    this.lastClick = double ? null : { pixel, time };
    const p = this.position(event);
    const tolerance = this.tolerance(event);
    return double ? this.machine.doubleClick(p, tolerance) : this.machine.click(p, tolerance);
  }

  override handleEvent(event: MapBrowserEvent): boolean {
    if (!this.machine.activeTool) {
      this.downPixel = null;
      this.lastClick = null;
      return true;
    }
    if (event.type === 'pointermove' && !this.panOnly) this.machine.hover(this.position(event));
    if (event.type === 'pointerdown') {
      const pointer = event.originalEvent as PointerEvent;
      this.downPixel = pointer.button === 0 && pointer.isPrimary ? pixelOf(event) : null;
    }
    // The release goes on to the map's panning (its drag ends); OpenLayers emulates no click from it.
    if (event.type === 'pointerup' && this.takeClick(event)) event.preventDefault();
    // While a tool draws, OpenLayers' double click never zooms (it makes one of any two quick clicks).
    if (event.type === 'dblclick') {
      event.preventDefault();
      return false;
    }
    return super.handleEvent(event);
  }

  protected override handleDownEvent(event: MapBrowserEvent): boolean {
    if (this.panOnly) return false;
    this.lastPixel = pixelOf(event);
    return this.machine.press(this.position(event), Date.now()) === 'capture';
  }

  protected override handleDragEvent(event: MapBrowserEvent): void {
    const result = this.machine.drag(this.position(event), Date.now(), this.tolerance(event));
    const last = this.lastPixel;
    this.lastPixel = pixelOf(event);
    if (result !== 'pan' || !last) return;
    const view = event.map.getView();
    const resolution = view.getResolution() ?? 1;
    const [x, y] = pixelOf(event);
    view.adjustCenter([(last[0] - x) * resolution, (y - last[1]) * resolution]);
  }

  protected override handleUpEvent(event: MapBrowserEvent): boolean {
    this.machine.release(this.position(event), this.tolerance(event));
    this.lastPixel = null;
    return false;
  }
}
