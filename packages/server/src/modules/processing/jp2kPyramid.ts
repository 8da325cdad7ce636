import { open, type FileHandle } from 'node:fs/promises';
import { readTiffStructure, type Ifd } from './tiffStructure.js';
import { codestreamMismatch, CodestreamError, jp2kColour, readCodestreamHeader } from './jp2kCodestream.js';
import { DEFAULT_TILE_TIME_LIMIT_SECONDS, Jp2kDecoderPool, Jp2kTileError } from './jp2kPool.js';
import { writeDecodedPyramid, type Region } from './blockPyramid.js';
import type { Deadline } from './deadline.js';

/**
 * The serving pyramid of a slide whose tiles are JPEG 2000 (Aperio 33003/33005, or 34712), which
 * sharp's libvips cannot decode: the tiles of the full-resolution directory are decoded by
 * OpenJPEG (WebAssembly) in worker threads (jp2kPool.ts) one block of the slide at a time, and each
 * block's pixels go through the same block writer as every slide too large for one libvips pass
 * (blockPyramid.ts `writeBlocks`): 256-px JPEG tiles at the same quality, the same levels and tags.
 *
 * Memory: a block of 4 096 px (blockPyramid.ts DECODED_BLOCK_SIZE) a side is 48 MiB of RGB, and at most two are held
 * (one decoded while the one before is encoded), plus the tiles in flight in the threads; the
 * levels below 1/16 are made from level 4 held whole (blockPyramid.ts `addSmallLevels`: 48 MiB for
 * a 100 000 x 50 000 px slide). No level is ever held whole at full resolution.
 */

export interface Jp2kPyramidOptions {
  quality: number;
  pixelsPerCm?: number;
  onProgress?: (fraction: number) => void;
  deadline?: Deadline;
  /** Decoder threads; default as many as cores. */
  threads?: number;
  /** Seconds one tile may take to decode (default {@link DEFAULT_TILE_TIME_LIMIT_SECONDS}). */
  tileTimeLimitSeconds?: number;
  blockSize?: number;
}

/** A tile (or its codestream) that cannot be decoded: the slide fails with this message. */
export class Jp2kDecodeError extends Error {
  override readonly name = 'Jp2kDecodeError';
}

interface Layout {
  width: number;
  height: number;
  tileWidth: number;
  tileHeight: number;
  across: number;
  offsets: Float64Array;
  byteCounts: Float64Array;
  compression: number;
  photometric: number | null;
}

function layoutOf(ifd: Ifd | undefined): Layout {
  if (!ifd?.data || !ifd.tiled || !ifd.tileWidth || !ifd.tileHeight)
    throw new Jp2kDecodeError('The JPEG 2000 slide is not tiled');
  if (ifd.samplesPerPixel !== 3 || ifd.bitsPerSample !== 8)
    throw new Jp2kDecodeError(
      `JPEG 2000 slides of ${ifd.samplesPerPixel} samples of ${ifd.bitsPerSample} bits are not supported (only 8-bit RGB)`,
    );
  const across = Math.ceil(ifd.width / ifd.tileWidth);
  const down = Math.ceil(ifd.height / ifd.tileHeight);
  if (ifd.data.offsets.length < across * down)
    throw new Jp2kDecodeError(`The slide has ${ifd.data.offsets.length} tiles of ${across * down}`);
  return {
    width: ifd.width,
    height: ifd.height,
    tileWidth: ifd.tileWidth,
    tileHeight: ifd.tileHeight,
    across,
    offsets: ifd.data.offsets,
    byteCounts: ifd.data.byteCounts,
    compression: ifd.compression,
    photometric: ifd.photometric,
  };
}

/** Biggest codestream of one tile read (a 256-px tile of 8-bit RGB is 192 KiB raw; lossless J2K stays below it). */
function maxTileBytes(layout: Layout): number {
  return Math.max(1024 * 1024, layout.tileWidth * layout.tileHeight * 3 * 4);
}

/**
 * Decodes a region of level 0 into RGB pixels (row-major, 3 bytes a pixel): every source tile it
 * touches, decoded in the pool, copied in. A tile with no bytes (never written by the scanner)
 * stays white, as the pipeline flattens transparency on white.
 */
async function decodeRegion(
  file: FileHandle,
  layout: Layout,
  pool: Jp2kDecoderPool,
  region: Region,
  deadline?: Deadline,
): Promise<Buffer> {
  const { tileWidth: tw, tileHeight: th } = layout;
  const out = Buffer.alloc(region.width * region.height * 3, 255);
  const firstX = Math.floor(region.left / tw);
  const lastX = Math.floor((region.left + region.width - 1) / tw);
  const firstY = Math.floor(region.top / th);
  const lastY = Math.floor((region.top + region.height - 1) / th);
  const jobs: Promise<void>[] = [];
  let failure: unknown = null;
  for (let ty = firstY; ty <= lastY && !failure; ty++) {
    for (let tx = firstX; tx <= lastX && !failure; tx++) {
      const index = ty * layout.across + tx;
      const label = `tile ${index} (column ${tx}, row ${ty}) of level 0`;
      const offset = layout.offsets[index] ?? 0;
      const length = layout.byteCounts[index] ?? 0;
      if (length === 0) continue;
      if (length > maxTileBytes(layout))
        throw new Jp2kDecodeError(`The JPEG 2000 data of ${label} is too large (${length} bytes)`);
      deadline?.check();
      const data = new Uint8Array(length);
      const { bytesRead } = await file.read(data, 0, length, offset);
      if (bytesRead !== length) throw new Jp2kDecodeError(`The JPEG 2000 data of ${label} is cut short`);
      // The part of the tile inside the image (edge tiles are stored whole or cut to the image).
      const visibleW = Math.min(tw, layout.width - tx * tw);
      const visibleH = Math.min(th, layout.height - ty * th);
      let header;
      try {
        header = readCodestreamHeader(data);
      } catch (error) {
        if (error instanceof CodestreamError)
          throw new Jp2kDecodeError(`The JPEG 2000 data of ${label} could not be decoded (${error.message})`);
        throw error;
      }
      const mismatch =
        codestreamMismatch(header, tw, th) ??
        (header.width < visibleW || header.height < visibleH
          ? `its size ${header.width} x ${header.height} does not cover the tile's ${visibleW} x ${visibleH} px`
          : null);
      if (mismatch) throw new Jp2kDecodeError(`The JPEG 2000 data of ${label} could not be decoded (${mismatch})`);
      const ycbcr = jp2kColour(layout.compression, layout.photometric) === 'ycbcr';
      jobs.push(
        pool.decode({ data, width: header.width, height: header.height, ycbcr, label }).then(
          (pixels) => {
            // Copy the tile's rows that fall inside the region.
            const x0 = Math.max(region.left, tx * tw);
            const x1 = Math.min(region.left + region.width, tx * tw + visibleW);
            const y0 = Math.max(region.top, ty * th);
            const y1 = Math.min(region.top + region.height, ty * th + visibleH);
            const rowBytes = (x1 - x0) * 3;
            for (let y = y0; y < y1; y++) {
              const from = ((y - ty * th) * header.width + (x0 - tx * tw)) * 3;
              const to = ((y - region.top) * region.width + (x0 - region.left)) * 3;
              out.set(pixels.subarray(from, from + rowBytes), to);
            }
          },
          (error: unknown) => {
            failure ??= error;
          },
        ),
      );
    }
  }
  await Promise.all(jobs);
  if (failure) {
    if (failure instanceof Jp2kTileError)
      throw new Jp2kDecodeError(`The JPEG 2000 data of ${failure.label} could not be decoded (${failure.reason})`);
    throw failure instanceof Error ? failure : new Error('A JPEG 2000 tile could not be decoded', { cause: failure });
  }
  return out;
}

/**
 * Level 0 of a JPEG 2000 slide, open for decoding: its file, tile layout and a decoder pool.
 * {@link close} ends the pool's threads.
 */
export class Jp2kSlide {
  private constructor(
    private readonly file: FileHandle,
    private readonly layout: Layout,
    private readonly pool: Jp2kDecoderPool,
  ) {}

  static async open(
    source: string,
    options: Pick<Jp2kPyramidOptions, 'threads' | 'tileTimeLimitSeconds'> = {},
  ): Promise<Jp2kSlide> {
    const layout = layoutOf((await readTiffStructure(source)).ifds[0]);
    const file = await open(source, 'r');
    const pool = new Jp2kDecoderPool(
      options.threads,
      (options.tileTimeLimitSeconds ?? DEFAULT_TILE_TIME_LIMIT_SECONDS) * 1000,
    );
    return new Jp2kSlide(file, layout, pool);
  }

  get width(): number {
    return this.layout.width;
  }

  get height(): number {
    return this.layout.height;
  }

  /** RGB pixels of a region of level 0 (3 bytes a pixel, row-major); see {@link decodeRegion}. */
  decodeRegion(region: Region, deadline?: Deadline): Promise<Buffer> {
    return decodeRegion(this.file, this.layout, this.pool, region, deadline);
  }

  async close(): Promise<void> {
    await this.pool.close();
    await this.file.close();
  }
}

/**
 * Writes the serving pyramid of a JPEG 2000 slide (level 0 of `source`, its first directory) to
 * `target`. Throws {@link Jp2kDecodeError} naming the tile when a codestream is damaged, does not
 * fit its directory, or takes longer than the per-tile time limit to decode.
 */
export async function buildJp2kPyramid(source: string, target: string, options: Jp2kPyramidOptions): Promise<void> {
  const slide = await Jp2kSlide.open(source, options);
  try {
    await writeDecodedPyramid(slide, target, options);
  } finally {
    await slide.close();
  }
}
