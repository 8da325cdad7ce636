import { writeDecodedPyramid } from '../blockPyramid.js';
import type { TiledTiffResult } from '../tiledTiff.js';
import type { Deadline } from '../deadline.js';
import type { DicomSlide } from './dicomSlide.js';

/**
 * The serving pyramid of a DICOM whole slide: level 0 decoded one block at a time
 * (DicomSlide.decodeRegion) into the block writer every slide too large for one libvips pass goes
 * through (blockPyramid.ts `writeBlocks`), as JPEG 2000 TIFF slides do (jp2kPyramid.ts): 256-px JPEG
 * tiles at the same quality, the same levels and tags. The DICOM's own lower levels are not used:
 * every level is made from level 0, as for the other formats.
 */

/** 256 x 2^4: a block's levels 0..4 fall on the slide's tile grid; 48 MiB of RGB pixels. */
export const DICOM_BLOCK_SIZE = 4096;

export interface DicomPyramidOptions {
  quality: number;
  pixelsPerCm?: number;
  onProgress?: (fraction: number) => void;
  deadline?: Deadline;
  blockSize?: number;
}

/** Writes the pyramid of `slide`'s level 0 to `target`; the slide stays open (the caller closes it). */
export function buildDicomPyramid(
  slide: DicomSlide,
  target: string,
  options: DicomPyramidOptions,
): Promise<TiledTiffResult> {
  return writeDecodedPyramid(slide, target, { ...options, blockSize: options.blockSize ?? DICOM_BLOCK_SIZE });
}
