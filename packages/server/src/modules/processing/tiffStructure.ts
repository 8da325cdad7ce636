import { open, type FileHandle } from 'node:fs/promises';

/**
 * A small reader of TIFF and BigTIFF structure: the header and the chain of image file directories
 * (IFDs) with the tags the worker needs. Reads only directory bytes, never pixel data, so it
 * validates a multi-GB slide by its content in milliseconds.
 */

export const TAG = {
  NewSubfileType: 254,
  ImageWidth: 256,
  ImageLength: 257,
  BitsPerSample: 258,
  Compression: 259,
  Photometric: 262,
  ImageDescription: 270,
  SamplesPerPixel: 277,
  XResolution: 282,
  YResolution: 283,
  PlanarConfiguration: 284,
  ResolutionUnit: 296,
  TileWidth: 322,
  TileLength: 323,
  SubIFDs: 330,
  JPEGTables: 347,
  ImageDepth: 32997,
} as const;

export interface Ifd {
  index: number;
  offset: number;
  width: number;
  height: number;
  compression: number;
  photometric: number | null;
  samplesPerPixel: number;
  bitsPerSample: number;
  newSubfileType: number;
  description: string | null;
  tiled: boolean;
  tileWidth: number | null;
  tileHeight: number | null;
  xResolution: number | null;
  yResolution: number | null;
  /** 1 none, 2 inch, 3 centimetre (TIFF default 2). */
  resolutionUnit: number;
  imageDepth: number;
}

export interface TiffStructure {
  bigTiff: boolean;
  littleEndian: boolean;
  ifds: Ifd[];
}

export class NotTiffError extends Error {
  override readonly name = 'NotTiffError';
}
export class CorruptTiffError extends Error {
  override readonly name = 'CorruptTiffError';
}

const TYPE_SIZE: Record<number, number> = {
  1: 1,
  2: 1,
  3: 2,
  4: 4,
  5: 8,
  6: 1,
  7: 1,
  8: 2,
  9: 4,
  10: 8,
  11: 4,
  12: 8,
  13: 4,
  16: 8,
  17: 8,
  18: 8,
};
const MAX_IFDS = 2000;
const MAX_ENTRIES = 4096;
const MAX_INLINE_READ = 1 << 20;

interface Entry {
  tag: number;
  type: number;
  count: number;
  /** Where the value is: inline bytes or an offset. */
  valueBytes: Buffer;
  valueOffset: number | null;
}

class Reader {
  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
    readonly le: boolean,
  ) {}

  async read(offset: number, length: number): Promise<Buffer> {
    if (offset < 0 || length < 0 || offset + length > this.size)
      throw new CorruptTiffError(`TIFF structure points outside the file (offset ${offset})`);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.handle.read(buffer, done, length - done, offset + done);
      if (bytesRead === 0) throw new CorruptTiffError('Unexpected end of file in the TIFF structure');
      done += bytesRead;
    }
    return buffer;
  }

  u16(b: Buffer, at: number): number {
    return this.le ? b.readUInt16LE(at) : b.readUInt16BE(at);
  }
  u32(b: Buffer, at: number): number {
    return this.le ? b.readUInt32LE(at) : b.readUInt32BE(at);
  }
  u64(b: Buffer, at: number): number {
    const v = this.le ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new CorruptTiffError('TIFF offset too large');
    return Number(v);
  }
}

/** Reads the TIFF header and IFD chain of a local file. */
export async function readTiffStructure(file: string): Promise<TiffStructure> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size < 8) throw new NotTiffError('The file is too small to be a TIFF');
    const head = Buffer.alloc(16);
    await handle.read(head, 0, 16, 0);
    const order = head.toString('latin1', 0, 2);
    if (order !== 'II' && order !== 'MM') throw new NotTiffError('No TIFF byte-order mark (II or MM)');
    const r = new Reader(handle, size, order === 'II');
    const magic = r.u16(head, 2);
    let bigTiff: boolean;
    let first: number;
    if (magic === 42) {
      bigTiff = false;
      first = r.u32(head, 4);
    } else if (magic === 43) {
      bigTiff = true;
      if (size < 16 || r.u16(head, 4) !== 8) throw new NotTiffError('Unsupported BigTIFF offset size');
      first = r.u64(head, 8);
    } else {
      throw new NotTiffError(`TIFF magic number is ${magic}, expected 42 (TIFF) or 43 (BigTIFF)`);
    }
    const ifds: Ifd[] = [];
    const seen = new Set<number>();
    let offset = first;
    while (offset !== 0) {
      if (seen.has(offset)) throw new CorruptTiffError('The TIFF directory chain loops');
      if (ifds.length >= MAX_IFDS) throw new CorruptTiffError('Too many TIFF directories');
      seen.add(offset);
      const { ifd, next } = await readIfd(r, offset, bigTiff, ifds.length);
      ifds.push(ifd);
      offset = next;
    }
    if (ifds.length === 0) throw new CorruptTiffError('The TIFF has no image directory');
    return { bigTiff, littleEndian: r.le, ifds };
  } finally {
    await handle.close();
  }
}

async function readIfd(r: Reader, offset: number, big: boolean, index: number): Promise<{ ifd: Ifd; next: number }> {
  const countSize = big ? 8 : 2;
  const entrySize = big ? 20 : 12;
  const offsetSize = big ? 8 : 4;
  const countBuf = await r.read(offset, countSize);
  const n = big ? r.u64(countBuf, 0) : r.u16(countBuf, 0);
  if (n === 0 || n > MAX_ENTRIES) throw new CorruptTiffError(`TIFF directory ${index} has ${n} entries`);
  const body = await r.read(offset + countSize, n * entrySize + offsetSize);
  const entries = new Map<number, Entry>();
  for (let i = 0; i < n; i++) {
    const at = i * entrySize;
    const tag = r.u16(body, at);
    const type = r.u16(body, at + 2);
    const count = big ? r.u64(body, at + 4) : r.u32(body, at + 4);
    const valueAt = at + (big ? 12 : 8);
    const bytes = (TYPE_SIZE[type] ?? 1) * count;
    const inline = bytes <= offsetSize;
    entries.set(tag, {
      tag,
      type,
      count,
      valueBytes: body.subarray(valueAt, valueAt + offsetSize),
      valueOffset: inline ? null : big ? r.u64(body, valueAt) : r.u32(body, valueAt),
    });
  }
  const next = big ? r.u64(body, n * entrySize) : r.u32(body, n * entrySize);

  const valueBuffer = async (e: Entry): Promise<Buffer> => {
    const bytes = (TYPE_SIZE[e.type] ?? 1) * e.count;
    if (e.valueOffset === null) return e.valueBytes.subarray(0, bytes);
    return r.read(e.valueOffset, Math.min(bytes, MAX_INLINE_READ));
  };
  const num = async (tag: number): Promise<number | null> => {
    const e = entries.get(tag);
    if (!e || e.count < 1) return null;
    const b = await valueBuffer(e);
    switch (e.type) {
      case 1:
      case 6:
      case 7:
        return b.readUInt8(0);
      case 3:
      case 8:
        return r.u16(b, 0);
      case 4:
      case 9:
      case 13:
        return r.u32(b, 0);
      case 16:
      case 17:
      case 18:
        return r.u64(b, 0);
      case 5:
      case 10: {
        const den = r.u32(b, 4);
        return den === 0 ? null : r.u32(b, 0) / den;
      }
      case 11:
        return r.le ? b.readFloatLE(0) : b.readFloatBE(0);
      case 12:
        return r.le ? b.readDoubleLE(0) : b.readDoubleBE(0);
      default:
        return null;
    }
  };
  const text = async (tag: number): Promise<string | null> => {
    const e = entries.get(tag);
    if (!e || e.type !== 2) return null;
    return (await valueBuffer(e)).toString('latin1').replace(/\0+$/, '');
  };

  const width = await num(TAG.ImageWidth);
  const height = await num(TAG.ImageLength);
  if (!width || !height) throw new CorruptTiffError(`TIFF directory ${index} has no image size`);
  const tileWidth = await num(TAG.TileWidth);
  const tileHeight = await num(TAG.TileLength);
  const ifd: Ifd = {
    index,
    offset,
    width,
    height,
    compression: (await num(TAG.Compression)) ?? 1,
    photometric: await num(TAG.Photometric),
    samplesPerPixel: (await num(TAG.SamplesPerPixel)) ?? 1,
    bitsPerSample: (await num(TAG.BitsPerSample)) ?? 1,
    newSubfileType: (await num(TAG.NewSubfileType)) ?? 0,
    description: await text(TAG.ImageDescription),
    tiled: tileWidth !== null && tileHeight !== null,
    tileWidth,
    tileHeight,
    xResolution: await num(TAG.XResolution),
    yResolution: await num(TAG.YResolution),
    resolutionUnit: (await num(TAG.ResolutionUnit)) ?? 2,
    imageDepth: (await num(TAG.ImageDepth)) ?? 1,
  };
  return { ifd, next };
}
