import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { maxTmsZoom } from '@lamina/domain';
import { processImage, type ProcessingDeps } from '../src/modules/processing/processImage.js';
import { startProcessingHarness, type ProcessingHarness } from './support/processingHarness.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { DEMO_STUDY_NAME } from '../src/modules/demo/demoSeed.js';
import { DEMO_VENDOR_SLIDE_NAME, ensureDemoVendorSlide } from '../src/modules/demo/demoVendorSlide.js';
import { openslideRegion, worstServedTileDifference } from './support/openslide.js';
import {
  createStudy,
  createTileGrant,
  createUploadedImage,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

/**
 * A vendor slide through the worker and the tile server (issue 31): the Hamamatsu NDPI test slide
 * (NanoZoomer, fluorescence, level 0 a single JPEG of 3968 x 4864 px — not tiled) is read with
 * OpenSlide into the serving pyramid; what the image row stores is what `openslide-show-properties`
 * says, and every full-resolution tile served has OpenSlide's pixels.
 */

const NDPI = path.join(WSI_DIR, 'test3-DAPI-2-387.ndpi');
const SESSION_SECRET = 'test-secret';
const WIDTH = 3968;
const HEIGHT = 4864;

let h: ProcessingHarness;
let t: SlideTestContext;
let deps: ProcessingDeps;
let studyId: number;

beforeAll(async () => {
  h = await startProcessingHarness({ SESSION_SECRET });
  ({ t, deps, studyId } = h);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

const processFile = (file: string, name: string) => h.processFile(file, name);
const imageRow = (id: number) => h.imageRow(id);

describe('the Hamamatsu NDPI slide through the worker', () => {
  let id: number;

  beforeAll(async () => {
    id = await processFile(NDPI, 'test3-DAPI-2-387.ndpi');
  }, 60_000);

  it('processes to SUCCESS with the size, levels, µm per pixel and objective OpenSlide reports', async () => {
    const row = await imageRow(id);
    expect(row).toMatchObject({
      status: 'CASE_ASSIGNMENT_PENDING',
      processing_status: 'SUCCESS',
      processing_progress: 100,
      status_message: null,
      width: WIDTH,
      height: HEIGHT,
      levels: 7, // openslide.level-count
      objective_power: 40, // openslide.objective-power
      source_format: 'hamamatsu', // openslide.vendor
      source_compression: null,
      cog_key: `images/${id}/pyramid.tif`,
    });
    expect(row.mpp).toBeCloseTo(0.228175, 6); // openslide.mpp-x 0.2281750559028887
    const pyramid = await readTiffStructure(t.app.slides.storage.localPath!(row.cog_key!));
    expect(pyramid.ifds).toHaveLength(maxTmsZoom(WIDTH, HEIGHT) + 1);
    expect(pyramid.ifds.map((ifd) => [ifd.width, ifd.height]).slice(0, 3)).toEqual([
      [WIDTH, HEIGHT],
      [WIDTH / 2, HEIGHT / 2],
      [WIDTH / 4, HEIGHT / 4],
    ]);
    // The resolution tags carry the µm per pixel (pixels per centimetre).
    expect(pyramid.ifds[0]!.resolutionUnit).toBe(3);
    expect(10_000 / pyramid.ifds[0]!.xResolution!).toBeCloseTo(0.228175, 5);
  });

  it('keeps the macro image (OpenSlide\'s associated "macro", 1188 x 406) and has no label', async () => {
    const row = await imageRow(id);
    expect(row.label_key).toBeNull();
    expect(row.macro_key).toBe(`images/${id}/macro.jpg`);
    const macro = await sharp(t.app.slides.storage.localPath!(row.macro_key!)).metadata();
    expect([macro.format, macro.width, macro.height]).toEqual(['jpeg', 1188, 406]);
  });

  it('every full-resolution tile the tile server sends has OpenSlide’s pixels (channel means within 1, mean absolute difference ≤ 6)', async () => {
    const reference = await openslideRegion(NDPI);
    expect([reference.width, reference.height]).toEqual([WIDTH, HEIGHT]);
    const token = new TileTokens(SESSION_SECRET).issue(id, await createTileGrant(t.database.db, SESSION_SECRET), 600);
    const z = maxTmsZoom(WIDTH, HEIGHT);
    const { worst, worstMeanShift, tiles } = await worstServedTileDifference(reference, async (x, y) => {
      const response = await t.app.inject({
        method: 'GET',
        url: `/tiles/${id}/${z}/${x}/${y}?t=${encodeURIComponent(token)}`,
      });
      expect(response.statusCode, `tile ${x},${y}`).toBe(200);
      return response.rawPayload;
    });
    expect(tiles).toBe(Math.ceil(WIDTH / 256) * Math.ceil(HEIGHT / 256));
    // Tiles are JPEG at quality 85 with 4:2:0 chroma, as for every JPEG slide (pyramid.ts): on this
    // fluorescence scan (blue signal on black) the blue channel's per-pixel error is the largest
    // (worst tile 5.2), while each tile's channel means stay within a fraction of a grey level.
    for (const v of worstMeanShift) expect(v).toBeLessThanOrEqual(1);
    for (const v of worst) expect(v).toBeLessThanOrEqual(6);
  }, 60_000);
});

describe('a vendor slide on a machine without OpenSlide', () => {
  it('offers and accepts no OpenSlide format, and a job that meets one fails naming the package, audited', async () => {
    // A fresh module graph whose OpenSlide loader finds no library (the library is loaded once per process).
    vi.resetModules();
    vi.stubEnv('OPENSLIDE_LIBRARY', '/nonexistent/libopenslide.so.0');
    try {
      const fresh = await import('../src/modules/processing/processImage.js');
      const formats = await import('../src/platform/openslide/slideFormats.js');
      // What GET /api/config offers and the upload routes accept (their one rule).
      expect(formats.serverImageExtensions()).toEqual(['.svs', '.tif', '.tiff', '.dcm', '.zip']);
      expect(formats.imageFileNameError('scan.svs')).toBeNull();
      expect(formats.imageFileNameError('series.zip')).toBeNull();
      expect(formats.imageFileNameError('scan.ndpi')).toBe(
        'scan.ndpi: Hamamatsu NDPI slides are read with OpenSlide, which is not installed on the server (Debian/Ubuntu: apt-get install libopenslide0; macOS: brew install openslide)',
      );
      const key = await putUpload(t.app.slides.storage, studyId, NDPI, 'no-openslide.ndpi');
      const { id } = await createUploadedImage(t.database.db, { studyId, s3Key: key });
      await fresh.processImage(deps, id);
      const row = await imageRow(id);
      expect(row.processing_status).toBe('FAIL');
      expect(row.status_message).toBe(
        'no-openslide.ndpi: Hamamatsu NDPI slides are read with OpenSlide, which is not installed on the server (Debian/Ubuntu: apt-get install libopenslide0; macOS: brew install openslide)',
      );
      expect(await h.failureAuditReason(id)).toBe(row.status_message);
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  }, 30_000);
});

describe('the demo’s slide of another scanner', () => {
  it('is the Hamamatsu test slide uploaded into the demo study once, and processes to SUCCESS', async () => {
    const { db } = t.database;
    expect(await ensureDemoVendorSlide({ db, storage: t.app.slides.storage, jobs: t.app.slides.jobs })).toEqual({
      made: false,
      why: 'no demo study',
    });
    await createStudy(db, DEMO_STUDY_NAME);
    const slides = { db, storage: t.app.slides.storage, jobs: t.app.slides.jobs };
    expect(await ensureDemoVendorSlide(slides, path.join(WSI_DIR, 'no-such-slide.ndpi'))).toEqual({
      made: false,
      why: 'no test data',
    });
    const outcome = await ensureDemoVendorSlide(slides);
    if (!outcome.made) throw new Error(`not made: ${outcome.why}`);
    expect(await ensureDemoVendorSlide(slides)).toEqual({ made: false, why: 'exists' });
    await processImage(deps, outcome.id);
    expect(await imageRow(outcome.id)).toMatchObject({
      name: DEMO_VENDOR_SLIDE_NAME,
      processing_status: 'SUCCESS',
      source_format: 'hamamatsu',
      width: WIDTH,
      height: HEIGHT,
    });
  }, 60_000);
});
