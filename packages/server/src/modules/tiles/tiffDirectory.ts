import {
  CorruptTiffError,
  integers,
  numberOf,
  openTiff,
  TAG,
  valueBytes,
  type RangeReader,
  type RawIfd,
  type TiffFile,
} from '../../platform/tiff/tiffReader.js';

/**
 * The tile server's view of a TIFF (the one reader: platform/tiff/tiffReader.ts): per directory,
 * the geometry, compression, tile offsets and byte counts, and the JPEG tables.
 */

export {
  COMPRESSION_JPEG,
  PHOTOMETRIC,
  TAG,
  TiffFormatError,
  type RangeReader,
} from '../../platform/tiff/tiffReader.js';

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

async function toDirectory(file: TiffFile, ifd: RawIfd): Promise<TiffDirectory> {
  const get = (tag: number) => ifd.entries.get(tag);
  const scalar = async (tag: number, fallback: number) => (await numberOf(file, get(tag))) ?? fallback;
  const tileWidth = await scalar(TAG.tileWidth, 0);
  const tiled = tileWidth > 0 && get(TAG.tileOffsets) !== undefined;
  const tables = get(TAG.jpegTables);
  const [tileOffsets, tileByteCounts, jpegTables] = await Promise.all([
    tiled ? integers(file, get(TAG.tileOffsets)) : Promise.resolve(new Float64Array(0)),
    tiled ? integers(file, get(TAG.tileByteCounts)) : Promise.resolve(new Float64Array(0)),
    tables ? valueBytes(file, tables).then((b) => Buffer.from(b)) : Promise.resolve(null),
  ]);
  if (tileOffsets.length !== tileByteCounts.length)
    throw new CorruptTiffError(`IFD at ${ifd.offset}: offsets and byte counts differ`);
  return {
    offset: ifd.offset,
    subfileType: await scalar(TAG.newSubfileType, 0),
    width: await scalar(TAG.imageWidth, 0),
    height: await scalar(TAG.imageLength, 0),
    compression: await scalar(TAG.compression, 1),
    photometric: await scalar(TAG.photometric, -1),
    samplesPerPixel: await scalar(TAG.samplesPerPixel, 1),
    planarConfiguration: await scalar(TAG.planarConfiguration, 1),
    tileWidth: tiled ? tileWidth : 0,
    tileHeight: tiled ? await scalar(TAG.tileLength, 0) : 0,
    tileOffsets,
    tileByteCounts,
    jpegTables,
  };
}

/**
 * Reads every image directory of the file: the main IFD chain and, when present, the SubIFDs of
 * each directory (where some writers put pyramid levels); their values load in parallel.
 */
export async function readTiffDirectories(read: RangeReader): Promise<TiffDirectory[]> {
  const file = await openTiff(read);
  return Promise.all(file.ifds.map((ifd) => toDirectory(file, ifd)));
}
