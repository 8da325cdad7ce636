/**
 * A small reader of TIFF and BigTIFF image file directories (IFDs): only the tags the tile server
 * needs (geometry, compression, tile offsets and byte counts, JPEG tables). Pixel data is never
 * read here. Every read goes through a {@link RangeReader}, so the same code works on a local file
 * descriptor and on object storage ranged reads (S3 GET with Range).
 */

/** Reads `length` bytes at `offset`; may return fewer at the end of the file. */
export type RangeReader = (offset: number, length: number) => Promise<Buffer>;

/** The TIFF tags of pyramids: read here, written by processing/tiledTiff.ts. */
export const TAG = {
  newSubfileType: 254,
  imageWidth: 256,
  imageLength: 257,
  bitsPerSample: 258,
  compression: 259,
  photometric: 262,
  orientation: 274,
  samplesPerPixel: 277,
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
} as const;

/** TIFF compression 7: "new-style" JPEG (abbreviated streams, shared tables in tag 347). */
export const COMPRESSION_JPEG = 7;
export const PHOTOMETRIC = { minIsBlack: 1, rgb: 2, ycbcr: 6 } as const;

export interface TiffDirectory {
  /** File offset of this IFD (a stable identity within one file). */
  offset: number;
  subfileType: number;
  width: number;
  height: number;
  compression: number;
  photometric: number;
  samplesPerPixel: number;
  planarConfiguration: number;
  /** 0 when the directory is not tiled (strips). */
  tileWidth: number;
  tileHeight: number;
  tileOffsets: Float64Array;
  tileByteCounts: Float64Array;
  jpegTables: Buffer | null;
}

export class TiffFormatError extends Error {
  override readonly name = 'TiffFormatError';
}

interface Layout {
  little: boolean;
  big: boolean;
  /** Bytes of the entry count, of one entry, of the next-IFD offset. */
  countSize: number;
  entrySize: number;
  offsetSize: number;
}

interface RawEntry {
  tag: number;
  type: number;
  count: number;
  /** The value bytes when they fit inline; otherwise null and `valueOffset` points at them. */
  inline: Buffer | null;
  valueOffset: number;
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
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new TiffFormatError('TIFF offset beyond 2^53');
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
      throw new TiffFormatError(`Unsupported integer size ${size}`);
  }
}

async function readExactly(read: RangeReader, offset: number, length: number): Promise<Buffer> {
  const buf = await read(offset, length);
  if (buf.length < length) throw new TiffFormatError(`Truncated TIFF: wanted ${length} bytes at ${offset}`);
  return buf.length === length ? buf : buf.subarray(0, length);
}

async function readHeader(read: RangeReader): Promise<{ layout: Layout; firstIfd: number }> {
  const head = await read(0, 16);
  if (head.length < 8) throw new TiffFormatError('Not a TIFF file (too short)');
  const order = head.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') throw new TiffFormatError('Not a TIFF file (byte order)');
  const little = order === 'II';
  const magic = readUnsigned(head, 2, 2, little);
  if (magic === 42) {
    return {
      layout: { little, big: false, countSize: 2, entrySize: 12, offsetSize: 4 },
      firstIfd: readUnsigned(head, 4, 4, little),
    };
  }
  if (magic === 43) {
    if (head.length < 16 || readUnsigned(head, 4, 2, little) !== 8) throw new TiffFormatError('Unsupported BigTIFF');
    return {
      layout: { little, big: true, countSize: 8, entrySize: 20, offsetSize: 8 },
      firstIfd: u64(head, 8, little),
    };
  }
  throw new TiffFormatError('Not a TIFF file (magic)');
}

async function readEntries(
  read: RangeReader,
  layout: Layout,
  at: number,
): Promise<{ entries: RawEntry[]; next: number }> {
  let chunk = await read(at, IFD_READ_AHEAD);
  if (chunk.length < layout.countSize) throw new TiffFormatError(`Truncated IFD at ${at}`);
  const count = readUnsigned(chunk, 0, layout.countSize, layout.little);
  if (count === 0 || count > MAX_ENTRIES) throw new TiffFormatError(`Implausible IFD entry count ${count} at ${at}`);
  const total = layout.countSize + count * layout.entrySize + layout.offsetSize;
  if (chunk.length < total) chunk = await readExactly(read, at, total);
  const entries: RawEntry[] = [];
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
    if (bytes > MAX_VALUE_BYTES) throw new TiffFormatError(`Tag ${tag} too large (${bytes} bytes)`);
    if (bytes <= inlineSize) {
      entries.push({ tag, type, count: n, inline: chunk.subarray(valueAt, valueAt + bytes), valueOffset: 0 });
    } else {
      entries.push({
        tag,
        type,
        count: n,
        inline: null,
        valueOffset: readUnsigned(chunk, valueAt, inlineSize, layout.little),
      });
    }
  }
  const next = readUnsigned(chunk, total - layout.offsetSize, layout.offsetSize, layout.little);
  return { entries, next };
}

async function valueBytes(read: RangeReader, entry: RawEntry): Promise<Buffer> {
  if (entry.inline) return entry.inline;
  return readExactly(read, entry.valueOffset, (TYPE_SIZE[entry.type] ?? 1) * entry.count);
}

async function integers(read: RangeReader, layout: Layout, entry: RawEntry | undefined): Promise<Float64Array> {
  if (!entry) return new Float64Array(0);
  const size = TYPE_SIZE[entry.type] ?? 0;
  if (![1, 2, 4, 8].includes(size) || entry.type === 2 || entry.type === 7 || entry.type === 5 || entry.type === 10) {
    throw new TiffFormatError(`Tag ${entry.tag} is not an integer array (type ${entry.type})`);
  }
  const bytes = await valueBytes(read, entry);
  const out = new Float64Array(entry.count);
  for (let i = 0; i < entry.count; i++) out[i] = readUnsigned(bytes, i * size, size, layout.little);
  return out;
}

async function scalar(
  read: RangeReader,
  layout: Layout,
  entry: RawEntry | undefined,
  fallback: number,
): Promise<number> {
  if (!entry) return fallback;
  const values = await integers(read, layout, { ...entry, count: Math.min(entry.count, 1) });
  return values[0] ?? fallback;
}

async function toDirectory(
  read: RangeReader,
  layout: Layout,
  offset: number,
  entries: RawEntry[],
): Promise<TiffDirectory> {
  const byTag = new Map(entries.map((e) => [e.tag, e]));
  const get = (tag: number) => byTag.get(tag);
  const tileWidth = await scalar(read, layout, get(TAG.tileWidth), 0);
  const tiled = tileWidth > 0 && get(TAG.tileOffsets) !== undefined;
  const tables = get(TAG.jpegTables);
  const [tileOffsets, tileByteCounts, jpegTables] = await Promise.all([
    tiled ? integers(read, layout, get(TAG.tileOffsets)) : Promise.resolve(new Float64Array(0)),
    tiled ? integers(read, layout, get(TAG.tileByteCounts)) : Promise.resolve(new Float64Array(0)),
    tables ? valueBytes(read, tables).then((b) => Buffer.from(b)) : Promise.resolve(null),
  ]);
  if (tileOffsets.length !== tileByteCounts.length)
    throw new TiffFormatError(`IFD at ${offset}: offsets and byte counts differ`);
  return {
    offset,
    subfileType: await scalar(read, layout, get(TAG.newSubfileType), 0),
    width: await scalar(read, layout, get(TAG.imageWidth), 0),
    height: await scalar(read, layout, get(TAG.imageLength), 0),
    compression: await scalar(read, layout, get(TAG.compression), 1),
    photometric: await scalar(read, layout, get(TAG.photometric), -1),
    samplesPerPixel: await scalar(read, layout, get(TAG.samplesPerPixel), 1),
    planarConfiguration: await scalar(read, layout, get(TAG.planarConfiguration), 1),
    tileWidth: tiled ? tileWidth : 0,
    tileHeight: tiled ? await scalar(read, layout, get(TAG.tileLength), 0) : 0,
    tileOffsets,
    tileByteCounts,
    jpegTables,
  };
}

/**
 * Reads every image directory of the file: the main IFD chain and, when present, the SubIFDs of
 * each directory (where some writers put pyramid levels), in file order.
 */
export async function readTiffDirectories(read: RangeReader): Promise<TiffDirectory[]> {
  const { layout, firstIfd } = await readHeader(read);
  const seen = new Set<number>();
  const pending: Promise<TiffDirectory>[] = [];
  const subIfdOffsets: number[] = [];

  const visit = async (start: number, followChain: boolean) => {
    let at = start;
    while (at !== 0) {
      if (seen.has(at)) throw new TiffFormatError(`IFD loop at ${at}`);
      if (seen.size >= MAX_DIRECTORIES) throw new TiffFormatError('Too many IFDs');
      seen.add(at);
      const { entries, next } = await readEntries(read, layout, at);
      // The values (tile offsets, tables) load in parallel with the walk down the chain.
      pending.push(toDirectory(read, layout, at, entries));
      const sub = entries.find((e) => e.tag === TAG.subIfds);
      if (sub) subIfdOffsets.push(...(await integers(read, layout, sub)));
      at = followChain ? next : 0;
    }
  };

  await visit(firstIfd, true);
  // SubIFD chains: each offset starts its own chain (libvips writes one chain; others one per level).
  for (let i = 0; i < subIfdOffsets.length; i++) {
    const at = subIfdOffsets[i] ?? 0;
    if (!seen.has(at)) await visit(at, true);
  }
  return Promise.all(pending);
}
