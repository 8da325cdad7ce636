import { mkdir, open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { maxTmsZoom, TILE_SIZE } from '@lamina/domain';
import { assembleJpeg, jpegPrefix } from '../tiles/jpegTile.js';
import { COMPRESSION_JPEG, PHOTOMETRIC, type RangeReader } from '../../platform/tiff/tiffReader.js';
import { readTiffDirectories, type TiffDirectory } from '../tiles/tiffDirectory.js';
import { TiledJpegTiffWriter, type LevelSize, type TiledTiffResult } from './tiledTiff.js';
import type { Deadline } from './deadline.js';

/**
 * The pyramid of a slide wider or taller than 65 535 px, which sharp refuses to write as one JPEG
 * TIFF (it applies the JPEG format's whole-image size limit to tiled TIFF output).
 *
 * The slide is cut into blocks of 32 768 px (256 x 2^7) a side; the last block of a row or column
 * takes the remainder (or is merged into the one before when the remainder is small), so no block
 * exceeds 49 215 px. Each block goes through the same sharp/libvips tiffsave pyramid as a small
 * slide: one decode of its region of the source, 256-px JPEG tiles at the same quality, every
 * level a 2x2 box shrink of the one before. Because blocks start on multiples of 256 x 2^7, levels
 * 0..7 of every block fall exactly on the slide's tile grid: tile (i, j) of a block's level k is
 * tile (x0 / 2^k / 256 + i, y0 / 2^k / 256 + j) of the slide's level k, with the same pixels
 * (every box of 2^k x 2^k source pixels lies inside one block). Their bytes are copied as they are
 * into one TIFF (tiledTiff.ts), block after block, and each block file is deleted once copied.
 *
 * The smaller levels (1/256 of full resolution and below: 450 x 463 px and smaller for a
 * 115 440 x 118 680 slide) are made from level 7: its tiles decoded into one small image, halved
 * (2x2 mean, floor sizes) once per level, and each level written as JPEG tiles the same way. The
 * result has the levels, sizes and tags `vips tiffsave --pyramid` gives, always maxTmsZoom + 1
 * levels (libvips stops one short for a few sizes, see libvipsPyramidLevels in pyramid.ts).
 */

/** 256 x 2^7: levels 0..7 of a block align with the slide's tile grid. */
export const DEFAULT_BLOCK_SIZE = 32768;

/** sharp's TIFF options of the serving pyramid's tiles: 256-px JPEG (quality and levels added). */
export const JPEG_TILES = { tile: true, tileWidth: TILE_SIZE, tileHeight: TILE_SIZE, compression: 'jpeg' } as const;

export interface BlockPyramidOptions {
  /** Size of level 0 (the output of `makeImage()`). */
  width: number;
  height: number;
  quality: number;
  pixelsPerCm?: number;
  /** 256 x 2^m; smaller values are for tests. */
  blockSize?: number;
  /** Force BigTIFF (otherwise only when the file passes 4 GiB). */
  bigtiff?: boolean;
  onProgress?: (fraction: number) => void;
  /** Checked before each block and given to libvips as its timeout. */
  deadline?: Deadline;
}

/** An error of libvips while decoding the source or encoding a block (the slide's pixels). */
export class BlockPassError extends Error {
  override readonly name = 'BlockPassError';
  constructor(readonly original: unknown) {
    super(original instanceof Error ? original.message : String(original));
  }
}

interface Span {
  start: number;
  size: number;
}

/**
 * Blocks along one axis: `block` px each from 0; the rest as a last block when it is large enough
 * to reach level m (log2(block / 256)) of a libvips pyramid by itself (libvips stops halving when
 * a level fits one tile), otherwise added to the block before it.
 */
export function splitAxis(length: number, block: number): Span[] {
  if (length <= block) return [{ start: 0, size: length }];
  const spans: Span[] = [];
  let start = 0;
  while (length - start > block) {
    spans.push({ start, size: block });
    start += block;
  }
  const rest = length - start;
  // Level m - 1 of the rest must be wider than a tile: rest / 2^(m-1) >= 257.
  const minRest = (block / 512) * 257;
  const last = spans[spans.length - 1];
  if (rest >= minRest || !last) spans.push({ start, size: rest });
  else last.size += rest;
  return spans;
}

/** Level sizes, full resolution first: each half of the one before (floor, at least 1), maxTmsZoom + 1 levels. */
export function pyramidLevelSizes(width: number, height: number): LevelSize[] {
  const count = maxTmsZoom(width, height) + 1;
  const sizes: LevelSize[] = [{ width, height }];
  while (sizes.length < count) {
    const above = sizes[sizes.length - 1] as LevelSize;
    sizes.push({ width: Math.max(1, Math.floor(above.width / 2)), height: Math.max(1, Math.floor(above.height / 2)) });
  }
  return sizes;
}

export interface JpegFrame {
  width: number;
  height: number;
  /** Horizontal and vertical sampling factors per component, in frame order. */
  sampling: [number, number][];
}

/** The frame header (SOFn) of a JPEG stream (complete or abbreviated); null when there is none. */
export function readJpegFrame(jpeg: Buffer): JpegFrame | null {
  let at = 2;
  while (at + 4 <= jpeg.length) {
    if (jpeg[at] !== 0xff) return null;
    const marker = jpeg[at + 1] ?? 0;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = jpeg.readUInt16BE(at + 2);
    const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (sof) {
      const components = jpeg[at + 9] ?? 0;
      const sampling: [number, number][] = [];
      for (let c = 0; c < components; c++) {
        const factors = jpeg[at + 11 + c * 3] ?? 0;
        sampling.push([factors >> 4, factors & 15]);
      }
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7), sampling };
    }
    if (marker === 0xda) return null;
    at += 2 + length;
  }
  return null;
}

/** Tile bytes read at once when copying a block (consecutive tiles of its file). */
const COPY_CHUNK_BYTES = 8 * 1024 * 1024;
/** Bytes between two tiles (directories, tables) still read through rather than in two reads. */
const COPY_GAP_BYTES = 64 * 1024;
/** Share of the progress given to the blocks (by area); the rest is the small levels. */
const BLOCKS_SHARE = 0.97;

/**
 * Writes the pyramid of `makeImage()` (a fresh sharp pipeline over level 0 each call, before any
 * output is chosen) to `target` through block files in `{target}.parts/` (removed whatever happens).
 */
export async function writeBlockPyramid(
  makeImage: () => Sharp,
  target: string,
  options: BlockPyramidOptions,
): Promise<TiledTiffResult> {
  return writeBlocks((region) => makeImage().extract(region), target, options);
}

/** A block of level 0, in pixels. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * {@link writeBlockPyramid} for a source that gives each block as its own image: `makeBlock(region)`
 * is a sharp pipeline of exactly that region of level 0 (e.g. raw pixels decoded by the worker's
 * JPEG 2000 decoder, jp2kPyramid.ts). The next block is asked for while the current one is
 * encoded, so a decoder that works in other threads overlaps libvips' encoding: at most two blocks
 * are held at once. An error of `makeBlock` is thrown as it is (not a {@link BlockPassError}).
 */
export async function writeBlocks(
  makeBlock: (region: Region) => Sharp | Promise<Sharp>,
  target: string,
  options: BlockPyramidOptions,
): Promise<TiledTiffResult> {
  const blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE;
  const m = Math.log2(blockSize / TILE_SIZE);
  if (!Number.isInteger(m) || m < 1) throw new Error(`Block size ${blockSize} is not 256 x 2^m`);
  const sizes = pyramidLevelSizes(options.width, options.height);
  const work = `${target}.parts`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const writer = await TiledJpegTiffWriter.create(target, {
    tileSize: TILE_SIZE,
    levels: sizes,
    ...(options.pixelsPerCm ? { pixelsPerCm: options.pixelsPerCm } : {}),
    ...(options.bigtiff ? { bigtiff: true } : {}),
  });
  try {
    const columns = splitAxis(options.width, blockSize);
    const rows = splitAxis(options.height, blockSize);
    const totalArea = options.width * options.height;
    let doneArea = 0;
    // The deepest level every block has (at most m): the levels below come from it.
    let shared = Math.min(m, sizes.length - 1);
    const blocks = rows.flatMap((row) => columns.map((column) => ({ row, column })));
    const request = (b: number): Promise<Sharp> | null => {
      const block = blocks[b];
      if (!block) return null;
      const { row, column } = block;
      const image = Promise.resolve().then(() =>
        makeBlock({ left: column.start, top: row.start, width: column.size, height: row.size }),
      );
      image.catch(() => undefined); // awaited below; a block that fails while another is encoded is not "unhandled"
      return image;
    };
    let next = request(0);
    for (let b = 0; b < blocks.length; b++) {
      const { row, column } = blocks[b] as (typeof blocks)[number];
      const file = path.join(work, `block-${column.start}-${row.start}.tif`);
      const area = column.size * row.size;
      options.deadline?.check();
      const image = await (next as Promise<Sharp>);
      next = request(b + 1);
      const watch = options.onProgress
        ? watchFile(file, area, (f) => options.onProgress?.(((doneArea + f * area) / totalArea) * BLOCKS_SHARE))
        : null;
      if (options.deadline) image.timeout({ seconds: options.deadline.remainingSeconds() });
      try {
        await image.tiff({ ...JPEG_TILES, pyramid: true, quality: options.quality }).toFile(file);
      } catch (error) {
        throw new BlockPassError(error);
      } finally {
        watch?.stop();
      }
      const levels = await tileDirectories(file);
      const use = Math.min(shared + 1, levels.length);
      shared = use - 1;
      await copyLevels(
        writer,
        file,
        levels,
        Array.from({ length: use }, (_, k) => ({
          sourceLevel: k,
          level: k,
          tileX: column.start / 2 ** k / TILE_SIZE,
          tileY: row.start / 2 ** k / TILE_SIZE,
        })),
      );
      await rm(file, { force: true });
      doneArea += area;
      options.onProgress?.((doneArea / totalArea) * BLOCKS_SHARE);
    }
    // A block with fewer levels than the ones before it (a very thin slide): the levels below the
    // shared one come from the small levels' path for every block alike.
    for (let k = shared + 1; k < sizes.length; k++) writer.clearLevel(k);
    if (shared + 1 < sizes.length) await addSmallLevels(writer, shared, work, options.quality);
    options.onProgress?.(1);
    return await writer.finish();
  } catch (error) {
    await writer.close();
    await rm(target, { force: true });
    throw error;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Level 0 of a slide whose pixels the worker decodes itself (JPEG 2000 tiles, OpenSlide, DICOM frames). */
export interface RegionSource {
  readonly width: number;
  readonly height: number;
  /** RGB pixels of a region of level 0 (3 bytes a pixel, row-major). */
  decodeRegion(region: Region, deadline?: Deadline): Promise<Buffer>;
}

/**
 * Blocks of the slides the worker decodes itself: 256 x 2^4, so a block's levels 0..4 fall on the
 * slide's tile grid; 48 MiB of RGB pixels, at most two held at once (one decoded while the other is
 * encoded).
 */
export const DECODED_BLOCK_SIZE = 4096;

export interface DecodedPyramidOptions {
  quality: number;
  /** 256 x 2^m; {@link DECODED_BLOCK_SIZE} unless a test asks for smaller blocks. */
  blockSize?: number | undefined;
  pixelsPerCm?: number | undefined;
  onProgress?: ((fraction: number) => void) | undefined;
  deadline?: Deadline | undefined;
}

/**
 * The serving pyramid of a {@link RegionSource}: its level 0 decoded block by block into
 * {@link writeBlocks}, so every reader's pyramid has the same tiles, levels and tags (a DICOM's or a
 * vendor file's own lower levels are not used: every level is made from level 0). The source stays
 * open (its owner closes it).
 */
export function writeDecodedPyramid(
  source: RegionSource,
  target: string,
  options: DecodedPyramidOptions,
): Promise<TiledTiffResult> {
  return writeBlocks(
    async (region) =>
      sharp(await source.decodeRegion(region, options.deadline), {
        raw: { width: region.width, height: region.height, channels: 3 },
      }),
    target,
    {
      width: source.width,
      height: source.height,
      quality: options.quality,
      blockSize: options.blockSize ?? DECODED_BLOCK_SIZE,
      ...(options.pixelsPerCm ? { pixelsPerCm: options.pixelsPerCm } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.deadline ? { deadline: options.deadline } : {}),
    },
  );
}

/**
 * Progress of a pyramid being written, from the size of its file: JPEG tiles of tissue at Q85 come
 * to ~0.1–0.2 byte a pixel for the whole pyramid, so the fraction approaches 0.95 as the file nears
 * 0.15 byte per pixel of `area`. Looked at once a second.
 */
export function watchFile(file: string, area: number, onProgress: (fraction: number) => void): { stop(): void } {
  const expected = Math.max(1, area * 0.15);
  let stopped = false;
  const timer = setInterval(() => {
    stat(file)
      .then(({ size }) => {
        if (!stopped) onProgress(Math.min(0.95, 1 - Math.exp(-size / expected)));
      })
      .catch(() => undefined);
  }, 1000);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

interface FileReader {
  /** Reads `length` bytes at `offset` into a new buffer (fewer at the end of the file). */
  read: RangeReader;
  /** Reads exactly `length` bytes at `offset` into `buffer` (from its start). */
  readInto: (buffer: Buffer, offset: number, length: number) => Promise<void>;
}

async function withReader<T>(file: string, work: (reader: FileReader) => Promise<T>): Promise<T> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const fill = async (buffer: Buffer, offset: number, length: number) => {
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done;
    };
    return await work({
      read: async (offset, length) => {
        const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
        const done = await fill(buffer, offset, buffer.length);
        return done === buffer.length ? buffer : buffer.subarray(0, done);
      },
      readInto: async (buffer, offset, length) => {
        if ((await fill(buffer, offset, length)) !== length) throw new Error(`${path.basename(file)} is truncated`);
      },
    });
  } finally {
    await handle.close();
  }
}

/** The tiled directories of a libvips pyramid file, full resolution first. */
export async function tileDirectories(file: string): Promise<TiffDirectory[]> {
  return withReader(file, async ({ read }) => (await readTiffDirectories(read)).filter((d) => d.tileWidth > 0));
}

export interface Part {
  sourceLevel: number;
  /** Level of the pyramid and the tile column/row where the part's first tile goes. */
  level: number;
  tileX: number;
  tileY: number;
  /** The part is the whole level, already extended to whole tiles (its size a multiple of 256). */
  padded?: boolean;
}

/** Copies levels of a libvips tiled JPEG TIFF into the pyramid at the given tile positions. */
export async function copyLevels(
  writer: TiledJpegTiffWriter,
  file: string,
  directories: TiffDirectory[],
  parts: Part[],
): Promise<void> {
  await withReader(file, async ({ read, readInto }) => {
    const tiles: { offset: number; length: number; level: number; index: number }[] = [];
    for (const part of parts) {
      const d = directories[part.sourceLevel];
      const level = writer.levels[part.level];
      if (!d || !level) throw new Error(`Missing level ${part.sourceLevel} in ${path.basename(file)}`);
      if (
        d.compression !== COMPRESSION_JPEG ||
        d.tileWidth !== TILE_SIZE ||
        d.tileHeight !== TILE_SIZE ||
        d.samplesPerPixel !== 3 ||
        d.planarConfiguration !== 1
      )
        throw new Error(`Unexpected tile layout in ${path.basename(file)}`);
      if (d.photometric !== PHOTOMETRIC.ycbcr && d.photometric !== PHOTOMETRIC.rgb)
        throw new Error(`Unexpected photometric ${d.photometric}`);
      // The part ends at the level's edge, or on a tile boundary inside it.
      const right = part.tileX * TILE_SIZE + d.width;
      const bottom = part.tileY * TILE_SIZE + d.height;
      const fits = (end: number, size: number, total: number) =>
        end === total || (size % TILE_SIZE === 0 && end < total);
      const geometry = part.padded
        ? part.tileX === 0 &&
          part.tileY === 0 &&
          d.width === level.tilesAcross * TILE_SIZE &&
          d.height === level.tilesDown * TILE_SIZE
        : Number.isInteger(part.tileX) &&
          Number.isInteger(part.tileY) &&
          fits(right, d.width, level.width) &&
          fits(bottom, d.height, level.height);
      if (!geometry)
        throw new Error(
          `Level ${part.sourceLevel} of ${path.basename(file)} (${d.width} x ${d.height}) does not fit level ${part.level} at tile ${part.tileX}, ${part.tileY}`,
        );
      const across = Math.ceil(d.width / TILE_SIZE);
      const down = Math.ceil(d.height / TILE_SIZE);
      if (d.tileOffsets.length < across * down) throw new Error(`Too few tiles in ${path.basename(file)}`);

      const first = await read(d.tileOffsets[0] ?? 0, d.tileByteCounts[0] ?? 0);
      const frame = readJpegFrame(first);
      const [luma, chroma] = frame?.sampling ?? [];
      if (!frame || frame.sampling.length !== 3 || !luma || !chroma)
        throw new Error('The pyramid tiles are not 3-component JPEG');
      writer.setCoding({
        photometric: d.photometric,
        subsampling: [luma[0] / chroma[0], luma[1] / chroma[1]],
        tables: d.jpegTables,
      });

      for (let j = 0; j < down; j++) {
        for (let i = 0; i < across; i++) {
          const source = j * across + i;
          tiles.push({
            offset: d.tileOffsets[source] ?? 0,
            length: d.tileByteCounts[source] ?? 0,
            level: part.level,
            index: (part.tileY + j) * level.tilesAcross + part.tileX + i,
          });
        }
      }
    }
    tiles.sort((a, b) => a.offset - b.offset);
    // Runs of tiles close together in the file (libtiff writes them in order): one read each.
    const runs: { start: number; end: number; tiles: typeof tiles }[] = [];
    for (const tile of tiles) {
      const run = runs[runs.length - 1];
      const end = tile.offset + tile.length;
      if (run && tile.offset - run.end <= COPY_GAP_BYTES && end - run.start <= COPY_CHUNK_BYTES) {
        run.tiles.push(tile);
        run.end = Math.max(run.end, end);
      } else {
        runs.push({ start: tile.offset, end, tiles: [tile] });
      }
    }
    // One buffer for every run of this file: each run is written out before the next is read.
    let chunk = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
    for (const run of runs) {
      const length = run.end - run.start;
      if (length > chunk.length) chunk = Buffer.allocUnsafe(length);
      await readInto(chunk, run.start, length);
      await writer.writeTiles(
        run.tiles.map((t) => ({
          level: t.level,
          index: t.index,
          data: chunk.subarray(t.offset - run.start, t.offset - run.start + t.length),
        })),
      );
    }
  });
}

/**
 * The levels below `from`: level `from` decoded from its tiles into one image, then halved
 * (2x2 mean, as libvips shrinks) once per level, each written as JPEG tiles by sharp and copied in.
 * Each level is first extended to whole tiles by repeating its last column and row: libvips would
 * pad a partial tile with black, which with 4:2:0 chroma shifts the colour of the last odd row or
 * column (all of it in a level 1 or 2 px tall).
 */
async function addSmallLevels(writer: TiledJpegTiffWriter, from: number, work: string, quality: number): Promise<void> {
  const base = writer.levels[from] as (typeof writer.levels)[number];
  // The tiles are YCbCr (setCoding checked the photometric): SOI + the shared tables, as the tile server splices them.
  const prefix = jpegPrefix(writer.jpegTables, false);
  let image = { data: Buffer.alloc(base.width * base.height * 3), width: base.width, height: base.height };
  for (let ty = 0; ty < base.tilesDown; ty++) {
    for (let tx = 0; tx < base.tilesAcross; tx++) {
      const tile = await writer.readTile(from, ty * base.tilesAcross + tx);
      const { data, info } = await sharp(assembleJpeg(prefix, tile))
        .removeAlpha()
        .toColourspace('srgb')
        .raw()
        .toBuffer({ resolveWithObject: true });
      if (info.channels !== 3) throw new Error(`A level ${from} tile decodes to ${info.channels} channels`);
      const w = Math.min(TILE_SIZE, base.width - tx * TILE_SIZE, info.width);
      const h = Math.min(TILE_SIZE, base.height - ty * TILE_SIZE, info.height);
      for (let y = 0; y < h; y++) {
        const from = y * info.width * 3;
        data.copy(image.data, ((ty * TILE_SIZE + y) * base.width + tx * TILE_SIZE) * 3, from, from + w * 3);
      }
    }
  }
  for (let k = from + 1; k < writer.levels.length; k++) {
    const level = writer.levels[k] as (typeof writer.levels)[number];
    image = halve(image, level.width, level.height);
    const file = path.join(work, `level-${k}.tif`);
    try {
      await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
        .extend({
          right: level.tilesAcross * TILE_SIZE - image.width,
          bottom: level.tilesDown * TILE_SIZE - image.height,
          extendWith: 'copy',
        })
        .tiff({ ...JPEG_TILES, quality })
        .toFile(file);
    } catch (error) {
      throw new BlockPassError(error);
    }
    const directories = await tileDirectories(file);
    await copyLevels(writer, file, directories, [{ sourceLevel: 0, level: k, tileX: 0, tileY: 0, padded: true }]);
    await rm(file, { force: true });
  }
}

/** 2x2 mean of RGB pixels, rounded like libvips' pyramid shrink; a 1-px edge is repeated. */
function halve(image: { data: Buffer; width: number; height: number }, width: number, height: number) {
  const { data, width: w, height: h } = image;
  const out = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const r0 = Math.min(2 * y, h - 1) * w * 3;
    const r1 = Math.min(2 * y + 1, h - 1) * w * 3;
    let o = y * width * 3;
    for (let x = 0; x < width; x++) {
      const c0 = Math.min(2 * x, w - 1) * 3;
      const c1 = Math.min(2 * x + 1, w - 1) * 3;
      for (let c = 0; c < 3; c++) {
        const sum =
          (data[r0 + c0 + c] ?? 0) + (data[r0 + c1 + c] ?? 0) + (data[r1 + c0 + c] ?? 0) + (data[r1 + c1 + c] ?? 0);
        out[o++] = (sum + 2) >> 2;
      }
    }
  }
  return { data: out, width, height };
}
