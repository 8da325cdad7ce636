import {
  MLD_LIMITS,
  MLD_MESSAGES,
  MLD_SHAPE_IDS,
  MldParseError,
  type MldClass,
  type MldErrorCode,
  type MldFieldOfView,
  type MldFile,
  type MldImageInfo,
  type MldLayer,
  type MldLayerConfig,
  type MldLayerImage,
  type MldLimits,
  type MldObject,
  type MldOtherSection,
  type MldShape,
  type MldSize,
} from './mldTypes.js';
import { childNamed, parseXml, type XmlElement } from './mldXml.js';

/**
 * The `.mld` parser (issue 17): Visiopharm's "LDFF" layer-data file, read as
 * `../shared/docs/MLD-FORMAT.md` §3 describes it (docs/MLD.md says what Lamina does with each
 * part). Pure: bytes in, plain objects out. One linear pass with DataView reads; every count and
 * length is checked against the bytes left (in the file, or in the object chunk) before anything is
 * read or allocated, and against {@link MLD_LIMITS}. Anything wrong throws {@link MldParseError}
 * naming the section and the byte offset — no other exception leaves this module.
 */
export function parseMld(input: Uint8Array, limits: Partial<MldLimits> = {}): MldFile {
  try {
    return new MldReader(input, { ...MLD_LIMITS, ...limits }).read();
  } catch (error) {
    if (error instanceof MldParseError) throw error;
    // A bug, not a property of the file: still refused with our own type, and the fuzz test fails on it.
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new MldParseError('internal', `Cannot read the .mld file: unexpected ${detail.slice(0, 200)}`);
  }
}

const HEADER_BYTES = 12;
const LAYER_NAME_BYTES = 64;
/** Name, the inImageCoordinates byte and the int32 object count. */
const LAYER_HEADER_BYTES = LAYER_NAME_BYTES + 1 + 4;
/** The smallest object record: shape, type, a polygon's int32 count of 0, two empty strings. */
const MIN_OBJECT_BYTES = 8;
/** The float64 payload values after the int32 pad, per shape (MLD-FORMAT.md §3.4). */
const FLOAT64_VALUES: Readonly<Partial<Record<number, number>>> = {
  [MLD_SHAPE_IDS.ellipse]: 5,
  [MLD_SHAPE_IDS.circle]: 3,
  [MLD_SHAPE_IDS.rectangle]: 5,
  [MLD_SHAPE_IDS.square]: 4,
  [MLD_SHAPE_IDS.text]: 2,
};

const MAX_WARNINGS = 50;

const TAGS = {
  layerImage: '[LayerImage]',
  layerConfigs: '[LayerConfigs]',
  layerAtlas: '[LayerAtlas]',
  imageInfo: '[ImageInfo]',
} as const;

/** Object text is undeclared 8-bit text (probably the Windows ANSI code page). */
const ANSI = new TextDecoder('windows-1252');
/** XML sections declare UTF-8; invalid UTF-8 is refused rather than replaced. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

type LineEncoding = 'float32' | 'float64';

class MldReader {
  private readonly view: DataView;
  private readonly length: number;
  private pos = 0;
  // Where we are, for messages (built only when failing).
  private layerIndex = -1;
  private layerName = '';
  private objectIndex = -1;
  private chunkIndex = -1;
  private tag: string | null = null;
  private objectCount = 0;
  private vertexCount = 0;
  /** Set when the current chunk holds a line (shape 4), whose encoding readers disagree on. */
  private sawLine = false;
  private readonly warnings: string[] = [];
  private warningsLeftOut = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: MldLimits,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.length = bytes.byteLength;
  }

  read(): MldFile {
    const { version, layerCount } = this.readHeader();
    const layers: MldLayer[] = [];
    for (let i = 0; i < layerCount; i++) layers.push(this.readLayer(i));
    this.layerIndex = -1;
    return {
      version,
      layers,
      ...this.readSections(),
      objectCount: this.objectCount,
      vertexCount: this.vertexCount,
      warnings: this.warnings,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Errors and primitive reads
  // -------------------------------------------------------------------------------------------

  private section(): string {
    if (this.tag === '') return 'trailing sections';
    if (this.tag !== null) return `section ${this.tag}`;
    if (this.layerIndex < 0) return 'header';
    let where = `layer ${this.layerIndex + 1} (${this.layerName || 'unnamed'})`;
    if (this.chunkIndex >= 0) where += `, chunk ${this.chunkIndex + 1}`;
    if (this.objectIndex >= 0) where += `, object ${this.objectIndex + 1}`;
    return where;
  }

  /** Records a warning; after {@link MAX_WARNINGS}, only how many more there were. */
  private warn(warning: string): void {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(warning);
    else this.warningsLeftOut++;
  }

  private fail(code: MldErrorCode, detail: string, offset: number = this.pos): never {
    const section = this.section();
    throw new MldParseError(code, MLD_MESSAGES.atByte(detail, section, offset), section, offset);
  }

  /** Fails unless `count` bytes remain before `end` (the file's end unless given). */
  private need(count: number, what: string, end: number = this.length): void {
    const left = end - this.pos;
    if (count > left) {
      const inWhat = end === this.length ? 'the file' : 'the chunk';
      this.fail('truncated', `${what} needs ${count} bytes but ${inWhat} has ${Math.max(left, 0)} left`);
    }
  }

  private int32(what: string, end?: number): number {
    this.need(4, what, end);
    const value = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return value;
  }

  private uint32(what: string): number {
    this.need(4, what);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  /** An int64 length, which must fit in the bytes left (so it is a safe integer). */
  private length64(what: string): number {
    this.need(8, what);
    const at = this.pos;
    const value = this.view.getBigInt64(at, true);
    this.pos += 8;
    if (value < 0n) this.fail('invalid', `${what} is negative (${value})`, at);
    if (value > BigInt(this.length - this.pos))
      this.fail('truncated', `${what} is ${value} bytes but the file has ${this.length - this.pos} left`, at);
    return Number(value);
  }

  /** A NUL-terminated string before `end`, at most `max` bytes (NUL excluded). */
  private cString(what: string, end: number, max: number): string {
    const bytes = this.bytes;
    const start = this.pos;
    if (start < end && bytes[start] === 0) {
      this.pos = start + 1;
      return '';
    }
    const stop = Math.min(end, start + max + 1);
    let i = start;
    while (i < stop && bytes[i] !== 0) i++;
    if (i >= stop) {
      if (stop === end)
        this.fail(
          'truncated',
          `${what} has no terminating NUL before the end of ${end === this.length ? 'the file' : 'the chunk'}`,
          start,
        );
      this.fail('limit', `${what} is longer than ${max} bytes`, start);
    }
    this.pos = i + 1;
    return ANSI.decode(bytes.subarray(start, i));
  }

  // -------------------------------------------------------------------------------------------
  // Header and layers (MLD-FORMAT.md §3.1–§3.2)
  // -------------------------------------------------------------------------------------------

  private readHeader(): { version: number; layerCount: number } {
    this.need(HEADER_BYTES, 'the file header');
    const b = this.bytes;
    if (b[0] !== 0x4c || b[1] !== 0x44 || b[2] !== 0x46 || b[3] !== 0x46)
      this.fail('invalid', 'the file does not start with LDFF (not a Visiopharm .mld file)', 0);
    this.pos = 4;
    const version = this.int32('the version');
    if (version !== 3) this.fail('unsupported', `version ${version} (only version 3 is known)`, 4);
    const layerCount = this.int32('the layer count');
    if (layerCount < 0) this.fail('invalid', `a negative layer count (${layerCount})`, 8);
    if (layerCount > this.limits.maxLayers)
      this.fail('limit', `${layerCount} layers (more than the limit of ${this.limits.maxLayers})`, 8);
    if (layerCount * LAYER_HEADER_BYTES > this.length - this.pos)
      this.fail(
        'truncated',
        `${layerCount} layers need at least ${layerCount * LAYER_HEADER_BYTES} bytes but the file has ${this.length - this.pos} left`,
        8,
      );
    return { version, layerCount };
  }

  private readLayer(index: number): MldLayer {
    this.layerIndex = index;
    this.layerName = '';
    this.chunkIndex = -1;
    this.objectIndex = -1;
    const offset = this.pos;
    this.need(LAYER_HEADER_BYTES, 'the layer header');
    const nameBytes = this.bytes.subarray(offset, offset + LAYER_NAME_BYTES);
    const nul = nameBytes.indexOf(0);
    const name = ANSI.decode(nul < 0 ? nameBytes : nameBytes.subarray(0, nul));
    this.layerName = name;
    this.pos += LAYER_NAME_BYTES;
    const flag = this.bytes[this.pos] ?? 0;
    if (flag > 1) this.fail('invalid', `the inImageCoordinates flag is ${flag} (expected 0 or 1)`);
    this.pos += 1;
    const countAt = this.pos;
    const count = this.int32('the object count');
    if (count < 0) this.fail('invalid', `a negative object count (${count})`, countAt);
    if (this.objectCount + count > this.limits.maxObjects)
      this.fail(
        'limit',
        `${this.objectCount + count} objects (more than the limit of ${this.limits.maxObjects})`,
        countAt,
      );
    if (count * MIN_OBJECT_BYTES > this.length - this.pos)
      this.fail(
        'truncated',
        `${count} objects need at least ${count * MIN_OBJECT_BYTES} bytes but the file has ${this.length - this.pos} left`,
        countAt,
      );
    const layer: MldLayer = { name, inImageCoordinates: flag === 1, offset, chunks: 0, objects: [] };
    if (layer.inImageCoordinates) this.warn(`Layer ${name} is flagged as in image coordinates.`);
    // The objects come in chunks, each a uint32 byte size and whole object records, until `count`
    // objects have been read (MLD-FORMAT.md §3.2; only reader C handles more than one chunk).
    while (layer.objects.length < count) {
      this.chunkIndex = layer.chunks;
      this.objectIndex = -1;
      const size = this.uint32('the chunk size');
      const start = this.pos;
      if (size > this.length - start)
        this.fail('truncated', `a chunk of ${size} bytes but the file has ${this.length - start} left`, start - 4);
      layer.chunks++;
      this.readChunk(layer, count, start + size);
    }
    this.chunkIndex = -1;
    this.objectIndex = -1;
    return layer;
  }

  /**
   * The objects of one chunk, which must end exactly at the chunk's end. Lines (shape 4) are read
   * as 4 × float32 (reader C, which also writes them); if the chunk then does not parse, it is read
   * again with 4 × float64 (reader A). At most two passes, so still linear.
   */
  private readChunk(layer: MldLayer, count: number, end: number): void {
    const start = this.pos;
    const before = { objects: layer.objects.length, objectCount: this.objectCount, vertexCount: this.vertexCount };
    this.sawLine = false;
    try {
      this.readObjects(layer, count, end, 'float32');
    } catch (error) {
      if (!(error instanceof MldParseError) || !this.sawLine) throw error;
      this.pos = start;
      layer.objects.length = before.objects;
      this.objectCount = before.objectCount;
      this.vertexCount = before.vertexCount;
      try {
        this.readObjects(layer, count, end, 'float64');
      } catch {
        throw error;
      }
      this.warn(`Layer ${layer.name}: lines read as float64 (the chunk does not parse with float32 lines).`);
    }
  }

  private readObjects(layer: MldLayer, count: number, end: number, lines: LineEncoding): void {
    const objects = layer.objects;
    while (this.pos < end && objects.length < count) {
      this.objectIndex = objects.length;
      objects.push(this.readObject(end, lines));
    }
    this.objectIndex = -1;
    if (this.pos !== end)
      this.fail('invalid', `${end - this.pos} bytes left in the chunk after the layer's ${count} objects`);
  }

  // -------------------------------------------------------------------------------------------
  // Objects (MLD-FORMAT.md §3.3–§3.4)
  // -------------------------------------------------------------------------------------------

  private readObject(end: number, lines: LineEncoding): MldObject {
    const offset = this.pos;
    this.need(2, 'the object header', end);
    const view = this.view;
    const shapeId = view.getInt8(offset);
    const classIndex = view.getUint8(offset + 1);
    this.pos += 2;
    if (++this.objectCount > this.limits.maxObjects)
      this.fail('limit', `more than ${this.limits.maxObjects} objects`, offset);
    let shape: MldShape;
    switch (shapeId) {
      case MLD_SHAPE_IDS.polygon:
      case MLD_SHAPE_IDS.polygonVariant:
        shape = { kind: 'polygon', shapeId, points: this.readPoints(end) };
        break;
      case MLD_SHAPE_IDS.polyline:
        shape = { kind: 'polyline', points: this.readPoints(end) };
        break;
      case MLD_SHAPE_IDS.line:
        this.sawLine = true;
        shape = { kind: 'line', points: this.readLine(end, lines), encoding: lines };
        break;
      case MLD_SHAPE_IDS.ellipse:
      case MLD_SHAPE_IDS.circle:
      case MLD_SHAPE_IDS.rectangle:
      case MLD_SHAPE_IDS.square:
      case MLD_SHAPE_IDS.text:
        shape = this.readFloat64Shape(shapeId, end);
        break;
      default:
        this.fail('invalid', `unknown shape id ${shapeId}`, offset);
    }
    const text = this.cString('the object text', end, this.limits.maxStringBytes);
    const additional = this.cString('the object additional text', end, this.limits.maxStringBytes);
    return { offset, classIndex, shape, text, additional };
  }

  /** int32 n, then n × (float32 x, float32 y). */
  private readPoints(end: number): Float64Array {
    const countAt = this.pos;
    const n = this.int32('the vertex count', end);
    if (n < 0) this.fail('invalid', `a negative vertex count (${n})`, countAt);
    // +2: the two string terminators that must still follow.
    if (n * 8 + 2 > end - this.pos)
      this.fail(
        'truncated',
        `${n} vertices and the two text terminators need ${n * 8 + 2} bytes but the chunk has ${end - this.pos} left`,
        countAt,
      );
    this.vertexCount += n;
    if (this.vertexCount > this.limits.maxVertices)
      this.fail('limit', `more than ${this.limits.maxVertices} vertices`, countAt);
    const points = new Float64Array(2 * n);
    const view = this.view;
    let p = this.pos;
    for (let i = 0; i < 2 * n; i++, p += 4) {
      const value = view.getFloat32(p, true);
      if (!Number.isFinite(value)) this.fail('invalid', `a vertex coordinate that is not a finite number`, p);
      points[i] = value;
    }
    this.pos = p;
    return points;
  }

  private readLine(end: number, encoding: LineEncoding): Float64Array {
    const size = encoding === 'float32' ? 4 : 8;
    this.need(4 * size, 'the line', end);
    this.vertexCount += 2;
    if (this.vertexCount > this.limits.maxVertices) this.fail('limit', `more than ${this.limits.maxVertices} vertices`);
    const points = new Float64Array(4);
    for (let i = 0; i < 4; i++, this.pos += size) {
      const value = size === 4 ? this.view.getFloat32(this.pos, true) : this.view.getFloat64(this.pos, true);
      if (!Number.isFinite(value)) this.fail('invalid', 'a line coordinate that is not a finite number');
      points[i] = value;
    }
    return points;
  }

  /** int32 pad (0 in practice; ignored), then float64 values. */
  private readFloat64Shape(shapeId: number, end: number): MldShape {
    const count = FLOAT64_VALUES[shapeId] ?? 0;
    this.need(4 + 8 * count, 'the shape', end);
    const at = this.pos + 4;
    const v: number[] = [];
    for (let i = 0; i < count; i++) {
      const value = this.view.getFloat64(at + 8 * i, true);
      if (!Number.isFinite(value)) this.fail('invalid', 'a shape value that is not a finite number', at + 8 * i);
      v.push(value);
    }
    this.pos = at + 8 * count;
    const [x = 0, y = 0, a = 0, b = 0, c = 0] = v;
    const nonNegative = (value: number, what: string) => {
      if (value < 0) this.fail('invalid', `a negative ${what} (${value})`, at);
    };
    switch (shapeId) {
      case MLD_SHAPE_IDS.circle:
        nonNegative(a, 'radius');
        return { kind: 'circle', x, y, radius: a };
      case MLD_SHAPE_IDS.ellipse:
        nonNegative(a, 'ellipse axis');
        nonNegative(b, 'ellipse axis');
        return { kind: 'ellipse', x, y, major: a, minor: b, angle: c };
      case MLD_SHAPE_IDS.rectangle:
        nonNegative(a, 'rectangle half-width');
        nonNegative(b, 'rectangle half-height');
        return { kind: 'rectangle', x, y, halfWidth: a, halfHeight: b, angle: c };
      case MLD_SHAPE_IDS.square:
        nonNegative(a, 'square size');
        return { kind: 'square', x, y, size: a, angle: b };
      default:
        return { kind: 'text', x, y };
    }
  }

  // -------------------------------------------------------------------------------------------
  // Trailing sections (MLD-FORMAT.md §3.5)
  // -------------------------------------------------------------------------------------------

  private readSections(): Pick<MldFile, 'layerConfigs' | 'imageInfo' | 'layerImages' | 'otherSections' | 'trailer'> {
    let layerConfigs: MldLayerConfig[] | null = null;
    let imageInfo: MldImageInfo | null = null;
    let sawImageInfo = false;
    const layerImages: MldLayerImage[] = [];
    const otherSections: MldOtherSection[] = [];
    let trailer: string | null = null;
    while (this.pos < this.length) {
      const tagAt = this.pos;
      this.tag = '';
      const tag = this.cString('a section tag', this.length, this.limits.maxTagBytes);
      if (!/^[\x20-\x7e]+$/.test(tag))
        this.fail('invalid', 'a section tag that is empty or not printable ASCII', tagAt);
      this.tag = tag;
      if (tag.startsWith('LDFF')) {
        trailer = tag;
        if (this.pos !== this.length)
          this.fail('invalid', `${this.length - this.pos} bytes after the end marker ${tag}`, this.pos);
        break;
      }
      switch (tag) {
        case TAGS.layerImage:
          layerImages.push(this.readLayerImage());
          break;
        case TAGS.layerConfigs:
          if (layerConfigs) this.fail('invalid', 'a second [LayerConfigs] section', tagAt);
          layerConfigs = this.readLayerConfigs(this.readXml(tag));
          break;
        case TAGS.imageInfo:
          if (sawImageInfo) this.fail('invalid', 'a second [ImageInfo] section', tagAt);
          sawImageInfo = true;
          imageInfo = this.readImageInfo(this.readXml(tag));
          break;
        default: {
          if (!tag.startsWith('[') || !tag.endsWith(']'))
            this.fail('invalid', `an unknown section tag '${tag}'`, tagAt);
          // [LayerAtlas] and unknown bracketed tags: int64 length and a body, skipped.
          const length = this.length64(`the length of ${tag}`);
          otherSections.push({ tag, offset: this.pos, length });
          this.pos += length;
          if (tag !== TAGS.layerAtlas) this.warn(`Skipped an unknown section ${tag} (${length} bytes).`);
        }
      }
    }
    this.tag = null;
    if (trailer === null) this.warn('The file ends without an LDFF end marker.');
    if (this.warningsLeftOut > 0) this.warnings.push(`… and ${this.warningsLeftOut} more warnings.`);
    return { layerConfigs, imageInfo, layerImages, otherSections, trailer };
  }

  /** NUL-terminated name, int64 length, then an embedded TIFF: returned as a view, not decoded. */
  private readLayerImage(): MldLayerImage {
    const name = this.cString('the heatmap name', this.length, this.limits.maxStringBytes);
    const lengthAt = this.pos;
    const length = this.length64('the heatmap length');
    if (length > this.limits.maxLayerImageBytes)
      this.fail(
        'limit',
        `a heatmap of ${length} bytes (more than the limit of ${this.limits.maxLayerImageBytes})`,
        lengthAt,
      );
    const offset = this.pos;
    const bytes = this.bytes.subarray(offset, offset + length);
    this.pos += length;
    const format = tiffFormat(bytes);
    if (format === 'unknown') this.warn(`The heatmap ${name.slice(0, 64)} does not start like a TIFF file.`);
    return { name, offset, length, bytes, format };
  }

  /** int64 length, then UTF-8 XML; parsed with the section's offsets in any message. */
  private readXml(tag: string): { root: XmlElement; start: number } {
    const lengthAt = this.pos;
    const length = this.length64(`the length of ${tag}`);
    if (length > this.limits.maxXmlBytes)
      this.fail('limit', `${length} bytes of XML (more than the limit of ${this.limits.maxXmlBytes})`, lengthAt);
    const start = this.pos;
    const body = this.bytes.subarray(start, start + length);
    this.pos += length;
    let source: string;
    try {
      source = UTF8.decode(body);
    } catch {
      this.fail('invalid', 'XML that is not valid UTF-8', start);
    }
    const encoder = new TextEncoder();
    const root = parseXml(
      source,
      { maxDepth: this.limits.maxXmlDepth, maxElements: this.limits.maxXmlElements },
      (detail, index, limit) =>
        this.fail(
          limit ? 'limit' : 'invalid',
          `${limit ? 'XML with' : 'malformed XML:'} ${detail}`,
          start + encoder.encode(source.slice(0, index)).length,
        ),
    );
    return { root, start };
  }

  /** `<LayerConfigs><Layer Name><Type Index><Name/><Color/></Type>…` (MLD-FORMAT.md §5). */
  private readLayerConfigs({ root, start: at }: { root: XmlElement; start: number }): MldLayerConfig[] {
    if (root.name !== 'LayerConfigs')
      this.fail('invalid', `the root element is <${root.name}>, not <LayerConfigs>`, at);
    const configs: MldLayerConfig[] = [];
    const seen = new Set<string>();
    for (const layerElement of root.children) {
      if (layerElement.name !== 'Layer') continue;
      const layer = layerElement.attributes.get('Name');
      if (layer === undefined) this.fail('invalid', 'a <Layer> without a Name', at);
      if (seen.has(layer)) this.fail('invalid', `layer ${layer.slice(0, 64)} configured twice`, at);
      seen.add(layer);
      // At most 256 classes (an index is 0 to 255, each once), so the duplicate check stays small.
      const classes: MldClass[] = [];
      for (const typeElement of layerElement.children) {
        if (typeElement.name !== 'Type') continue;
        const indexText = (typeElement.attributes.get('Index') ?? '').trim();
        const index = INTEGER.test(indexText) ? Number(indexText) : NaN;
        if (!(index >= 0 && index <= 255))
          this.fail(
            'invalid',
            `layer ${layer.slice(0, 64)}: a <Type> whose Index '${indexText.slice(0, 20)}' is not 0 to 255`,
            at,
          );
        if (classes.some((c) => c.index === index))
          this.fail('invalid', `layer ${layer.slice(0, 64)}: class ${index} given twice`, at);
        const name = (childNamed(typeElement, 'Name')?.text ?? '').trim();
        const colorText = childNamed(typeElement, 'Color')?.text.trim();
        let color: string | null = null;
        if (colorText !== undefined && colorText !== '') {
          color = colorRefToHex(colorText);
          if (color === null)
            this.warn(
              `Layer ${layer.slice(0, 64)}, class ${index}: the colour '${colorText.slice(0, 20)}' is not a COLORREF number.`,
            );
        }
        classes.push({ index, name, color });
      }
      classes.sort((a, b) => a.index - b.index);
      configs.push({ layer, classes });
    }
    return configs;
  }

  /** `<ImageInfo><ImagePath/><FOV><Left/><Top/><Right/><Bottom/></FOV><Size><X/><Y/></Size>` (MLD-FORMAT.md §3.5, §4). */
  private readImageInfo({ root, start: at }: { root: XmlElement; start: number }): MldImageInfo {
    if (root.name !== 'ImageInfo') this.fail('invalid', `the root element is <${root.name}>, not <ImageInfo>`, at);
    const pathElement = childNamed(root, 'ImagePath');
    const imagePath = pathElement ? pathElement.text.trim() : null;
    const fovElement = childNamed(root, 'FOV');
    const sizeElement = childNamed(root, 'Size');
    let fieldOfView: MldFieldOfView | null = null;
    if (fovElement) {
      const value = (name: string): number => {
        const text = childNamed(fovElement, name)?.text.trim();
        if (text === undefined) this.fail('invalid', `<FOV> has no <${name}>`, at);
        const number = NUMBER.test(text) ? Number(text) : NaN;
        if (!Number.isFinite(number)) this.fail('invalid', `<FOV><${name}> '${text.slice(0, 30)}' is not a number`, at);
        return number;
      };
      const fov = { left: value('Left'), top: value('Top'), right: value('Right'), bottom: value('Bottom') };
      if (!(fov.right > fov.left) || !(fov.top > fov.bottom))
        this.fail('invalid', 'the <FOV> is empty (Right must exceed Left, Top must exceed Bottom)', at);
      fieldOfView = fov;
    }
    let size: MldSize | null = null;
    if (sizeElement) {
      const value = (name: string): number => {
        const text = childNamed(sizeElement, name)?.text.trim();
        if (text === undefined) this.fail('invalid', `<Size> has no <${name}>`, at);
        const number = /^\d+$/.test(text) ? Number(text) : NaN;
        if (!(number >= 1 && number <= this.limits.maxImageSide))
          this.fail(
            'invalid',
            `<Size><${name}> '${text.slice(0, 30)}' is not a whole number from 1 to ${this.limits.maxImageSide}`,
            at,
          );
        return number;
      };
      size = { width: value('X'), height: value('Y') };
    }
    return { imagePath, imageName: imagePath ? imageNameOf(imagePath) : null, size, fieldOfView };
  }
}

/** '#RRGGBB' from a Windows COLORREF (0x00BBGGRR: red in the low byte), or null. */
export function colorRefToHex(text: string): string | null {
  if (!INTEGER.test(text)) return null;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < -0x80000000 || value > 0xffffffff) return null;
  const bgr = value >>> 0;
  const r = bgr & 0xff;
  const g = (bgr >>> 8) & 0xff;
  const b = (bgr >>> 16) & 0xff;
  return `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0').toUpperCase()).join('')}`;
}

/** The file name of a Windows or POSIX path without its extension: `\\h\s\OS-2.ndpi` → `OS-2`. */
export function imageNameOf(path: string): string | null {
  const base = path.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const name = dot > 0 ? base.slice(0, dot) : base;
  return name === '' ? null : name;
}

function tiffFormat(bytes: Uint8Array): MldLayerImage['format'] {
  if (bytes.length < 4) return 'unknown';
  const [a, b, c, d] = bytes;
  if (a === 0x49 && b === 0x49 && d === 0) return c === 42 ? 'tiff' : c === 43 ? 'bigtiff' : 'unknown';
  if (a === 0x4d && b === 0x4d && c === 0) return d === 42 ? 'tiff' : d === 43 ? 'bigtiff' : 'unknown';
  return 'unknown';
}
