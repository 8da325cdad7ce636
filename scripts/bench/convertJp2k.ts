/**
 * The JPEG 2000 bench slides of bench:convert (issue 18).
 *
 * - The base slide: `vips replicate` of CMU-1-Small-Region (its RGB bands) BENCH_JP2K_SLIDE times
 *   (default 8x6: 17760 x 17802 px), written by libvips as tiled TIFF with JPEG 2000 tiles
 *   (`compression=jp2k`, Q70 like Aperio's "J2K/KDU Q=70"; Debian's libvips 8.14 writes compression
 *   33004, RGB, with OpenJPEG's own component transform). vips encodes JPEG 2000 at about
 *   6 Mpx/s here, so a slide of gigabytes would take most of an hour to encode.
 * - A large slide quickly: BENCH_JP2K_TILES=ACROSSxDOWN assembles a BigTIFF of that many 256-px
 *   tiles whose codestreams are copies of the base slide's (tile (i, j) is the base's tile
 *   (i mod n, j mod m) of its whole-tile interior): real tissue codestreams, each stored once per
 *   place (no shared offsets), as many bytes as the tile count asks for.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { readTiffStructure } from '../../packages/server/src/modules/processing/tiffStructure.js';
import { BENCH_DIR, ensureTools, log, SHARED } from './lib.js';

function grid(value: string, name: string): { across: number; down: number } {
  const match = /^(\d+)x(\d+)$/.exec(value);
  if (!match) throw new Error(`${name} must look like 8x6`);
  return { across: Number(match[1]), down: Number(match[2]) };
}

/** The base JPEG 2000 slide, made once with vips and reused. */
export function jp2kBaseSlide(): string {
  const { across, down } = grid(process.env.BENCH_JP2K_SLIDE ?? '8x6', 'BENCH_JP2K_SLIDE');
  mkdirSync(BENCH_DIR, { recursive: true });
  const file = path.join(BENCH_DIR, `bench-jp2k-${across}x${down}.tif`);
  if (existsSync(file) && statSync(file).size > 0) return file;
  ensureTools(['vips']);
  log(`making ${path.basename(file)} (${across} x ${down} copies of CMU-1-Small-Region.svs, JPEG 2000 tiles)`);
  const rgb = path.join(BENCH_DIR, 'cmu-rgb.v');
  const run = (args: string[]) => {
    const made = spawnSync('vips', args, { stdio: 'inherit' });
    if (made.status !== 0) throw new Error(`vips ${args[0]} failed`);
  };
  try {
    run(['extract_band', path.join(SHARED, 'testdata/wsi/CMU-1-Small-Region.svs'), rgb, '0', '--n', '3']);
    run([
      'replicate',
      rgb,
      `${file}[tile,tile-width=256,tile-height=256,compression=jp2k,Q=70,bigtiff,xres=2004.01,yres=2004.01]`,
      String(across),
      String(down),
    ]);
  } catch (error) {
    rmSync(file, { force: true });
    throw error;
  } finally {
    rmSync(rgb, { force: true });
  }
  return file;
}

/** The slide bench:convert's JPEG 2000 case converts: the base, or one assembled from its tiles. */
export async function jp2kBenchSlide(): Promise<string> {
  const base = jp2kBaseSlide();
  if (!process.env.BENCH_JP2K_TILES) return base;
  const { across, down } = grid(process.env.BENCH_JP2K_TILES, 'BENCH_JP2K_TILES');
  const file = path.join(BENCH_DIR, `bench-jp2k-tiles-${across}x${down}.tif`);
  if (existsSync(file) && statSync(file).size > 0) return file;
  log(`assembling ${path.basename(file)} (${across} x ${down} tiles copied from ${path.basename(base)})`);
  await assemble(base, file, across, down);
  return file;
}

const TAGS = {
  imageWidth: 256,
  imageLength: 257,
  bitsPerSample: 258,
  compression: 259,
  photometric: 262,
  samplesPerPixel: 277,
  planarConfiguration: 284,
  tileWidth: 322,
  tileLength: 323,
  tileOffsets: 324,
  tileByteCounts: 325,
};

/** A BigTIFF of `across` x `down` 256-px tiles, each a copy of a whole tile of the base slide. */
async function assemble(base: string, target: string, across: number, down: number): Promise<void> {
  const ifd = (await readTiffStructure(base)).ifds[0];
  if (!ifd?.data || ifd.tileWidth !== 256 || ifd.tileHeight !== 256)
    throw new Error('the base slide is not 256-px tiled');
  const baseAcross = Math.ceil(ifd.width / 256);
  // Only whole tiles (the last column and row may be cut by the image's edge).
  const n = Math.floor(ifd.width / 256);
  const m = Math.floor(ifd.height / 256);
  const source = openSync(base, 'r');
  const out = openSync(target, 'w');
  const count = across * down;
  const offsets = new Float64Array(count);
  const byteCounts = new Float64Array(count);
  let at = 16;
  try {
    for (let j = 0; j < down; j++) {
      for (let i = 0; i < across; i++) {
        const from = (j % m) * baseAcross + (i % n);
        const length = ifd.data.byteCounts[from] ?? 0;
        const bytes = Buffer.allocUnsafe(length);
        readSync(source, bytes, 0, length, ifd.data.offsets[from] ?? 0);
        writeSync(out, bytes, 0, length, at);
        offsets[j * across + i] = at;
        byteCounts[j * across + i] = length;
        at += length;
      }
    }
    at += (8 - (at % 8)) % 8;
    // BigTIFF directory: entries of 20 bytes; the tile arrays out of line.
    const arrays = at;
    const array = (values: Float64Array) => {
      const buffer = Buffer.alloc(values.length * 8);
      values.forEach((v, k) => buffer.writeBigUInt64LE(BigInt(v), k * 8));
      return buffer;
    };
    const offsetBytes = array(offsets);
    const countBytes = array(byteCounts);
    writeSync(out, offsetBytes, 0, offsetBytes.length, arrays);
    writeSync(out, countBytes, 0, countBytes.length, arrays + offsetBytes.length);
    const dir = arrays + offsetBytes.length * 2;
    const entries: [number, number, number, number][] = [
      [TAGS.imageWidth, 4, 1, across * 256],
      [TAGS.imageLength, 4, 1, down * 256],
      [TAGS.bitsPerSample, 3, 3, 8], // 8, 8, 8: six bytes, inline in a BigTIFF entry
      [TAGS.compression, 3, 1, ifd.compression],
      [TAGS.photometric, 3, 1, ifd.photometric ?? 2],
      [TAGS.samplesPerPixel, 3, 1, 3],
      [TAGS.planarConfiguration, 3, 1, 1],
      [TAGS.tileWidth, 3, 1, 256],
      [TAGS.tileLength, 3, 1, 256],
      [TAGS.tileOffsets, 16, count, arrays],
      [TAGS.tileByteCounts, 16, count, arrays + offsetBytes.length],
    ];
    const block = Buffer.alloc(8 + entries.length * 20 + 8);
    block.writeBigUInt64LE(BigInt(entries.length), 0);
    entries.forEach(([tag, type, n2, value], k) => {
      const e = 8 + k * 20;
      block.writeUInt16LE(tag, e);
      block.writeUInt16LE(type, e + 2);
      block.writeBigUInt64LE(BigInt(n2), e + 4);
      if (type === 3) for (let v = 0; v < n2; v++) block.writeUInt16LE(value, e + 12 + 2 * v);
      else if (type === 4 && n2 === 1) block.writeUInt32LE(value, e + 12);
      else block.writeBigUInt64LE(BigInt(value), e + 12);
    });
    writeSync(out, block, 0, block.length, dir);
    const header = Buffer.alloc(16);
    header.write('II', 0, 'latin1');
    header.writeUInt16LE(43, 2);
    header.writeUInt16LE(8, 4);
    header.writeBigUInt64LE(BigInt(dir), 8);
    writeSync(out, header, 0, 16, 0);
  } catch (error) {
    rmSync(target, { force: true });
    throw error;
  } finally {
    closeSync(source);
    closeSync(out);
  }
}
