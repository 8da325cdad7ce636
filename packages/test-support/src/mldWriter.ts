import { fileURLToPath } from 'node:url';

/**
 * TEST-ONLY writer of the Visiopharm `.mld` layout Lamina reads (docs/MLD.md, MLD-FORMAT.md §3), so
 * tests can build small files for the test slides: header, layers with their object chunks,
 * trailing sections in any order, the end marker. It writes whatever it is told, including things
 * the parser must refuse (wrong counts, odd chunking), so tests can make hostile files too. Used by
 * the server's tests, the end-to-end import test and the .mld benchmark.
 */

/** The real sample (../shared beside the repository), 325,195 bytes. */
export const MLD_SAMPLE_PATH = fileURLToPath(
  new URL('../../../../shared/testdata/mld/ses1_4_Result.mld', import.meta.url),
);

/** A size in pixels (the parser's MldSize). */
export interface MldSize {
  width: number;
  height: number;
}

/** The field of view in the file's millimetres, Y up (the parser's MldFieldOfView). */
export interface MldFieldOfView {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

type Points = ArrayLike<number>;

/**
 * A shape as the parser returns it (its MldShape), with plain arrays allowed and the polygon/line
 * options defaulted. Written here, not imported: this package sits below the server.
 */
export type MldShapeSpec =
  | { kind: 'polygon'; shapeId?: 0 | 8; points: Points }
  | { kind: 'polyline'; points: Points }
  | { kind: 'line'; points: Points; encoding?: 'float32' | 'float64' }
  | { kind: 'circle'; x: number; y: number; radius: number }
  | { kind: 'ellipse'; x: number; y: number; major: number; minor: number; angle: number }
  | { kind: 'rectangle'; x: number; y: number; halfWidth: number; halfHeight: number; angle: number }
  | { kind: 'square'; x: number; y: number; size: number; angle: number }
  | { kind: 'text'; x: number; y: number };

export interface MldObjectSpec {
  /** Default 1. */
  classIndex?: number;
  shape: MldShapeSpec;
  text?: string;
  additional?: string;
}

export interface MldLayerSpec {
  name: string;
  inImageCoordinates?: boolean;
  objects: MldObjectSpec[];
  /** Objects per chunk (default: all in one). Zeros write empty chunks. */
  chunks?: number[];
  /** The count written in the layer header (default: objects.length). */
  announcedCount?: number;
}

export interface MldClassSpec {
  index: number;
  name?: string;
  /** A Windows COLORREF (0x00BBGGRR), written as a decimal number; or the raw text. */
  color?: number | string;
}

export type MldSectionSpec =
  | { tag: '[LayerConfigs]'; layers: { layer: string; classes: MldClassSpec[] }[] }
  | { tag: '[ImageInfo]'; imagePath?: string; size?: MldSize; fieldOfView?: MldFieldOfView }
  | { tag: '[LayerImage]'; name: string; bytes: Uint8Array }
  /** Any int64-length section, e.g. [LayerAtlas], an unknown tag, or a hand-written XML body. */
  | { tag: string; body: Uint8Array | string; raw: true };

export interface MldSpec {
  /** Default 3. */
  version?: number;
  /** Default: ROI, Label, Annotation, all empty. */
  layers?: MldLayerSpec[];
  /** The layer count written in the header (default: layers.length). */
  announcedLayers?: number;
  sections?: MldSectionSpec[];
  /** Default 'LDFF 4.0'; null writes no end marker. */
  trailer?: string | null;
}

export const DEFAULT_LAYERS: readonly string[] = ['ROI', 'Label', 'Annotation'];

class ByteWriter {
  private buffer = new Uint8Array(1024);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  /** Room for n more bytes; call it before touching `view` or `buffer`, which it may replace. */
  private reserve(n: number): number {
    if (this.length + n > this.buffer.length) {
      const next = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
      next.set(this.buffer.subarray(0, this.length));
      this.buffer = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }
  u8(v: number) {
    const at = this.reserve(1);
    this.view.setUint8(at, v);
  }
  i8(v: number) {
    const at = this.reserve(1);
    this.view.setInt8(at, v);
  }
  i32(v: number) {
    const at = this.reserve(4);
    this.view.setInt32(at, v, true);
  }
  u32(v: number) {
    const at = this.reserve(4);
    this.view.setUint32(at, v, true);
  }
  i64(v: number | bigint) {
    const at = this.reserve(8);
    this.view.setBigInt64(at, BigInt(v), true);
  }
  f32(v: number) {
    const at = this.reserve(4);
    this.view.setFloat32(at, v, true);
  }
  f64(v: number) {
    const at = this.reserve(8);
    this.view.setFloat64(at, v, true);
  }
  bytes(b: Uint8Array) {
    const at = this.reserve(b.length);
    this.buffer.set(b, at);
  }
  /** 8-bit text (latin1) and a NUL. */
  cString(s: string) {
    this.bytes(Buffer.from(s, 'latin1'));
    this.u8(0);
  }
  result(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

const SHAPE_ID = { polyline: 3, line: 4, ellipse: 1, circle: 2, rectangle: 5, square: 6, text: 7 } as const;

function writeObject(w: ByteWriter, object: MldObjectSpec): void {
  const s = object.shape;
  const id = s.kind === 'polygon' ? (s.shapeId ?? 0) : SHAPE_ID[s.kind];
  w.i8(id);
  w.u8(object.classIndex ?? 1);
  switch (s.kind) {
    case 'polygon':
    case 'polyline':
      w.i32(s.points.length / 2);
      for (let i = 0; i < s.points.length; i++) w.f32(s.points[i] ?? 0);
      break;
    case 'line':
      for (let i = 0; i < 4; i++) {
        const v = s.points[i] ?? 0;
        if (s.encoding === 'float64') w.f64(v);
        else w.f32(v);
      }
      break;
    default: {
      w.i32(0);
      const values =
        s.kind === 'circle'
          ? [s.x, s.y, s.radius]
          : s.kind === 'ellipse'
            ? [s.x, s.y, s.major, s.minor, s.angle]
            : s.kind === 'rectangle'
              ? [s.x, s.y, s.halfWidth, s.halfHeight, s.angle]
              : s.kind === 'square'
                ? [s.x, s.y, s.size, s.angle]
                : [s.x, s.y];
      for (const v of values) w.f64(v);
    }
  }
  w.cString(object.text ?? '');
  w.cString(object.additional ?? '');
}

function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sectionBody(section: MldSectionSpec): Uint8Array {
  const xml = (inner: string) => Buffer.from(`<?xml version="1.0" encoding="utf-8"?>\n${inner}`, 'utf8');
  if ('raw' in section) return typeof section.body === 'string' ? Buffer.from(section.body, 'utf8') : section.body;
  switch (section.tag) {
    case '[LayerConfigs]': {
      const layers = section.layers
        .map(({ layer, classes }) => {
          const types = classes
            .map((c) => {
              const name = c.name === undefined ? '' : `<Name>${xmlEscape(c.name)}</Name>`;
              const color = c.color === undefined ? '' : `<Color>${xmlEscape(String(c.color))}</Color>`;
              return `<Type Index="${c.index}">${name}${color}</Type>`;
            })
            .join('');
          return `<Layer Name="${xmlEscape(layer)}">${types}</Layer>`;
        })
        .join('');
      return xml(`<LayerConfigs>${layers}</LayerConfigs>`);
    }
    case '[ImageInfo]': {
      const path = section.imagePath === undefined ? '' : `<ImagePath>${xmlEscape(section.imagePath)}</ImagePath>`;
      const f = section.fieldOfView;
      const fov = f
        ? `<FOV><Left>${f.left}</Left><Top>${f.top}</Top><Right>${f.right}</Right><Bottom>${f.bottom}</Bottom></FOV>`
        : '';
      // Y before X, as in the sample.
      const size = section.size ? `<Size><Y>${section.size.height}</Y><X>${section.size.width}</X></Size>` : '';
      return xml(`<ImageInfo>${path}${fov}${size}</ImageInfo>`);
    }
    default:
      return new Uint8Array(0);
  }
}

/** The bytes of an `.mld` file as `spec` describes it. */
export function writeMld(spec: MldSpec = {}): Uint8Array {
  const w = new ByteWriter();
  const layers: MldLayerSpec[] = spec.layers ?? DEFAULT_LAYERS.map((name) => ({ name, objects: [] }));
  w.bytes(Buffer.from('LDFF', 'latin1'));
  w.i32(spec.version ?? 3);
  w.i32(spec.announcedLayers ?? layers.length);
  for (const layer of layers) {
    const name = new Uint8Array(64);
    name.set(Buffer.from(layer.name, 'latin1').subarray(0, 64));
    w.bytes(name);
    w.u8(layer.inImageCoordinates ? 1 : 0);
    w.i32(layer.announcedCount ?? layer.objects.length);
    if (layer.objects.length === 0 && !layer.chunks) continue;
    let next = 0;
    for (const count of layer.chunks ?? [layer.objects.length]) {
      const chunk = new ByteWriter();
      for (const object of layer.objects.slice(next, next + count)) writeObject(chunk, object);
      next += count;
      w.u32(chunk.length);
      w.bytes(chunk.result());
    }
  }
  for (const section of spec.sections ?? []) {
    w.cString(section.tag);
    if (!('raw' in section) && section.tag === '[LayerImage]') {
      w.cString(section.name);
      w.i64(section.bytes.length);
      w.bytes(section.bytes);
      continue;
    }
    const body = sectionBody(section);
    w.i64(body.length);
    w.bytes(body);
  }
  const trailer = spec.trailer === undefined ? 'LDFF 4.0' : spec.trailer;
  if (trailer !== null) w.cString(trailer);
  return w.result();
}

// ---------------------------------------------------------------------------------------------
// Files for a test slide: objects given in level-0 pixels
// ---------------------------------------------------------------------------------------------

/**
 * A field of view for an image of `size` pixels at `mmPerPixel` (default 0.00025 mm = 0.25 µm),
 * centred on the slide origin as NDPI files are.
 */
export function fieldOfViewFor(size: MldSize, mmPerPixel = 0.00025): MldFieldOfView {
  const w = size.width * mmPerPixel;
  const h = size.height * mmPerPixel;
  return { left: -w / 2, right: w / 2, top: h / 2, bottom: -h / 2 };
}

/** The inverse of the parser's conversion: level-0 pixels (y down) → the file's mm (Y up). */
export function pixelsToMm(size: MldSize, fov: MldFieldOfView) {
  const mmPerPxX = (fov.right - fov.left) / size.width;
  const mmPerPxY = (fov.top - fov.bottom) / size.height;
  return {
    x: (px: number) => fov.left + px * mmPerPxX,
    y: (py: number) => fov.top - py * mmPerPxY,
    length: (px: number) => px * Math.sqrt(mmPerPxX * mmPerPxY),
  };
}

/** The Windows COLORREF (0x00BBGGRR) of a CSS colour '#RRGGBB', as [LayerConfigs] stores colours. */
export function colorRef(hex: string): number {
  const n = Number.parseInt(hex.slice(1), 16);
  return ((n & 0xff) << 16) | (n & 0xff00) | ((n >> 16) & 0xff);
}

export interface PixelMldSpec {
  /** The linked image: its level-0 size and the path written in [ImageInfo] (its file name links it). */
  size: MldSize;
  imagePath: string;
  /** Class names per layer, written to [LayerConfigs] (index = position + 1). */
  classes?: { layer: string; names: { name: string; color?: number }[] }[];
  /** Circles (HPFs) in pixels, by default in the ROI layer. */
  circles?: { x: number; y: number; radius: number; classIndex?: number; layer?: string }[];
  /** Polygons in pixels ([x, y] vertices, open ring), by default in the Label layer. */
  polygons?: { points: [number, number][]; classIndex?: number; layer?: string }[];
  /** Polylines in pixels, by default in the Annotation layer. */
  polylines?: { points: [number, number][]; classIndex?: number; layer?: string }[];
  /** Points in pixels (text objects without text, which the import takes as points), by default in the Label layer. */
  points?: { x: number; y: number; classIndex?: number; layer?: string }[];
  /** An embedded heatmap (a TIFF), written as a [LayerImage] after [ImageInfo]. */
  heatmap?: { name: string; tiff: Uint8Array };
  mmPerPixel?: number;
  /** Leave out [ImageInfo] (the import must then fail). */
  withoutImageInfo?: boolean;
}

/** A small .mld for a test slide, with objects given in its pixels. */
export function writePixelMld(spec: PixelMldSpec): Uint8Array {
  const fov = fieldOfViewFor(spec.size, spec.mmPerPixel);
  const mm = pixelsToMm(spec.size, fov);
  const layers: MldLayerSpec[] = DEFAULT_LAYERS.map((name) => ({ name, objects: [] }));
  const layer = (name: string) => {
    let found = layers.find((l) => l.name === name);
    if (!found) layers.push((found = { name, objects: [] }));
    return found;
  };
  const points = (ps: [number, number][]) => ps.flatMap(([x, y]) => [mm.x(x), mm.y(y)]);
  for (const c of spec.circles ?? [])
    layer(c.layer ?? 'ROI').objects.push({
      classIndex: c.classIndex ?? 1,
      shape: { kind: 'circle', x: mm.x(c.x), y: mm.y(c.y), radius: mm.length(c.radius) },
    });
  for (const p of spec.polygons ?? [])
    layer(p.layer ?? 'Label').objects.push({
      classIndex: p.classIndex ?? 1,
      shape: { kind: 'polygon', points: points(p.points) },
    });
  for (const p of spec.polylines ?? [])
    layer(p.layer ?? 'Annotation').objects.push({
      classIndex: p.classIndex ?? 1,
      shape: { kind: 'polyline', points: points(p.points) },
    });
  for (const p of spec.points ?? [])
    layer(p.layer ?? 'Label').objects.push({
      classIndex: p.classIndex ?? 1,
      shape: { kind: 'text', x: mm.x(p.x), y: mm.y(p.y) },
    });
  const sections: MldSectionSpec[] = [];
  if (spec.classes)
    sections.push({
      tag: '[LayerConfigs]',
      layers: spec.classes.map(({ layer: name, names }) => ({
        layer: name,
        classes: names.map((c, i) => ({
          index: i + 1,
          name: c.name,
          ...(c.color !== undefined ? { color: c.color } : {}),
        })),
      })),
    });
  if (!spec.withoutImageInfo)
    sections.push({ tag: '[ImageInfo]', imagePath: spec.imagePath, size: spec.size, fieldOfView: fov });
  if (spec.heatmap) sections.push({ tag: '[LayerImage]', name: spec.heatmap.name, bytes: spec.heatmap.tiff });
  return writeMld({ layers, sections });
}
