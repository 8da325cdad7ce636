import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IMAGE_MESSAGES,
  processingTimedOut,
  slideDataTooSmall,
  slideSizeImpossible,
  slideTooLarge,
  TILE_SIZE,
} from '@lamina/domain';
import { processImage, type ProcessingDeps } from '../src/modules/processing/processImage.js';
import { buildPyramid } from '../src/modules/processing/pyramid.js';
import { describeSlide, SlideRejectedError } from '../src/modules/processing/slideInfo.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { Deadline } from '../src/modules/processing/deadline.js';
import {
  checkDecodedSlideLimits,
  checkSlideLimits,
  DEFAULT_SLIDE_LIMITS,
} from '../src/modules/processing/slideLimits.js';
import { imageKeys } from '../src/platform/storage/keys.js';
import {
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { craftTiff } from './support/slides.js';

/**
 * Issue 9, defects 4 and 5: pixel bombs and absurd sizes are refused before any decoder sees them,
 * on the first attempt (FAIL_PROCESSING with a clear message, no retry), and a job has a time budget.
 */
let t: SlideTestContext;
let deps: ProcessingDeps;
let studyId: number;
let dir: string;
let jpegTile: Buffer;

beforeAll(async () => {
  t = await createSlideTestApp();
  deps = { db: t.database.db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') };
  studyId = (await createStudy(t.database.db)).id;
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-bombs-'));
  jpegTile = await sharp(path.join(WSI_DIR, 'CMU-1-Small-Region.svs'))
    .extract({ left: 512, top: 512, width: TILE_SIZE, height: TILE_SIZE })
    .jpeg()
    .toBuffer();
}, 60_000);

afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

/** Uploads `bytes` as a slide and runs one processing attempt of three, as the first job would. */
async function processBytes(name: string, bytes: Buffer, overrides: Partial<ProcessingDeps> = {}) {
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  const key = await putUpload(t.app.slides.storage, studyId, file, name);
  const { id } = await createUploadedImage(t.database.db, { studyId, s3Key: key });
  // Not thrown: a permanent failure is not retried.
  await processImage({ ...deps, ...overrides }, id, { retryCount: 0, retryLimit: 3 });
  const row = await t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return row;
}

function expectRefused(
  row: { status: string; processing_status: string; status_message: string | null; cog_key: string | null; id: number },
  message: string,
) {
  expect(row.status).toBe('FAIL_PROCESSING');
  expect(row.processing_status).toBe('FAIL');
  expect(row.status_message).toBe(message);
  expect(row.cog_key).toBeNull();
  expect(existsSync(path.join(t.dataDir, 'storage', imageKeys.pyramid(row.id)))).toBe(false);
}

describe('pixel bombs are refused before decoding', () => {
  it('100 000 × 100 000 px whose 152 881 tile offsets all point at one tile (a 1.2 MB file)', async () => {
    const across = Math.ceil(100_000 / TILE_SIZE);
    const bytes = craftTiff({
      width: 100_000,
      height: 100_000,
      payload: jpegTile,
      tiles: Array.from({ length: across * across }, () => ({ offset: 8, byteCount: jpegTile.length })),
    });
    expect(bytes.length).toBeLessThan(1.5e6);
    expectRefused(await processBytes('shared.svs', bytes), IMAGE_MESSAGES.slideTilesShared);
  });

  it('400 000 × 400 000 px: above MAX_SLIDE_PIXELS (40 gigapixels by default)', async () => {
    const bytes = craftTiff({
      width: 400_000,
      height: 400_000,
      payload: jpegTile,
      tiles: [{ offset: 8, byteCount: jpegTile.length }],
    });
    expectRefused(
      await processBytes('huge.svs', bytes),
      slideTooLarge(400_000, 400_000, DEFAULT_SLIDE_LIMITS.maxPixels),
    );
  });

  it('the pixel limit is configurable', async () => {
    const cmu = await import('node:fs/promises').then((fs) =>
      fs.readFile(path.join(WSI_DIR, 'CMU-1-Small-Region.svs')),
    );
    const row = await processBytes('cmu.svs', cmu, { limits: { ...DEFAULT_SLIDE_LIMITS, maxPixels: 5_000_000 } });
    expectRefused(row, slideTooLarge(2220, 2967, 5_000_000));
    expect(row.status_message).toBe(
      'The slide is too large to process: 2220 × 2967 px is 0.007 gigapixels, above the limit of 0.005 gigapixels',
    );
  });

  it('distinct tiles of one byte each claiming 60 000 × 60 000 px: too many pixels per stored byte', async () => {
    const across = Math.ceil(60_000 / TILE_SIZE);
    const count = across * across;
    const bytes = craftTiff({
      width: 60_000,
      height: 60_000,
      payload: Buffer.alloc(count, 0xff),
      tiles: Array.from({ length: count }, (_, i) => ({ offset: 8 + i, byteCount: 1 })),
    });
    expectRefused(await processBytes('thin.svs', bytes), slideDataTooSmall(60_000 * 60_000, count));
  });

  it('tile data pointing outside the file', async () => {
    const bytes = craftTiff({
      width: 256,
      height: 256,
      payload: jpegTile,
      tiles: [{ offset: 8, byteCount: 10_000_000 }],
    });
    expectRefused(await processBytes('outside.svs', bytes), IMAGE_MESSAGES.slideDataOutsideFile);
  });

  it('a real slide passes the same checks', async () => {
    for (const file of [
      'CMU-1-Small-Region.svs',
      'small.svs',
      'boxes.tiff',
      'derived/CMU-1-Small-Region_generic-jpeg-256.tiff',
      'derived/CMU-1-Small-Region_bigtiff-deflate-512.tif',
      'derived/CMU-1-Small-Region_plain-strips-lzw.tif',
    ]) {
      const structure = await readTiffStructure(path.join(WSI_DIR, file));
      const { size } = await stat(path.join(WSI_DIR, file));
      expect(() => checkSlideLimits(structure, size, DEFAULT_SLIDE_LIMITS), file).not.toThrow();
    }
  });
});

describe('absurd sizes (defect 5)', () => {
  it('4294967295 × 4294967295 fails at once with a message for people, not the database error', async () => {
    const bytes = craftTiff({
      width: 4_294_967_295,
      height: 4_294_967_295,
      payload: jpegTile,
      tiles: [{ offset: 8, byteCount: jpegTile.length }],
    });
    const row = await processBytes('absurd.svs', bytes, {
      limits: { maxPixels: Infinity, maxPixelsPerByte: Infinity },
    });
    expectRefused(row, slideSizeImpossible(4_294_967_295, 4_294_967_295));
    expect(row.processing_attempts).toBe(1);
  });
});

describe('the time budget of a job', () => {
  it('a job over its budget fails with the time-limit message, not retried', async () => {
    const cmu = await import('node:fs/promises').then((fs) =>
      fs.readFile(path.join(WSI_DIR, 'CMU-1-Small-Region.svs')),
    );
    const row = await processBytes('slow.svs', cmu, { timeLimitSeconds: 0.001 });
    expectRefused(row, processingTimedOut(0.001));
  });

  it('the pyramid writer stops between blocks when the budget is spent, leaving nothing behind', async () => {
    const source = path.join(WSI_DIR, 'CMU-1-Small-Region.svs');
    const info = describeSlide(await readTiffStructure(source));
    const target = path.join(dir, 'budget.tif');
    const deadline = new Deadline(1, Date.now() - 5000);
    const error = await buildPyramid(source, target, info, undefined, {
      writer: 'blocks',
      blockSize: 512,
      deadline,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlideRejectedError);
    expect((error as Error).message).toBe(processingTimedOut(1));
    expect((await readdir(dir)).filter((f) => f.startsWith('budget'))).toEqual([]);
  });
});

describe('the limits of slides decoded by OpenSlide or the DICOM reader (issue 31)', () => {
  it('refuses an impossible size, a slide over MAX_SLIDE_PIXELS, and more pixels per uploaded byte than the limit', () => {
    const refusal = (width: number, height: number, bytes: number) => {
      try {
        checkDecodedSlideLimits(width, height, bytes, DEFAULT_SLIDE_LIMITS);
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(SlideRejectedError);
        return (error as Error).message;
      }
    };
    // The NDPI test slide: 3968 x 4864 px in 3 544 235 bytes (5 pixels a byte).
    expect(refusal(3968, 4864, 3_544_235)).toBeNull();
    expect(refusal(0, 4864, 3_544_235)).toBe(slideSizeImpossible(0, 4864));
    expect(refusal(2 ** 31, 10, 3_544_235)).toBe(slideSizeImpossible(2 ** 31, 10));
    expect(refusal(300_000, 300_000, 1e9)).toBe(slideTooLarge(300_000, 300_000, DEFAULT_SLIDE_LIMITS.maxPixels));
    expect(refusal(100_000, 100_000, 1_000_000)).toBe(slideDataTooSmall(1e10, 1_000_000));
  });
});
