import { IMAGE_MESSAGES, slideDataTooSmall, slideSizeImpossible, slideTooLarge } from '@lamina/domain';
import { SlideRejectedError } from './slideInfo.js';
import type { TiffStructure } from './tiffStructure.js';

/**
 * What the worker accepts before any decoder sees a pixel (pixel bombs: a 1.4 MB file whose tile
 * offsets all point at one tile, claiming 100 000 × 100 000 px, kept the worker busy for minutes).
 */
export interface SlideLimits {
  /** Largest full-resolution image, in pixels (MAX_SLIDE_PIXELS). */
  maxPixels: number;
  /**
   * Most pixels one byte of stored image data may claim. Real slides are far below: the test
   * slides hold 1–9 pixels per byte (JPEG, LZW, Deflate) and 35 for synthetic flat boxes; a slide
   * of nothing but white 256-px tiles written by libtiff holds 97 (Deflate), 61 (JPEG) or 51 (LZW).
   * The crafted files of the probe claimed 7 000 and more.
   */
  maxPixelsPerByte: number;
}

/** 40 gigapixels: a 40× scan of a whole 25 × 75 mm slide at 0.25 µm per pixel is about 30. */
export const DEFAULT_SLIDE_LIMITS: SlideLimits = { maxPixels: 40e9, maxPixelsPerByte: 1000 };

/** Widths and heights are stored as PostgreSQL integers. */
const MAX_SIDE = 2 ** 31 - 1;

/**
 * Refuses (SlideRejectedError: FAIL_PROCESSING at once, no retry) a slide whose full-resolution
 * image is larger than the limit, whose sizes cannot be stored, whose tiles or strips share data or
 * point outside the file, or which claims more pixels than its bytes can hold.
 */
export function checkSlideLimits(structure: TiffStructure, fileSize: number, limits: SlideLimits): void {
  for (const ifd of structure.ifds) {
    if (ifd.width > MAX_SIDE || ifd.height > MAX_SIDE)
      throw new SlideRejectedError(slideSizeImpossible(ifd.width, ifd.height));
  }
  const base = structure.ifds[0];
  if (!base) throw new SlideRejectedError(IMAGE_MESSAGES.notATiff);
  const pixels = base.width * base.height;
  if (pixels > limits.maxPixels) throw new SlideRejectedError(slideTooLarge(base.width, base.height, limits.maxPixels));

  const { offsets, byteCounts } = base.data ?? { offsets: new Float64Array(0), byteCounts: new Float64Array(0) };
  const seen = new Set<number>();
  let stored = 0;
  for (let i = 0; i < offsets.length; i++) {
    const offset = offsets[i] ?? 0;
    const count = byteCounts[i] ?? 0;
    if (count === 0) continue; // a sparse tile: no data, decoded as empty
    if (offset + count > fileSize) throw new SlideRejectedError(IMAGE_MESSAGES.slideDataOutsideFile);
    if (seen.has(offset)) throw new SlideRejectedError(IMAGE_MESSAGES.slideTilesShared);
    seen.add(offset);
    stored += count;
  }
  if (stored === 0) throw new SlideRejectedError(IMAGE_MESSAGES.slideNoData);
  if (pixels / stored > limits.maxPixelsPerByte) throw new SlideRejectedError(slideDataTooSmall(pixels, stored));
}

/**
 * The same limits for a slide whose pixels a reader decodes without Lamina seeing its tile table
 * (OpenSlide's formats, DICOM): its level-0 size, and its pixels against the bytes uploaded.
 */
export function checkDecodedSlideLimits(width: number, height: number, fileSize: number, limits: SlideLimits): void {
  if (width <= 0 || height <= 0 || width > MAX_SIDE || height > MAX_SIDE)
    throw new SlideRejectedError(slideSizeImpossible(width, height));
  const pixels = width * height;
  if (pixels > limits.maxPixels) throw new SlideRejectedError(slideTooLarge(width, height, limits.maxPixels));
  if (pixels / Math.max(1, fileSize) > limits.maxPixelsPerByte)
    throw new SlideRejectedError(slideDataTooSmall(pixels, fileSize));
}
