import { IMAGE_MESSAGES } from '@lamina/domain';
import type { Ifd, TiffStructure } from './tiffStructure.js';
import { isJpeg2000, JPEG2000_COMPRESSIONS } from './jp2kCodestream.js';

/**
 * What the worker learns about a slide from its TIFF structure: vendor layout, full-resolution
 * size, pyramid levels, microns per pixel, objective power, and where the label and macro images
 * are. Pure: tested on the structures of the test slides.
 */
export interface SlideInfo {
  format: 'aperio' | 'generic-tiff' | 'plain-tiff';
  bigTiff: boolean;
  width: number;
  height: number;
  /** Pyramid levels stored in the source (1 for a single-resolution file). */
  levels: number;
  /** Microns per pixel at full resolution, or null when the file does not say (or says nonsense). */
  mpp: number | null;
  objectivePower: number | null;
  /**
   * Focal planes (a z-stack): the leading full-resolution pages of identical size and coding of a
   * generic TIFF (see {@link focalPlanes}); 1 for every other slide.
   */
  zStackSize: number;
  compression: number;
  /** sharp `page` (top-level IFD index) of the label and macro images, when present. */
  labelPage: number | null;
  macroPage: number | null;
}

/** A slide refused for what it is (not for a passing error): the job fails without retrying. */
export class SlideRejectedError extends Error {
  override readonly name = 'SlideRejectedError';
}

/**
 * TIFF compressions the worker decodes: libvips (sharp) the usual ones, the worker's own OpenJPEG
 * JPEG 2000 in TIFF (Aperio 33003 YCbCr and 33005 RGB, 34712 the registered code; jp2kPyramid.ts).
 */
const DECODABLE = new Set([1, 5, 7, 8, 32773, 32946, ...JPEG2000_COMPRESSIONS]);

/** Plausible microns per pixel of a microscope scan; 72 or 300 dpi placeholders fall outside. */
const MPP_RANGE = [0.05, 50] as const;

/** µm per pixel when plausible for a microscope scan (rounded to 6 decimals), else null: every reader's rule. */
export function plausibleMpp(value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  return value >= MPP_RANGE[0] && value <= MPP_RANGE[1] ? Math.round(value * 1e6) / 1e6 : null;
}

/** µm per pixel from TIFF resolution tags (pixels per unit). */
export function mppFromResolution(ifd: Pick<Ifd, 'xResolution' | 'yResolution' | 'resolutionUnit'>): number | null {
  const res = ifd.xResolution ?? ifd.yResolution;
  if (!res || res <= 0) return null;
  if (ifd.resolutionUnit === 2) return plausibleMpp(25_400 / res);
  if (ifd.resolutionUnit === 3) return plausibleMpp(10_000 / res);
  return null;
}

function aperioValue(description: string, name: string): number | null {
  const match = new RegExp(`(?:^|\\|)\\s*${name}\\s*=\\s*([0-9]+(?:\\.[0-9]+)?)`, 'm').exec(description);
  if (!match?.[1]) return null;
  const value = Number(match[1]);
  return Number.isFinite(value) && value > 0 ? value : null;
}

/** The associated-image kind an Aperio IFD's description names on its second line ('label 387x463'). */
function aperioAssociated(ifd: Ifd): 'label' | 'macro' | 'thumbnail' | null {
  const second = ifd.description?.split(/\r?\n/)[1]?.trim().toLowerCase() ?? '';
  if (second.startsWith('label')) return 'label';
  if (second.startsWith('macro')) return 'macro';
  if (second.startsWith('thumbnail')) return 'thumbnail';
  return null;
}

/** The most focal planes a z-stack may have (more pages of one size are not a slide Lamina serves). */
export const MAX_FOCAL_PLANES = 32;

/**
 * The focal planes of a z-stack TIFF: its leading pages when two or more of them are full-resolution
 * images (not reduced: NewSubfileType bit 0 clear) of the same size, tiling, samples and compression
 * as the first — the layout of a multi-page TIFF of focus planes (e.g. libvips, ImageJ or OME-TIFF
 * writers). A pyramidal TIFF's next page is a smaller level, and an Aperio SVS's are its levels,
 * thumbnail, label and macro: both give 1.
 */
export function focalPlanes(ifds: readonly Ifd[], aperio: boolean): number {
  const base = ifds[0];
  if (!base || aperio) return 1;
  let planes = 1;
  for (const ifd of ifds.slice(1)) {
    const same =
      (ifd.newSubfileType & 1) === 0 &&
      ifd.width === base.width &&
      ifd.height === base.height &&
      ifd.tiled === base.tiled &&
      ifd.samplesPerPixel === base.samplesPerPixel &&
      ifd.compression === base.compression;
    if (!same) break;
    planes++;
  }
  if (planes > MAX_FOCAL_PLANES)
    throw new SlideRejectedError(
      `The file has ${planes} pages of the slide's size; at most ${MAX_FOCAL_PLANES} focal planes are supported`,
    );
  return planes;
}

/** The JPEG 2000 path decodes one plane (the first directory): a JPEG 2000 z-stack is refused. */
function jpeg2000Planes(planes: number, compression: number): number {
  if (planes > 1 && isJpeg2000(compression))
    throw new SlideRejectedError('JPEG 2000 z-stacks (several focal planes) are not supported');
  return planes;
}

export function describeSlide(structure: TiffStructure): SlideInfo {
  const { ifds } = structure;
  const base = ifds[0];
  if (!base) throw new SlideRejectedError(IMAGE_MESSAGES.notATiff);
  if (!DECODABLE.has(base.compression))
    throw new SlideRejectedError(`Unsupported TIFF compression ${base.compression}`);
  if (base.bitsPerSample > 16) throw new SlideRejectedError(`Unsupported sample depth of ${base.bitsPerSample} bits`);

  const aperio = (base.description ?? '').startsWith('Aperio');
  let labelPage: number | null = null;
  let macroPage: number | null = null;
  let levels = 1;
  let previousWidth = base.width;
  for (const ifd of ifds.slice(1)) {
    const kind = aperio ? aperioAssociated(ifd) : null;
    if (kind === 'label') {
      labelPage ??= ifd.index;
      continue;
    }
    if (kind === 'macro') {
      macroPage ??= ifd.index;
      continue;
    }
    if (aperio && !ifd.tiled && ifd.newSubfileType === 9) {
      macroPage ??= ifd.index; // macro by its subfile type when the description is missing
      continue;
    }
    const reduced = aperio
      ? ifd.tiled === base.tiled && kind === null
      : (ifd.newSubfileType & 1) === 1 && ifd.tiled === base.tiled;
    if (reduced && ifd.width < previousWidth && ifd.samplesPerPixel === base.samplesPerPixel) {
      levels++;
      previousWidth = ifd.width;
    }
  }

  const description = base.description ?? '';
  const mpp = aperio
    ? (plausibleMpp(aperioValue(description, 'MPP')) ?? mppFromResolution(base))
    : mppFromResolution(base);
  const objectivePower = aperio ? aperioValue(description, 'AppMag') : null;
  return {
    format: aperio ? 'aperio' : levels === 1 && !base.tiled ? 'plain-tiff' : 'generic-tiff',
    bigTiff: structure.bigTiff,
    width: base.width,
    height: base.height,
    levels,
    mpp,
    objectivePower,
    zStackSize: jpeg2000Planes(focalPlanes(ifds, aperio), base.compression),
    compression: base.compression,
    labelPage,
    macroPage,
  };
}
