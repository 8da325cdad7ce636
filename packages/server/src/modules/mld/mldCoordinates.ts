import {
  MLD_MESSAGES,
  MldParseError,
  type MldClass,
  type MldFieldOfView,
  type MldFile,
  type MldImageInfo,
  type MldObject,
  type MldShapeKind,
  type MldSize,
} from './mldTypes.js';

/**
 * From the file's millimetres to the image's level-0 pixels (MLD-FORMAT.md §4, docs/MLD.md
 * "Coordinates"), and the objects of a parsed file placed on the image, ready to become annotations.
 * Pure: no I/O.
 */

export interface MldPixelTransform {
  size: MldSize;
  fieldOfView: MldFieldOfView;
  /** Size.X / (Right − Left) and Size.Y / (Top − Bottom). */
  pixelsPerMmX: number;
  pixelsPerMmY: number;
  /** x in mm → pixel column (origin at the image's left edge). */
  x(mm: number): number;
  /** y in mm (Y up) → pixel row (origin at the top edge, y down): Y is flipped. */
  y(mm: number): number;
  /** A length in mm (a radius) → pixels, by the geometric mean of the two scales. */
  length(mm: number): number;
}

/**
 * The mm → level-0 pixel conversion of a file's `[ImageInfo]`:
 * `px = (x − Left) · Size.X / (Right − Left)`, `py = (Top − y) · Size.Y / (Top − Bottom)`.
 * Throws {@link MldParseError} `noFieldOfView` when there is no `[ImageInfo]` (or it lacks the FOV
 * or the size): without them the coordinates cannot be placed (MLD-FORMAT.md §4: refuse, never guess).
 */
export function pixelTransform(info: MldImageInfo | null): MldPixelTransform {
  const { size, fieldOfView: fov } = requireFieldOfView(info);
  const pixelsPerMmX = size.width / (fov.right - fov.left);
  const pixelsPerMmY = size.height / (fov.top - fov.bottom);
  const lengthScale = Math.sqrt(pixelsPerMmX * pixelsPerMmY);
  const { left, top } = fov;
  return {
    size,
    fieldOfView: fov,
    pixelsPerMmX,
    pixelsPerMmY,
    x: (mm) => (mm - left) * pixelsPerMmX,
    y: (mm) => (top - mm) * pixelsPerMmY,
    length: (mm) => mm * lengthScale,
  };
}

function requireFieldOfView(info: MldImageInfo | null): { size: MldSize; fieldOfView: MldFieldOfView } {
  if (!info) throw new MldParseError('noFieldOfView', MLD_MESSAGES.noFieldOfView, '[ImageInfo]');
  const { size, fieldOfView } = info;
  if (!size || !fieldOfView) {
    const missing = [!fieldOfView && '<FOV>', !size && '<Size>'].filter(Boolean).join(' and ');
    throw new MldParseError(
      'noFieldOfView',
      `The .mld file's [ImageInfo] has no ${missing}: without the field of view its coordinates cannot be placed on the image`,
      '[ImageInfo]',
    );
  }
  return { size, fieldOfView };
}

/**
 * Checks the `[ImageInfo]` size against the linked image's level-0 size. Throws
 * {@link MldParseError} `sizeMismatch` with 'Image size {W}×{H} in the file does not match the image
 * ({w}×{h})', or `noFieldOfView` when the file has no size to compare.
 */
export function checkImageSize(info: MldImageInfo | null, image: MldSize): void {
  const { size } = requireFieldOfView(info);
  if (size.width !== image.width || size.height !== image.height)
    throw new MldParseError('sizeMismatch', MLD_MESSAGES.sizeMismatch(size, image), '[ImageInfo]');
}

// ---------------------------------------------------------------------------------------------
// Placement: the objects in pixels, with their classes
// ---------------------------------------------------------------------------------------------

export type MldPosition = [number, number];

/** GeoJSON geometry in level-0 pixels (y down); a Polygon has one closed ring. */
export type MldGeometry =
  | { type: 'Polygon'; coordinates: MldPosition[][] }
  | { type: 'LineString'; coordinates: MldPosition[] }
  | { type: 'Point'; coordinates: MldPosition };

export interface MldPlacedObject {
  layerIndex: number;
  layerName: string;
  /** Index of the object in its layer (0-based, file order). */
  objectIndex: number;
  kind: MldShapeKind;
  /** The object's class index; 0 is "clear" (a hole or eraser; not subtracted here). */
  classIndex: number;
  /** From `[LayerConfigs]` for this layer and index; null when the file does not name it. */
  className: string | null;
  color: string | null;
  text: string;
  additional: string;
  /**
   * polygon, rectangle, square → Polygon (closed ring); polyline, line → LineString;
   * circle, ellipse, text → Point (the centre or anchor).
   */
  geometry: MldGeometry;
  /** A circle's radius in pixels; null for other shapes. */
  radius: number | null;
  /** An ellipse's axes in pixels as stored (major, minor); null for other shapes. */
  radiusX: number | null;
  radiusY: number | null;
  /** Rotation in radians in the pixel frame (from +x towards +y, i.e. clockwise on screen); null when none. */
  rotation: number | null;
  /** Every vertex (a circle's or ellipse's centre) within [0, width] × [0, height]. */
  insideImage: boolean;
}

export interface MldPlacedLayer {
  index: number;
  name: string;
  /** The layer's classes from `[LayerConfigs]` (empty when none). */
  classes: MldClass[];
  objects: MldPlacedObject[];
  /** Objects left out: the "clear-all" background rectangle, shapes with too few vertices, absurd coordinates. */
  skipped: { clearAll: number; degenerate: number; outOfRange: number };
}

export interface MldPlacement {
  transform: MldPixelTransform;
  layers: MldPlacedLayer[];
  /** Placed objects, all layers. */
  objectCount: number;
}

/** Half extents at least this large mark the conventional first "clear everything" rectangle (FLT_MAX). */
const CLEAR_ALL_EXTENT_MM = 1e30;
/** Coordinates beyond this many pixels from the origin are not an image's (hostile or broken input). */
const MAX_PIXEL_COORDINATE = 1e9;

/** Pixels are rounded to 1/100: float32 millimetres carry ~0.01 px of noise at 0.23 µm/px, so finer digits are noise. */
function round(value: number): number {
  return Math.round(value * 100) / 100 + 0; // + 0: no -0 in the output
}

/**
 * Places every object of a parsed file on the image through its `[ImageInfo]` (see
 * {@link pixelTransform}; throws `noFieldOfView` without it, and `unsupported` for a non-empty layer
 * flagged as in image coordinates). Classes come from the `[LayerConfigs]` layer of the same name.
 */
export function placeMld(file: MldFile): MldPlacement {
  const transform = pixelTransform(file.imageInfo);
  let objectCount = 0;
  const layers = file.layers.map((layer, index): MldPlacedLayer => {
    if (layer.inImageCoordinates && layer.objects.length > 0)
      throw new MldParseError(
        'unsupported',
        MLD_MESSAGES.imageCoordinates(layer.name),
        `layer ${index + 1}`,
        layer.offset,
      );
    const classes = file.layerConfigs?.find((config) => config.layer === layer.name)?.classes ?? [];
    const byIndex = new Map(classes.map((c) => [c.index, c]));
    const placed: MldPlacedLayer = {
      index,
      name: layer.name,
      classes,
      objects: [],
      skipped: { clearAll: 0, degenerate: 0, outOfRange: 0 },
    };
    layer.objects.forEach((object, objectIndex) => {
      const shape = placeShape(object, transform);
      if (typeof shape === 'string') {
        placed.skipped[shape]++;
        return;
      }
      const cls = byIndex.get(object.classIndex);
      placed.objects.push({
        layerIndex: index,
        layerName: layer.name,
        objectIndex,
        kind: object.shape.kind,
        classIndex: object.classIndex,
        className: cls && cls.name !== '' ? cls.name : null,
        color: cls?.color ?? null,
        text: object.text,
        additional: object.additional,
        ...shape,
      });
    });
    objectCount += placed.objects.length;
    return placed;
  });
  return { transform, layers, objectCount };
}

type PlacedShape = Pick<MldPlacedObject, 'geometry' | 'radius' | 'radiusX' | 'radiusY' | 'rotation' | 'insideImage'>;
type Skip = keyof MldPlacedLayer['skipped'];

function placeShape(object: MldObject, t: MldPixelTransform): PlacedShape | Skip {
  const { width, height } = t.size;
  let inside = true;
  let outOfRange = false;
  const position = (x: number, y: number): MldPosition => {
    const px = round(t.x(x));
    const py = round(t.y(y));
    if (!(Math.abs(px) <= MAX_PIXEL_COORDINATE && Math.abs(py) <= MAX_PIXEL_COORDINATE)) outOfRange = true;
    if (px < 0 || py < 0 || px > width || py > height) inside = false;
    return [px, py];
  };
  const positions = (points: Float64Array): MldPosition[] => {
    const out: MldPosition[] = new Array<MldPosition>(points.length / 2);
    for (let i = 0, j = 0; i < points.length; i += 2, j++) out[j] = position(points[i] ?? 0, points[i + 1] ?? 0);
    return out;
  };
  const ring = (points: MldPosition[]): MldGeometry => {
    const first = points[0];
    const last = points[points.length - 1];
    if (first && last && (first[0] !== last[0] || first[1] !== last[1])) points.push([first[0], first[1]]);
    return { type: 'Polygon', coordinates: [points] };
  };
  /** Corners of a rotated rectangle around (x, y) in mm, then in pixels. */
  const box = (x: number, y: number, hw: number, hh: number, angle: number): MldGeometry => {
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const corners: MldPosition[] = [
      [-hw, -hh],
      [hw, -hh],
      [hw, hh],
      [-hw, hh],
    ].map(([dx = 0, dy = 0]) => position(x + dx * c - dy * s, y + dx * s + dy * c));
    return ring(corners);
  };
  const none = { radius: null, radiusX: null, radiusY: null, rotation: null };
  let result: PlacedShape;
  const shape = object.shape;
  switch (shape.kind) {
    case 'polygon':
      if (shape.points.length < 6) return 'degenerate';
      result = { geometry: ring(positions(shape.points)), ...none, insideImage: true };
      break;
    case 'polyline':
    case 'line':
      if (shape.points.length < 4) return 'degenerate';
      result = { geometry: { type: 'LineString', coordinates: positions(shape.points) }, ...none, insideImage: true };
      break;
    case 'rectangle':
      if (shape.halfWidth >= CLEAR_ALL_EXTENT_MM || shape.halfHeight >= CLEAR_ALL_EXTENT_MM) return 'clearAll';
      result = {
        geometry: box(shape.x, shape.y, shape.halfWidth, shape.halfHeight, shape.angle),
        ...none,
        rotation: -shape.angle,
        insideImage: true,
      };
      break;
    case 'square':
      if (shape.size >= CLEAR_ALL_EXTENT_MM) return 'clearAll';
      result = {
        geometry: box(shape.x, shape.y, shape.size, shape.size, shape.angle),
        ...none,
        rotation: -shape.angle,
        insideImage: true,
      };
      break;
    case 'circle':
      result = {
        geometry: { type: 'Point', coordinates: position(shape.x, shape.y) },
        ...none,
        radius: round(t.length(shape.radius)),
        insideImage: true,
      };
      break;
    case 'ellipse':
      result = {
        geometry: { type: 'Point', coordinates: position(shape.x, shape.y) },
        radius: null,
        radiusX: round(t.length(shape.major)),
        radiusY: round(t.length(shape.minor)),
        rotation: -shape.angle,
        insideImage: true,
      };
      break;
    case 'text':
      result = { geometry: { type: 'Point', coordinates: position(shape.x, shape.y) }, ...none, insideImage: true };
      break;
  }
  const radii = [result.radius, result.radiusX, result.radiusY];
  if (outOfRange || radii.some((r) => r !== null && !(r <= MAX_PIXEL_COORDINATE))) return 'outOfRange';
  result.insideImage = inside;
  return result;
}
