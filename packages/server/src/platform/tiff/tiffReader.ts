import type { FileHandle } from 'node:fs/promises';

/**
 * The one reader of TIFF and BigTIFF structure: the header, the chain of image file directories
 * (IFDs) and the SubIFDs some writers put pyramid levels in, and the values of their entries. Pixel
 * data is never read here. Every read goes through a {@link RangeReader}, so the same code reads a
 * local file and object storage (S3 ranged GETs). The worker's view of a slide
 * (processing/tiffStructure.ts), the tile server's pyramid index (tiles/tiffDirectory.ts) and the
 * pyramid writer's tags (processing/tiledTiff.ts) are built on it.
 */

/** Reads `length` bytes at `offset`; may return fewer at the end of the file. */
export type RangeReader = (offset: number, length: number) => Promise<Buffer>;

/** The TIFF tags Lamina reads or writes. */
export const TAG = {
  newSubfileType: 254,
  imageWidth: 256,
  imageLength: 257,
  bitsPerSample: 258,
  compression: 259,
  photometric: 262,
  imageDescription: 270,
  stripOffsets: 273,
  orientation: 274,
  samplesPerPixel: 277,
  rowsPerStrip: 278,
  stripByteCounts: 279,
  xResolution: 282,
  yResolution: 283,
  planarConfiguration: 284,
  resolutionUnit: 296,
  tileWidth: 322,
  tileLength: 323,
  tileOffsets: 324,
  tileByteCounts: 325,
  subIfds: 330,
  sampleFormat: 339,
  jpegTables: 347,
  yCbCrSubSampling: 530,
  imageDepth: 32997,
} as const;

/** TIFF compression 7: "new-style" JPEG (abbreviated streams, shared tables in tag 347). */
export const COMPRESSION_JPEG = 7;
export const PHOTOMETRIC = { minIsBlack: 1, rgb: 2, ycbcr: 6 } as const;

/** A file that is not TIFF, or whose structure is damaged. */
export class TiffFormatError extends Error {
  override readonly name: string = 'TiffFormatError';
}
/** No TIFF header (byte order, magic number): the file is something else. */
export class NotTiffError extends TiffFormatError {
  override readonly name = 'NotTiffError';
}
/** A TIFF header, but directories that loop, point outside the file or make no sense. */
export class CorruptTiffError extends TiffFormatError {
  override readonly name = 'CorruptTiffError';
}

export interface TiffLayout {
  little: boolean;
  big: boolean;
  /** Bytes of the entry count, of one entry, of the next-IFD offset (and of an inline value). */
  countSize: number;
  entrySize: number;
  offsetSize: number;
}

export interface RawEntry {
  tag: number;
  type: number;
  count: number;
  /** The value bytes when they fit inline; otherwise null and `valueOffset` points at them. */
  inline: Buffer | null;
  valueOffset: number;
}

export interface RawIfd {
  /** File offset of the IFD (a stable identity within one file). */
  offset: number;
  /** Position in the main IFD chain (sharp's `page`), or -1 for a SubIFD. */
  chainIndex: number;
  entries: ReadonlyMap<number, RawEntry>;
}

export interface TiffFile {
  read: RangeReader;
  layout: TiffLayout;
  /** Every directory: the main chain in order, then the SubIFD chains. */
  ifds: RawIfd[];
}

const TYPE_SIZE: Record<number, number> = {
  1: 1, // BYTE
  2: 1, // ASCII
  3: 2, // SHORT
  4: 4, // LONG
  5: 8, // RATIONAL
  6: 1, // SBYTE
  7: 1, // UNDEFINED
  8: 2, // SSHORT
  9: 4, // SLONG
  10: 8, // SRATIONAL
  11: 4, // FLOAT
  12: 8, // DOUBLE
  13: 4, // IFD
  16: 8, // LONG8
  17: 8, // SLONG8
  18: 8, // IFD8
};

/** Guards against corrupt or hostile files: no IFD loops, no absurd allocations. */
const MAX_DIRECTORIES = 4096;
const MAX_ENTRIES = 4096;
const MAX_VALUE_BYTES = 256 * 1024 * 1024;
/** A first read of this size usually holds a whole IFD, so most directories cost one ranged read. */
const IFD_READ_AHEAD = 8192;

function u64(buf: Buffer, at: number, little: boolean): number {
  const value = little ? buf.readBigUInt64LE(at) : buf.readBigUInt64BE(at);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new CorruptTiffError('TIFF offset beyond 2^53');
  return Number(value);
}

function readUnsigned(buf: Buffer, at: number, size: number, little: boolean): number {
  switch (size) {
    case 1:
      return buf.readUInt8(at);
    case 2:
      return little ? buf.readUInt16LE(at) : buf.readUInt16BE(at);
    case 4:
      return little ? buf.readUInt32LE(at) : buf.readUInt32BE(at);
    case 8:
      return u64(buf, at, little);
    default:
      throw new CorruptTiffError(`Unsupported integer size ${size}`);
  }
}

async function readExactly(read: RangeReader, offset: number, length: number): Promise<Buffer> {
  const buf = await read(offset, length);
  if (buf.length < length)
    throw new CorruptTiffError(`The TIFF structure points outside the file (${length} bytes at ${offset})`);
  return buf.length === length ? buf : buf.subarray(0, length);
}

async function readHeader(read: RangeReader): Promise<{ layout: TiffLayout; firstIfd: number }> {
  const head = await read(0, 16);
  if (head.length < 8) throw new NotTiffError('The file is too small to be a TIFF');
  const order = head.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') throw new NotTiffError('No TIFF byte-order mark (II or MM)');
  const little = order === 'II';
  const magic = readUnsigned(head, 2, 2, little);
  if (magic === 42) {
    return {
      layout: { little, big: false, countSize: 2, entrySize: 12, offsetSize: 4 },
      firstIfd: readUnsigned(head, 4, 4, little),
    };
  }
  if (magic === 43) {
    if (head.length < 16 || readUnsigned(head, 4, 2, little) !== 8)
      throw new NotTiffError('Unsupported BigTIFF offset size');
    return {
      layout: { little, big: true, countSize: 8, entrySize: 20, offsetSize: 8 },
      firstIfd: u64(head, 8, little),
    };
  }
  throw new NotTiffError(`TIFF magic number is ${magic}, expected 42 (TIFF) or 43 (BigTIFF)`);
}

async function readEntries(
  read: RangeReader,
  layout: TiffLayout,
  at: number,
): Promise<{ entries: Map<number, RawEntry>; next: number }> {
  let chunk = await read(at, IFD_READ_AHEAD);
  if (chunk.length < layout.countSize) throw new CorruptTiffError(`Truncated TIFF directory at ${at}`);
  const count = readUnsigned(chunk, 0, layout.countSize, layout.little);
  if (count === 0 || count > MAX_ENTRIES) throw new CorruptTiffError(`TIFF directory at ${at} has ${count} entries`);
  const total = layout.countSize + count * layout.entrySize + layout.offsetSize;
  if (chunk.length < total) chunk = await readExactly(read, at, total);
  const entries = new Map<number, RawEntry>();
  const inlineSize = layout.offsetSize;
  for (let i = 0; i < count; i++) {
    const e = layout.countSize + i * layout.entrySize;
    const tag = readUnsigned(chunk, e, 2, layout.little);
    const type = readUnsigned(chunk, e + 2, 2, layout.little);
    const n = readUnsigned(chunk, e + 4, layout.big ? 8 : 4, layout.little);
    const valueAt = e + (layout.big ? 12 : 8);
    const size = TYPE_SIZE[type];
    if (size === undefined) continue; // unknown type: skip the tag (TIFF 6.0 says readers should)
    const bytes = size * n;
    if (bytes > MAX_VALUE_BYTES) throw new CorruptTiffError(`TIFF tag ${tag} too large (${bytes} bytes)`);
    entries.set(
      tag,
      bytes <= inlineSize
        ? { tag, type, count: n, inline: chunk.subarray(valueAt, valueAt + bytes), valueOffset: 0 }
        : { tag, type, count: n, inline: null, valueOffset: readUnsigned(chunk, valueAt, inlineSize, layout.little) },
    );
  }
  const next = readUnsigned(chunk, total - layout.offsetSize, layout.offsetSize, layout.little);
  return { entries, next };
}

/**
 * Reads the header and every directory: the main chain (in order; `chainIndex` 0, 1, …) and, when
 * present, the SubIFD chains of its directories (`chainIndex` -1). Only directory bytes are read.
 */
export async function openTiff(read: RangeReader): Promise<TiffFile> {
  const { layout, firstIfd } = await readHeader(read);
  const seen = new Set<number>();
  const ifds: RawIfd[] = [];
  const subIfdOffsets: number[] = [];
  const file: TiffFile = { read, layout, ifds };

  const visit = async (start: number, main: boolean) => {
    let at = start;
    let chainIndex = 0;
    while (at !== 0) {
      if (seen.has(at)) throw new CorruptTiffError('The TIFF directory chain loops');
      if (seen.size >= MAX_DIRECTORIES) throw new CorruptTiffError('Too many TIFF directories');
      seen.add(at);
      const { entries, next } = await readEntries(read, layout, at);
      ifds.push({ offset: at, chainIndex: main ? chainIndex : -1, entries });
      chainIndex += 1;
      const sub = entries.get(TAG.subIfds);
      if (sub) subIfdOffsets.push(...(await integers(file, sub)));
      at = next;
    }
  };

  await visit(firstIfd, true);
  if (ifds.length === 0) throw new CorruptTiffError('The TIFF has no image directory');
  // SubIFD chains: each offset starts its own chain (libvips writes one chain; others one per level).
  for (const at of subIfdOffsets) if (!seen.has(at)) await visit(at, false);
  return file;
}

/** The bytes of an entry's value (at most `maxBytes`). */
export async function valueBytes(file: TiffFile, entry: RawEntry, maxBytes = MAX_VALUE_BYTES): Promise<Buffer> {
  if (entry.inline) return entry.inline;
  const bytes = Math.min((TYPE_SIZE[entry.type] ?? 1) * entry.count, maxBytes);
  return readExactly(file.read, entry.valueOffset, bytes);
}

/** An unsigned integer array (offsets, byte counts, SubIFD offsets); empty when the entry is absent. */
export async function integers(file: TiffFile, entry: RawEntry | undefined): Promise<Float64Array> {
  if (!entry) return new Float64Array(0);
  const size = TYPE_SIZE[entry.type] ?? 0;
  if (![1, 3, 4, 13, 16, 18].includes(entry.type))
    throw new CorruptTiffError(`TIFF tag ${entry.tag} is not an array of unsigned integers (type ${entry.type})`);
  const bytes = await valueBytes(file, entry);
  const out = new Float64Array(entry.count);
  for (let i = 0; i < entry.count; i++) out[i] = readUnsigned(bytes, i * size, size, file.layout.little);
  return out;
}

/** The first value of a numeric entry of any type (rationals divided, floats read), or null. */
export async function numberOf(file: TiffFile, entry: RawEntry | undefined): Promise<number | null> {
  if (!entry || entry.count < 1) return null;
  const b = await valueBytes(file, entry, 8);
  const le = file.layout.little;
  switch (entry.type) {
    case 1:
    case 7:
      return b.readUInt8(0);
    case 6:
      return b.readInt8(0);
    case 3:
      return readUnsigned(b, 0, 2, le);
    case 8:
      return le ? b.readInt16LE(0) : b.readInt16BE(0);
    case 4:
    case 13:
      return readUnsigned(b, 0, 4, le);
    case 9:
      return le ? b.readInt32LE(0) : b.readInt32BE(0);
    case 16:
    case 18:
      return readUnsigned(b, 0, 8, le);
    case 17:
      return Number(le ? b.readBigInt64LE(0) : b.readBigInt64BE(0));
    case 5:
    case 10: {
      const num = entry.type === 5 ? readUnsigned(b, 0, 4, le) : le ? b.readInt32LE(0) : b.readInt32BE(0);
      const den = entry.type === 5 ? readUnsigned(b, 4, 4, le) : le ? b.readInt32LE(4) : b.readInt32BE(4);
      return den === 0 ? null : num / den;
    }
    case 11:
      return le ? b.readFloatLE(0) : b.readFloatBE(0);
    case 12:
      return le ? b.readDoubleLE(0) : b.readDoubleBE(0);
    default:
      return null;
  }
}

/** An ASCII entry (at most 1 MiB), without its trailing NULs; null when absent or not ASCII. */
export async function textOf(file: TiffFile, entry: RawEntry | undefined): Promise<string | null> {
  if (!entry || entry.type !== 2) return null;
  return (await valueBytes(file, entry, 1024 * 1024)).toString('latin1').replace(/\0+$/, '');
}

/** A RangeReader over an open local file. */
export function fileRangeReader(handle: FileHandle, size: number): RangeReader {
  return async (offset, length) => {
    const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
    let done = 0;
    while (done < buffer.length) {
      const { bytesRead } = await handle.read(buffer, done, buffer.length - done, offset + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done === buffer.length ? buffer : buffer.subarray(0, done);
  };
}
