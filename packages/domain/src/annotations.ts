import { z } from 'zod';
import type { Permission } from './permissions.js';
import type { Indication } from './studies.js';

/**
 * Annotations (doc 3 §2–§9, issue 14): the types and their geometry, the drawing constants, the
 * rules every side computes the same way (HPF radius, lengths in µm, the multiline walk, the HPF
 * tree, the celiac table), the messages and the wire shapes of the annotation calls.
 *
 * Coordinates: GeoJSON in full-resolution image pixels, origin at the top-left corner, y down (the
 * convention of QuPath and most pathology tools). The viewer's map has y up; it negates y.
 */

// ---------------------------------------------------------------------------------------------
// Types and constants
// ---------------------------------------------------------------------------------------------

export const ANNOTATION_TYPES = ['LINE', 'MULTILINE', 'ELLIPSE', 'TEXT', 'HPF', 'POINT', 'FREEHAND'] as const;
export type AnnotationType = (typeof ANNOTATION_TYPES)[number];

export const ANNOTATION_SOURCES = ['CR', 'VisioPharm'] as const;
export type AnnotationSource = (typeof ANNOTATION_SOURCES)[number];

export const MULTILINE_CATEGORIES = ['VILLUS_HEIGHT', 'CRYPT_DEPTH'] as const;
export type MultilineCategory = (typeof MULTILINE_CATEGORIES)[number];
export const MULTILINE_CATEGORY_LABELS: Readonly<Record<MultilineCategory, string>> = {
  VILLUS_HEIGHT: 'Villus Height',
  CRYPT_DEPTH: 'Crypt Depth',
};

/** The GeoJSON geometry type of each annotation type (issue 14 "Coordinates"). */
export const GEOMETRY_OF: Readonly<Record<AnnotationType, 'Point' | 'LineString' | 'Polygon'>> = {
  HPF: 'Point',
  POINT: 'Point',
  TEXT: 'Point',
  ELLIPSE: 'Point',
  LINE: 'LineString',
  MULTILINE: 'LineString',
  FREEHAND: 'Polygon',
};

/** The class list an annotation type draws its class from; the others carry no class. */
export const CLASS_TYPE_OF: Readonly<Partial<Record<AnnotationType, 'HPF' | 'POINT' | 'FREEHAND' | 'MULTILINE'>>> = {
  HPF: 'HPF',
  POINT: 'POINT',
  FREEHAND: 'FREEHAND',
  MULTILINE: 'MULTILINE',
};

/** Drawing constants (doc 3 §9 "Annotation drawing"). */
export const ANNOTATION_COLORS = {
  default: '#FFFF00',
  hpf: '#00FF00',
  multiline: '#00FF00',
} as const;
export const HPF_WEIGHT = 5;
export const HPF_WEIGHT_HIGHLIGHTED = 10;
/** A weight above HPF_WEIGHT draws a ring at this multiple of the radius. */
export const HPF_HIGHLIGHT_RING = 1.1;
export const POINT_RADIUS = 3;
export const POINT_RADIUS_CELIAC = 1.5;
export const POINT_FILL_OPACITY = 1;
export const POINT_FILL_OPACITY_CELIAC = 0.75;
/** The area of one high-power field: 0.238 mm² (doc 3 §9), in m². */
export const HPF_AREA_M2 = 238e-9;
/** HPF radius in pixels when the slide has no pixel size (doc 3 §9). */
export const DEFAULT_HPF_RADIUS_PX = 100;
/** Metres per pixel used for lengths when the slide does not say (doc 3 §9 "Resolution"). */
export const DEFAULT_LENGTH_METRES_PER_PIXEL = 2e-7;
export const HPF_CURSOR_HOLD_MS = 170;
export const ELLIPSE_DEBOUNCE_MS = 100;
/** The tilt on the wire is the drawing's rotation plus this (doc 3 §7 "Tilt has 90 added"). */
export const TILT_WIRE_OFFSET = 90;

/** Reserved names of the HPF tree (doc 3 §2). */
export const ORPHAN_HPF_NAME = 'Orphan';
export const OTHER_CLASS_NAME = 'Other';

/** Limits the server enforces on geometry and text (not in the spec; chosen for a sane payload). */
export const ANNOTATION_LIMITS = {
  /** Vertices of a freehand ring (closing vertex included). */
  freehandMaxVertices: 20_000,
  /** Vertices of a multiline. */
  multilineMaxVertices: 1_000,
  textMaxLength: 500,
  /** Ellipse radii, in pixels. */
  maxRadius: 1_000_000,
  /** Annotations of one GeoJSON import (each position of a MultiPoint is one). */
  importMaxFeatures: 250_000,
  /**
   * Positions of any one geometry of an import but a MultiPoint (whose positions are annotations
   * and count against `importMaxFeatures`): the freehand tool's, the largest a drawn annotation has.
   */
  geometryMaxVertices: 20_000,
  /** Positions of one GeoJSON import in all, every geometry's every position counted. */
  importMaxVertices: 2_000_000,
} as const;

// ---------------------------------------------------------------------------------------------
// Tools (doc 3 §2 "Annotation toolbar", §4 "Annotation drawing")
// ---------------------------------------------------------------------------------------------

export const ANNOTATION_TOOLS = ['line', 'multiline', 'text', 'ellipse', 'hpf', 'point', 'freehand'] as const;
export type AnnotationTool = (typeof ANNOTATION_TOOLS)[number];

export const TOOL_TYPES: Readonly<Record<AnnotationTool, AnnotationType>> = {
  line: 'LINE',
  multiline: 'MULTILINE',
  text: 'TEXT',
  ellipse: 'ELLIPSE',
  hpf: 'HPF',
  point: 'POINT',
  freehand: 'FREEHAND',
};

export const TOOL_LABELS: Readonly<Record<AnnotationTool, string>> = {
  line: 'Measurement',
  multiline: 'Line Measurement',
  text: 'Text',
  ellipse: 'Ellipse',
  hpf: 'HPF',
  point: 'Point',
  freehand: 'Freehand',
};

/** The shortcut key of each tool (doc 3 §2 "Keyboard shortcuts"). */
export const TOOL_KEYS: Readonly<Record<AnnotationTool, string>> = {
  line: 'r',
  multiline: 'l',
  text: 't',
  ellipse: 'o',
  hpf: 'h',
  point: 'p',
  freehand: 'f',
};

/** Tools that stay active after a successful create; ellipse and text reset (doc 3 §4). */
export const TOOLS_STAYING_ACTIVE: readonly AnnotationTool[] = ['line', 'multiline', 'point', 'hpf', 'freehand'];

/** Tools (and their keys) that need the edit permission (doc 3 §2, §6). */
export const TOOLS_NEEDING_EDIT: readonly AnnotationTool[] = ['hpf', 'point', 'freehand'];

/** Tools that draw with a class from a flyout. */
export const CLASS_TOOLS: readonly AnnotationTool[] = ['hpf', 'point', 'freehand'];

/** Tools that save through the 'Add annotation' panel (doc 3 §2): the others save when drawn. */
export const PANEL_TOOLS: readonly AnnotationTool[] = ['text', 'ellipse', 'hpf'];

export type DrawingState = 'DROPPING' | 'PLACING' | 'EDITING';

/**
 * Whether 'Add annotation' is enabled (doc 3 §4): freehand, line, ellipse or HPF in editing, or
 * text in editing with non-empty text.
 */
export function canAddAnnotation(tool: AnnotationTool, state: DrawingState | null, text: string): boolean {
  if (state !== 'EDITING') return false;
  if (tool === 'text') return text.trim() !== '';
  return tool === 'freehand' || tool === 'line' || tool === 'ellipse' || tool === 'hpf';
}

export function isAnnotationTool(value: string): value is AnnotationTool {
  return (ANNOTATION_TOOLS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// Permissions (doc 3 §6) and the independent-read rule (issue 14)
// ---------------------------------------------------------------------------------------------

export const VIEW_ANNOTATIONS_PERMISSIONS: readonly Permission[] = [
  'AP_ImageCaseViewer_ViewAnnotationstab',
  'AP_ImageViewer_ViewAnnotationsToolbar',
];
export const CREATE_ANNOTATION_PERMISSION: Permission = 'AP_ImageViewer_EditCreateAnnotations';
export const DELETE_ANNOTATION_PERMISSION: Permission = 'AP_ImageViewer_DeleteAnnotations';

// ---------------------------------------------------------------------------------------------
// Messages (doc 3 §8 and the reasons the server adds)
// ---------------------------------------------------------------------------------------------

export const ANNOTATION_MESSAGES = {
  unableToCreate: 'Unable to create annotation',
  unableToDelete: 'Unable to delete annotation',
  unexpectedTool: (tool: string) => `Unexpected: ${tool}`,
  created: 'Annotation created',
  deleted: 'Annotation deleted',
  notFound: 'Annotation not found',
  textRequired: 'Annotation text is required',
  textTooLong: `Annotation text must be less than ${ANNOTATION_LIMITS.textMaxLength} characters`,
  geometryType: (type: AnnotationType) => `A ${type} annotation must be a GeoJSON ${GEOMETRY_OF[type]}`,
  outsideImage: 'The annotation lies outside the image',
  imageHasNoExtent: 'The image has no extent yet (it is not processed)',
  lineVertices: 'A line has exactly two points',
  multilineVertices: `A multiline has 2 to ${ANNOTATION_LIMITS.multilineMaxVertices} points`,
  freehandVertices: `A freehand region is one closed ring of 4 to ${ANNOTATION_LIMITS.freehandMaxVertices} points`,
  freehandNotClosed: 'A freehand region must be closed (its last point equal to its first)',
  radiiRequired: 'An ellipse needs radiusX and radiusY greater than 0',
  classRequired: (type: AnnotationType) => `A ${type} annotation needs an annotation class`,
  classNotAllowed: (type: AnnotationType) => `A ${type} annotation carries no annotation class`,
  classNotInStudy: "The annotation class does not belong to this image's study",
  classWrongType: (type: AnnotationType) => `The annotation class is not in the study's ${type} list`,
  classDisabled: 'The annotation class is disabled',
  categoryRequired: 'A multiline annotation needs a multilineCategory (VILLUS_HEIGHT or CRYPT_DEPTH)',
  categoryNotAllowed: 'Only a multiline annotation carries a multilineCategory',
  multilineNotCeliac: 'Line measurements belong to celiac studies',
  importedReadOnly: 'imported AI annotations change only with their import',
  multilineTaken: (className: string, category: MultilineCategory) =>
    `${className} already has a ${MULTILINE_CATEGORY_LABELS[category]} line`,
  imageNotInImage: 'The annotation belongs to another image',
  lockedScored: 'The case is marked as scored: its reader’s annotations are locked until the case is reverted',
  notOwner: 'A reader changes only their own annotations',
  notYours: 'Only system administrators delete annotations they did not draw',
  alreadyDeleted: 'The annotation is already deleted',
  unableToRestore: 'Unable to restore annotation',
  restored: 'Annotation restored',
  notDeleted: 'The annotation is not deleted',
  notYourDeletion: 'Only the user who deleted an annotation restores it',
  importEmpty: 'The file holds no annotations',
  importInvalid: 'The file is not a GeoJSON FeatureCollection',
  importTooMany: (count: number) =>
    `A file holds at most ${ANNOTATION_LIMITS.importMaxFeatures} annotations (each position of a MultiPoint is one); this one holds ${count}`,
  importTooManyVertices: (count: number) =>
    `A file holds at most ${ANNOTATION_LIMITS.importMaxVertices} vertices in all; this one holds ${count}`,
  importGeometryTooLarge: (count: number) =>
    `A geometry holds at most ${ANNOTATION_LIMITS.geometryMaxVertices} vertices (a MultiPoint: ${ANNOTATION_LIMITS.importMaxFeatures} points); this one holds ${count}`,
  importTooLarge: `The file is too large to import: at most ${ANNOTATION_LIMITS.importMaxFeatures} annotations with ${ANNOTATION_LIMITS.importMaxVertices} vertices in all`,
  importFeature: (index: number, message: string) => `Feature ${index + 1}: ${message}`,
  importUnknownClass: (name: string, type: AnnotationType) => `No enabled ${type} class named '${name}' in this study`,
  importUnknownGeometry: (type: string) => `Geometry type ${type} cannot be imported`,
  imported: (count: number) => `Imported ${count} annotation${count === 1 ? '' : 's'}`,
} as const;

// ---------------------------------------------------------------------------------------------
// Geometry and measurement rules
// ---------------------------------------------------------------------------------------------

export type Position = [number, number];

/** Whether a study is celiac / NASH for the drawing rules (doc 3 §9). */
export function isCeliacStudy(indications: readonly Indication[] | readonly string[]): boolean {
  return (indications as readonly string[]).includes('CELIAC_DISEASE');
}
export function isNashStudy(indications: readonly Indication[] | readonly string[]): boolean {
  return (indications as readonly string[]).includes('NASH');
}

/**
 * HPF radius in full-resolution pixels (doc 3 §9, issue 14): √(0.238 mm² / π) / mpp, doubled for
 * NASH studies; 100 px when the slide has no pixel size. `mpp` is µm per pixel.
 */
export function hpfRadiusPx(mpp: number | null | undefined, nash: boolean): number {
  if (!(typeof mpp === 'number' && mpp > 0 && Number.isFinite(mpp))) return DEFAULT_HPF_RADIUS_PX;
  const radiusMetres = Math.sqrt(HPF_AREA_M2 / Math.PI);
  return (radiusMetres / (mpp * 1e-6)) * (nash ? 2 : 1);
}

/** µm per pixel for lengths: the slide's, else the spec's default resolution (0.2 µm). */
export function lengthMicronsPerPixel(mpp: number | null | undefined): number {
  return typeof mpp === 'number' && mpp > 0 && Number.isFinite(mpp) ? mpp : DEFAULT_LENGTH_METRES_PER_PIXEL * 1e6;
}

/** The length of a polyline in µm (a multiline's length is the sum of its segments). */
export function polylineLengthUm(coordinates: readonly (readonly number[])[], mpp: number | null | undefined): number {
  let px = 0;
  for (let i = 1; i < coordinates.length; i++) {
    const [ax, ay] = xy(coordinates[i - 1]);
    const [bx, by] = xy(coordinates[i]);
    px += Math.hypot(bx - ax, by - ay);
  }
  return px * lengthMicronsPerPixel(mpp);
}

/** A length as the viewer shows it: whole µm (doc 3 §9). */
export function formatLengthUm(lengthUm: number): string {
  return `${Math.round(lengthUm)} µm`;
}

/**
 * µm per pixel for areas and perimeters (issue 29): the slide's own, or null when it records none —
 * a region's size is then unknown, not estimated (unlike a line's length, which assumes 0.2 µm).
 */
export function physicalMicronsPerPixel(mpp: number | null | undefined): number | null {
  return typeof mpp === 'number' && mpp > 0 && Number.isFinite(mpp) ? mpp : null;
}

/** The area of a ring in px² by the shoelace formula (either winding; closed or not). */
export function ringAreaPx(ring: readonly (readonly number[])[]): number {
  let twice = 0;
  for (let i = 0; i < ring.length; i++) {
    const [ax, ay] = xy(ring[i]);
    const [bx, by] = xy(ring[(i + 1) % ring.length]);
    twice += ax * by - bx * ay;
  }
  return Math.abs(twice) / 2;
}

/** The perimeter of a ring in px: its edges, the closing edge included when the ring is open. */
export function ringPerimeterPx(ring: readonly (readonly number[])[]): number {
  let px = 0;
  for (let i = 0; i < ring.length; i++) {
    const [ax, ay] = xy(ring[i]);
    const [bx, by] = xy(ring[(i + 1) % ring.length]);
    px += Math.hypot(bx - ax, by - ay);
  }
  return px;
}

/** An ellipse's perimeter by Ramanujan's (first) approximation: π[3(a+b) − √((3a+b)(a+3b))]. */
export function ellipsePerimeter(a: number, b: number): number {
  return Math.PI * (3 * (a + b) - Math.sqrt((3 * a + b) * (a + 3 * b)));
}

/** A region's area (µm²) and perimeter (µm); both null for a non-region or without a pixel size. */
export interface RegionMeasures {
  area: number | null;
  perimeter: number | null;
}

/**
 * The area and perimeter of a region (issue 29): a freehand polygon's outer ring (shoelace; holes
 * subtracted from the area), an ellipse (π·a·b, Ramanujan), an HPF circle (πr², 2πr), in µm from the
 * slide's µm per pixel. Other types, and a slide with no pixel size, give nulls. Computed once here,
 * stored by the server beside `length`.
 */
export function regionMeasures(
  a: Pick<AnnotationView, 'annotationType' | 'geometry' | 'radius' | 'radiusX' | 'radiusY'>,
  mpp: number | null | undefined,
): RegionMeasures {
  const um = physicalMicronsPerPixel(mpp);
  const none = { area: null, perimeter: null };
  if (um === null) return none;
  switch (a.annotationType) {
    case 'FREEHAND': {
      if (a.geometry.type !== 'Polygon') return none;
      const [outer, ...holes] = a.geometry.coordinates;
      if (!outer || outer.length < 3) return none;
      const px = holes.reduce((sum, hole) => sum - ringAreaPx(hole), ringAreaPx(outer));
      return { area: px * um * um, perimeter: ringPerimeterPx(outer) * um };
    }
    case 'ELLIPSE': {
      if (a.radiusX === null || a.radiusY === null) return none;
      const rx = a.radiusX * um;
      const ry = a.radiusY * um;
      return { area: Math.PI * rx * ry, perimeter: ellipsePerimeter(rx, ry) };
    }
    case 'HPF': {
      if (a.radius === null) return none;
      const r = a.radius * um;
      return { area: Math.PI * r * r, perimeter: 2 * Math.PI * r };
    }
    default:
      return none;
  }
}

/** An area as the viewer shows it: whole µm², thousands apart ("12 345 µm²"). */
export function formatAreaUm2(areaUm2: number): string {
  return `${groupThousands(Math.round(areaUm2))} µm²`;
}

/** A size in µm as drawing panels show it: whole µm, thousands apart ("1 250 µm"). */
export function formatMicrons(um: number): string {
  return `${groupThousands(Math.round(um))} µm`;
}

function groupThousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** The drawing's rotation (degrees) → the wire's tilt, and back (doc 3 §7). */
export const tiltToWire = (degrees: number): number => degrees + TILT_WIRE_OFFSET;
export const tiltFromWire = (tilt: number): number => tilt - TILT_WIRE_OFFSET;

/** A position's x and y (a GeoJSON position may carry more; a missing one reads 0). */
export function xy(p: readonly number[] | undefined): [number, number] {
  return [p?.[0] ?? 0, p?.[1] ?? 0];
}

function distance(a: readonly number[], b: readonly number[]): number {
  const [ax, ay] = xy(a);
  const [bx, by] = xy(b);
  return Math.hypot(ax - bx, ay - by);
}

/** Whether a point lies inside (or on) a circle. */
export function inCircle(point: readonly number[], centre: readonly number[], radius: number): boolean {
  return distance(point, centre) <= radius;
}

/**
 * The HPF a point belongs to (issue 14): among the HPFs that contain it, the one whose centre is
 * nearest; equal distances go to the lowest id. null = the reserved HPF 'Orphan'.
 */
export function parentHpfOf(
  point: readonly number[],
  hpfs: readonly { id: number; centre: readonly number[]; radius: number }[],
): number | null {
  let best: { id: number; d: number } | null = null;
  for (const h of hpfs) {
    const d = distance(point, h.centre);
    if (d > h.radius) continue;
    if (!best || d < best.d || (d === best.d && h.id < best.id)) best = { id: h.id, d };
  }
  return best ? best.id : null;
}

/**
 * parentHpfOf for many points at once: the HPFs bucketed in a grid (a cell per largest diameter),
 * so each point looks only at the HPFs whose bounding box covers its cell. Same answers as
 * parentHpfOf (a property test holds it to that).
 */
export function parentFinder(
  hpfs: readonly { id: number; centre: readonly number[]; radius: number }[],
): (point: readonly number[]) => number | null {
  if (hpfs.length === 0) return () => null;
  const cell = Math.max(1, ...hpfs.map((h) => 2 * h.radius));
  const grid = new Map<string, { id: number; centre: readonly number[]; radius: number }[]>();
  for (const h of hpfs) {
    const [cx, cy] = xy(h.centre);
    for (let gx = Math.floor((cx - h.radius) / cell); gx <= Math.floor((cx + h.radius) / cell); gx++)
      for (let gy = Math.floor((cy - h.radius) / cell); gy <= Math.floor((cy + h.radius) / cell); gy++) {
        const key = `${gx}:${gy}`;
        const list = grid.get(key);
        if (list) list.push(h);
        else grid.set(key, [h]);
      }
  }
  return (point) => {
    const [x, y] = xy(point);
    return parentHpfOf(point, grid.get(`${Math.floor(x / cell)}:${Math.floor(y / cell)}`) ?? []);
  };
}

// ---------------------------------------------------------------------------------------------
// Wire shapes (doc 3 §7)
// ---------------------------------------------------------------------------------------------

const finite = z.number();
const position = z.tuple([finite, finite]);

export const pointGeometrySchema = z.object({ type: z.literal('Point'), coordinates: position });
export const lineStringGeometrySchema = z.object({ type: z.literal('LineString'), coordinates: z.array(position) });
export const polygonGeometrySchema = z.object({ type: z.literal('Polygon'), coordinates: z.array(z.array(position)) });
export const annotationGeometrySchema = z.discriminatedUnion('type', [
  pointGeometrySchema,
  lineStringGeometrySchema,
  polygonGeometrySchema,
]);
export type AnnotationGeometry = z.infer<typeof annotationGeometrySchema>;

/** POST /api/annotations (doc 3 §7): what the client may send; the server computes the rest. */
export const createAnnotationRequestSchema = z.object({
  imageId: z.number().int().positive(),
  annotationType: z.enum(ANNOTATION_TYPES),
  geometry: annotationGeometrySchema,
  annotationClassId: z.number().int().positive().nullish(),
  multilineCategory: z.enum(MULTILINE_CATEGORIES).nullish(),
  text: z.string().nullish(),
  radiusX: finite.nullish(),
  radiusY: finite.nullish(),
  /** Degrees, the drawing's rotation + 90 (doc 3 §7). */
  tilt: finite.nullish(),
});
export type CreateAnnotationRequest = z.infer<typeof createAnnotationRequestSchema>;

/** An annotation as the server sends it; absent fields are null for that type. */
export interface AnnotationView {
  id: number;
  imageId: number;
  annotationType: AnnotationType;
  source: AnnotationSource;
  userId: number | null;
  geometry: AnnotationGeometry;
  annotationClassId: number | null;
  color: string | null;
  /** A point's HPF (null: the 'Orphan' HPF). */
  parentId: number | null;
  /** HPF radius in pixels (computed by the server). */
  radius: number | null;
  radiusX: number | null;
  radiusY: number | null;
  tilt: number | null;
  weight: number | null;
  /** µm, lines and multilines. */
  length: number | null;
  /** µm², regions (freehand, ellipse, HPF); null when the slide has no pixel size (issue 29). */
  area: number | null;
  /** µm, regions; null when the slide has no pixel size. */
  perimeter: number | null;
  multilineCategory: MultilineCategory | null;
  text: string | null;
  createdAt: string;
}

export const annotationViewSchema = z.object({
  id: z.number().int(),
  imageId: z.number().int(),
  annotationType: z.enum(ANNOTATION_TYPES),
  source: z.enum(ANNOTATION_SOURCES),
  userId: z.number().int().nullable(),
  geometry: annotationGeometrySchema,
  annotationClassId: z.number().int().nullable(),
  color: z.string().nullable(),
  parentId: z.number().int().nullable(),
  radius: z.number().nullable(),
  radiusX: z.number().nullable(),
  radiusY: z.number().nullable(),
  tilt: z.number().nullable(),
  weight: z.number().nullable(),
  length: z.number().nullable(),
  area: z.number().nullable(),
  perimeter: z.number().nullable(),
  multilineCategory: z.enum(MULTILINE_CATEGORIES).nullable(),
  text: z.string().nullable(),
  createdAt: z.string(),
}) satisfies z.ZodType<AnnotationView>;

/** The author of annotations in a list (for the per-reader filter). */
export interface AnnotationAuthor {
  id: number;
  displayName: string;
}

/**
 * GET /api/images/{id}/annotations: streamed. Each annotation omits its null fields (a point is
 * about 120 bytes), so 200,000 objects stay one compact response; `toAnnotationView` restores them.
 */
export interface AnnotationListResponse {
  imageId: number;
  /** Whether the caller may still change their annotations here (false once their read is scored). */
  locked: boolean;
  authors: AnnotationAuthor[];
  annotations: Partial<AnnotationView>[];
}

const NULLABLE_FIELDS = [
  'userId',
  'annotationClassId',
  'color',
  'parentId',
  'radius',
  'radiusX',
  'radiusY',
  'tilt',
  'weight',
  'length',
  'area',
  'perimeter',
  'multilineCategory',
  'text',
] as const;

/** A compact row of the list → the full view (absent fields null, source CR by default). */
export function toAnnotationView(row: Partial<AnnotationView>): AnnotationView {
  const view = { source: 'CR', ...row } as AnnotationView;
  for (const f of NULLABLE_FIELDS) if (view[f] === undefined) (view as unknown as Record<string, null>)[f] = null;
  return view;
}

/**
 * `toAnnotationView` in place: the row the client just parsed becomes the view itself (absent
 * fields set to null, source CR by default), so a list of 200,000 rows is not copied row by row.
 */
export function toAnnotationViewInPlace(row: Partial<AnnotationView>): AnnotationView {
  const view = row as Record<string, unknown>;
  if (view.source === undefined) view.source = 'CR';
  for (const f of NULLABLE_FIELDS) if (view[f] === undefined) view[f] = null;
  return row as AnnotationView;
}

export const createAnnotationResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  annotation: annotationViewSchema,
  /** Points whose HPF changed because of this create (an HPF now holds them). */
  reparented: z.array(z.object({ id: z.number().int(), parentId: z.number().int().nullable() })),
});
export type CreateAnnotationResponse = z.infer<typeof createAnnotationResponseSchema>;

export const deleteAnnotationQuerySchema = z.object({
  deleteNested: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
});

export const deleteAnnotationResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  /** Every annotation deleted (the HPF and, with deleteNested, its points). */
  deletedIds: z.array(z.number().int()),
  /** Points whose HPF changed (without deleteNested: to another HPF or the Orphan). */
  reparented: z.array(z.object({ id: z.number().int(), parentId: z.number().int().nullable() })),
});
export type DeleteAnnotationResponse = z.infer<typeof deleteAnnotationResponseSchema>;

/**
 * POST /api/annotations/{id}/restore (issue 29, undo): a deleted annotation back as it was, with the
 * points deleted with it (an HPF deleted with its points), under the same ids.
 */
export const restoreAnnotationResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  /** Every annotation restored (the annotation and, for an HPF deleted with its points, those points). */
  annotations: z.array(annotationViewSchema),
  /** Points whose HPF changed: a restored HPF takes the points it holds again. */
  reparented: z.array(z.object({ id: z.number().int(), parentId: z.number().int().nullable() })),
});
export type RestoreAnnotationResponse = z.infer<typeof restoreAnnotationResponseSchema>;

export const importAnnotationsResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  count: z.number().int(),
});

/**
 * What is wrong with a create request on its own (before the study's classes are looked at), or
 * null: the geometry type per annotation type, vertex counts, a closed freehand ring, every vertex
 * inside the image (width × height pixels), the ellipse radii, the text, which fields the type may
 * carry. The server refuses with it; the web checks a drawing with the same function.
 */
export function annotationRequestProblem(
  request: Pick<
    CreateAnnotationRequest,
    'annotationType' | 'geometry' | 'annotationClassId' | 'multilineCategory' | 'text' | 'radiusX' | 'radiusY'
  >,
  image: { width: number; height: number },
): string | null {
  const type = request.annotationType;
  const g = request.geometry;
  if (g.type !== GEOMETRY_OF[type]) return ANNOTATION_MESSAGES.geometryType(type);
  let positions: (readonly number[])[];
  if (g.type === 'Point') positions = [g.coordinates];
  else if (g.type === 'LineString') {
    positions = g.coordinates;
    if (type === 'LINE' && positions.length !== 2) return ANNOTATION_MESSAGES.lineVertices;
    if (type === 'MULTILINE' && (positions.length < 2 || positions.length > ANNOTATION_LIMITS.multilineMaxVertices))
      return ANNOTATION_MESSAGES.multilineVertices;
  } else {
    const ring = g.coordinates[0];
    if (g.coordinates.length !== 1 || !ring || ring.length < 4 || ring.length > ANNOTATION_LIMITS.freehandMaxVertices)
      return ANNOTATION_MESSAGES.freehandVertices;
    const [fx, fy] = xy(ring[0]);
    const [lx, ly] = xy(ring[ring.length - 1]);
    if (fx !== lx || fy !== ly) return ANNOTATION_MESSAGES.freehandNotClosed;
    positions = ring;
  }
  for (const p of positions) {
    const [x, y] = xy(p);
    if (x < 0 || y < 0 || x > image.width || y > image.height) return ANNOTATION_MESSAGES.outsideImage;
  }
  if (type === 'ELLIPSE') {
    const ok = (r: number | null | undefined) => typeof r === 'number' && r > 0 && r <= ANNOTATION_LIMITS.maxRadius;
    if (!ok(request.radiusX) || !ok(request.radiusY)) return ANNOTATION_MESSAGES.radiiRequired;
  }
  const text = request.text ?? '';
  if (type === 'TEXT' && text.trim() === '') return ANNOTATION_MESSAGES.textRequired;
  if (text.length > ANNOTATION_LIMITS.textMaxLength) return ANNOTATION_MESSAGES.textTooLong;
  const hasClass = request.annotationClassId !== null && request.annotationClassId !== undefined;
  if (!CLASS_TYPE_OF[type] && hasClass) return ANNOTATION_MESSAGES.classNotAllowed(type);
  if (type === 'MULTILINE') {
    if (!hasClass) return ANNOTATION_MESSAGES.classRequired(type);
    if (!request.multilineCategory) return ANNOTATION_MESSAGES.categoryRequired;
  } else if (request.multilineCategory) return ANNOTATION_MESSAGES.categoryNotAllowed;
  return null;
}

// ---------------------------------------------------------------------------------------------
// The multiline walk (doc 3 §4 "Multiline", §5)
// ---------------------------------------------------------------------------------------------

export interface ClassRef {
  id: number;
  name: string;
  color: string;
  sortOrder: number;
  enabled: boolean;
}

export interface MultilineSelection {
  classId: number;
  category: MultilineCategory;
}

/**
 * The next unused class/category pair: the multiline classes in order (enabled ones only), within
 * each villus height then crypt depth. null when every pair is used (or there is no enabled class).
 */
export function nextMultilineSelection(
  classes: readonly ClassRef[],
  existing: readonly { annotationClassId: number | null; multilineCategory: MultilineCategory | null }[],
): MultilineSelection | null {
  const used = new Set(existing.map((a) => `${a.annotationClassId}:${a.multilineCategory}`));
  const ordered = [...classes].filter((c) => c.enabled).sort((a, b) => a.sortOrder - b.sortOrder || a.id - b.id);
  for (const c of ordered)
    for (const category of MULTILINE_CATEGORIES)
      if (!used.has(`${c.id}:${category}`)) return { classId: c.id, category };
  return null;
}

// ---------------------------------------------------------------------------------------------
// The HPF tree (doc 3 §2 "Annotations tab", §3 "HPF tree node")
// ---------------------------------------------------------------------------------------------

export interface PointClassNode {
  /** null: the class 'Other' (points without a class). */
  classId: number | null;
  name: string;
  color: string;
  count: number;
  pointIds: number[];
}

export interface HpfNode {
  /** null: the reserved HPF 'Orphan'. */
  id: number | null;
  /** Its text, else 'HPF n': n in its reader's drawing order (the number that reader sees). */
  name: string;
  /** Its reader's name in the all-readers view (buildHpfTree's `readers`), else null. */
  reader: string | null;
  color: string;
  /** Points in this HPF. */
  count: number;
  points: PointClassNode[];
}

export interface HpfClassNode {
  /** null: HPFs without a class ('Other'). */
  classId: number | null;
  name: string;
  color: string;
  /** HPFs of this class. */
  count: number;
  /** Points in the HPFs of this class. */
  pointCount: number;
  hpfs: HpfNode[];
}

export interface HpfTree {
  classes: HpfClassNode[];
  /** Points in no HPF; null when there are none. */
  orphan: HpfNode | null;
  totalHpfs: number;
  totalPoints: number;
}

type TreeAnnotation = Pick<AnnotationView, 'id' | 'annotationType' | 'annotationClassId' | 'parentId' | 'text'> & {
  color?: string | null;
  /** The reader who drew it (HPFs are numbered per reader); absent or null: one sequence. */
  userId?: number | null;
};

/**
 * The colours of the readers in the all-readers view (issue 29 item 12), by the reader's place in
 * the list's `authors`: far from each other and from the pink and purple of H&E tissue. Beyond
 * eight readers they repeat.
 */
export const READER_COLORS = [
  '#1E88FF',
  '#FF8C00',
  '#00C853',
  '#FF1493',
  '#00E5FF',
  '#FFEA00',
  '#8D6E63',
  '#FFFFFF',
] as const;

/** A reader of the all-readers view: the legend's name and colour. */
export interface ReaderKey {
  id: number;
  displayName: string;
  color: string;
}

/** The readers' colours, in the order of the list's authors (READER_COLORS). */
export function readerKeys(authors: readonly AnnotationAuthor[]): ReaderKey[] {
  return authors.map((a, i) => ({
    id: a.id,
    displayName: a.displayName,
    color: READER_COLORS[i % READER_COLORS.length] ?? ANNOTATION_COLORS.default,
  }));
}

/**
 * The tree of the Annotations tab: HPF classes (in the study's order, then 'Other' for HPFs without
 * a class) → HPFs (in drawing order, named by their text or 'HPF n', n in drawing order among the
 * HPFs of the same reader on the image: the number that reader sees) → point classes (study order,
 * then 'Other') with counts. Points in no HPF go to the reserved HPF 'Orphan'. Classes and HPFs
 * without points are kept (a count of 0 is an answer).
 *
 * `readers` (the all-readers view, issue 29 item 12): each HPF carries its reader's name (`reader`)
 * and colour, and within a class the HPFs go reader by reader (in `readers`' order), each in
 * drawing order.
 */
export function buildHpfTree(
  annotations: readonly TreeAnnotation[],
  hpfClasses: readonly ClassRef[],
  pointClasses: readonly ClassRef[],
  readers?: readonly ReaderKey[],
): HpfTree {
  const byOrder = (a: ClassRef, b: ClassRef) => a.sortOrder - b.sortOrder || a.id - b.id;
  const hpfs = annotations.filter((a) => a.annotationType === 'HPF').sort((a, b) => a.id - b.id);
  // 'HPF n' counts within each reader's own HPFs, in drawing order.
  const numberOf = new Map<number, number>();
  const perReader = new Map<number | null, number>();
  for (const h of hpfs) {
    const n = (perReader.get(h.userId ?? null) ?? 0) + 1;
    perReader.set(h.userId ?? null, n);
    numberOf.set(h.id, n);
  }
  const readerById = new Map((readers ?? []).map((r, i) => [r.id, { key: r, order: i }]));
  const readerOf = (h: TreeAnnotation) => {
    const id = h.userId ?? null;
    return id === null ? undefined : readerById.get(id);
  };
  if (readers) {
    const last = readers.length;
    hpfs.sort((a, b) => (readerOf(a)?.order ?? last) - (readerOf(b)?.order ?? last) || a.id - b.id);
  }
  const points = annotations.filter((a) => a.annotationType === 'POINT').sort((a, b) => a.id - b.id);
  const hpfIds = new Set(hpfs.map((h) => h.id));
  const pointClassById = new Map(pointClasses.map((c) => [c.id, c]));
  const orderedPointClasses = [...pointClasses].sort(byOrder);

  const pointsByHpf = new Map<number | null, TreeAnnotation[]>();
  for (const p of points) {
    const parent = p.parentId !== null && hpfIds.has(p.parentId) ? p.parentId : null;
    const list = pointsByHpf.get(parent);
    if (list) list.push(p);
    else pointsByHpf.set(parent, [p]);
  }

  const pointNodes = (list: readonly TreeAnnotation[]): PointClassNode[] => {
    const groups = new Map<number | null, number[]>();
    for (const p of list) {
      const key = p.annotationClassId !== null && pointClassById.has(p.annotationClassId) ? p.annotationClassId : null;
      const ids = groups.get(key);
      if (ids) ids.push(p.id);
      else groups.set(key, [p.id]);
    }
    const nodes: PointClassNode[] = [];
    for (const c of orderedPointClasses) {
      const ids = groups.get(c.id);
      if (ids) nodes.push({ classId: c.id, name: c.name, color: c.color, count: ids.length, pointIds: ids });
    }
    const other = groups.get(null);
    if (other)
      nodes.push({
        classId: null,
        name: OTHER_CLASS_NAME,
        color: ANNOTATION_COLORS.default,
        count: other.length,
        pointIds: other,
      });
    return nodes;
  };

  const hpfClassById = new Map(hpfClasses.map((c) => [c.id, c]));
  const hpfNodesByClass = new Map<number | null, HpfNode[]>();
  for (const h of hpfs) {
    const key = h.annotationClassId !== null && hpfClassById.has(h.annotationClassId) ? h.annotationClassId : null;
    const cls = key === null ? null : (hpfClassById.get(key) ?? null);
    const list = pointsByHpf.get(h.id) ?? [];
    const reader = readerOf(h)?.key;
    const node: HpfNode = {
      id: h.id,
      name: h.text?.trim() ? h.text.trim() : `HPF ${numberOf.get(h.id) ?? 0}`,
      reader: reader?.displayName ?? null,
      color: reader?.color ?? cls?.color ?? h.color ?? ANNOTATION_COLORS.hpf,
      count: list.length,
      points: pointNodes(list),
    };
    const nodes = hpfNodesByClass.get(key);
    if (nodes) nodes.push(node);
    else hpfNodesByClass.set(key, [node]);
  }

  const classNode = (classId: number | null, name: string, color: string): HpfClassNode => {
    const nodes = hpfNodesByClass.get(classId) ?? [];
    return {
      classId,
      name,
      color,
      count: nodes.length,
      pointCount: nodes.reduce((n, h) => n + h.count, 0),
      hpfs: nodes,
    };
  };
  const classes = [...hpfClasses].sort(byOrder).map((c) => classNode(c.id, c.name, c.color));
  if (hpfNodesByClass.has(null)) classes.push(classNode(null, OTHER_CLASS_NAME, ANNOTATION_COLORS.hpf));

  const orphanPoints = pointsByHpf.get(null) ?? [];
  const orphan: HpfNode | null =
    orphanPoints.length === 0
      ? null
      : {
          id: null,
          name: ORPHAN_HPF_NAME,
          reader: null,
          color: ANNOTATION_COLORS.default,
          count: orphanPoints.length,
          points: pointNodes(orphanPoints),
        };
  return { classes, orphan, totalHpfs: hpfs.length, totalPoints: points.length };
}

/** The counts of a tree node as tab-separated rows (header first), to paste into a spreadsheet. */
export function treeCountsTsv(nodes: readonly { name: string; count: number }[], header = ['Name', 'Count']): string {
  const clean = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
  return [header.join('\t'), ...nodes.map((n) => `${clean(n.name)}\t${n.count}`)].join('\n');
}

/** An HPF's label in the tree: 'reader2 · HPF 1' in the all-readers view, else its name. */
export function hpfNodeLabel(node: Pick<HpfNode, 'name' | 'reader'>): string {
  return node.reader ? `${node.reader} · ${node.name}` : node.name;
}

/**
 * The counts of a whole tree: one row per HPF and point class (Class, HPF, Point class, Count), with
 * a first column 'Reader' when the tree names its HPFs' readers (the all-readers view).
 */
export function hpfTreeTsv(tree: HpfTree): string {
  const clean = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
  const byReader = tree.classes.some((c) => c.hpfs.some((h) => h.reader !== null));
  const rows = [[...(byReader ? ['Reader'] : []), 'HPF class', 'HPF', 'Point class', 'Count'].join('\t')];
  const hpfRows = (className: string, h: HpfNode) => {
    const head = [...(byReader ? [clean(h.reader ?? '')] : []), clean(className), clean(h.name)];
    if (h.points.length === 0) rows.push([...head, '', '0'].join('\t'));
    for (const p of h.points) rows.push([...head, clean(p.name), String(p.count)].join('\t'));
  };
  for (const c of tree.classes) for (const h of c.hpfs) hpfRows(c.name, h);
  if (tree.orphan) hpfRows('', tree.orphan);
  return rows.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Celiac line measurements (doc 3 §2, issue 14)
// ---------------------------------------------------------------------------------------------

export interface CeliacRow {
  classId: number;
  name: string;
  color: string;
  /** µm, null when not measured. */
  villusHeight: number | null;
  cryptDepth: number | null;
  /** Vh:Cd to one decimal ('—' when either is missing or the depth is 0). */
  ratio: string;
}

/**
 * The 'Celiac Line Measurements' table: one row per multiline class (study order) with its villus
 * height and crypt depth in µm (the newest line of each, should there be several) and their ratio.
 */
export function celiacTable(
  multilineClasses: readonly ClassRef[],
  annotations: readonly Pick<
    AnnotationView,
    'id' | 'annotationType' | 'annotationClassId' | 'multilineCategory' | 'length'
  >[],
): CeliacRow[] {
  const latest = new Map<string, { id: number; length: number }>();
  for (const a of annotations) {
    if (a.annotationType !== 'MULTILINE' || a.annotationClassId === null || !a.multilineCategory || a.length === null)
      continue;
    const key = `${a.annotationClassId}:${a.multilineCategory}`;
    const prior = latest.get(key);
    if (!prior || a.id > prior.id) latest.set(key, { id: a.id, length: a.length });
  }
  return [...multilineClasses]
    .sort((a, b) => a.sortOrder - b.sortOrder || a.id - b.id)
    .map((c) => {
      const vh = latest.get(`${c.id}:VILLUS_HEIGHT`)?.length ?? null;
      const cd = latest.get(`${c.id}:CRYPT_DEPTH`)?.length ?? null;
      return {
        classId: c.id,
        name: c.name,
        color: c.color,
        villusHeight: vh,
        cryptDepth: cd,
        ratio: celiacRatio(vh, cd),
      };
    });
}

/** Vh:Cd to one decimal, from the whole-µm values the table shows. */
export function celiacRatio(villusHeight: number | null, cryptDepth: number | null): string {
  if (villusHeight === null || cryptDepth === null) return '—';
  const cd = Math.round(cryptDepth);
  if (cd === 0) return '—';
  return (Math.round(villusHeight) / cd).toFixed(1);
}

// ---------------------------------------------------------------------------------------------
// GeoJSON export (issue 14, beyond the spec): QuPath-compatible properties
// ---------------------------------------------------------------------------------------------

/** '#RRGGBB' → [r, g, b] (QuPath's classification colour); null for anything else. */
export function hexToRgb(hex: string | null | undefined): [number, number, number] | null {
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(hex ?? '');
  if (!m) return null;
  const digits = m[1] ?? '';
  const h = digits.length === 3 ? digits.replace(/./g, (c) => c + c) : digits;
  return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)];
}

export function rgbToHex(rgb: readonly number[]): string {
  return `#${rgb
    .slice(0, 3)
    .map((v) =>
      Math.max(0, Math.min(255, Math.round(v)))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')
    .toUpperCase()}`;
}

/** The Lamina fields a GeoJSON feature carries beside QuPath's (properties.lamina). */
export const laminaFeaturePropsSchema = z.object({
  annotationType: z.enum(ANNOTATION_TYPES),
  multilineCategory: z.enum(MULTILINE_CATEGORIES).nullish(),
  radiusX: finite.nullish(),
  radiusY: finite.nullish(),
  tilt: finite.nullish(),
  text: z.string().nullish(),
});

export const geoJsonFeatureSchema = z.object({
  type: z.literal('Feature'),
  id: z.unknown().optional(),
  geometry: z.object({ type: z.string(), coordinates: z.unknown() }).nullable(),
  properties: z
    .object({
      objectType: z.string().optional(),
      name: z.string().nullish(),
      classification: z
        .object({ name: z.string(), color: z.array(z.number()).optional(), colorRGB: z.number().optional() })
        .nullish(),
      lamina: laminaFeaturePropsSchema.optional(),
    })
    .loose()
    .nullish(),
});
export type GeoJsonFeature = z.infer<typeof geoJsonFeatureSchema>;

export const geoJsonFeatureCollectionSchema = z.object({
  type: z.literal('FeatureCollection'),
  features: z.array(z.unknown()),
});
