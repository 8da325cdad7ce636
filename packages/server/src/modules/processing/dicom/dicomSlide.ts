import type { Region } from '../blockPyramid.js';
import type { Deadline } from '../deadline.js';
import { DEFAULT_TILE_TIME_LIMIT_SECONDS, Jp2kDecoderPool } from '../jp2kPool.js';
import { DicomRejectedError, TRANSFER_SYNTAXES } from './dicomFile.js';
import type { FrameDecoders } from './dicomFrames.js';
import { DicomImage, type ImageSelection } from './dicomImage.js';
import { readInstance, type DicomInstance } from './dicomInstance.js';

/**
 * A DICOM whole slide (Supplement 145) given as the files of one series: the VOLUME instances make
 * the pyramid, the largest of them level 0, which {@link DicomSlide.decodeRegion} decodes for the
 * serving pyramid (blockPyramid.ts writeDecodedPyramid); LABEL and OVERVIEW instances give the associated images.
 *
 * Which files belong together: every VOLUME instance must be of one series. A LABEL or OVERVIEW
 * instance may come from another series (scanners often put them in their own) when it is of the
 * same study and the same slide — the same Frame of Reference UID or the same Container Identifier
 * (the slide's barcode) as the volume. Any other file refuses the upload, naming the series.
 */

export interface DicomSlideInfo {
  seriesInstanceUid: string;
  studyInstanceUid: string;
  /** Level 0 (the largest VOLUME total pixel matrix). */
  width: number;
  height: number;
  /** Distinct VOLUME sizes (instances of one size are one level). */
  levels: number;
  /** µm per pixel of level 0 (PixelSpacing's column spacing), or null when missing or implausible. */
  mpp: number | null;
  objectivePower: number | null;
  opticalPaths: number;
  focalPlanes: number;
  transferSyntax: string;
  /** e.g. 'JPEG baseline'. */
  coding: string;
  organization: 'TILED_FULL' | 'TILED_SPARSE';
  tileWidth: number;
  tileHeight: number;
  photometric: string;
  hasLabel: boolean;
  hasOverview: boolean;
  /** What the reader chose that the user may want to know (first optical path, first focal plane). */
  notes: string[];
}

export interface AssociatedImage {
  rgb: Buffer;
  width: number;
  height: number;
}

export interface DicomOpenOptions {
  /** JPEG 2000 decoder threads; default as many as cores. */
  threads?: number;
  tileTimeLimitSeconds?: number;
}

/** An associated image larger than this is refused (a label or overview is a few megapixels). */
const MAX_ASSOCIATED_PIXELS = 64 * 1024 * 1024;

function byInstanceNumber(a: DicomInstance, b: DicomInstance): number {
  return a.instanceNumber - b.instanceNumber || a.name.localeCompare(b.name);
}

function sizeKey(i: DicomInstance): string {
  return `${i.totalColumns}x${i.totalRows}`;
}

/** The instances of one flavour grouped by size, largest first. */
function levelsOf(instances: DicomInstance[]): DicomInstance[][] {
  const groups = new Map<string, DicomInstance[]>();
  for (const instance of [...instances].sort(byInstanceNumber)) {
    const group = groups.get(sizeKey(instance));
    if (group) group.push(instance);
    else groups.set(sizeKey(instance), [instance]);
  }
  const area = (g: DicomInstance[]) => (g[0]?.totalColumns ?? 0) * (g[0]?.totalRows ?? 0);
  return [...groups.values()].sort((a, b) => area(b) - area(a));
}

/** The first optical path of the first instance, and (TILED_SPARSE) the focal plane of its first frame. */
function selectionOf(instances: DicomInstance[]): ImageSelection {
  const first = instances[0] as DicomInstance;
  const path = first.opticalPaths[0] ?? '1';
  const frame = first.positions?.find((p) => p.path === null || p.path === path);
  return { path, z: frame ? frame.z : null };
}

function sameSlide(a: DicomInstance, b: DicomInstance): boolean {
  if (a.study !== b.study) return false;
  return (
    (a.frameOfReference !== null && a.frameOfReference === b.frameOfReference) ||
    (a.container !== null && a.container === b.container)
  );
}

export class DicomSlide {
  private pool: Jp2kDecoderPool | null = null;
  private closed = false;
  private readonly decoders: FrameDecoders;

  private constructor(
    readonly info: DicomSlideInfo,
    private readonly level0: DicomInstance[],
    private readonly associatedInstances: DicomInstance[],
    private readonly options: DicomOpenOptions,
    private image: DicomImage | null = null,
  ) {
    this.decoders = {
      jp2k: () => {
        if (this.closed) throw new Error('The DICOM slide is closed');
        this.pool ??= new Jp2kDecoderPool(
          this.options.threads,
          (this.options.tileTimeLimitSeconds ?? DEFAULT_TILE_TIME_LIMIT_SECONDS) * 1000,
        );
        return this.pool;
      },
    };
  }

  /** See {@link openDicomSeries}. */
  static async open(files: string[], options: DicomOpenOptions = {}): Promise<DicomSlide> {
    if (files.length === 0) throw new DicomRejectedError('No DICOM file was given');
    const instances: DicomInstance[] = [];
    for (const file of files) instances.push(await readInstance(file));
    const volumes = instances.filter((i) => i.flavour === 'VOLUME');
    if (volumes.length === 0)
      throw new DicomRejectedError(
        `The DICOM files hold no VOLUME image, only ${instances.map((i) => `${i.flavour || 'untyped'} (${i.name})`).join(', ')}`,
      );
    const series = [...new Set(volumes.map((v) => v.series))];
    const strangers = instances.filter((i) => i.flavour !== 'VOLUME' && i.series !== series[0]);
    const foreign = strangers.filter((i) => !volumes.some((v) => sameSlide(v, i)));
    if (series.length > 1 || foreign.length > 0) {
      const all = [...new Set([...series, ...foreign.map((i) => i.series)])];
      const named = all.map(
        (s) =>
          `${s} (${instances
            .filter((i) => i.series === s)
            .map((i) => i.name)
            .join(', ')})`,
      );
      throw new DicomRejectedError(
        `The DICOM files are of ${all.length} series; upload one slide's series: ${named.join('; ')}`,
      );
    }
    const levels = levelsOf(volumes);
    const level0 = levels[0] as DicomInstance[];
    const first = level0[0] as DicomInstance;
    const selection = selectionOf(level0);
    const notes: string[] = [];
    if (first.opticalPathCount > 1)
      notes.push(`${first.opticalPathCount} optical paths: the first (${selection.path}) is shown`);
    const sparsePlanes = new Set(level0.flatMap((i) => (i.positions ?? []).map((p) => p.z))).size;
    const focalPlanes = Math.max(first.focalPlanes, sparsePlanes);
    if (focalPlanes > 1) notes.push(`${focalPlanes} focal planes: the first is shown`);
    const associated = instances.filter((i) => i.flavour === 'LABEL' || i.flavour === 'OVERVIEW');
    const info: DicomSlideInfo = {
      seriesInstanceUid: first.series,
      studyInstanceUid: first.study,
      width: first.totalColumns,
      height: first.totalRows,
      levels: levels.length,
      mpp: first.mpp,
      objectivePower: first.objectivePower,
      opticalPaths: first.opticalPathCount,
      focalPlanes,
      transferSyntax: first.transferSyntax,
      coding: TRANSFER_SYNTAXES[first.transferSyntax],
      organization: first.organization,
      tileWidth: first.columns,
      tileHeight: first.rows,
      photometric: first.photometric,
      hasLabel: associated.some((i) => i.flavour === 'LABEL'),
      hasOverview: associated.some((i) => i.flavour === 'OVERVIEW'),
      notes,
    };
    const slide = new DicomSlide(info, level0, associated, options);
    try {
      slide.image = await DicomImage.open(level0, selection, slide.decoders, 'level 0');
      await slide.image.locateAll();
    } catch (error) {
      await slide.close();
      throw error;
    }
    return slide;
  }

  get width(): number {
    return this.info.width;
  }

  get height(): number {
    return this.info.height;
  }

  /** The level-0 instances (files) the pyramid is made from. */
  get level0Files(): string[] {
    return this.level0.map((i) => i.file);
  }

  /** RGB pixels of a region of level 0 (3 bytes a pixel, row-major); missing frames are white. */
  decodeRegion(region: Region, deadline?: Deadline): Promise<Buffer> {
    if (!this.image) throw new Error('The DICOM slide is closed');
    return this.image.decodeRegion(region, deadline);
  }

  /** The label or overview image (the largest of that kind), or null when the files have none. */
  async associated(kind: 'label' | 'overview'): Promise<AssociatedImage | null> {
    const instances = this.associatedInstances.filter((i) => i.flavour === kind.toUpperCase());
    const group = levelsOf(instances)[0];
    if (!group) return null;
    const image = await DicomImage.open(group, selectionOf(group), this.decoders, kind);
    try {
      const { width, height } = image;
      if (width * height > MAX_ASSOCIATED_PIXELS)
        throw new DicomRejectedError(`The ${kind} image is too large (${width} x ${height} px)`);
      const rgb = await image.decodeRegion({ left: 0, top: 0, width, height });
      return { rgb, width, height };
    } finally {
      await image.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.image?.close();
    this.image = null;
    await this.pool?.close();
  }
}

/**
 * Opens the instances of one WSI series (paths of Part 10 files). Throws {@link DicomRejectedError}
 * with a message for the user when the files are of several series, hold no VOLUME image, are not
 * VL Whole Slide Microscopy images, use a transfer syntax or sample format the reader does not
 * decode, or lack frames. Several optical paths or focal planes: the first is read (info.notes).
 */
export function openDicomSeries(files: string[], options: DicomOpenOptions = {}): Promise<DicomSlide> {
  return DicomSlide.open(files, options);
}
