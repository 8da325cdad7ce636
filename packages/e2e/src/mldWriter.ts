/**
 * A small Visiopharm `.mld` for a test slide, for the end-to-end import test (issue 17).
 *
 * The minimal part of the TEST-ONLY writer `packages/server/test/support/mldWriter.ts`
 * (writeMld / writePixelMld), copied here because the e2e package does not compile the server's
 * test support (it imports fast-check and the server's parser types): the same layout (docs/MLD.md,
 * MLD-FORMAT.md §3) — header, layers of object chunks, [LayerConfigs], [ImageInfo], [LayerImage],
 * the `LDFF 4.0` end marker — with objects given in the slide's level-0 pixels. Beyond that writer
 * it writes points (text objects without text, which the import takes as points) and a heatmap.
 */

class ByteWriter {
  private buffer = new Uint8Array(1024);
  private view = new DataView(this.buffer.buffer);
  length = 0;

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
    this.view.setUint8(this.reserve(1), v);
  }
  i8(v: number) {
    this.view.setInt8(this.reserve(1), v);
  }
  i32(v: number) {
    this.view.setInt32(this.reserve(4), v, true);
  }
  u32(v: number) {
    this.view.setUint32(this.reserve(4), v, true);
  }
  i64(v: number) {
    this.view.setBigInt64(this.reserve(8), BigInt(v), true);
  }
  f32(v: number) {
    this.view.setFloat32(this.reserve(4), v, true);
  }
  f64(v: number) {
    this.view.setFloat64(this.reserve(8), v, true);
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

type Shape =
  | { kind: 'polygon'; points: number[] }
  | { kind: 'circle'; x: number; y: number; radius: number }
  | { kind: 'text'; x: number; y: number };

interface MldObject {
  classIndex: number;
  shape: Shape;
}

/** Shape ids of the format: polygon 0, circle 2, text 7 (the others are not written here). */
const SHAPE_ID = { polygon: 0, circle: 2, text: 7 } as const;

function writeObject(w: ByteWriter, object: MldObject): void {
  const s = object.shape;
  w.i8(SHAPE_ID[s.kind]);
  w.u8(object.classIndex);
  if (s.kind === 'polygon') {
    // Vertex runs are float32.
    w.i32(s.points.length / 2);
    for (const v of s.points) w.f32(v);
  } else {
    // Shapes: an int32 pad, then float64 values.
    w.i32(0);
    for (const v of s.kind === 'circle' ? [s.x, s.y, s.radius] : [s.x, s.y]) w.f64(v);
  }
  w.cString(''); // text: empty, so a text object is a point
  w.cString(''); // additional
}

const xmlEscape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const xml = (inner: string) => Buffer.from(`<?xml version="1.0" encoding="utf-8"?>\n${inner}`, 'utf8');

/** Windows COLORREF (0x00BBGGRR) of '#RRGGBB'. */
export function colorRef(hex: string): number {
  const n = Number.parseInt(hex.slice(1), 16);
  return ((n & 0xff) << 16) | (n & 0xff00) | ((n >> 16) & 0xff);
}

export interface PixelMldSpec {
  /** The linked image's level-0 size, written to [ImageInfo]. */
  size: { width: number; height: number };
  /** Written as [ImageInfo]'s ImagePath: its file name links the file to the image. */
  imagePath: string;
  /** Class names and colours of each layer (index = position + 1). */
  classes: { layer: string; names: { name: string; color: string }[] }[];
  circles?: { x: number; y: number; radius: number; classIndex: number; layer: string }[];
  polygons?: { points: [number, number][]; classIndex: number; layer: string }[];
  points?: { x: number; y: number; classIndex: number; layer: string }[];
  /** An embedded heatmap (a TIFF), written as a [LayerImage]. */
  heatmap?: { name: string; tiff: Uint8Array };
}

/** The bytes of a small .mld: objects given in pixels, the FOV centred on the slide origin at 0.25 µm/px. */
export function writePixelMld(spec: PixelMldSpec): Uint8Array {
  const mmPerPixel = 0.00025;
  const { width, height } = spec.size;
  const fov = {
    left: (-width * mmPerPixel) / 2,
    right: (width * mmPerPixel) / 2,
    top: (height * mmPerPixel) / 2,
    bottom: (-height * mmPerPixel) / 2,
  };
  // Pixels (y down) → the file's millimetres (Y up), the inverse of the import's conversion.
  const mmX = (px: number) => fov.left + px * mmPerPixel;
  const mmY = (py: number) => fov.top - py * mmPerPixel;

  const layers = new Map<string, MldObject[]>([
    ['ROI', []],
    ['Label', []],
    ['Annotation', []],
  ]);
  const layer = (name: string) => {
    let objects = layers.get(name);
    if (!objects) layers.set(name, (objects = []));
    return objects;
  };
  for (const c of spec.circles ?? [])
    layer(c.layer).push({
      classIndex: c.classIndex,
      shape: { kind: 'circle', x: mmX(c.x), y: mmY(c.y), radius: c.radius * mmPerPixel },
    });
  for (const p of spec.polygons ?? [])
    layer(p.layer).push({
      classIndex: p.classIndex,
      shape: { kind: 'polygon', points: p.points.flatMap(([x, y]) => [mmX(x), mmY(y)]) },
    });
  for (const p of spec.points ?? [])
    layer(p.layer).push({ classIndex: p.classIndex, shape: { kind: 'text', x: mmX(p.x), y: mmY(p.y) } });

  const w = new ByteWriter();
  w.bytes(Buffer.from('LDFF', 'latin1'));
  w.i32(3);
  w.i32(layers.size);
  for (const [name, objects] of layers) {
    const fixed = new Uint8Array(64);
    fixed.set(Buffer.from(name, 'latin1').subarray(0, 64));
    w.bytes(fixed);
    w.u8(0); // not in image coordinates
    w.i32(objects.length);
    if (objects.length === 0) continue;
    // One chunk: its byte size, then the objects.
    const chunk = new ByteWriter();
    for (const object of objects) writeObject(chunk, object);
    w.u32(chunk.length);
    w.bytes(chunk.result());
  }

  const section = (tag: string, body: Uint8Array) => {
    w.cString(tag);
    w.i64(body.length);
    w.bytes(body);
  };
  const configs = spec.classes
    .map(
      ({ layer: name, names }) =>
        `<Layer Name="${xmlEscape(name)}">${names
          .map(
            (c, i) =>
              `<Type Index="${i + 1}"><Name>${xmlEscape(c.name)}</Name><Color>${colorRef(c.color)}</Color></Type>`,
          )
          .join('')}</Layer>`,
    )
    .join('');
  section('[LayerConfigs]', xml(`<LayerConfigs>${configs}</LayerConfigs>`));
  section(
    '[ImageInfo]',
    xml(
      `<ImageInfo><ImagePath>${xmlEscape(spec.imagePath)}</ImagePath>` +
        `<FOV><Left>${fov.left}</Left><Top>${fov.top}</Top><Right>${fov.right}</Right><Bottom>${fov.bottom}</Bottom></FOV>` +
        `<Size><Y>${height}</Y><X>${width}</X></Size></ImageInfo>`,
    ),
  );
  if (spec.heatmap) {
    w.cString('[LayerImage]');
    w.cString(spec.heatmap.name);
    w.i64(spec.heatmap.tiff.length);
    w.bytes(spec.heatmap.tiff);
  }
  w.cString('LDFF 4.0');
  return w.result();
}
