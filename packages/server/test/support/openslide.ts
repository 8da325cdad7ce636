import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import sharp from 'sharp';

/**
 * OpenSlide's rendering of a slide, the reference for colour tests (Debian's python3-openslide,
 * which `.ci/run` installs when missing). Used only in tests.
 */

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import sys, openslide
src, level, x, y, w, h, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
s = openslide.OpenSlide(src)
if w == 0: w, h = s.level_dimensions[level]
r = s.read_region((x, y), level, (w, h))
rgb = r.convert('RGB')
open(out, 'wb').write(rgb.tobytes())
print(w, h)
`;

export interface RgbImage {
  data: Buffer;
  width: number;
  height: number;
}

/** A region of a level as RGB (OpenSlide composites transparent areas on white); the whole level without a region. */
export async function openslideRegion(
  file: string,
  level = 0,
  region?: { left: number; top: number; width: number; height: number },
): Promise<RgbImage> {
  const out = path.join(tmpdir(), `openslide-${randomUUID()}.rgb`);
  const args = [region?.left ?? 0, region?.top ?? 0, region?.width ?? 0, region?.height ?? 0].map(String);
  try {
    const { stdout } = await promisify(execFile)(PYTHON, ['-c', SCRIPT, file, String(level), ...args, out], {
      maxBuffer: 1024 * 1024,
    });
    const [width, height] = stdout.trim().split(' ').map(Number);
    return { data: await readFile(out), width: width!, height: height! };
  } catch (error) {
    throw new Error(
      `OpenSlide's reference rendering failed; install Debian's python3-openslide (apt-get install -y openslide-tools python3-openslide): ${String(error)}`,
      { cause: error },
    );
  } finally {
    await rm(out, { force: true });
  }
}

/** Mean absolute difference per channel of two RGB images of one size, over a rectangle. */
export function meanAbsoluteDifference(
  a: RgbImage,
  b: RgbImage,
  rect = { left: 0, top: 0, width: a.width, height: a.height },
): [number, number, number] {
  if (a.width !== b.width || a.height !== b.height) throw new Error('The images differ in size');
  const sums = [0, 0, 0];
  for (let y = rect.top; y < rect.top + rect.height; y++) {
    let i = (y * a.width + rect.left) * 3;
    for (let x = 0; x < rect.width; x++) for (let c = 0; c < 3; c++, i++) sums[c]! += Math.abs(a.data[i]! - b.data[i]!);
  }
  const n = rect.width * rect.height;
  return [sums[0]! / n, sums[1]! / n, sums[2]! / n];
}

/** Mean of each channel of an RGB image over a rectangle. */
export function channelMeans(image: RgbImage, rect = { left: 0, top: 0, width: image.width, height: image.height }) {
  const sums = [0, 0, 0];
  for (let y = rect.top; y < rect.top + rect.height; y++) {
    let i = (y * image.width + rect.left) * 3;
    for (let x = 0; x < rect.width; x++) for (let c = 0; c < 3; c++, i++) sums[c]! += image.data[i]!;
  }
  const n = rect.width * rect.height;
  return sums.map((s) => s / n) as [number, number, number];
}

/**
 * The part of a reference level under tile (x, y) of 256 px, as a 256 x 256 RGB image (zeros outside
 * the level), and the size of the part inside the level (edge tiles are cut).
 */
export function referenceTile(level: RgbImage, x: number, y: number): { data: Buffer; width: number; height: number } {
  const width = Math.min(256, level.width - x * 256);
  const height = Math.min(256, level.height - y * 256);
  const data = Buffer.alloc(256 * 256 * 3);
  for (let row = 0; row < height; row++) {
    const from = ((y * 256 + row) * level.width + x * 256) * 3;
    level.data.copy(data, row * 256 * 3, from, from + width * 3);
  }
  return { data, width, height };
}

/**
 * How far the full-resolution tiles a tile server sends for an image (`fetchTile(x, y)` → the JPEG
 * bytes) are from a reference rendering of the whole of level 0, tile by tile (edge tiles: their
 * valid part only): per channel, the worst mean absolute difference of a tile (`worst`) and the
 * worst difference of a tile's channel means (`worstMeanShift`), and the tile count.
 */
export async function worstServedTileDifference(
  reference: RgbImage,
  fetchTile: (x: number, y: number) => Promise<Buffer>,
): Promise<{ worst: [number, number, number]; worstMeanShift: [number, number, number]; tiles: number }> {
  const worst: [number, number, number] = [0, 0, 0];
  const worstMeanShift: [number, number, number] = [0, 0, 0];
  let tiles = 0;
  for (let y = 0; y * 256 < reference.height; y++) {
    for (let x = 0; x * 256 < reference.width; x++) {
      const { data, info } = await sharp(await fetchTile(x, y))
        .raw()
        .toBuffer({ resolveWithObject: true });
      if (info.width !== 256 || info.height !== 256 || info.channels !== 3)
        throw new Error(`Tile ${x},${y} is ${info.width} x ${info.height} x ${info.channels}, not 256 x 256 RGB`);
      const { data: ref, width, height } = referenceTile(reference, x, y);
      const d = meanAbsoluteDifference(
        { data, width: 256, height: 256 },
        { data: ref, width: 256, height: 256 },
        { left: 0, top: 0, width, height },
      );
      d.forEach((v, c) => (worst[c] = Math.max(worst[c]!, v)));
      const rect = { left: 0, top: 0, width, height };
      const served = channelMeans({ data, width: 256, height: 256 }, rect);
      const expected = channelMeans({ data: ref, width: 256, height: 256 }, rect);
      served.forEach((v, c) => (worstMeanShift[c] = Math.max(worstMeanShift[c]!, Math.abs(v - expected[c]!))));
      tiles++;
    }
  }
  return { worst, worstMeanShift, tiles };
}
