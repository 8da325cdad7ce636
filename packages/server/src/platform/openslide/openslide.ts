import { endianness } from 'node:os';
import koffi, { type LibraryHandle } from 'koffi';

/**
 * OpenSlide (the field's C library for vendor slide formats: Hamamatsu, MIRAX, Leica, Ventana,
 * Philips, Sakura …) through koffi, a foreign-function interface with prebuilt binaries in its npm
 * package: nothing is compiled or downloaded at install, and the system's `libopenslide.so.0`
 * (Debian's libopenslide0, Homebrew's openslide) is opened at first use. When the library is
 * missing the rest of Lamina runs on: {@link openSlideLibrary} says so and the formats it reads are
 * refused at upload (docs/ARCHITECTURE.md, "Slides").
 *
 * Region reads run on koffi's worker threads (`.async`), so a large read never blocks the event
 * loop of the worker process (its job heartbeats). OpenSlide handles may be read from several
 * threads at once.
 */

/** Where the library is looked for; `OPENSLIDE_LIBRARY` names another file (or a missing one, in tests). */
const CANDIDATES = ['libopenslide.so.1', 'libopenslide.so.0', 'libopenslide.1.dylib', 'libopenslide.0.dylib'];

interface Api {
  version: () => string;
  detectVendor: (file: string) => string | null;
  open: (file: string) => unknown;
  close: (osr: unknown) => void;
  getError: (osr: unknown) => string | null;
  levelCount: (osr: unknown) => number;
  levelDimensions: (osr: unknown, level: number, w: [number], h: [number]) => void;
  propertyNames: (osr: unknown) => unknown;
  propertyValue: (osr: unknown, name: string) => string | null;
  associatedNames: (osr: unknown) => unknown;
  associatedDimensions: (osr: unknown, name: string, w: [number], h: [number]) => void;
  readAssociated: {
    async: (osr: unknown, name: string, dest: Buffer, done: (error: unknown) => void) => void;
  };
  readRegion: {
    async: (
      osr: unknown,
      dest: Buffer,
      x: number,
      y: number,
      level: number,
      w: number,
      h: number,
      done: (error: unknown) => void,
    ) => void;
  };
  decodeStrings: (pointer: unknown) => string[];
}

export type OpenSlideLibrary = { available: true; version: string; api: Api } | { available: false; reason: string };

let loaded: OpenSlideLibrary | undefined;
/** koffi's type of OpenSlide's handle, declared once per process. */
let handleType: unknown;

function bind(lib: LibraryHandle): Api {
  handleType ??= koffi.opaque('openslide_t');
  const fn = (signature: string) => lib.func(signature);
  // NULL-terminated arrays of strings owned by OpenSlide.
  const names = fn('void *openslide_get_property_names(openslide_t *osr)');
  const associated = fn('void *openslide_get_associated_image_names(openslide_t *osr)');
  return {
    version: fn('const char *openslide_get_version()') as Api['version'],
    detectVendor: fn('const char *openslide_detect_vendor(const char *filename)') as Api['detectVendor'],
    open: fn('openslide_t *openslide_open(const char *filename)') as Api['open'],
    close: fn('void openslide_close(openslide_t *osr)') as Api['close'],
    getError: fn('const char *openslide_get_error(openslide_t *osr)') as Api['getError'],
    levelCount: fn('int32_t openslide_get_level_count(openslide_t *osr)') as Api['levelCount'],
    levelDimensions: fn(
      'void openslide_get_level_dimensions(openslide_t *osr, int32_t level, _Out_ int64_t *w, _Out_ int64_t *h)',
    ) as Api['levelDimensions'],
    propertyNames: names,
    propertyValue: fn(
      'const char *openslide_get_property_value(openslide_t *osr, const char *name)',
    ) as Api['propertyValue'],
    associatedNames: associated,
    associatedDimensions: fn(
      'void openslide_get_associated_image_dimensions(openslide_t *osr, const char *name, _Out_ int64_t *w, _Out_ int64_t *h)',
    ) as Api['associatedDimensions'],
    readAssociated: fn('void openslide_read_associated_image(openslide_t *osr, const char *name, _Out_ uint8_t *dest)'),
    readRegion: fn(
      'void openslide_read_region(openslide_t *osr, _Out_ uint8_t *dest, int64_t x, int64_t y, int32_t level, int64_t w, int64_t h)',
    ),
    decodeStrings: (pointer) => {
      const out: string[] = [];
      if (!pointer) return out;
      for (let i = 0; ; i++) {
        const entry = koffi.decode(pointer, i * koffi.sizeof('void *'), 'const char *') as string | null;
        if (entry === null) return out;
        out.push(entry);
      }
    },
  };
}

/** The OpenSlide library of this machine, loaded once; `{ available: false, reason }` when absent. */
export function openSlideLibrary(): OpenSlideLibrary {
  if (loaded) return loaded;
  if (endianness() !== 'LE') {
    loaded = { available: false, reason: 'OpenSlide is read as little-endian pixel words; this machine is big-endian' };
    return loaded;
  }
  const override = process.env.OPENSLIDE_LIBRARY?.trim();
  const candidates = override ? [override] : CANDIDATES;
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      const api = bind(koffi.load(candidate));
      loaded = { available: true, version: api.version(), api };
      return loaded;
    } catch (error) {
      failures.push(`${candidate}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  loaded = { available: false, reason: failures.join('; ') };
  return loaded;
}

/** An error OpenSlide reported for a slide (unreadable or damaged data). */
export class OpenSlideError extends Error {
  override readonly name = 'OpenSlideError';
}

function requireApi(): Api {
  const library = openSlideLibrary();
  if (!library.available) throw new OpenSlideError(`OpenSlide is not installed (${library.reason})`);
  return library.api;
}

/** The vendor OpenSlide recognises a file as ('hamamatsu', 'mirax', 'aperio', 'generic-tiff' …), or null. */
export function detectVendor(file: string): string | null {
  return requireApi().detectVendor(file);
}

export interface Size {
  width: number;
  height: number;
}

/** One slide open in OpenSlide. {@link close} frees it; reads after that throw. */
export class OpenSlide {
  private closed = false;
  private readonly pending = new Set<Promise<unknown>>();

  private constructor(
    private readonly api: Api,
    private readonly osr: unknown,
  ) {}

  /** Opens a slide; throws {@link OpenSlideError} with OpenSlide's message when it is not readable. */
  static open(file: string): OpenSlide {
    const api = requireApi();
    const osr = api.open(file);
    if (!osr) throw new OpenSlideError('OpenSlide does not recognise the file as a slide');
    const slide = new OpenSlide(api, osr);
    const error = api.getError(osr);
    if (error) {
      api.close(osr);
      throw new OpenSlideError(error);
    }
    return slide;
  }

  private check(): void {
    if (this.closed) throw new OpenSlideError('The slide is closed');
    const error = this.api.getError(this.osr);
    if (error) throw new OpenSlideError(error);
  }

  get levelCount(): number {
    this.check();
    return this.api.levelCount(this.osr);
  }

  levelSize(level: number): Size {
    this.check();
    const w: [number] = [0];
    const h: [number] = [0];
    this.api.levelDimensions(this.osr, level, w, h);
    return { width: w[0], height: h[0] };
  }

  /** Every property (`openslide.mpp-x`, `hamamatsu.SourceLens`, `tiff.Make` …) as OpenSlide reports it. */
  properties(): Record<string, string> {
    this.check();
    const out: Record<string, string> = {};
    for (const name of this.api.decodeStrings(this.api.propertyNames(this.osr)))
      out[name] = this.api.propertyValue(this.osr, name) ?? '';
    return out;
  }

  /** The names of the associated images ('label', 'macro', 'thumbnail' …). */
  associatedNames(): string[] {
    this.check();
    return this.api.decodeStrings(this.api.associatedNames(this.osr));
  }

  associatedSize(name: string): Size {
    this.check();
    const w: [number] = [0];
    const h: [number] = [0];
    this.api.associatedDimensions(this.osr, name, w, h);
    return { width: w[0], height: h[0] };
  }

  /** An associated image as RGB on white (3 bytes a pixel). */
  async readAssociated(name: string): Promise<{ rgb: Buffer; width: number; height: number }> {
    const { width, height } = this.associatedSize(name);
    if (width <= 0 || height <= 0) throw new OpenSlideError(`The slide has no associated image '${name}'`);
    const argb = Buffer.alloc(width * height * 4);
    await this.run((done) => this.api.readAssociated.async(this.osr, name, argb, done));
    this.check();
    return { rgb: argbToRgb(argb), width, height };
  }

  /**
   * A region of a level as RGB on white (3 bytes a pixel, row-major). `x` and `y` are in level-0
   * pixels, as OpenSlide takes them; the read runs on a koffi thread.
   */
  async readRegion(x: number, y: number, level: number, width: number, height: number): Promise<Buffer> {
    const argb = Buffer.alloc(width * height * 4);
    await this.run((done) => this.api.readRegion.async(this.osr, argb, x, y, level, width, height, done));
    this.check();
    return argbToRgb(argb);
  }

  private run(call: (done: (error: unknown) => void) => void): Promise<void> {
    this.check();
    const promise = new Promise<void>((resolve, reject) =>
      call((error) =>
        error ? reject(error instanceof Error ? error : new OpenSlideError('An OpenSlide read failed')) : resolve(),
      ),
    );
    this.pending.add(promise);
    const forget = () => this.pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** Frees the slide once the reads in flight have ended. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.pending]);
    this.closed = true;
    this.api.close(this.osr);
  }
}

/**
 * OpenSlide's pixels (premultiplied ARGB in native-endian 32-bit words) as RGB flattened on white:
 * a premultiplied channel c of alpha a over white is c + (255 − a). Transparent areas (outside a
 * MIRAX or Leica scan's regions) come out white. One 32-bit read per pixel (a quarter faster than
 * four byte reads on a 19-megapixel region); the words are little-endian on every machine Lamina
 * runs on ({@link openSlideLibrary} refuses a big-endian one).
 */
export function argbToRgb(argb: Buffer): Buffer {
  const pixels = argb.length >>> 2;
  const words = new Uint32Array(argb.buffer, argb.byteOffset, pixels);
  const rgb = Buffer.allocUnsafe(pixels * 3);
  for (let i = 0, o = 0; i < pixels; i++, o += 3) {
    const word = words[i] as number;
    const fill = 255 - (word >>> 24);
    rgb[o] = ((word >>> 16) & 255) + fill;
    rgb[o + 1] = ((word >>> 8) & 255) + fill;
    rgb[o + 2] = (word & 255) + fill;
  }
  return rgb;
}
