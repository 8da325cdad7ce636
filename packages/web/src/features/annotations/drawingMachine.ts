import {
  HPF_CURSOR_HOLD_MS,
  PANEL_TOOLS,
  TOOLS_STAYING_ACTIVE,
  type AnnotationGeometry,
  type AnnotationTool,
  type DrawingState,
  type Position,
} from '@lamina/domain';
import { TypedEmitter } from '../../lib/typedEmitter';

/** A shape being drawn, in full-resolution image pixels (y down). */
export interface DrawingDraft {
  /** Line and multiline vertices, the freehand trace, or the one centre of a point-like shape. */
  coords: Position[];
  /** The rubber band's end (line, multiline) or the HPF cursor. */
  pointer: Position | null;
  /** Ellipse radii in pixels, and its rotation in degrees (clockwise on screen). */
  radiusX: number;
  radiusY: number;
  rotation: number;
}

export interface DrawingSnapshot {
  tool: AnnotationTool | null;
  /** null without a tool. */
  state: DrawingState | null;
  draft: DrawingDraft;
  /**
   * Where the pointer is (or a press, a click or a stroke went) outside the slide while a tool is
   * active, or null: the map shows 'Outside the slide' there and the shape turns a warning colour.
   */
  outside: Position | null;
}

/** The cue of a vertex refused outside the slide (issue 29, item 2). */
export const OUTSIDE_SLIDE_MESSAGE = 'Outside the slide';

/** A finished shape, ready to be saved (the toolbar adds its class, category or text). */
export interface CompletedShape {
  tool: AnnotationTool;
  geometry: AnnotationGeometry;
  radiusX?: number;
  radiusY?: number;
  rotation?: number;
}

interface DrawingEvents {
  change: DrawingSnapshot;
  /** A shape that saves as soon as it is drawn (line, multiline, point, freehand). */
  complete: CompletedShape;
}

/** What the map does with a press: the tool takes the drag (no panning) or lets the map pan. */
export type PressResult = 'capture' | 'pass';

const emptyDraft = (): DrawingDraft => ({ coords: [], pointer: null, radiusX: 0, radiusY: 0, rotation: 0 });

const distance = (a: Position, b: Position) => Math.hypot(a[0] - b[0], a[1] - b[1]);

/**
 * The drawing states of doc 3 §4 for every tool, without OpenLayers: the map's interaction feeds
 * it presses, drags, releases, clicks and double clicks in image pixels (with a tolerance of a few
 * screen pixels, in image pixels) and draws its snapshot.
 *
 * - DROPPING: the tool is active, nothing placed yet (the HPF circle follows the pointer).
 * - PLACING: the shape is being placed (a line's second end, a multiline's vertices, a freehand
 *   trace, an ellipse's drag, an HPF held for HPF_CURSOR_HOLD_MS and dragged).
 * - EDITING: placed, waiting for the 'Add annotation' panel (text, ellipse, HPF).
 *
 * Line: press-drag-release, or click then click. Multiline: clicks add vertices, a double click
 * or Enter ends it. Freehand: press and trace, release closes the ring. Ellipse: press at the
 * centre, hold and drag to the radii. Point: a click saves. Text: a click places the marker.
 * HPF: a click places it; held 170 ms, a drag moves it; a quicker drag pans the slide.
 */
export class DrawingMachine extends TypedEmitter<DrawingEvents> {
  private tool: AnnotationTool | null = null;
  private state: DrawingState | null = null;
  private draft: DrawingDraft = emptyDraft();
  private pressAt = 0;
  private pressPos: Position | null = null;
  private dragged = false;
  private holding = false;
  private panning = false;
  /** The freehand stroke being traced went outside the slide: the whole shape is refused. */
  private strokeLeft: Position | null = null;
  private outside: Position | null = null;
  private bounds: { width: number; height: number } | null = null;
  private current: DrawingSnapshot;

  constructor(private readonly holdMs = HPF_CURSOR_HOLD_MS) {
    super();
    this.current = this.makeSnapshot();
  }

  get snapshot(): DrawingSnapshot {
    return this.current;
  }

  subscribe = (listener: () => void): (() => void) => this.on('change', listener);

  private makeSnapshot(): DrawingSnapshot {
    return { tool: this.tool, state: this.state, draft: this.draft, outside: this.tool ? this.outside : null };
  }

  /**
   * The slide's size in pixels: a vertex outside 0…width × 0…height is refused (the click adds
   * nothing, the cue shows), never moved to the edge. Without bounds every position is taken.
   */
  setBounds(width: number, height: number): void {
    this.bounds = { width, height };
  }

  private inside(p: Position): boolean {
    const b = this.bounds;
    return !b || (p[0] >= 0 && p[1] >= 0 && p[0] <= b.width && p[1] <= b.height);
  }

  /** Notes whether `p` is outside the slide (the cue); true when it is inside. */
  private check(p: Position): boolean {
    const ok = this.inside(p);
    this.outside = ok ? null : p;
    return ok;
  }

  /** A refused position: nothing is added, the cue shows. */
  private refuse(p: Position): void {
    this.outside = p;
    this.changed();
  }

  private changed(): void {
    this.current = this.makeSnapshot();
    this.emit('change', this.current);
  }

  private reset(): void {
    this.draft = emptyDraft();
    this.state = this.tool ? 'DROPPING' : null;
    this.pressPos = null;
    this.dragged = false;
    this.holding = false;
    this.panning = false;
    this.strokeLeft = null;
  }

  /** Activates a tool (null: none); a second choice of the active tool closes it. */
  setTool(tool: AnnotationTool | null): void {
    this.tool = tool;
    this.outside = null;
    this.reset();
    this.changed();
  }

  get activeTool(): AnnotationTool | null {
    return this.tool;
  }

  /** Escape: a shape being drawn is dropped; without one the tool closes. */
  cancel(): void {
    if (this.state === 'PLACING' || this.state === 'EDITING') this.reset();
    else this.tool = null;
    this.reset();
    this.changed();
  }

  /** After a successful save: the tool stays active for line, multiline, point, HPF, freehand (doc 3 §4). */
  afterCreate(tool: AnnotationTool): void {
    if (this.tool !== tool) return;
    if (TOOLS_STAYING_ACTIVE.includes(tool)) {
      // A shape that saved as it was drawn reset the draft then; the next one may be under way
      // already (a fast reader's next line while the save was in flight) and must not be dropped.
      // An HPF saved from its panel leaves EDITING.
      if (this.state !== 'EDITING') return;
    } else this.tool = null;
    this.reset();
    this.changed();
  }

  /** The placed shape of a panel tool (text, ellipse, HPF) in EDITING, or null. */
  placedShape(): CompletedShape | null {
    const tool = this.tool;
    const centre = this.draft.coords[0];
    if (!tool || this.state !== 'EDITING' || !PANEL_TOOLS.includes(tool) || !centre) return null;
    const shape: CompletedShape = { tool, geometry: { type: 'Point', coordinates: centre } };
    if (tool === 'ellipse')
      return { ...shape, radiusX: this.draft.radiusX, radiusY: this.draft.radiusY, rotation: this.draft.rotation };
    return shape;
  }

  /** The ellipse's rotation, from the panel. */
  setRotation(degrees: number): void {
    if (this.tool !== 'ellipse' || !Number.isFinite(degrees)) return;
    this.draft = { ...this.draft, rotation: degrees };
    this.changed();
  }

  hover(p: Position): void {
    if (!this.tool) return;
    const wasOutside = this.outside;
    const inside = this.check(p);
    if (this.tool === 'hpf' && this.state === 'DROPPING') {
      this.draft = { ...this.draft, pointer: p };
      this.changed();
    } else if ((this.tool === 'line' || this.tool === 'multiline') && this.state === 'PLACING' && !this.pressPos) {
      this.draft = { ...this.draft, pointer: p };
      this.changed();
    } else if (!inside || wasOutside) {
      this.changed();
    }
  }

  press(p: Position, now: number): PressResult {
    const tool = this.tool;
    if (!tool) return 'pass';
    if (!this.check(p)) {
      // Refused: the press places nothing (the map may pan from there).
      this.pressPos = null;
      this.changed();
      return 'pass';
    }
    this.pressPos = p;
    this.pressAt = now;
    this.dragged = false;
    this.holding = false;
    this.panning = false;
    switch (tool) {
      case 'line':
        if (this.state !== 'PLACING') {
          this.draft = { ...emptyDraft(), coords: [p], pointer: p };
          this.state = 'PLACING';
          this.changed();
        }
        return 'capture';
      case 'freehand':
        this.draft = { ...emptyDraft(), coords: [p] };
        this.state = 'PLACING';
        this.changed();
        return 'capture';
      case 'ellipse':
        this.draft = { ...emptyDraft(), coords: [p] };
        this.state = 'PLACING';
        this.changed();
        return 'capture';
      case 'hpf':
        return 'capture';
      default:
        this.pressPos = null;
        return 'pass';
    }
  }

  /** A drag of a captured press; 'pan' asks the map to pan (an HPF press not held long enough). */
  drag(p: Position, now: number, tolerance: number): 'pan' | 'draw' {
    const start = this.pressPos;
    if (!start) return 'draw';
    if (!this.dragged && distance(start, p) <= tolerance) return 'draw';
    this.dragged = true;
    const inside = this.check(p);
    switch (this.tool) {
      case 'line':
        this.draft = { ...this.draft, pointer: p };
        break;
      case 'freehand': {
        if (!inside) {
          // The trace left the slide: the shape will be refused on release (its ring would cross
          // the edge, and closing it along the edge would invent an area nobody drew).
          this.strokeLeft = this.strokeLeft ?? p;
          break;
        }
        if (this.strokeLeft) {
          this.outside = this.strokeLeft;
          break;
        }
        const last = this.draft.coords[this.draft.coords.length - 1];
        if (!last || distance(last, p) >= tolerance) this.draft = { ...this.draft, coords: [...this.draft.coords, p] };
        break;
      }
      case 'ellipse': {
        const c = this.draft.coords[0] ?? start;
        this.draft = { ...this.draft, radiusX: Math.abs(p[0] - c[0]), radiusY: Math.abs(p[1] - c[1]) };
        break;
      }
      case 'hpf':
        if (this.panning) return 'pan';
        if (!this.holding && now - this.pressAt < this.holdMs) {
          this.panning = true;
          return 'pan';
        }
        this.holding = true;
        this.state = 'PLACING';
        this.draft = { ...emptyDraft(), coords: [p], pointer: p };
        break;
      default:
        return 'draw';
    }
    this.changed();
    return 'draw';
  }

  release(p: Position, tolerance: number): void {
    const start = this.pressPos;
    this.pressPos = null;
    if (!start) return;
    const inside = this.check(p);
    switch (this.tool) {
      case 'line': {
        const first = this.draft.coords[0] ?? start;
        if (!inside) {
          // The second end outside the slide: no line (a dragged one is dropped, a clicked one
          // keeps its first end for a click inside).
          if (distance(start, first) > tolerance || this.dragged) this.reset();
          else this.draft = { ...this.draft, pointer: p };
          this.changed();
          return;
        }
        if (distance(first, p) > tolerance) {
          this.completeNow({ tool: 'line', geometry: { type: 'LineString', coordinates: [first, p] } });
        } else {
          // A click: the line's second end comes with the next click.
          this.draft = { ...this.draft, pointer: p };
          this.changed();
        }
        return;
      }
      case 'freehand': {
        const ring = dedupe(this.draft.coords, tolerance);
        const [firstVertex] = ring;
        if (this.strokeLeft) {
          this.outside = this.strokeLeft;
          this.reset();
          this.changed();
        } else if (ring.length >= 3 && firstVertex) {
          this.completeNow({ tool: 'freehand', geometry: { type: 'Polygon', coordinates: [[...ring, firstVertex]] } });
        } else {
          this.reset();
          this.changed();
        }
        return;
      }
      case 'ellipse': {
        let { radiusX, radiusY } = this.draft;
        // Dragged along one axis only: a circle.
        if (radiusX <= tolerance && radiusY <= tolerance) {
          this.reset();
        } else {
          if (radiusX <= tolerance) radiusX = radiusY;
          if (radiusY <= tolerance) radiusY = radiusX;
          this.draft = { ...this.draft, radiusX, radiusY };
          this.state = 'EDITING';
        }
        this.changed();
        return;
      }
      case 'hpf':
        if (this.panning) {
          this.panning = false;
          return;
        }
        if (!inside) {
          this.reset();
          this.changed();
          return;
        }
        this.draft = { ...emptyDraft(), coords: [p], pointer: p };
        this.state = 'EDITING';
        this.holding = false;
        this.changed();
        return;
      default:
        return;
    }
  }

  /** A click that was not a captured press: point, text, multiline. */
  click(p: Position, tolerance: number): boolean {
    if (this.tool !== 'point' && this.tool !== 'text' && this.tool !== 'multiline') return false;
    if (!this.check(p)) {
      this.refuse(p);
      return true;
    }
    switch (this.tool) {
      case 'point':
        this.completeNow({ tool: 'point', geometry: { type: 'Point', coordinates: p } });
        return true;
      case 'text':
        this.draft = { ...emptyDraft(), coords: [p] };
        this.state = 'EDITING';
        this.changed();
        return true;
      case 'multiline': {
        const last = this.draft.coords[this.draft.coords.length - 1];
        if (last && distance(last, p) <= tolerance) {
          // A click on the last vertex ends the line (the second click of a double click, however
          // slow): never a duplicate vertex.
          this.finish(tolerance);
          return true;
        }
        this.draft = { ...this.draft, coords: [...this.draft.coords, p], pointer: p };
        this.state = 'PLACING';
        this.changed();
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * The second click of a double click (two clicks within the double-click time, a few pixels
   * apart) at `p`: it ends a multiline at the first click's vertex, which that click placed (the
   * second adds none). True when taken; other tools take it as a click (two points).
   */
  doubleClick(p: Position, tolerance: number): boolean {
    if (this.tool !== 'multiline' || !this.inside(p)) return this.click(p, tolerance);
    if (this.state === 'PLACING') this.finish(tolerance);
    else this.click(p, tolerance);
    return true;
  }

  /** Enter: ends a multiline of two or more vertices. */
  finish(tolerance: number): void {
    if (this.tool !== 'multiline' || this.state !== 'PLACING') return;
    const coords = dedupe(this.draft.coords, tolerance);
    if (coords.length < 2) return;
    this.completeNow({ tool: 'multiline', geometry: { type: 'LineString', coordinates: coords } });
  }

  private completeNow(shape: CompletedShape): void {
    this.reset();
    this.changed();
    this.emit('complete', shape);
  }
}

/** Drops vertices closer than `tolerance` to the one before. */
function dedupe(coords: readonly Position[], tolerance: number): Position[] {
  const out: Position[] = [];
  for (const c of coords) {
    const last = out[out.length - 1];
    if (!last || distance(last, c) > tolerance) out.push(c);
  }
  return out;
}
