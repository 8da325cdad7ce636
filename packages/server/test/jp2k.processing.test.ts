import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxTmsZoom } from '@lamina/domain';
import { startProcessingHarness, type ProcessingHarness } from './support/processingHarness.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { openslideRegion, worstServedTileDifference, type RgbImage } from './support/openslide.js';
import { createTileGrant, WSI_DIR, type SlideTestContext } from './factories.js';

/**
 * A JPEG 2000 slide through the worker and the tile server (issue 18): the TCGA test slide
 * (Aperio 33005) processes to a pyramid whose served level-0 tiles have OpenSlide's colours, and
 * a slide with a damaged tile fails with a message naming it.
 */

const TCGA = path.join(WSI_DIR, 'tcga-cr-7395-01a-01-ts1.svs');
const SESSION_SECRET = 'test-secret';

let h: ProcessingHarness;
let t: SlideTestContext;
let work: string;

beforeAll(async () => {
  h = await startProcessingHarness({ SESSION_SECRET });
  t = h.t;
  work = await mkdtemp(path.join(tmpdir(), 'lamina-jp2k-processing-'));
}, 60_000);

afterAll(async () => {
  await h?.close();
  await rm(work, { recursive: true, force: true });
});

const processFile = (file: string, name: string) => h.processFile(file, name);
const imageRow = (id: number) => h.imageRow(id);

describe('the TCGA JPEG 2000 slide through the worker', () => {
  let id: number;
  let reference: RgbImage;

  beforeAll(async () => {
    [id, reference] = await Promise.all([processFile(TCGA, 'tcga.svs'), openslideRegion(TCGA)]);
  }, 60_000);

  it('processes to SUCCESS with its size, levels and compression', async () => {
    const row = await imageRow(id);
    expect(row).toMatchObject({
      status: 'CASE_ASSIGNMENT_PENDING',
      processing_status: 'SUCCESS',
      processing_progress: 100,
      status_message: null,
      width: 4443,
      height: 3567,
      levels: 2,
      mpp: null,
      source_format: 'aperio',
      source_compression: 33005,
      cog_key: `images/${id}/pyramid.tif`,
    });
    const pyramid = await readTiffStructure(t.app.slides.storage.localPath!(row.cog_key!));
    expect(pyramid.ifds).toHaveLength(maxTmsZoom(4443, 3567) + 1);
  });

  it('every full-resolution tile the tile server sends has OpenSlide’s colours (mean absolute difference ≤ 3 per channel)', async () => {
    const grant = await createTileGrant(t.database.db, SESSION_SECRET);
    const token = new TileTokens(SESSION_SECRET).issue(id, grant, 600);
    const z = maxTmsZoom(4443, 3567);
    const { worst, tiles } = await worstServedTileDifference(reference, async (x, y) => {
      const response = await t.app.inject({
        method: 'GET',
        url: `/tiles/${id}/${z}/${x}/${y}?t=${encodeURIComponent(token)}`,
      });
      expect(response.statusCode, `tile ${x},${y}`).toBe(200);
      expect(response.headers['content-type']).toBe('image/jpeg');
      return response.rawPayload;
    });
    expect(tiles).toBe(18 * 14);
    for (const v of worst) expect(v).toBeLessThanOrEqual(3);
  }, 60_000);
});

describe('a JPEG 2000 slide with a damaged tile', () => {
  it('fails processing (FAIL_PROCESSING) with a message naming the tile, audited', async () => {
    const bytes = await readFile(TCGA);
    const base = (await readTiffStructure(TCGA)).ifds[0]!;
    const tile = 3 * 18 + 11;
    const offset = base.data!.offsets[tile]!;
    bytes.fill(0xff, offset + 40, offset + 120);
    const file = path.join(work, 'damaged.svs');
    await writeFile(file, bytes);
    const id = await processFile(file, 'damaged.svs');
    const row = await imageRow(id);
    expect(row.status).toBe('FAIL_PROCESSING');
    expect(row.processing_status).toBe('FAIL');
    expect(row.cog_key).toBeNull();
    expect(row.status_message).toMatch(
      new RegExp(
        `^The JPEG 2000 data of tile ${tile} \\(column 11, row 3\\) of level 0 could not be decoded \\(.+\\)$`,
      ),
    );
    expect(await h.failureAuditReason(id)).toBe(row.status_message);
  }, 30_000);
});
