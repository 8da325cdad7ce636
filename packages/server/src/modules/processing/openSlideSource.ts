import sharp from 'sharp';
import { OpenSlide, OpenSlideError } from '../../platform/openslide/openslide.js';
import { writeBlocks, type Region } from './blockPyramid.js';
import type { Deadline } from './deadline.js';

/**
 * A vendor slide read through OpenSlide (Hamamatsu NDPI/VMS, MIRAX, Leica SCN, Ventana BIF,
 * Philips TIFF, Sakura SVSlide): level 0 read region by region on OpenSlide's side (koffi threads)
 * into the same block writer as a JPEG 2000 slide (blockPyramid.ts `writeBlocks`), so the serving
 * pyramid has the tiles, levels and tags of every other slide and nothing downstream changes.
 *
 * Memory: a block of {@link OPENSLIDE_BLOCK_SIZE} px a side is 64 MiB as OpenSlide's ARGB and
 * 48 MiB as RGB, read in {@link STRIPS} strips at once; at most two blocks are held (one read while
 * the one before is encoded).
 */

/** 256 × 2^4: a block's levels 0..4 fall on the slide's tile grid (as for JPEG 2000). */
export const OPENSLIDE_BLOCK_SIZE = 4096;
/** A block is read as this many horizontal strips in parallel (OpenSlide decodes on koffi's threads). */
const STRIPS = 4;

/** What the worker stores of a vendor slide, from OpenSlide's standard properties. */
export interface OpenSlideDescription {
  /** OpenSlide's vendor name: hamamatsu, mirax, leica, ventana, philips, sakura, trestle … */
  vendor: string;
  width: number;
  height: number;
  levels: number;
  mpp: number | null;
  objectivePower: number | null;
  /** OpenSlide's associated images the worker keeps as label and macro. */
  label: string | null;
  macro: string | null;
}

/** Plausible microns per pixel (the same range as the TIFF readers': slideInfo.ts). */
function plausible(value: string | undefined, low: number, high: number): number | null {
  const n = value === undefined ? NaN : Number(value);
  return Number.isFinite(n) && n >= low && n <= high ? Math.round(n * 1e6) / 1e6 : null;
}

export function describeOpenSlide(
  properties: Record<string, string>,
  levels: number,
  width: number,
  height: number,
  associated: string[],
): OpenSlideDescription {
  const mppX = plausible(properties['openslide.mpp-x'], 0.05, 50);
  const mppY = plausible(properties['openslide.mpp-y'], 0.05, 50);
  return {
    vendor: properties['openslide.vendor'] ?? 'unknown',
    width,
    height,
    levels,
    // Square pixels are the rule; where they are not, the x spacing (the tile server's scale bar).
    mpp: mppX ?? mppY,
    objectivePower: plausible(properties['openslide.objective-power'], 1, 200),
    label: associated.includes('label') ? 'label' : null,
    // A 'thumbnail' (MIRAX, Ventana) is the scan made small, not the photograph of the glass: not a macro.
    macro: associated.includes('macro') ? 'macro' : null,
  };
}

/** One vendor slide open for the worker. {@link close} frees OpenSlide's handle. */
export class OpenSlideSource {
  private constructor(
    private readonly slide: OpenSlide,
    readonly description: OpenSlideDescription,
  ) {}

  /** Opens `file` (for MIRAX and VMS the index file inside its unpacked folder). */
  static open(file: string): OpenSlideSource {
    const slide = OpenSlide.open(file);
    try {
      const { width, height } = slide.levelSize(0);
      const description = describeOpenSlide(
        slide.properties(),
        slide.levelCount,
        width,
        height,
        slide.associatedNames(),
      );
      return new OpenSlideSource(slide, description);
    } catch (error) {
      void slide.close();
      throw error;
    }
  }

  /** RGB pixels on white of a region of level 0 (3 bytes a pixel), read in strips at once. */
  async decodeRegion(region: Region, deadline?: Deadline): Promise<Buffer> {
    deadline?.check();
    const rows = Math.ceil(region.height / STRIPS);
    const strips: Promise<Buffer>[] = [];
    for (let top = 0; top < region.height; top += rows) {
      const height = Math.min(rows, region.height - top);
      strips.push(this.slide.readRegion(region.left, region.top + top, 0, region.width, height));
    }
    return Buffer.concat(await Promise.all(strips));
  }

  /** An associated image encoded for storage (label: PNG, lossless; macro: JPEG), or null. */
  async associated(kind: 'label' | 'macro'): Promise<Buffer | null> {
    const name = this.description[kind];
    if (!name) return null;
    const { rgb, width, height } = await this.slide.readAssociated(name);
    const image = sharp(rgb, { raw: { width, height, channels: 3 } });
    return kind === 'label' ? image.png().toBuffer() : image.jpeg({ quality: 90 }).toBuffer();
  }

  close(): Promise<void> {
    return this.slide.close();
  }
}

export interface OpenSlidePyramidOptions {
  quality: number;
  pixelsPerCm?: number;
  onProgress?: (fraction: number) => void;
  deadline?: Deadline;
  blockSize?: number;
}

/** Writes the serving pyramid of an open vendor slide (its level 0) to `target`. */
export async function buildOpenSlidePyramid(
  source: OpenSlideSource,
  target: string,
  options: OpenSlidePyramidOptions,
): Promise<void> {
  const { width, height } = source.description;
  await writeBlocks(
    async (region) =>
      sharp(await source.decodeRegion(region, options.deadline), {
        raw: { width: region.width, height: region.height, channels: 3 },
      }),
    target,
    {
      width,
      height,
      quality: options.quality,
      blockSize: options.blockSize ?? OPENSLIDE_BLOCK_SIZE,
      ...(options.pixelsPerCm ? { pixelsPerCm: options.pixelsPerCm } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.deadline ? { deadline: options.deadline } : {}),
    },
  );
}

export { OpenSlideError };
