import { existsSync } from 'node:fs';
import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxTmsZoom } from '@lamina/domain';
import { processImage, type ProcessingDeps } from '../src/modules/processing/processImage.js';
import {
  buildPyramid,
  DecodeError,
  libvipsPyramidLevels,
  SHARP_JPEG_TIFF_MAX,
} from '../src/modules/processing/pyramid.js';
import {
  pyramidLevelSizes,
  readJpegFrame,
  splitAxis,
  writeBlockPyramid,
} from '../src/modules/processing/blockPyramid.js';
import { describeSlide } from '../src/modules/processing/slideInfo.js';
import { TiledJpegTiffWriter } from '../src/modules/processing/tiledTiff.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { buildPyramidIndex } from '../src/modules/tiles/pyramidIndex.js';
import { readTiffDirectories, type RangeReader } from '../src/modules/tiles/tiffDirectory.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import {
  createSlideTestApp,
  createTileGrant,
  createStudy,
  createUploadedImage,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

/**
 * Slides wider than 65 535 px: sharp refuses them as one JPEG TIFF, so the worker writes the
 * pyramid block by block (blockPyramid.ts). The test slide is 70 000 x 600 px of real tissue (a
 * 2048 x 600 region of CMU-1-Small-Region repeated across), a tiled JPEG TIFF of a few MB.
 */

const WIDTH = 70_000;
const HEIGHT = 600;
const REGION = { left: 100, top: 1180, width: 2048, height: HEIGHT };
const CMU = path.join(WSI_DIR, 'CMU-1-Small-Region.svs');
const SESSION_SECRET = 'test-secret';

let dir: string;
let sourceFile: string;
/** The source's level 0 as libvips decodes it (RGB). */
let source: Buffer;
let t: SlideTestContext;
let imageId: number;
let pyramidFile: string;

async function reader(file: string): Promise<{ read: RangeReader; close: () => Promise<void> }> {
  const handle = await open(file, 'r');
  const { size } = await handle.stat();
  return {
    read: async (offset, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      await handle.read(buffer, 0, buffer.length, offset);
      return buffer;
    },
    close: () => handle.close(),
  };
}

async function directoriesOf(file: string) {
  const { read, close } = await reader(file);
  try {
    return await readTiffDirectories(read);
  } finally {
    await close();
  }
}

/** Mean R, G, B of a box of raw RGB pixels. */
function meanOf(data: Buffer, stride: number, x0: number, y0: number, x1: number, y1: number): number[] {
  const sum = [0, 0, 0];
  for (let y = y0; y < y1; y++) {
    let i = (y * stride + x0) * 3;
    for (let x = x0; x < x1; x++, i += 3) {
      sum[0]! += data[i]!;
      sum[1]! += data[i + 1]!;
      sum[2]! += data[i + 2]!;
    }
  }
  const n = Math.max(1, (x1 - x0) * (y1 - y0));
  return sum.map((s) => s / n);
}

/**
 * Box means of the source from column prefix sums by bands of 16 rows (every box edge of a level
 * of this slide is a multiple of 16 rows, or the last row).
 */
function sourceBoxes(data: Buffer, width: number, height: number) {
  const bands: { y0: number; y1: number; prefix: Float64Array }[] = [];
  for (let y0 = 0; y0 < height; y0 += 16) {
    const y1 = Math.min(height, y0 + 16);
    const prefix = new Float64Array((width + 1) * 3);
    for (let y = y0; y < y1; y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * 3;
        const p = (x + 1) * 3;
        prefix[p] = prefix[p]! + data[i]!;
        prefix[p + 1] = prefix[p + 1]! + data[i + 1]!;
        prefix[p + 2] = prefix[p + 2]! + data[i + 2]!;
      }
    }
    for (let p = 3; p < prefix.length; p++) prefix[p] = prefix[p]! + prefix[p - 3]!;
    bands.push({ y0, y1, prefix });
  }
  /** Mean over columns [x0, x1) and rows [y0, y1) where y0 and y1 are multiples of 16 (or the height). */
  return (x0: number, x1: number, y0: number, y1: number): number[] => {
    if (y0 % 16 !== 0 || (y1 % 16 !== 0 && y1 !== height)) throw new Error(`rows ${y0}..${y1} are not on band edges`);
    const sum = [0, 0, 0];
    for (const band of bands) {
      if (band.y0 < y0 || band.y1 > y1) continue;
      for (let c = 0; c < 3; c++) sum[c]! += band.prefix[x1 * 3 + c]! - band.prefix[x0 * 3 + c]!;
    }
    const n = (x1 - x0) * (y1 - y0);
    return sum.map((s) => s / n);
  };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-pyramid-large-'));
  sourceFile = path.join(dir, 'wide.tif');
  const region = await sharp(CMU).extract(REGION).removeAlpha().png().toBuffer();
  // The source itself is wider than sharp writes as a JPEG TIFF, so it is made with the block
  // writer too (a pyramidal JPEG TIFF, as scanners write); the first test checks its pixels.
  await writeBlockPyramid(
    () =>
      sharp({ create: { width: WIDTH, height: HEIGHT, channels: 3, background: '#ffffff' } }).composite([
        { input: region, tile: true, gravity: 'northwest' },
      ]),
    sourceFile,
    { width: WIDTH, height: HEIGHT, quality: 90, pixelsPerCm: 20040.08 },
  );
  source = await sharp(sourceFile, { page: 0, limitInputPixels: false }).raw().toBuffer();

  t = await createSlideTestApp({ SESSION_SECRET });
  const deps: ProcessingDeps = {
    db: t.database.db,
    storage: t.app.slides.storage,
    tmpDir: path.join(t.dataDir, 'tmp'),
  };
  const studyId = (await createStudy(t.database.db)).id;
  const key = await putUpload(t.app.slides.storage, studyId, sourceFile, 'wide-resection.tif');
  imageId = (await createUploadedImage(t.database.db, { studyId, s3Key: key })).id;
  await processImage(deps, imageId);
  const row = await t.database.db
    .selectFrom('images')
    .select('cog_key')
    .where('id', '=', imageId)
    .executeTakeFirstOrThrow();
  pyramidFile = row.cog_key ? t.app.slides.storage.localPath!(row.cog_key) : '';
}, 180_000);

afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a slide wider than 65 535 px', () => {
  it('the test slide is a 70 000 px tiled JPEG TIFF that decodes to the tissue it repeats', async () => {
    expect(WIDTH).toBeGreaterThan(SHARP_JPEG_TIFF_MAX);
    const structure = await readTiffStructure(sourceFile);
    expect(structure.ifds[0]).toMatchObject({
      width: WIDTH,
      height: HEIGHT,
      compression: 7,
      tiled: true,
      tileWidth: 256,
    });
    expect(describeSlide(structure)).toMatchObject({ width: WIDTH, height: HEIGHT, mpp: 0.499 });
    const region = await sharp(CMU).extract(REGION).removeAlpha().raw().toBuffer();
    // Copies at the start, across the first block boundary (32 768 = 16 x 2048) and at the end.
    for (const left of [0, 30_720, 32_768, 65_536]) {
      let sum = 0;
      for (let y = 0; y < HEIGHT; y++) {
        for (let x = 0; x < 2048 * 3; x++)
          sum += Math.abs(source[(y * WIDTH + left) * 3 + x]! - region[y * 2048 * 3 + x]!);
      }
      expect(sum / (HEIGHT * 2048 * 3), `copy at ${left}`).toBeLessThan(2.5);
    }
  });

  it('goes through processing to SUCCESS', async () => {
    const row = await t.database.db
      .selectFrom('images')
      .selectAll()
      .where('id', '=', imageId)
      .executeTakeFirstOrThrow();
    expect([row.status, row.processing_status, row.processing_progress, row.status_message]).toEqual([
      'CASE_ASSIGNMENT_PENDING',
      'SUCCESS',
      100,
      null,
    ]);
    expect([row.width, row.height, row.mpp]).toEqual([WIDTH, HEIGHT, 0.499]);
    expect(row.cog_key).toBe(`images/${imageId}/pyramid.tif`);
    // The worker's temporary folder (blocks included) is gone.
    expect(await readdir(path.join(t.dataDir, 'tmp'))).toEqual([]);
  });

  it('has maxTmsZoom + 1 levels of 256-px JPEG tiles, each half of the one before', async () => {
    const structure = await readTiffStructure(pyramidFile);
    const levels = structure.ifds;
    expect(levels).toHaveLength(maxTmsZoom(WIDTH, HEIGHT) + 1);
    expect(levels).toHaveLength(10);
    expect([levels[0]!.width, levels[0]!.height]).toEqual([WIDTH, HEIGHT]);
    for (const [i, ifd] of levels.entries()) {
      expect(ifd.compression).toBe(7);
      expect(ifd.photometric).toBe(6);
      expect([ifd.tileWidth, ifd.tileHeight]).toEqual([256, 256]);
      expect(ifd.newSubfileType).toBe(i === 0 ? 0 : 1);
      expect(ifd.xResolution).toBeCloseTo(20040.08, 1);
      expect(ifd.resolutionUnit).toBe(3);
      if (i > 0) {
        expect(ifd.width).toBe(Math.max(1, Math.floor(levels[i - 1]!.width / 2)));
        expect(ifd.height).toBe(Math.max(1, Math.floor(levels[i - 1]!.height / 2)));
      }
    }
    expect(structure.bigTiff).toBe(false);

    // As the tile server reads it: every tile present, one set of JPEG tables, 4:2:0 YCbCr streams.
    const directories = await directoriesOf(pyramidFile);
    expect(directories).toHaveLength(10);
    for (const d of directories) {
      expect(d.tileOffsets.length).toBe(Math.ceil(d.width / 256) * Math.ceil(d.height / 256));
      expect([...d.tileByteCounts].every((n) => n > 0)).toBe(true);
      expect(d.jpegTables?.equals(directories[0]!.jpegTables!)).toBe(true);
    }
  });

  it('level 0 and the smallest level decode to the source colours', async () => {
    const regions = [
      { left: 0, top: 0, width: 512, height: 512 },
      { left: 32_768 - 256, top: 88, width: 512, height: 512 },
      { left: WIDTH - 512, top: HEIGHT - 512, width: 512, height: 512 },
    ];
    // (sharp's stats() would decode the whole 70 000 px level for each region: means of raw regions instead.)
    for (const region of regions) {
      const a = meanOf(source, WIDTH, region.left, region.top, region.left + region.width, region.top + region.height);
      const pixels = await sharp(pyramidFile, { page: 0, limitInputPixels: false }).extract(region).raw().toBuffer();
      const b = meanOf(pixels, region.width, 0, 0, region.width, region.height);
      for (let c = 0; c < 3; c++)
        expect(Math.abs(a[c]! - b[c]!), `channel ${c} of ${JSON.stringify(region)}`).toBeLessThan(2.5);
    }
    const all = meanOf(source, WIDTH, 0, 0, WIDTH, HEIGHT);
    const top = await sharp(pyramidFile, { page: maxTmsZoom(WIDTH, HEIGHT) })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const topMean = meanOf(top.data, top.info.width, 0, 0, top.info.width, top.info.height);
    for (let c = 0; c < 3; c++) expect(Math.abs(all[c]! - topMean[c]!)).toBeLessThan(3);
  }, 60_000);

  it('serves every tile of every zoom through the tile server, each a 256-px JPEG of its source region', async () => {
    const grant = await createTileGrant(t.database.db, SESSION_SECRET);
    const token = new TileTokens(SESSION_SECRET).issue(imageId, grant, 600);
    const boxMean = sourceBoxes(source, WIDTH, HEIGHT);
    const sizes = pyramidLevelSizes(WIDTH, HEIGHT);
    const maxZoom = maxTmsZoom(WIDTH, HEIGHT);
    let worst = 0;
    let total = 0;
    let count = 0;
    for (const [k, size] of sizes.entries()) {
      const z = maxZoom - k;
      const scale = 2 ** k;
      for (let y = 0; y < Math.ceil(size.height / 256); y++) {
        for (let x = 0; x < Math.ceil(size.width / 256); x++) {
          const response = await t.app.inject({
            method: 'GET',
            url: `/tiles/${imageId}/${z}/${x}/${y}?t=${encodeURIComponent(token)}`,
          });
          expect(response.statusCode, `z${z} ${x},${y}`).toBe(200);
          expect(response.headers['content-type']).toBe('image/jpeg');
          const body = response.rawPayload;
          expect([...body.subarray(0, 2)]).toEqual([0xff, 0xd8]);
          expect(readJpegFrame(body)?.sampling).toEqual([
            [2, 2],
            [1, 1],
            [1, 1],
          ]);
          const decoded = await sharp(body).raw().toBuffer({ resolveWithObject: true });
          expect([decoded.info.width, decoded.info.height, decoded.info.channels]).toEqual([256, 256, 3]);
          const validW = Math.min(256, size.width - x * 256);
          const validH = Math.min(256, size.height - y * 256);
          const got = meanOf(decoded.data, 256, 0, 0, validW, validH);
          const want = boxMean(
            x * 256 * scale,
            (x * 256 + validW) * scale,
            y * 256 * scale,
            Math.min(HEIGHT, (y * 256 + validH) * scale),
          );
          const error = Math.max(...got.map((g, c) => Math.abs(g - want[c]!)));
          worst = Math.max(worst, error);
          total += error;
          count++;
        }
      }
    }
    expect(count).toBe(822 + 274 + 69 + 35 + 18 + 9 + 5 + 3 + 2 + 1);
    expect(worst).toBeLessThan(4);
    expect(total / count).toBeLessThan(1.5);
  }, 120_000);
});

describe('the block writer', () => {
  it('writes BigTIFF when the tile data passes 4 GiB (a sparse file: the writer skips ahead)', async () => {
    const file = path.join(dir, 'past-4-gib.tif');
    const writer = await TiledJpegTiffWriter.create(file, { tileSize: 256, levels: [{ width: 512, height: 256 }] });
    writer.setCoding({ photometric: 6, subsampling: [2, 2], tables: null });
    const tile = Buffer.from([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
    await writer.writeTiles([{ level: 0, index: 0, data: tile }]);
    // As if 4 GiB of tiles had been written since (the file stays sparse).
    (writer as unknown as { position: number }).position = 2 ** 32 + 1024;
    await writer.writeTiles([{ level: 0, index: 1, data: tile }]);
    const result = await writer.finish();
    expect(result.bigtiff).toBe(true);
    const [level] = await directoriesOf(file);
    expect([...level!.tileOffsets]).toEqual([16, 2 ** 32 + 1024]);
    expect([...level!.tileByteCounts]).toEqual([tile.length, tile.length]);
    await rm(file, { force: true });
  });

  it('cuts an axis into blocks of 256 x 2^m, merging a remainder too small to reach level m', () => {
    expect(splitAxis(70_000, 32_768)).toEqual([
      { start: 0, size: 32_768 },
      { start: 32_768, size: 37_232 },
    ]);
    expect(splitAxis(115_440, 32_768)).toEqual([
      { start: 0, size: 32_768 },
      { start: 32_768, size: 32_768 },
      { start: 65_536, size: 32_768 },
      { start: 98_304, size: 17_136 },
    ]);
    expect(splitAxis(65_536, 32_768)).toEqual([
      { start: 0, size: 32_768 },
      { start: 32_768, size: 32_768 },
    ]);
    expect(splitAxis(600, 32_768)).toEqual([{ start: 0, size: 600 }]);
    // No block is larger than sharp writes.
    for (let length = 65_536; length < 400_000; length += 997) {
      for (const span of splitAxis(length, 32_768)) expect(span.size).toBeLessThanOrEqual(SHARP_JPEG_TIFF_MAX);
    }
  });

  it('gives maxTmsZoom + 1 levels even where halving stops a level early (1026 px → 4 levels)', () => {
    expect(pyramidLevelSizes(1026, 300)).toEqual([
      { width: 1026, height: 300 },
      { width: 513, height: 150 },
      { width: 256, height: 75 },
      { width: 128, height: 37 },
    ]);
    expect(pyramidLevelSizes(16, 16)).toEqual([{ width: 16, height: 16 }]);
  });

  it('writes a slide where libvips would stop a level short (1026 x 300) with the block writer: zoom 0 has a level', async () => {
    expect(libvipsPyramidLevels(1026, 300)).toBe(3);
    expect(libvipsPyramidLevels(2220, 2967)).toBe(maxTmsZoom(2220, 2967) + 1);
    const source = path.join(dir, 'short.tif');
    const target = path.join(dir, 'short-pyramid.tif');
    await sharp(CMU)
      .extract({ left: 0, top: 1000, width: 1026, height: 300 })
      .removeAlpha()
      .tiff({ tile: true, tileWidth: 256, tileHeight: 256, compression: 'jpeg', quality: 90 })
      .toFile(source);
    await buildPyramid(source, target, describeSlide(await readTiffStructure(source)));
    const structure = await readTiffStructure(target);
    expect(structure.ifds.map((d) => [d.width, d.height])).toEqual(
      pyramidLevelSizes(1026, 300).map((l) => [l.width, l.height]),
    );
    const index = buildPyramidIndex(await directoriesOf(target), 'short');
    expect(index.byZoom.map((level) => level?.width ?? null)).toEqual([128, 256, 513, 1026]);
    const top = await sharp(target, { page: 3 }).raw().toBuffer({ resolveWithObject: true });
    const all = await sharp(source).raw().toBuffer({ resolveWithObject: true });
    const a = meanOf(all.data, 1026, 0, 0, 1024, 296);
    const b = meanOf(top.data, top.info.width, 0, 0, 128, 37);
    for (let c = 0; c < 3; c++) expect(Math.abs(a[c]! - b[c]!)).toBeLessThan(3);
  });

  it('writes the same pyramid as one tiffsave: identical tiles where blocks give them, the small levels within JPEG noise', async () => {
    const info = describeSlide(await readTiffStructure(CMU));
    const whole = path.join(dir, 'whole.tif');
    const blocks = path.join(dir, 'blocks.tif');
    const fractions: number[] = [];
    await buildPyramid(CMU, whole, info, undefined, { writer: 'tiffsave' });
    // 1024-px blocks: levels 0..2 from 6 blocks (2 x 3; the 172-px rest of the width merged), 3..4 from level 2.
    await buildPyramid(CMU, blocks, info, (f) => fractions.push(f), { writer: 'blocks', blockSize: 1024 });
    expect(fractions.length).toBeGreaterThan(0);
    expect(fractions.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= fractions[i - 1]!))).toBe(true);
    expect(fractions.at(-1)).toBe(1);
    expect(existsSync(`${blocks}.parts`)).toBe(false);

    const a = await directoriesOf(whole);
    const b = await directoriesOf(blocks);
    expect(b.map((d) => [d.width, d.height])).toEqual(a.map((d) => [d.width, d.height]));
    expect(b[0]!.jpegTables!.equals(a[0]!.jpegTables!)).toBe(true);
    const { read: readA, close: closeA } = await reader(whole);
    const { read: readB, close: closeB } = await reader(blocks);
    try {
      for (let k = 0; k <= 2; k++) {
        for (let i = 0; i < a[k]!.tileOffsets.length; i++) {
          const tileA = await readA(a[k]!.tileOffsets[i]!, a[k]!.tileByteCounts[i]!);
          const tileB = await readB(b[k]!.tileOffsets[i]!, b[k]!.tileByteCounts[i]!);
          expect(tileB.equals(tileA), `level ${k} tile ${i}`).toBe(true);
        }
      }
    } finally {
      await closeA();
      await closeB();
    }
    for (let k = 3; k < a.length; k++) {
      const x = await sharp(whole, { page: k }).raw().toBuffer();
      const y = await sharp(blocks, { page: k }).raw().toBuffer();
      let sum = 0;
      for (let i = 0; i < x.length; i++) sum += Math.abs(x[i]! - y[i]!);
      expect(sum / x.length, `level ${k}`).toBeLessThan(3);
    }
  }, 60_000);

  it('writes BigTIFF (LONG8 offsets) that libvips and the tile server read alike', async () => {
    const file = path.join(dir, 'big.tif');
    await writeBlockPyramid(() => sharp(CMU).removeAlpha(), file, {
      width: 2220,
      height: 2967,
      quality: 85,
      blockSize: 1024,
      bigtiff: true,
    });
    const structure = await readTiffStructure(file);
    expect(structure.bigTiff).toBe(true);
    expect(structure.ifds.map((d) => d.width)).toEqual([2220, 1110, 555, 277, 138]);
    const directories = await directoriesOf(file);
    expect(directories.map((d) => d.tileOffsets.length)).toEqual([108, 30, 9, 4, 1]);
    const a = await sharp(CMU).removeAlpha().stats();
    const b = await sharp(file).stats();
    for (let c = 0; c < 3; c++) expect(Math.abs(a.channels[c]!.mean - b.channels[c]!.mean)).toBeLessThan(1);
  }, 60_000);

  it('fails a slide whose pixels do not decode, leaving no file behind', async () => {
    const broken = path.join(WSI_DIR, 'invalid/unreadable.svs');
    const target = path.join(dir, 'broken.tif');
    const info = describeSlide(await readTiffStructure(broken));
    await expect(buildPyramid(broken, target, info, undefined, { writer: 'blocks', blockSize: 512 })).rejects.toThrow(
      DecodeError,
    );
    expect(existsSync(target)).toBe(false);
    expect(existsSync(`${target}.parts`)).toBe(false);
  });
});
