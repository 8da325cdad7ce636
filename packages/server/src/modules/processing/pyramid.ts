import sharp, { type Sharp } from 'sharp';
import { maxTmsZoom, TILE_SIZE } from '@lamina/domain';
import type { SlideInfo } from './slideInfo.js';
import { rm } from 'node:fs/promises';
import {
  BlockPassError,
  copyLevels,
  JPEG_TILES,
  tileDirectories,
  watchFile,
  writeBlockPyramid,
} from './blockPyramid.js';
import { TiledJpegTiffWriter } from './tiledTiff.js';
import type { Deadline } from './deadline.js';
import { isJpeg2000 } from './jp2kCodestream.js';
import { buildJp2kPyramid, Jp2kDecodeError } from './jp2kPyramid.js';

/** JPEG quality of the pyramid tiles. */
export const PYRAMID_QUALITY = 85;

/**
 * JPEG quality of the pyramid tiles of a JPEG 2000 slide. libvips' tiffsave subsamples chroma
 * (4:2:0) below 90 and not from 90 on: these are high-quality scans (Aperio's Q=70 J2K), and on
 * the TCGA test slide 4:2:0 at 85 leaves tiles with a mean difference of 6.9 in red from
 * OpenSlide's rendering, 90 (4:4:4) at most 2.4 — for about three times the pyramid's bytes.
 */
export const JP2K_PYRAMID_QUALITY = 90;

/** Raw level-0 bytes above which the pyramid is written as BigTIFF (a classic TIFF stops at 4 GiB). */
const BIGTIFF_RAW_BYTES = 4 * 1024 ** 3;

/**
 * The largest width and height sharp writes as a JPEG-compressed TIFF: it applies the JPEG format's
 * whole-image limit to TIFF output although every tile is its own small JPEG
 * ("Processed image is too large for the JPEG format"). Larger slides go through blockPyramid.ts.
 */
export const SHARP_JPEG_TIFF_MAX = 65535;

/**
 * The number of levels libvips tiffsave gives a pyramid: it halves (floor) while a level is larger
 * than one tile and both sides are above 1 px. Where the last halving lands just above 256 px
 * (a side of 513, 1026 … 32 800 px) this is one level short of maxTmsZoom + 1, and the viewer's
 * zoom 0 would have no level.
 */
export function libvipsPyramidLevels(width: number, height: number): number {
  let levels = 1;
  for (let w = width, h = height; (w > TILE_SIZE || h > TILE_SIZE) && w > 1 && h > 1; levels++) {
    w = Math.floor(w / 2);
    h = Math.floor(h / 2);
  }
  return levels;
}

/**
 * How the pyramid is written: 'tiffsave' (sharp → libvips tiffsave in one piece, up to 65 535 px a
 * side), 'blocks' (the same per block of the slide, copied into one TIFF: any size;
 * blockPyramid.ts), 'auto' (tiffsave when it can). `blockSize` is for tests.
 */
export interface PyramidOptions {
  writer?: 'auto' | 'tiffsave' | 'blocks';
  blockSize?: number;
  /** The job's time budget: libvips stops when it runs out, and the time-limit error is thrown. */
  deadline?: Deadline;
  /** The source page (focal plane) to read; 0 by default. */
  page?: number;
}

/** A decode or encode error of libvips: the slide's pixel data is unreadable (not worth a retry). */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

function transient(message: string): boolean {
  return /no space left|ENOSPC|EMFILE|ENOMEM|out of memory/i.test(message);
}

/**
 * Writes the serving pyramid of a slide: a tiled TIFF of 256-px JPEG tiles (quality 85), level 0 at
 * full resolution and every further level half of the one before (libvips' pyramid), with the
 * resolution tags in pixels per centimetre when the pixel size is known. Streams with sequential
 * reads from the source's level 0 (sharp `page: 0`), so memory stays bounded whatever the slide's
 * size. Decoding is strict (`failOn: 'warning'`): a slide whose pixels decode with errors or
 * warnings (corrupt or truncated JPEG data) fails rather than showing damaged tissue.
 *
 * Slides wider or taller than {@link SHARP_JPEG_TIFF_MAX} are written block by block with the same
 * libvips code and assembled into one TIFF (blockPyramid.ts): the same tiles, levels and tags. So
 * are the rare sizes where libvips would stop one level short of maxTmsZoom + 1
 * ({@link libvipsPyramidLevels}); the block writer adds the missing level.
 *
 * `onProgress` receives an estimate in 0..1 from the size written so far.
 */
export async function buildPyramid(
  source: string,
  target: string,
  info: SlideInfo,
  onProgress?: (fraction: number) => void,
  options: PyramidOptions = {},
): Promise<void> {
  if (info.zStackSize > 1) return buildStackPyramid(source, target, info, onProgress, options);
  const pixelsPerMm = info.mpp ? 1000 / info.mpp : undefined;
  if (isJpeg2000(info.compression)) {
    // libvips here has no JPEG 2000 decoder: the worker decodes the tiles itself (jp2kPyramid.ts).
    try {
      await buildJp2kPyramid(source, target, {
        quality: JP2K_PYRAMID_QUALITY,
        ...(pixelsPerMm ? { pixelsPerCm: pixelsPerMm * 10 } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(options.deadline ? { deadline: options.deadline } : {}),
        ...(options.blockSize ? { blockSize: options.blockSize } : {}),
      });
    } catch (error) {
      if (options.deadline?.expired) throw options.deadline.error();
      if (error instanceof Jp2kDecodeError) throw new DecodeError(error.message);
      if (!(error instanceof BlockPassError)) throw error;
      throw writeFailure(error.original);
    }
    return;
  }
  const open = (sequentialRead: boolean) =>
    sharp(source, { limitInputPixels: false, sequentialRead, page: options.page ?? 0, failOn: 'warning' });
  const meta = await open(true)
    .metadata()
    .catch((error: unknown) => {
      throw new DecodeError(`The image could not be opened (${firstLine(error)})`);
    });
  const prepare = (input: Sharp) =>
    (meta.hasAlpha ? input.flatten({ background: '#ffffff' }) : input).toColourspace('srgb');
  const width = meta.width || info.width;
  const height = meta.height || info.height;
  const writer = options.writer ?? 'auto';
  const needsBlocks =
    width > SHARP_JPEG_TIFF_MAX ||
    height > SHARP_JPEG_TIFF_MAX ||
    libvipsPyramidLevels(width, height) < maxTmsZoom(width, height) + 1;
  if (writer === 'blocks' || (writer === 'auto' && needsBlocks)) {
    try {
      // Blocks read regions of the source (random access: a tiled or striped TIFF reads only the
      // tiles or strips a block needs). BigTIFF only when the file passes 4 GiB (known at the end).
      await writeBlockPyramid(() => prepare(open(false)), target, {
        width,
        height,
        quality: PYRAMID_QUALITY,
        ...(pixelsPerMm ? { pixelsPerCm: pixelsPerMm * 10 } : {}),
        ...(options.blockSize ? { blockSize: options.blockSize } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(options.deadline ? { deadline: options.deadline } : {}),
      });
    } catch (error) {
      if (options.deadline?.expired) throw options.deadline.error();
      if (!(error instanceof BlockPassError)) throw error;
      throw writeFailure(error.original);
    }
    return;
  }

  const image = prepare(open(true));
  if (options.deadline) image.timeout({ seconds: options.deadline.remainingSeconds() });
  const bigtiff = info.width * info.height * 3 > BIGTIFF_RAW_BYTES;
  const output = image.tiff({
    ...JPEG_TILES,
    pyramid: true,
    quality: PYRAMID_QUALITY,
    bigtiff,
    ...(pixelsPerMm ? { xres: pixelsPerMm, yres: pixelsPerMm, resolutionUnit: 'cm' as const } : {}),
  });

  const watch = onProgress ? watchFile(target, info.width * info.height, onProgress) : null;
  try {
    await output.toFile(target);
  } catch (error) {
    if (options.deadline?.expired) throw options.deadline.error();
    throw writeFailure(error);
  } finally {
    watch?.stop();
  }
}

/**
 * The serving pyramid of a z-stack: each focal plane's pyramid as for any slide (page by page), then
 * their tiles copied into one TIFF whose directories go level by level, plane by plane (level 0
 * plane 0, level 0 plane 1, …, level 1 plane 0, …). The tile server reads directories of one size
 * as the planes of that level, in file order (pyramidIndex.ts), so `?stack=n` is plane n.
 */
async function buildStackPyramid(
  source: string,
  target: string,
  info: SlideInfo,
  onProgress: ((fraction: number) => void) | undefined,
  options: PyramidOptions,
): Promise<void> {
  const planes = info.zStackSize;
  const files = Array.from({ length: planes }, (_, p) => `${target}.plane-${p}.tif`);
  try {
    for (let p = 0; p < planes; p++) {
      options.deadline?.check();
      await buildPyramid(
        source,
        files[p] as string,
        { ...info, zStackSize: 1 },
        onProgress ? (f) => onProgress(((p + f) / planes) * 0.95) : undefined,
        { ...options, page: p },
      );
    }
    const levels = await Promise.all(files.map((file) => tileDirectories(file)));
    const sizes = (levels[0] ?? []).map((d) => ({ width: d.width, height: d.height }));
    if (levels.some((l) => l.length !== sizes.length || l.some((d, k) => d.width !== sizes[k]?.width)))
      throw new DecodeError('The focal planes of the z-stack have different sizes');
    const pixelsPerMm = info.mpp ? 1000 / info.mpp : undefined;
    const writer = await TiledJpegTiffWriter.create(target, {
      tileSize: TILE_SIZE,
      levels: sizes.flatMap((size) => Array.from({ length: planes }, () => size)),
      ...(pixelsPerMm ? { pixelsPerCm: pixelsPerMm * 10 } : {}),
    });
    try {
      for (let p = 0; p < planes; p++)
        await copyLevels(
          writer,
          files[p] as string,
          levels[p] ?? [],
          sizes.map((_, k) => ({ sourceLevel: k, level: k * planes + p, tileX: 0, tileY: 0 })),
        );
      await writer.finish();
    } catch (error) {
      await writer.close();
      await rm(target, { force: true });
      throw error;
    }
    onProgress?.(1);
  } finally {
    await Promise.all(files.map((file) => rm(file, { force: true })));
  }
}

/** The label or macro image of a slide (sharp page) as PNG (label: lossless) or JPEG (macro). */
export async function extractAssociated(source: string, page: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const image = sharp(source, { page, failOn: 'error' }).toColourspace('srgb');
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 90 }).toBuffer();
}

/** What a failed libvips write is rethrown as: itself when it may pass (a retry), else a DecodeError. */
function writeFailure(error: unknown): unknown {
  const message = firstLine(error);
  return transient(message) ? error : new DecodeError(`The image data could not be decoded (${message})`);
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).trim().slice(0, 300);
}
