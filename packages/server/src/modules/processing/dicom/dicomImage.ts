import { open, type FileHandle } from 'node:fs/promises';
import type { Region } from '../blockPyramid.js';
import type { Deadline } from '../deadline.js';
import { codingOf, DicomRejectedError, locateFragments, readFrame, type FrameSpan } from './dicomFile.js';
import { decodeFrame, nativeFrameBytes, type FrameDecoders } from './dicomFrames.js';
import type { DicomInstance } from './dicomInstance.js';

/**
 * One total pixel matrix (level 0 of the slide, or a label or overview image) made of the frames of
 * one or more instances of the same size (a concatenation, or instances split by the writer), for
 * one optical path and one focal plane. Each frame is placed at its pixel position: the row-major
 * order of TILED_FULL (optical path, then focal plane, then row, then column, PS3.3 C.8.12.4.1.3),
 * or the per-frame Column/RowPositionInTotalImagePixelMatrix (1-based) of TILED_SPARSE. A place no
 * frame covers stays white, as the pipeline flattens transparency on white.
 */

interface Placement {
  /** Index in {@link DicomImage.instances}. */
  instance: number;
  frame: number;
  /** Top-left pixel (0-based) in the total pixel matrix. */
  x: number;
  y: number;
}

/** Frames decoded at once for one region (JPEG and native; JPEG 2000 frames queue in the pool). */
const CONCURRENT_FRAMES = 8;

export interface ImageSelection {
  /** The optical path identifier to read. */
  path: string;
  /** TILED_SPARSE: the Z offset of the focal plane read (TILED_FULL reads focal plane 1). */
  z: number | null;
}

export class DicomImage {
  private readonly spans: (FrameSpan[] | null)[];

  private constructor(
    readonly instances: DicomInstance[],
    private readonly handles: FileHandle[],
    private readonly placements: Placement[],
    /** Per cell of the frame grid: the placements that overlap it. */
    private readonly cells: Map<number, number[]>,
    private readonly decoders: FrameDecoders,
    readonly label: string,
  ) {
    this.spans = instances.map(() => null);
  }

  get width(): number {
    return this.first.totalColumns;
  }

  get height(): number {
    return this.first.totalRows;
  }

  get frameCount(): number {
    return this.placements.length;
  }

  private get first(): DicomInstance {
    return this.instances[0] as DicomInstance;
  }

  /** Places the frames of `instances` (all of one size and coding) and opens their files. */
  static async open(
    instances: DicomInstance[],
    selection: ImageSelection,
    decoders: FrameDecoders,
    label: string,
  ): Promise<DicomImage> {
    const first = instances[0];
    if (!first) throw new DicomRejectedError(`The ${label} has no instance`);
    for (const other of instances)
      if (
        other.rows !== first.rows ||
        other.columns !== first.columns ||
        other.transferSyntax !== first.transferSyntax ||
        other.samplesPerPixel !== first.samplesPerPixel
      )
        throw new DicomRejectedError(
          `The instances of the ${label} (${first.name}, ${other.name}) have different frames`,
        );
    if (codingOf(first.transferSyntax) === 'jpeg2000' && first.samplesPerPixel !== 3)
      throw new DicomRejectedError(`${first.name}: greyscale JPEG 2000 frames are not supported`);
    const { columns: tw, rows: th, totalColumns: width, totalRows: height } = first;
    const across = Math.ceil(width / tw);
    const down = Math.ceil(height / th);
    const placements: Placement[] = [];
    const full = new Int32Array(across * down).fill(-1);
    instances.forEach((instance, i) => {
      const path = instance.opticalPaths.indexOf(selection.path);
      if (instance.positions) {
        instance.positions.forEach((p, frame) => {
          if (p.path !== null && p.path !== selection.path) return;
          if (selection.z !== null && p.z !== selection.z) return;
          placements.push({ instance: i, frame, x: p.column - 1, y: p.row - 1 });
        });
        return;
      }
      if (path < 0) return;
      const start = path * instance.focalPlanes * across * down;
      for (let frame = 0; frame < instance.frames; frame++) {
        const tile = instance.frameOffset + frame - start;
        if (tile < 0 || tile >= across * down || (full[tile] ?? -1) >= 0) continue;
        full[tile] = placements.length;
        placements.push({ instance: i, frame, x: (tile % across) * tw, y: Math.floor(tile / across) * th });
      }
    });
    if (instances.every((instance) => !instance.positions)) {
      const present = full.filter((p) => p >= 0).length;
      if (present < across * down)
        throw new DicomRejectedError(
          `The ${label} (${instances.map((i) => i.name).join(', ')}) is missing frames: TILED_FULL needs ${across * down} (${across} x ${down}), the files hold ${present}`,
        );
    }
    const cells = new Map<number, number[]>();
    placements.forEach((p, index) => {
      for (let cy = Math.floor(p.y / th); cy <= Math.floor((p.y + th - 1) / th); cy++)
        for (let cx = Math.floor(p.x / tw); cx <= Math.floor((p.x + tw - 1) / tw); cx++) {
          if (cx < 0 || cy < 0 || cx >= across || cy >= down) continue;
          const key = cy * across + cx;
          const list = cells.get(key);
          if (list) list.push(index);
          else cells.set(key, [index]);
        }
    });
    const handles: FileHandle[] = [];
    try {
      for (const instance of instances) handles.push(await open(instance.file, 'r'));
    } catch (error) {
      await Promise.all(handles.map((h) => h.close()));
      throw error;
    }
    return new DicomImage(instances, handles, placements, cells, decoders, label);
  }

  /** Where each frame of an instance lies in its file (located on first use). */
  private async spansOf(index: number): Promise<FrameSpan[]> {
    const known = this.spans[index];
    if (known) return known;
    const instance = this.instances[index] as DicomInstance;
    const handle = this.handles[index] as FileHandle;
    let spans: FrameSpan[];
    if (instance.pixelData.length < 0) {
      spans = await locateFragments(
        handle,
        instance.pixelData.offset,
        instance.fileSize,
        instance.frames,
        instance.name,
      );
    } else {
      const bytes = nativeFrameBytes(instance);
      const available = Math.min(instance.pixelData.length, instance.fileSize - instance.pixelData.offset);
      if (available < bytes * instance.frames)
        throw new DicomRejectedError(
          `${instance.name} is missing frames: its pixel data holds ${Math.floor(available / bytes)} of ${instance.frames}`,
        );
      spans = Array.from({ length: instance.frames }, (_, f) => [
        { offset: instance.pixelData.offset + f * bytes, length: bytes },
      ]);
    }
    this.spans[index] = spans;
    return spans;
  }

  /** Checks that every instance's frames can be found (fragments walked now rather than mid-pyramid). */
  async locateAll(): Promise<void> {
    for (let i = 0; i < this.instances.length; i++) await this.spansOf(i);
  }

  /** RGB pixels of a region (3 bytes a pixel, row-major); places without a frame are white. */
  async decodeRegion(region: Region, deadline?: Deadline): Promise<Buffer> {
    const { columns: tw, rows: th } = this.first;
    const across = Math.ceil(this.width / tw);
    const out = Buffer.alloc(region.width * region.height * 3, 255);
    const wanted = new Set<number>();
    const lastY = Math.min(Math.floor((region.top + region.height - 1) / th), Math.ceil(this.height / th) - 1);
    const lastX = Math.min(Math.floor((region.left + region.width - 1) / tw), across - 1);
    for (let cy = Math.floor(region.top / th); cy <= lastY; cy++)
      for (let cx = Math.floor(region.left / tw); cx <= lastX; cx++)
        for (const p of this.cells.get(cy * across + cx) ?? []) wanted.add(p);
    const queue = [...wanted].sort((a, b) => a - b);
    const work = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        deadline?.check();
        const placement = this.placements[next] as Placement;
        const pixels = await this.decodePlacement(placement);
        this.paste(out, region, placement, pixels);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENT_FRAMES }, work));
    return out;
  }

  private async decodePlacement(p: Placement): Promise<Buffer> {
    const instance = this.instances[p.instance] as DicomInstance;
    const label = `frame ${p.frame + 1} of ${instance.name} (${this.label}, at ${p.x}, ${p.y})`;
    const span = (await this.spansOf(p.instance))[p.frame];
    if (!span) throw new DicomRejectedError(`${label} has no pixel data`);
    const limit = Math.max(1 << 20, instance.rows * instance.columns * 3 * 4);
    const length = span.reduce((sum, f) => sum + f.length, 0);
    if (length > limit) throw new DicomRejectedError(`${label} is too large (${length} bytes)`);
    const data = await readFrame(this.handles[p.instance] as FileHandle, span, label);
    return decodeFrame(instance, data, label, this.decoders);
  }

  /** Copies the part of a frame inside both the image and the region. */
  private paste(out: Buffer, region: Region, p: Placement, pixels: Buffer): void {
    const { columns: tw, rows: th } = this.first;
    const x0 = Math.max(region.left, p.x, 0);
    const x1 = Math.min(region.left + region.width, p.x + tw, this.width);
    const y0 = Math.max(region.top, p.y, 0);
    const y1 = Math.min(region.top + region.height, p.y + th, this.height);
    if (x1 <= x0 || y1 <= y0) return;
    const rowBytes = (x1 - x0) * 3;
    for (let y = y0; y < y1; y++) {
      const from = ((y - p.y) * tw + (x0 - p.x)) * 3;
      const to = ((y - region.top) * region.width + (x0 - region.left)) * 3;
      pixels.copy(out, to, from, from + rowBytes);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.handles.map((h) => h.close()));
  }
}
