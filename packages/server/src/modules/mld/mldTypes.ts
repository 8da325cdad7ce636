/**
 * The shapes of a parsed Visiopharm `.mld` file, its error class and its limits (issue 17; the
 * layout is `../shared/docs/MLD-FORMAT.md`, Lamina's reading of it `docs/MLD.md`). Pure data: no I/O.
 */

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * Why a file was refused:
 * - `invalid`: the bytes break the layout (bad magic, unknown shape id, a chunk that does not end
 *   on an object, malformed XML, …);
 * - `truncated`: a count or length needs more bytes than the file (or its chunk) has left;
 * - `limit`: a safety limit of {@link MLD_LIMITS} was exceeded;
 * - `unsupported`: well-formed, but something Lamina does not read (a layer in image coordinates);
 * - `noFieldOfView`: no `[ImageInfo]`, so the coordinates cannot be placed on the image;
 * - `sizeMismatch`: the `[ImageInfo]` size differs from the linked image's;
 * - `internal`: a bug in the parser (an unexpected exception, wrapped); the fuzz test fails on it.
 */
export type MldErrorCode =
  'invalid' | 'truncated' | 'limit' | 'unsupported' | 'noFieldOfView' | 'sizeMismatch' | 'internal';

/** The only error the `.mld` module throws. `message` is meant for the import's ERROR status. */
export class MldParseError extends Error {
  override readonly name = 'MldParseError';
  constructor(
    readonly code: MldErrorCode,
    message: string,
    /** The part of the file, e.g. `layer 2 (Label), object 17` or `[ImageInfo]`; null when none. */
    readonly section: string | null = null,
    /** Byte offset in the file where the problem was found; null when not about bytes. */
    readonly offset: number | null = null,
  ) {
    super(message);
  }
}

export const MLD_MESSAGES = {
  noFieldOfView:
    'The .mld file has no [ImageInfo]: without the field of view its coordinates cannot be placed on the image',
  sizeMismatch: (file: MldSize, image: MldSize) =>
    `Image size ${file.width}\u00d7${file.height} in the file does not match the image (${image.width}\u00d7${image.height})`,
  imageCoordinates: (layer: string) =>
    `The .mld layer ${layer} is in image coordinates, which Lamina cannot place on the image (unverified format)`,
  /** Every byte-level refusal: what is wrong, where (section) and at which byte. */
  atByte: (detail: string, section: string, offset: number) =>
    `Invalid .mld file: ${detail} (${section}, at byte ${offset})`,
} as const;

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

export interface MldLimits {
  /** Objects in the whole file, all layers together. */
  maxObjects: number;
  /** Vertices of polygons, polylines and lines in the whole file. */
  maxVertices: number;
  /** Layers announced by the header. */
  maxLayers: number;
  /** Bytes of one NUL-terminated string (object text and additional text, a [LayerImage] name). */
  maxStringBytes: number;
  /** Bytes of one section tag such as `[ImageInfo]` (NUL-terminated). */
  maxTagBytes: number;
  /** Bytes of one XML section body ([LayerConfigs], [ImageInfo]). */
  maxXmlBytes: number;
  /** Bytes of one embedded [LayerImage] (heatmap TIFF). */
  maxLayerImageBytes: number;
  /** Element nesting of an XML section. */
  maxXmlDepth: number;
  /** Elements of one XML section. */
  maxXmlElements: number;
  /** Width or height in pixels an [ImageInfo] may declare. */
  maxImageSide: number;
}

/**
 * The default safety limits (docs/MLD.md "Limits"). Beyond them every count and length is also
 * bounded by the bytes the file has left, so no input allocates more than its size justifies.
 */
export const MLD_LIMITS: Readonly<MldLimits> = {
  maxObjects: 500_000,
  maxVertices: 2_000_000,
  maxLayers: 64,
  maxStringBytes: 64 * 1024,
  maxTagBytes: 256,
  maxXmlBytes: 16 * 1024 * 1024,
  maxLayerImageBytes: 1024 * 1024 * 1024,
  maxXmlDepth: 64,
  maxXmlElements: 100_000,
  maxImageSide: 10_000_000,
};

// ---------------------------------------------------------------------------------------------
// The parsed file (coordinates in the file's millimetres, Y up)
// ---------------------------------------------------------------------------------------------

/** Shape ids of the object record (MLD-FORMAT.md §3.4). */
export const MLD_SHAPE_IDS = {
  polygon: 0,
  ellipse: 1,
  circle: 2,
  polyline: 3,
  line: 4,
  rectangle: 5,
  square: 6,
  text: 7,
  polygonVariant: 8,
} as const;

/**
 * One object's geometry, as stored: millimetres, Y up, angles in radians. `points` hold x, y
 * pairs (x0, y0, x1, y1, …); a polygon's ring is open (the first vertex is not repeated).
 */
export type MldShape =
  /** Shape 0, or 8 (a variant every reader treats as a polygon; `shapeId` tells them apart). */
  | { kind: 'polygon'; shapeId: 0 | 8; points: Float64Array }
  | { kind: 'polyline'; points: Float64Array }
  /** Two points; `encoding` is how the file stored them (readers disagree, see docs/MLD.md). */
  | { kind: 'line'; points: Float64Array; encoding: 'float32' | 'float64' }
  | { kind: 'circle'; x: number; y: number; radius: number }
  /** Axes as stored (whether they are semi-axes is unverified). */
  | { kind: 'ellipse'; x: number; y: number; major: number; minor: number; angle: number }
  /** Centre and half extents. */
  | { kind: 'rectangle'; x: number; y: number; halfWidth: number; halfHeight: number; angle: number }
  /** x, y and side as stored (centre or corner is disputed; Lamina reads a centre, docs/MLD.md). */
  | { kind: 'square'; x: number; y: number; size: number; angle: number }
  /** A label at a point; the label is the object's `text`. */
  | { kind: 'text'; x: number; y: number };

export type MldShapeKind = MldShape['kind'];

export interface MldObject {
  /** Byte offset of the record in the file. */
  offset: number;
  /** The `type` byte: the class index within the layer; 0 is "clear" (hole, erase, background). */
  classIndex: number;
  shape: MldShape;
  text: string;
  additional: string;
}

export interface MldLayer {
  name: string;
  /** The layer header's flag; 0 in every known file. Lamina refuses to place a layer with it set. */
  inImageCoordinates: boolean;
  /** Byte offset of the layer record. */
  offset: number;
  /** How many `uint32 size` chunks the objects came in (0 for an empty layer). */
  chunks: number;
  objects: MldObject[];
}

export interface MldClass {
  index: number;
  name: string;
  /** '#RRGGBB' from the Windows COLORREF (0x00BBGGRR) in the file; null when absent or unreadable. */
  color: string | null;
}

/** One `<Layer Name="…">` of `[LayerConfigs]`. */
export interface MldLayerConfig {
  layer: string;
  classes: MldClass[];
}

export interface MldSize {
  width: number;
  height: number;
}

/** The field of view in the file's millimetres (Y up, so top > bottom). */
export interface MldFieldOfView {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface MldImageInfo {
  /** `ImagePath` as written (a Windows path, never followed); null when absent. */
  imagePath: string | null;
  /** Its file name without the extension (`OS-2` for `\\host\share\OS-2.ndpi`); null when no path. */
  imageName: string | null;
  /** `<Size>`: the level-0 size in pixels; null when the section has none. */
  size: MldSize | null;
  /** `<FOV>`; null when the section has none (then the coordinates cannot be placed). */
  fieldOfView: MldFieldOfView | null;
}

/** A `[LayerImage]` section: a heatmap, an embedded TIFF, returned undecoded. */
export interface MldLayerImage {
  name: string;
  /** Byte offset of the image bytes in the file. */
  offset: number;
  length: number;
  /** A view on the input (no copy). */
  bytes: Uint8Array;
  /** From the first bytes: 'tiff' (II*\0 / MM\0*), 'bigtiff' (II+\0 / MM\0+) or 'unknown'. */
  format: 'tiff' | 'bigtiff' | 'unknown';
}

/** A trailing section Lamina skips ([LayerAtlas], unknown tags): where it was. */
export interface MldOtherSection {
  tag: string;
  offset: number;
  length: number;
}

export interface MldFile {
  /** The header's version (always 3). */
  version: number;
  layers: MldLayer[];
  /** null when the file has no `[LayerConfigs]`. */
  layerConfigs: MldLayerConfig[] | null;
  /** null when the file has no `[ImageInfo]` (then its coordinates cannot be placed). */
  imageInfo: MldImageInfo | null;
  layerImages: MldLayerImage[];
  otherSections: MldOtherSection[];
  /** The end marker, e.g. `LDFF 4.0`; null when the file ends without one (older files). */
  trailer: string | null;
  objectCount: number;
  vertexCount: number;
  /** Things read but worth saying (a skipped section, a colour that could not be read, …). */
  warnings: string[];
}
