import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxTmsZoom, processingTimedOut } from '@lamina/domain';
import { Deadline } from '../src/modules/processing/deadline.js';
import { buildPyramid, DecodeError } from '../src/modules/processing/pyramid.js';
import { describeSlide, SlideRejectedError } from '../src/modules/processing/slideInfo.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import {
  codestreamMismatch,
  jp2kColour,
  readCodestreamHeader,
  CodestreamError,
} from '../src/modules/processing/jp2kCodestream.js';
import { Jp2kDecoderPool, Jp2kTileError } from '../src/modules/processing/jp2kPool.js';
import { Jp2kDecodeError, Jp2kSlide } from '../src/modules/processing/jp2kPyramid.js';
import { meanAbsoluteDifference, openslideRegion, type RgbImage } from './support/openslide.js';
import { WSI_DIR } from './factories.js';

/**
 * JPEG 2000 slides (issue 18): the worker decodes Aperio 33003/33005 tiles with OpenJPEG
 * (WebAssembly) in worker threads. Colours are checked against OpenSlide's rendering of the same
 * file, tile by tile, on the full-resolution level.
 */

const TCGA = path.join(WSI_DIR, 'tcga-cr-7395-01a-01-ts1.svs');
const TILE = 256;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'lamina-jp2k-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function level0(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file, { page: 0 }).raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(3);
  return { data, width: info.width, height: info.height };
}

/** The largest per-channel mean absolute difference over the 256-px tiles of a level. */
function worstTile(a: RgbImage, b: RgbImage): [number, number, number] {
  const worst: [number, number, number] = [0, 0, 0];
  for (let top = 0; top < a.height; top += TILE)
    for (let left = 0; left < a.width; left += TILE) {
      const rect = { left, top, width: Math.min(TILE, a.width - left), height: Math.min(TILE, a.height - top) };
      meanAbsoluteDifference(a, b, rect).forEach((d, c) => (worst[c] = Math.max(worst[c]!, d)));
    }
  return worst;
}

/** The tile offsets and byte counts of the slide's level 0. */
async function tilesOf(file: string) {
  const base = (await readTiffStructure(file)).ifds[0]!;
  return { offsets: base.data!.offsets, byteCounts: base.data!.byteCounts, across: Math.ceil(base.width / TILE) };
}

/**
 * The test slide as Aperio writes YCbCr JPEG 2000 (33003): the compression tags of its J2K
 * directories set to 33003 and the multiple-component transform of every level-0 tile turned off
 * (COD SGcod MCT = 0). The codestream's components are then the ICT's Y, Cb, Cr (the transform of
 * JPEG's YCbCr) as stored, and the reader must convert them: OpenSlide does, so it is the reference.
 */
async function asYcbcrSlide(target: string): Promise<void> {
  const bytes = await readFile(TCGA);
  const { offsets, byteCounts } = await tilesOf(TCGA);
  for (let i = 0; i < offsets.length; i++) {
    const tile = bytes.subarray(offsets[i], offsets[i]! + byteCounts[i]!);
    let at = 2;
    while (at + 4 <= tile.length && tile.readUInt16BE(at) !== 0xff52) at += 2 + tile.readUInt16BE(at + 2);
    expect(tile.readUInt16BE(at)).toBe(0xff52);
    expect(tile[at + 8]).toBe(1); // MCT on in the Aperio 33005 stream
    tile[at + 8] = 0;
  }
  // Classic little-endian TIFF: the compression entries (tag 259, SHORT) of every directory.
  for (let ifd = bytes.readUInt32LE(4); ifd !== 0;) {
    const count = bytes.readUInt16LE(ifd);
    for (let e = 0; e < count; e++) {
      const entry = ifd + 2 + e * 12;
      if (bytes.readUInt16LE(entry) === 259 && bytes.readUInt16LE(entry + 8) === 33005)
        bytes.writeUInt16LE(33003, entry + 8);
    }
    ifd = bytes.readUInt32LE(ifd + 2 + count * 12);
  }
  await writeFile(target, bytes);
}

describe('the TCGA JPEG 2000 slide (Aperio 33005) against OpenSlide', () => {
  let reference: RgbImage;
  let pyramid: string;

  beforeAll(async () => {
    reference = await openslideRegion(TCGA);
    pyramid = path.join(work, 'tcga.tif');
    const info = describeSlide(await readTiffStructure(TCGA));
    const progress: number[] = [];
    await buildPyramid(TCGA, pyramid, info, (f) => progress.push(f));
    expect(progress.at(-1)).toBe(1);
  }, 60_000);

  it('reads as a 4443 x 3567 Aperio slide of 2 levels, without MPP', async () => {
    const info = describeSlide(await readTiffStructure(TCGA));
    expect(info).toMatchObject({
      format: 'aperio',
      width: 4443,
      height: 3567,
      levels: 2,
      compression: 33005,
      mpp: null,
    });
  });

  it('the decoder gives OpenSlide’s pixels (the same OpenJPEG): level 0 differs by < 0.5 on average', async () => {
    const slide = await Jp2kSlide.open(TCGA, { threads: 2 });
    try {
      const region = { left: 1000, top: 700, width: 1300, height: 900 };
      const mine = { data: await slide.decodeRegion(region), width: region.width, height: region.height };
      const ref = await openslideRegion(TCGA, 0, region);
      for (const d of meanAbsoluteDifference(mine, ref)) expect(d).toBeLessThan(0.5);
    } finally {
      await slide.close();
    }
  });

  it('the pyramid’s full-resolution level matches OpenSlide tile by tile: mean absolute difference ≤ 3 per channel', async () => {
    const mine = await level0(pyramid);
    expect([mine.width, mine.height]).toEqual([reference.width, reference.height]);
    const worst = worstTile(mine, reference);
    for (const d of worst) expect(d).toBeLessThanOrEqual(3);
    const whole = meanAbsoluteDifference(mine, reference);
    for (const d of whole) expect(d).toBeLessThan(1.5);
  });

  it('YCbCr JPEG 2000 (Aperio 33003) is converted to RGB as OpenSlide converts it: tile by tile ≤ 3', async () => {
    const file = path.join(work, 'tcga-33003.svs');
    await asYcbcrSlide(file);
    const info = describeSlide(await readTiffStructure(file));
    expect(info.compression).toBe(33003);
    // OpenSlide's rendering of the YCbCr file is the RGB original's (the same slide)…
    const region = { left: 1024, top: 512, width: 1024, height: 1024 };
    const ycbcrReference = await openslideRegion(file, 0, region);
    const rgbReference = await openslideRegion(TCGA, 0, region);
    for (const d of meanAbsoluteDifference(ycbcrReference, rgbReference)) expect(d).toBeLessThan(1);
    // … and the worker's pyramid of it matches the reference everywhere (left as Y, Cb, Cr it would not).
    const target = path.join(work, 'tcga-33003.tif');
    await buildPyramid(file, target, info);
    for (const d of worstTile(await level0(target), reference)) expect(d).toBeLessThanOrEqual(3);
  }, 30_000);

  it('the pyramid has every level down to one tile, the smallest still the slide’s colours', async () => {
    const levels = (await readTiffStructure(pyramid)).ifds;
    expect(levels).toHaveLength(maxTmsZoom(4443, 3567) + 1);
    expect(levels.map((l) => l.width)).toEqual([4443, 2221, 1110, 555, 277, 138]);
    for (const l of levels) expect([l.compression, l.tileWidth]).toEqual([7, 256]);
    const top = await sharp(pyramid, { page: levels.length - 1 }).stats();
    const all = await sharp(reference.data, {
      raw: { width: reference.width, height: reference.height, channels: 3 },
    }).stats();
    for (let c = 0; c < 3; c++) expect(Math.abs(all.channels[c]!.mean - top.channels[c]!.mean)).toBeLessThan(2);
  });
});

describe('JPEG 2000 TIFF written by libvips (33004)', () => {
  it('decodes to the source colours: libvips stores YCbCr it converted itself, under the stream’s transform', async () => {
    // A 512 x 512 region of CMU-1-Small-Region (x 1000, y 1500) saved by Debian's libvips 8.14:
    // `vips tiffsave … --tile --tile-width 256 --tile-height 256 --compression jp2k --Q 40 --strip`.
    const file = fileURLToPath(new URL('./fixtures/cmu-512-jp2k-vips.tif', import.meta.url));
    const info = describeSlide(await readTiffStructure(file));
    expect([info.compression, info.width, info.height]).toEqual([33004, 512, 512]);
    const target = path.join(work, 'vips-33004.tif');
    await buildPyramid(file, target, info);
    const lossless = path.join(WSI_DIR, 'derived/CMU-1-Small-Region_bigtiff-deflate-512.tif');
    const { data } = await sharp(lossless)
      .extract({ left: 1000, top: 1500, width: 512, height: 512 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const source = { data, width: 512, height: 512 };
    // JPEG 2000 at Q40 then JPEG: about 5 from the source; read as RGB, the chroma would be ~100 off.
    for (const d of meanAbsoluteDifference(await level0(target), source)) expect(d).toBeLessThan(8);
  });
});

describe('codestream headers', () => {
  it('reads SIZ and COD of a real tile and decides the colour', async () => {
    const bytes = await readFile(TCGA);
    const { offsets, byteCounts } = await tilesOf(TCGA);
    const tile = bytes.subarray(offsets[20], offsets[20]! + byteCounts[20]!);
    const header = readCodestreamHeader(tile);
    expect(header).toEqual({
      width: 256,
      height: 256,
      mct: 1,
      components: Array.from({ length: 3 }, () => ({ depth: 8, signed: false, dx: 1, dy: 1 })),
    });
    expect(codestreamMismatch(header, 256, 256)).toBeNull();
    expect(codestreamMismatch(header, 240, 240)).toMatch(/does not fit the 240 x 240 tile/);
    expect(jp2kColour(33005, 2)).toBe('rgb');
    expect(jp2kColour(33003, 2)).toBe('ycbcr');
    expect(jp2kColour(33004, 2)).toBe('ycbcr'); // libvips' lossy JPEG 2000 tiles
    expect(jp2kColour(34712, 6)).toBe('ycbcr');
    expect(jp2kColour(34712, 2)).toBe('rgb');
    const sub = { ...header, components: header.components.map((c, i) => ({ ...c, dx: i ? 2 : 1, dy: i ? 2 : 1 })) };
    expect(codestreamMismatch(sub, 256, 256)).toMatch(/component 1 is sampled 2 x 2/);
    expect(codestreamMismatch({ ...header, components: header.components.slice(0, 1) }, 256, 256)).toMatch(
      /1 components/,
    );
  });

  it('refuses streams without SOC, SIZ or COD, and cut segments', () => {
    expect(() => readCodestreamHeader(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toThrow(CodestreamError);
    expect(() => readCodestreamHeader(new Uint8Array([0xff, 0x4f, 0xff, 0x90, 0, 10]))).toThrow(/no SIZ/);
    expect(() => readCodestreamHeader(new Uint8Array([0xff, 0x4f, 0xff, 0x51, 0x01, 0x00]))).toThrow(/cut/);
  });
});

describe('damaged codestreams', () => {
  it('a tile that takes longer than its time limit fails, naming the tile, and the pool goes on', async () => {
    const bytes = await readFile(TCGA);
    const { offsets, byteCounts } = await tilesOf(TCGA);
    const tile = () => new Uint8Array(bytes.subarray(offsets[5], offsets[5]! + byteCounts[5]!));
    const pool = new Jp2kDecoderPool(1, 1);
    try {
      const error = await pool
        .decode({ data: tile(), width: 256, height: 256, ycbcr: false, label: 'tile 5' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Jp2kTileError);
      expect((error as Error).message).toMatch(/^tile 5: it took longer than 0.001 s to decode$/);
    } finally {
      await pool.close();
    }
    const healthy = new Jp2kDecoderPool(1);
    try {
      const pixels = await healthy.decode({ data: tile(), width: 256, height: 256, ycbcr: false, label: 'tile 5' });
      expect(pixels.length).toBe(256 * 256 * 3);
    } finally {
      await healthy.close();
    }
  });

  it('fuzz: mutated tiles decode or fail with a message naming that tile, never a crash or a hang', async () => {
    const original = await readFile(TCGA);
    const { offsets, byteCounts, across } = await tilesOf(TCGA);
    const file = path.join(work, 'fuzz.svs');
    await copyFile(TCGA, file);
    // Tiles of a 2 x 2 block around (column 3, row 4): the region decoded each run.
    const region = { left: 3 * TILE, top: 4 * TILE, width: 2 * TILE, height: 2 * TILE };
    const targets = [4 * across + 3, 4 * across + 4, 5 * across + 3, 5 * across + 4];
    const mutation = fc.record({
      tile: fc.constantFrom(...targets),
      kind: fc.constantFrom('flip', 'zero', 'random', 'header'),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }),
    });
    // One slide open for every run: each run rewrites the file in place (same size, same inode).
    const slide = await Jp2kSlide.open(file, { threads: 2, tileTimeLimitSeconds: 10 });
    let failures = 0;
    let runs = 0;
    await fc
      .assert(
        fc.asyncProperty(mutation, async ({ tile, kind, at, bytes }) => {
          runs++;
          const data = Buffer.from(original);
          const start = offsets[tile]!;
          const length = byteCounts[tile]!;
          // 'header' hits the main header (SIZ, COD …, the first 150 bytes); the rest anywhere in the tile.
          const span = kind === 'header' ? Math.min(150, length) : length;
          const from = start + (at % span);
          for (let i = 0; i < bytes.length && from + i < start + length; i++) {
            const b = bytes[i]!;
            data[from + i] = kind === 'flip' ? data[from + i]! ^ (1 << (b & 7)) : kind === 'zero' ? 0 : b;
          }
          await writeFile(file, data);
          try {
            const pixels = await slide.decodeRegion(region);
            expect(pixels.length).toBe(region.width * region.height * 3);
          } catch (error) {
            failures++;
            expect(error).toBeInstanceOf(Jp2kDecodeError);
            const column = tile % across;
            const row = Math.floor(tile / across);
            expect((error as Error).message).toContain(`tile ${tile} (column ${column}, row ${row}) of level 0`);
          }
        }),
        { numRuns: 60, seed: 18 },
      )
      .finally(() => slide.close());
    expect(runs).toBe(60);
    // Most mutations are caught by the header check or OpenJPEG's own errors.
    expect(failures).toBeGreaterThan(0);
  }, 60_000);

  it('the job’s time budget stops the decoding (time-limit message), leaving no pyramid behind', async () => {
    const info = describeSlide(await readTiffStructure(TCGA));
    const target = path.join(work, 'budget.tif');
    const deadline = new Deadline(1, Date.now() - 5000);
    const error = await buildPyramid(TCGA, target, info, undefined, { deadline }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlideRejectedError);
    expect((error as Error).message).toBe(processingTimedOut(1));
    expect((await readdir(work)).filter((f) => f.startsWith('budget'))).toEqual([]);
  });

  it('a slide with a corrupt tile fails the pyramid with a DecodeError naming the tile', async () => {
    const data = await readFile(TCGA);
    const { offsets, across } = await tilesOf(TCGA);
    const tile = 7 * across + 9;
    data.fill(0xff, offsets[tile]! + 40, offsets[tile]! + 120);
    const file = path.join(work, 'corrupt.svs');
    await writeFile(file, data);
    const info = describeSlide(await readTiffStructure(file));
    const error = await buildPyramid(file, path.join(work, 'corrupt.tif'), info).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as Error).message).toMatch(
      new RegExp(`^The JPEG 2000 data of tile ${tile} \\(column 9, row 7\\) of level 0 could not be decoded \\(.+\\)$`),
    );
  }, 30_000);
});
