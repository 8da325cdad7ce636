import { stat } from 'node:fs/promises';
import sharp from 'sharp';
import { TILE_SIZE } from '@lamina/domain';
import type { SlideInfo } from './slideInfo.js';

/** JPEG quality of the pyramid tiles. */
export const PYRAMID_QUALITY = 85;

/** Raw level-0 bytes above which the pyramid is written as BigTIFF (a classic TIFF stops at 4 GiB). */
const BIGTIFF_RAW_BYTES = 4 * 1024 ** 3;

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
 * `onProgress` receives an estimate in 0..1 from the size written so far.
 */
export async function buildPyramid(source: string, target: string, info: SlideInfo, onProgress?: (fraction: number) => void): Promise<void> {
  const pixelsPerMm = info.mpp ? 1000 / info.mpp : undefined;
  const bigtiff = info.width * info.height * 3 > BIGTIFF_RAW_BYTES;
  let image = sharp(source, { limitInputPixels: false, sequentialRead: true, page: 0, failOn: 'warning' });
  const meta = await image.metadata().catch((error: unknown) => {
    throw new DecodeError(`The image could not be opened (${firstLine(error)})`);
  });
  if (meta.hasAlpha) image = image.flatten({ background: '#ffffff' });
  image = image.toColourspace('srgb');
  const output = image.tiff({
    tile: true,
    tileWidth: TILE_SIZE,
    tileHeight: TILE_SIZE,
    pyramid: true,
    compression: 'jpeg',
    quality: PYRAMID_QUALITY,
    bigtiff,
    ...(pixelsPerMm ? { xres: pixelsPerMm, yres: pixelsPerMm, resolutionUnit: 'cm' as const } : {}),
  });

  // Size-based progress: JPEG at Q85 of tissue is ~0.1–0.2 byte per pixel for the whole pyramid.
  const expected = Math.max(1, info.width * info.height * 0.15);
  const timer = onProgress
    ? setInterval(() => {
        stat(target)
          .then(({ size }) => onProgress(Math.min(0.95, 1 - Math.exp(-size / expected))))
          .catch(() => undefined);
      }, 1000)
    : null;
  try {
    await output.toFile(target);
  } catch (error) {
    const message = firstLine(error);
    if (transient(message)) throw error;
    throw new DecodeError(`The image data could not be decoded (${message})`);
  } finally {
    if (timer) clearInterval(timer);
  }
}

/** The label or macro image of a slide (sharp page) as PNG (label: lossless) or JPEG (macro). */
export async function extractAssociated(source: string, page: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const image = sharp(source, { page, failOn: 'error' }).toColourspace('srgb');
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 90 }).toBuffer();
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).trim().slice(0, 300);
}
