import { open, type FileHandle } from 'node:fs/promises';
import { COMPRESSION_JPEG, TAG } from '../../platform/tiff/tiffReader.js';

/**
 * A streaming writer of a pyramidal tiled TIFF of JPEG tiles (compression 7): the tile bytes are
 * written to the end of the file as they come, in any order (a tile's place is its level and index); only
 * the tile offsets and byte counts stay in memory (16 bytes a tile). The directories are written
 * at the end, when the file's size is known: classic TIFF when everything fits below 4 GiB,
 * BigTIFF otherwise (the header slot is 16 bytes either way, so the choice can wait).
 *
 * The directories mirror libvips `tiffsave --tile --pyramid --compression jpeg`: one IFD per level
 * in one chain, level 0 first (NewSubfileType 0), reduced levels after it (NewSubfileType 1);
 * Photometric YCbCr with the JPEG streams' chroma subsampling; the shared JPEGTables (tag 347) when
 * the tiles are abbreviated streams; resolution in pixels per centimetre when known.
 */

const TYPE = { undefined: 7, short: 3, long: 4, rational: 5, long8: 16 } as const;
const TYPE_BYTES: Record<number, number> = { 3: 2, 4: 4, 5: 8, 7: 1, 16: 8 };

/** Bytes reserved at the start of the file for the header (a BigTIFF header is 16). */
const HEADER_BYTES = 16;
/** Buffers per writev call (the usual IOV_MAX). */
const IOV_MAX = 1024;
const CLASSIC_LIMIT = 2 ** 32;

export interface LevelSize {
  width: number;
  height: number;
}

export interface TiledTiffOptions {
  tileSize: number;
  /** Full resolution first. */
  levels: LevelSize[];
  /** Pixels per centimetre (ResolutionUnit 3), when the pixel size is known. */
  pixelsPerCm?: number;
  /** BigTIFF even when the file would fit a classic TIFF (for tests and readers that want it). */
  bigtiff?: boolean;
}

/** How the JPEG tiles are coded: set once the first tiles are known. */
export interface JpegCoding {
  /** 6 YCbCr (with its chroma subsampling, e.g. [2, 2] for 4:2:0) or 2 RGB. */
  photometric: 6 | 2;
  subsampling: [number, number];
  /** The tables shared by abbreviated tile streams (tag 347), or null for complete streams. */
  tables: Buffer | null;
}

export interface TileData {
  level: number;
  index: number;
  data: Buffer;
}

/** The IFDs' sizes, in the classic or the BigTIFF layout, and where the file then ends. */
interface DirectoryPlan {
  big: boolean;
  /** Bytes after the tile data before the first IFD (alignment). */
  pad: number;
  levels: { entries: Entry[]; ifdBytes: number; valueSizes: number[]; total: number }[];
  end: number;
}

interface Level extends LevelSize {
  tilesAcross: number;
  tilesDown: number;
  offsets: Float64Array;
  byteCounts: Float64Array;
}

export interface TiledTiffResult {
  bytes: number;
  bigtiff: boolean;
}

interface Entry {
  tag: number;
  type: number;
  /** The values; RATIONAL as numerator, denominator pairs; UNDEFINED as bytes. */
  values: readonly number[] | Float64Array | Buffer;
}

/** The entry's count (RATIONAL values come in pairs). */
function countOf(entry: Entry): number {
  return entry.type === TYPE.rational ? entry.values.length / 2 : entry.values.length;
}

export class TiledJpegTiffWriter {
  readonly levels: readonly Level[];
  private coding: JpegCoding | null = null;
  private position = HEADER_BYTES;
  private closed = false;

  private constructor(
    private readonly file: FileHandle,
    private readonly options: TiledTiffOptions,
  ) {
    const { tileSize } = options;
    if (options.levels.length === 0) throw new Error('A TIFF needs at least one level');
    this.levels = options.levels.map(({ width, height }) => {
      if (!(Number.isInteger(width) && Number.isInteger(height) && width >= 1 && height >= 1))
        throw new Error(`Invalid level size ${width} x ${height}`);
      const tilesAcross = Math.ceil(width / tileSize);
      const tilesDown = Math.ceil(height / tileSize);
      const count = tilesAcross * tilesDown;
      return {
        width,
        height,
        tilesAcross,
        tilesDown,
        offsets: new Float64Array(count),
        byteCounts: new Float64Array(count),
      };
    });
  }

  /** Creates (or truncates) the file; it is also readable, for {@link readTile}. */
  static async create(target: string, options: TiledTiffOptions): Promise<TiledJpegTiffWriter> {
    const file = await open(target, 'w+');
    return new TiledJpegTiffWriter(file, options);
  }

  /**
   * Sets how the tiles are coded. Every part of the pyramid must be coded the same way (the same
   * tables): a different coding is an error, never a silently wrong tile.
   */
  setCoding(coding: JpegCoding): void {
    const current = this.coding;
    if (!current) {
      this.coding = { ...coding, tables: coding.tables ? Buffer.from(coding.tables) : null };
      return;
    }
    const same =
      current.photometric === coding.photometric &&
      current.subsampling[0] === coding.subsampling[0] &&
      current.subsampling[1] === coding.subsampling[1] &&
      (current.tables === null
        ? coding.tables === null
        : coding.tables !== null && current.tables.equals(coding.tables));
    if (!same) throw new Error('The parts of the pyramid are not JPEG-coded alike (tables or subsampling differ)');
  }

  get jpegTables(): Buffer | null {
    return this.coding?.tables ?? null;
  }

  /**
   * Appends tiles to the file in one write; their buffers may be reused once it resolves. A tile
   * written twice keeps the later bytes.
   */
  async writeTiles(tiles: readonly TileData[]): Promise<void> {
    if (this.closed) throw new Error('The TIFF is closed');
    let at = this.position;
    for (const tile of tiles) {
      const level = this.levels[tile.level];
      if (!level || !(tile.index >= 0 && tile.index < level.offsets.length))
        throw new Error(`No tile ${tile.index} at level ${tile.level}`);
      if (tile.data.length === 0) throw new Error(`Tile ${tile.index} of level ${tile.level} is empty`);
      level.offsets[tile.index] = at;
      level.byteCounts[tile.index] = tile.data.length;
      at += tile.data.length;
    }
    await this.writeAll(
      tiles.map((t) => t.data),
      this.position,
    );
    this.position = at;
  }

  /** Forgets the tiles of a level (their bytes stay in the file, unreferenced). */
  clearLevel(level: number): void {
    const l = this.levels[level];
    if (!l) return;
    l.offsets.fill(0);
    l.byteCounts.fill(0);
  }

  /** The stored bytes of a tile (as written; abbreviated when the pyramid has shared tables). */
  async readTile(level: number, index: number): Promise<Buffer> {
    const l = this.levels[level];
    const offset = l?.offsets[index] ?? 0;
    const length = l?.byteCounts[index] ?? 0;
    if (!length) throw new Error(`Tile ${index} of level ${level} is missing`);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await this.file.read(buffer, 0, length, offset);
    if (bytesRead !== length) throw new Error(`Tile ${index} of level ${level} is truncated`);
    return buffer;
  }

  /** writev may write less than asked: continues from where it stopped. */
  private async writeAll(buffers: Buffer[], position: number): Promise<void> {
    let rest = buffers;
    let at = position;
    while (rest.length > 0) {
      const { bytesWritten } = await this.file.writev(rest.slice(0, IOV_MAX), at);
      if (bytesWritten === 0) throw new Error('Could not write the TIFF');
      at += bytesWritten;
      let skip = bytesWritten;
      let i = 0;
      while (i < rest.length && skip >= (rest[i]?.length ?? 0)) skip -= rest[i++]?.length ?? 0;
      rest = rest.slice(i);
      if (skip > 0 && rest[0]) rest[0] = rest[0].subarray(skip);
    }
  }

  /** Writes the directories and the header, and closes the file. Every tile must have been set. */
  async finish(): Promise<TiledTiffResult> {
    if (!this.coding) throw new Error('The JPEG coding of the tiles was never set');
    this.levels.forEach((level, k) => {
      const missing = level.byteCounts.indexOf(0);
      if (missing >= 0) throw new Error(`Tile ${missing} of level ${k} was never written`);
    });

    // Classic TIFF when its directories end below 4 GiB (then every offset fits 32 bits).
    const bigtiff = this.options.bigtiff === true || this.planDirectories(false).end >= CLASSIC_LIMIT;
    const { blocks, firstIfd, end } = this.layoutDirectories(this.planDirectories(bigtiff));
    let at = this.position;
    for (const block of blocks) {
      await this.file.write(block, 0, block.length, at);
      at += block.length;
    }
    if (at !== end) throw new Error(`TIFF layout mismatch (${at} != ${end})`);

    const header = Buffer.alloc(HEADER_BYTES);
    header.write('II', 0, 'latin1');
    if (bigtiff) {
      header.writeUInt16LE(43, 2);
      header.writeUInt16LE(8, 4);
      header.writeUInt16LE(0, 6);
      header.writeBigUInt64LE(BigInt(firstIfd), 8);
    } else {
      header.writeUInt16LE(42, 2);
      header.writeUInt32LE(firstIfd, 4);
    }
    await this.file.write(header, 0, HEADER_BYTES, 0);
    await this.close();
    return { bytes: end, bigtiff };
  }

  /** Closes the file without finishing it (after an error; the caller removes the file). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.file.close();
  }

  private entries(level: Level, index: number, big: boolean, coding: JpegCoding): Entry[] {
    const { tileSize, pixelsPerCm } = this.options;
    const entries: Entry[] = [
      { tag: TAG.newSubfileType, type: TYPE.long, values: [index === 0 ? 0 : 1] },
      { tag: TAG.imageWidth, type: TYPE.long, values: [level.width] },
      { tag: TAG.imageLength, type: TYPE.long, values: [level.height] },
      { tag: TAG.bitsPerSample, type: TYPE.short, values: [8, 8, 8] },
      { tag: TAG.compression, type: TYPE.short, values: [COMPRESSION_JPEG] },
      { tag: TAG.photometric, type: TYPE.short, values: [coding.photometric] },
      { tag: TAG.orientation, type: TYPE.short, values: [1] },
      { tag: TAG.samplesPerPixel, type: TYPE.short, values: [3] },
      { tag: TAG.planarConfiguration, type: TYPE.short, values: [1] },
      { tag: TAG.tileWidth, type: TYPE.short, values: [tileSize] },
      { tag: TAG.tileLength, type: TYPE.short, values: [tileSize] },
      { tag: TAG.tileOffsets, type: big ? TYPE.long8 : TYPE.long, values: level.offsets },
      { tag: TAG.tileByteCounts, type: big ? TYPE.long8 : TYPE.long, values: level.byteCounts },
      { tag: TAG.sampleFormat, type: TYPE.short, values: [1, 1, 1] },
    ];
    if (pixelsPerCm) {
      const resolution = rational(pixelsPerCm);
      entries.push(
        { tag: TAG.xResolution, type: TYPE.rational, values: resolution },
        { tag: TAG.yResolution, type: TYPE.rational, values: resolution },
        { tag: TAG.resolutionUnit, type: TYPE.short, values: [3] },
      );
    }
    if (coding.tables) entries.push({ tag: TAG.jpegTables, type: TYPE.undefined, values: coding.tables });
    if (coding.photometric === 6)
      entries.push({ tag: TAG.yCbCrSubSampling, type: TYPE.short, values: coding.subsampling });
    return entries.sort((a, b) => a.tag - b.tag);
  }

  /**
   * Where every IFD goes after the tile data (entries, then the values that do not fit inline):
   * sizes only, nothing serialised, so the classic/BigTIFF choice costs no second layout.
   */
  private planDirectories(big: boolean): DirectoryPlan {
    const coding = this.coding as JpegCoding;
    const countBytes = big ? 8 : 2;
    const entryBytes = big ? 20 : 12;
    const offsetBytes = big ? 8 : 4;
    const align = big ? 8 : 2;
    const pad = (align - (this.position % align)) % align;
    let end = this.position + pad;
    const levels = this.levels.map((level, index) => {
      const entries = this.entries(level, index, big, coding);
      const ifdBytes = countBytes + entries.length * entryBytes + offsetBytes;
      const valueSizes = entries.map((e) => {
        const size = (TYPE_BYTES[e.type] ?? 1) * countOf(e);
        return size <= offsetBytes ? 0 : size + ((align - (size % align)) % align);
      });
      const total = ifdBytes + valueSizes.reduce((a, b) => a + b, 0);
      end += total;
      return { entries, ifdBytes, valueSizes, total };
    });
    return { big, pad, levels, end };
  }

  /**
   * Serialises the planned IFDs. Returns the blocks to write from `this.position`, the first IFD's
   * offset and the file's end.
   */
  private layoutDirectories(plan: DirectoryPlan): { blocks: Buffer[]; firstIfd: number; end: number } {
    const { big, pad } = plan;
    const countBytes = big ? 8 : 2;
    const entryBytes = big ? 20 : 12;
    const offsetBytes = big ? 8 : 4;
    let at = this.position;
    const blocks: Buffer[] = [];
    if (pad > 0) blocks.push(Buffer.alloc(pad));
    at += pad;
    const firstIfd = at;

    plan.levels.forEach(({ entries, ifdBytes, valueSizes, total }, index) => {
      const block = Buffer.alloc(total);
      const ifdAt = at;
      let valueAt = ifdAt + ifdBytes;
      writeUint(block, 0, countBytes, entries.length);
      entries.forEach((entry, i) => {
        const e = countBytes + i * entryBytes;
        block.writeUInt16LE(entry.tag, e);
        block.writeUInt16LE(entry.type, e + 2);
        writeUint(block, e + 4, big ? 8 : 4, countOf(entry));
        const valueField = e + (big ? 12 : 8);
        const size = valueSizes[i] ?? 0;
        if (size === 0) {
          writeValues(block, valueField, entry);
        } else {
          writeUint(block, valueField, offsetBytes, valueAt);
          writeValues(block, valueAt - ifdAt, entry);
          valueAt += size;
        }
      });
      const next = index + 1 < this.levels.length ? ifdAt + total : 0;
      writeUint(block, ifdBytes - offsetBytes, offsetBytes, next);
      blocks.push(block);
      at += total;
    });
    return { blocks, firstIfd, end: at };
  }
}

function writeUint(buf: Buffer, at: number, bytes: number, value: number): void {
  if (bytes === 1) buf.writeUInt8(value, at);
  else if (bytes === 2) buf.writeUInt16LE(value, at);
  else if (bytes === 4) {
    if (value >= CLASSIC_LIMIT) throw new Error(`Value ${value} does not fit 32 bits`);
    buf.writeUInt32LE(value, at);
  } else buf.writeBigUInt64LE(BigInt(value), at);
}

function writeValues(buf: Buffer, at: number, entry: Entry): void {
  if (Buffer.isBuffer(entry.values)) {
    entry.values.copy(buf, at);
    return;
  }
  // RATIONAL: numerator and denominator, each a LONG.
  const size = entry.type === TYPE.rational ? 4 : (TYPE_BYTES[entry.type] ?? 1);
  for (let i = 0; i < entry.values.length; i++) writeUint(buf, at + i * size, size, entry.values[i] ?? 0);
}

/** A positive number as a TIFF RATIONAL (numerator, denominator), both below 2^32. */
function rational(value: number): number[] {
  let denominator = 10000;
  while (denominator > 1 && value * denominator >= CLASSIC_LIMIT) denominator /= 10;
  return [Math.round(value * denominator), denominator];
}
