import { createHash } from 'node:crypto';
import { maxTmsZoom, TILE_SIZE } from '@lamina/domain';
import { jpegPrefix } from './jpegTile.js';
import { COMPRESSION_JPEG, PHOTOMETRIC, type TiffDirectory } from './tiffDirectory.js';

/**
 * The viewer's tile grid (TMS/XYZ) is the domain's: 256-px tiles, z = 0 where the slide fits one
 * tile, z = maxTmsZoom(width, height) at full resolution, each zoom half the resolution of the next.
 */
export { maxTmsZoom, TILE_SIZE };

/** One image plane (z-stack index) of one level: where each tile's bytes are. */
export interface LevelPlane {
  tileOffsets: Float64Array;
  tileByteCounts: Float64Array;
  /** SOI (+ APP14 for RGB) + JPEG tables: what precedes each tile's stream. */
  prefix: Buffer;
  /**
   * What each tile's stream was seen to start with when it was first read: TILE_START_UNKNOWN,
   * TILE_START_SOI (it is sent from the file, skipping its SOI) or TILE_START_OTHER.
   */
  tileStarts: Uint8Array;
}

export const TILE_START_UNKNOWN = 0;
export const TILE_START_SOI = 1;
export const TILE_START_OTHER = 2;

export interface PyramidLevel {
  width: number;
  height: number;
  tileWidth: number;
  tileHeight: number;
  tilesAcross: number;
  tilesDown: number;
  /** Full-resolution pixels per pixel of this level (not assumed to be a power of two). */
  downsample: number;
  /** Planes in file order: `planes[n]` answers `?stack=n`. */
  planes: LevelPlane[];
  /** Why the level cannot be served as raw JPEG tiles, or null when it can. */
  unservable: string | null;
}

export interface PyramidIndex {
  width: number;
  height: number;
  maxZoom: number;
  /** `byZoom[z]`: the level served at TMS zoom z, or null when the pyramid has none that fits. */
  byZoom: (PyramidLevel | null)[];
  levels: PyramidLevel[];
  stackSize: number;
  /** Short hash of the storage key and every tile's offset and length: part of each tile's ETag. */
  version: string;
  /** Approximate memory held by the index, for the cache's bound. */
  bytes: number;
}

/** |log2(level downsample / zoom downsample)| above this: the level does not belong to that zoom. */
const ZOOM_MATCH_TOLERANCE = 0.25;

function unservableReason(d: TiffDirectory): string | null {
  if (d.compression !== COMPRESSION_JPEG) return `compression ${d.compression} is not JPEG (7)`;
  if (d.tileWidth !== TILE_SIZE || d.tileHeight !== TILE_SIZE)
    return `tiles are ${d.tileWidth}x${d.tileHeight}, not 256x256`;
  if (d.planarConfiguration !== 1) return 'planar configuration is not contiguous';
  const rgbLike = d.samplesPerPixel === 3 && (d.photometric === PHOTOMETRIC.ycbcr || d.photometric === PHOTOMETRIC.rgb);
  const grey = d.samplesPerPixel === 1 && d.photometric === PHOTOMETRIC.minIsBlack;
  if (!rgbLike && !grey) return `photometric ${d.photometric} with ${d.samplesPerPixel} samples`;
  return null;
}

/**
 * Builds the serving index from the directories of a pyramidal TIFF. Levels are the tiled
 * directories with the aspect of the largest one (labels, macros and thumbnails drop out);
 * directories of identical size are the planes of a z-stack, in file order. Each TMS zoom is mapped
 * to the level whose size is nearest to the slide's size at that zoom, so non-integer downsamples
 * (2.0003, 4.016 …) are handled and no exact halving is assumed.
 */
export function buildPyramidIndex(directories: TiffDirectory[], storageKey: string): PyramidIndex {
  const tiled = directories.filter((d) => d.tileWidth > 0 && d.tileHeight > 0 && d.width > 0 && d.height > 0);
  if (tiled.length === 0) throw new Error('The pyramid has no tiled image directory');
  const base = tiled.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
  const sameAspect = (d: TiffDirectory) =>
    Math.abs(d.height - (base.height * d.width) / base.width) <= 2 + 0.01 * d.height;

  const groups = new Map<string, TiffDirectory[]>();
  for (const d of tiled.filter(sameAspect)) {
    const key = `${d.width}x${d.height}`;
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }

  const levels: PyramidLevel[] = [...groups.values()]
    .map((planes) => {
      const first = planes[0] as TiffDirectory;
      const reasons = planes.map(unservableReason).filter((r): r is string => r !== null);
      return {
        width: first.width,
        height: first.height,
        tileWidth: first.tileWidth,
        tileHeight: first.tileHeight,
        tilesAcross: Math.ceil(first.width / first.tileWidth),
        tilesDown: Math.ceil(first.height / first.tileHeight),
        downsample: (base.width / first.width + base.height / first.height) / 2,
        planes: planes.map((d) => ({
          tileOffsets: d.tileOffsets,
          tileByteCounts: d.tileByteCounts,
          prefix: jpegPrefix(d.jpegTables, d.photometric === PHOTOMETRIC.rgb),
          tileStarts: new Uint8Array(d.tileOffsets.length),
        })),
        unservable: reasons[0] ?? null,
      };
    })
    .sort((a, b) => b.width - a.width);

  for (const level of levels) {
    for (const plane of level.planes) {
      if (plane.tileOffsets.length < level.tilesAcross * level.tilesDown)
        level.unservable ??= 'fewer tile offsets than tiles';
    }
  }

  const maxZoom = maxTmsZoom(base.width, base.height);
  const byZoom: (PyramidLevel | null)[] = [];
  for (let z = 0; z <= maxZoom; z++) {
    const wanted = 2 ** (maxZoom - z);
    let best: PyramidLevel | null = null;
    let bestDistance = Infinity;
    for (const level of levels) {
      const distance = Math.abs(Math.log2(level.downsample / wanted));
      if (distance < bestDistance) {
        best = level;
        bestDistance = distance;
      }
    }
    byZoom.push(best && bestDistance <= ZOOM_MATCH_TOLERANCE && best.unservable === null ? best : null);
  }

  const hash = createHash('sha256').update(storageKey);
  let bytes = 256;
  for (const level of levels) {
    for (const plane of level.planes) {
      hash.update(new Uint8Array(plane.tileOffsets.buffer, plane.tileOffsets.byteOffset, plane.tileOffsets.byteLength));
      hash.update(
        new Uint8Array(plane.tileByteCounts.buffer, plane.tileByteCounts.byteOffset, plane.tileByteCounts.byteLength),
      );
      bytes +=
        plane.tileOffsets.byteLength +
        plane.tileByteCounts.byteLength +
        plane.tileStarts.byteLength +
        plane.prefix.length +
        64;
    }
  }

  return {
    width: base.width,
    height: base.height,
    maxZoom,
    byZoom,
    levels,
    stackSize: Math.min(...levels.map((l) => l.planes.length)),
    version: hash.digest('base64url').slice(0, 16),
    bytes,
  };
}

export interface TileLocation {
  offset: number;
  length: number;
  prefix: Buffer;
  /** The plane's tileStarts and this tile's place in it. */
  starts: Uint8Array;
  tile: number;
}

/** Where the bytes of tile (z, x, y) of plane `stack` are; null outside the grid or for an empty tile. */
export function locateTile(index: PyramidIndex, z: number, x: number, y: number, stack: number): TileLocation | null {
  const level = index.byZoom[z];
  if (!level || x >= level.tilesAcross || y >= level.tilesDown) return null;
  const plane = level.planes[stack];
  if (!plane) return null;
  const i = y * level.tilesAcross + x;
  const offset = plane.tileOffsets[i] ?? 0;
  const length = plane.tileByteCounts[i] ?? 0;
  if (length <= 2 || offset <= 0) return null;
  return { offset, length, prefix: plane.prefix, starts: plane.tileStarts, tile: i };
}
