import { OpenSlide, OpenSlideError } from '../../platform/openslide/openslide.js';
import type { Region } from './blockPyramid.js';
import type { Deadline } from './deadline.js';
import { plausibleMpp } from './slideInfo.js';

/**
 * A vendor slide read through OpenSlide (Hamamatsu NDPI/VMS, MIRAX, Leica SCN, Ventana BIF,
 * Philips TIFF, Sakura SVSlide): level 0 read region by region on OpenSlide's side (koffi threads)
 * into the same block writer as a JPEG 2000 slide (blockPyramid.ts `writeBlocks`), so the serving
 * pyramid has the tiles, levels and tags of every other slide and nothing downstream changes.
 *
 * Memory: a block of 4 096 (blockPyramid.ts DECODED_BLOCK_SIZE) px a side is 64 MiB as OpenSlide's ARGB and
 * 48 MiB as RGB; at most two blocks are held (one read while the one before is encoded).
 */

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

/** A property's number, or null when it is missing or not a number. */
function numberOf(value: string | undefined): number | null {
  const n = value === undefined || value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(n) ? n : null;
}

/** An objective power a microscope has (1× to 200×), else null. */
function plausibleObjective(value: number | null): number | null {
  return value !== null && value >= 1 && value <= 200 ? value : null;
}

export function describeOpenSlide(
  properties: Record<string, string>,
  levels: number,
  width: number,
  height: number,
  associated: string[],
): OpenSlideDescription {
  const mppX = plausibleMpp(numberOf(properties['openslide.mpp-x']));
  const mppY = plausibleMpp(numberOf(properties['openslide.mpp-y']));
  return {
    vendor: properties['openslide.vendor'] ?? 'unknown',
    width,
    height,
    levels,
    // Square pixels are the rule; where they are not, the x spacing (the tile server's scale bar).
    mpp: mppX ?? mppY,
    objectivePower: plausibleObjective(numberOf(properties['openslide.objective-power'])),
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

  get width(): number {
    return this.description.width;
  }

  get height(): number {
    return this.description.height;
  }

  /**
   * RGB pixels on white of a region of level 0 (3 bytes a pixel), in one read on a koffi thread.
   * One read, not strips in parallel: OpenSlide 3.4's readers serialise on the slide (two strips at
   * once cost twice the CPU for the same wall time, on NDPI and TIFF alike); the parallelism is the
   * block writer's — the next block is read while the one before is encoded.
   */
  async decodeRegion(region: Region, deadline?: Deadline): Promise<Buffer> {
    deadline?.check();
    return this.slide.readRegion(region.left, region.top, 0, region.width, region.height);
  }

  /** An associated image (the label, or the macro photograph of the glass) as RGB, or null. */
  async associated(kind: 'label' | 'macro'): Promise<{ rgb: Buffer; width: number; height: number } | null> {
    const name = this.description[kind];
    return name ? this.slide.readAssociated(name) : null;
  }

  close(): Promise<void> {
    return this.slide.close();
  }
}

export { OpenSlideError };
