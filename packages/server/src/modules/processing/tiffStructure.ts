import { open } from 'node:fs/promises';
import {
  CorruptTiffError,
  fileRangeReader,
  integers,
  numberOf,
  openTiff,
  TAG,
  textOf,
  type RawIfd,
  type TiffFile,
} from '../../platform/tiff/tiffReader.js';

/**
 * The worker's view of a slide's TIFF structure (the one reader: platform/tiff/tiffReader.ts): the
 * main chain of image directories with the tags the worker needs. Reads only directory bytes, never
 * pixel data, so it validates a multi-GB slide by its content in milliseconds.
 */

export { CorruptTiffError, NotTiffError } from '../../platform/tiff/tiffReader.js';

export interface Ifd {
  /** Position in the main chain: sharp's `page`. */
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
  /**
   * Where the pixel data of the full-resolution directory (index 0, the one the pyramid decodes)
   * lies: the tile or strip offsets and byte counts. Null for the other directories.
   */
  data: { offsets: Float64Array; byteCounts: Float64Array } | null;
}

export interface TiffStructure {
  bigTiff: boolean;
  littleEndian: boolean;
  ifds: Ifd[];
}

/** Tiles or strips of the full-resolution image read for the limits check (40 gigapixels are 610 000 tiles of 256 px). */
const MAX_DATA_ENTRIES = 4_000_000;

async function toIfd(file: TiffFile, raw: RawIfd): Promise<Ifd> {
  const index = raw.chainIndex;
  const get = (tag: number) => raw.entries.get(tag);
  const num = (tag: number) => numberOf(file, get(tag));
  const dataArray = async (tag: number) => {
    const entry = get(tag);
    if (entry && entry.count > MAX_DATA_ENTRIES)
      throw new CorruptTiffError(`TIFF directory ${index} has ${entry.count} tiles or strips`);
    return integers(file, entry);
  };

  const width = await num(TAG.imageWidth);
  const height = await num(TAG.imageLength);
  if (!width || !height) throw new CorruptTiffError(`TIFF directory ${index} has no image size`);
  const tileWidth = await num(TAG.tileWidth);
  const tileHeight = await num(TAG.tileLength);
  const tiled = tileWidth !== null && tileHeight !== null;
  const data =
    index === 0
      ? {
          offsets: await dataArray(tiled ? TAG.tileOffsets : TAG.stripOffsets),
          byteCounts: await dataArray(tiled ? TAG.tileByteCounts : TAG.stripByteCounts),
        }
      : null;
  if (data && data.offsets.length !== data.byteCounts.length)
    throw new CorruptTiffError(
      `TIFF directory ${index} has ${data.offsets.length} offsets but ${data.byteCounts.length} byte counts`,
    );
  return {
    index,
    offset: raw.offset,
    width,
    height,
    compression: (await num(TAG.compression)) ?? 1,
    photometric: await num(TAG.photometric),
    samplesPerPixel: (await num(TAG.samplesPerPixel)) ?? 1,
    bitsPerSample: (await num(TAG.bitsPerSample)) ?? 1,
    newSubfileType: (await num(TAG.newSubfileType)) ?? 0,
    description: await textOf(file, get(TAG.imageDescription)),
    tiled,
    tileWidth,
    tileHeight,
    xResolution: await num(TAG.xResolution),
    yResolution: await num(TAG.yResolution),
    resolutionUnit: (await num(TAG.resolutionUnit)) ?? 2,
    imageDepth: (await num(TAG.imageDepth)) ?? 1,
    data,
  };
}

/** Reads the TIFF header and the main IFD chain of a local file. */
export async function readTiffStructure(file: string): Promise<TiffStructure> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const tiff = await openTiff(fileRangeReader(handle, size));
    const ifds: Ifd[] = [];
    for (const raw of tiff.ifds) if (raw.chainIndex >= 0) ifds.push(await toIfd(tiff, raw));
    return { bigTiff: tiff.layout.big, littleEndian: tiff.layout.little, ifds };
  } finally {
    await handle.close();
  }
}
