import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { zipSync } from 'fflate';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxTmsZoom } from '@lamina/domain';
import { startProcessingHarness, type ProcessingHarness } from './support/processingHarness.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { TileTokens } from '../src/platform/tiles/tileToken.js';
import { blockMeans, DICOM_FIXTURES, dicomReference, differences } from './support/dicomReference.js';
import { createTileGrant, WSI_DIR, type SlideTestContext } from './factories.js';

/**
 * DICOM WSI through the worker and the tile server (issue 31): a series uploaded as a `.zip` of its
 * instances, or as one `.dcm`, processes to SUCCESS with what the DICOM says, and the level-0 tiles
 * served match an independent decode of its frames (DCMTK; fixtures/dicom/README.md). Refusals of
 * an archive of two series and of a non-WSI DICOM reach the image's status, audited.
 */

const SESSION_SECRET = 'test-secret';
let h: ProcessingHarness;
let t: SlideTestContext;

beforeAll(async () => {
  h = await startProcessingHarness({ SESSION_SECRET });
  t = h.t;
}, 60_000);

afterAll(async () => {
  await h?.close();
});

const processFile = (file: string, name: string) => h.processFile(file, name);
const imageRow = (id: number) => h.imageRow(id);

async function seriesFiles(folder: string): Promise<string[]> {
  return (await readdir(path.join(DICOM_FIXTURES, folder))).sort().map((f) => path.join(DICOM_FIXTURES, folder, f));
}

/** A zip of files (their base names), as a user's archive of a series. */
async function zipOf(files: string[], name: string): Promise<string> {
  const entries: Record<string, Uint8Array> = {};
  for (const file of files) entries[`series/${path.basename(file)}`] = await readFile(file);
  const target = path.join(t.dataDir, name);
  await writeFile(target, zipSync(entries, { level: 0 }));
  return target;
}

describe('a DICOM series zipped (Orthanc’s JPEG baseline, 3 instances)', () => {
  let id: number;

  beforeAll(async () => {
    id = await processFile(await zipOf(await seriesFiles('orthanc-jpeg'), 'jpeg-series.zip'), 'jpeg-series.zip');
  }, 60_000);

  it('processes to SUCCESS with the size, levels and µm per pixel of the DICOM', async () => {
    const row = await imageRow(id);
    expect(row).toMatchObject({
      processing_status: 'SUCCESS',
      status_message: null,
      width: 900,
      height: 900,
      levels: 3,
      mpp: 0.499,
      source_format: 'dicom',
      source_compression: null,
      label_key: null,
      macro_key: null,
    });
    const pyramid = await readTiffStructure(t.app.slides.storage.localPath!(row.cog_key!));
    expect(pyramid.ifds).toHaveLength(maxTmsZoom(900, 900) + 1);
  });

  it('serves level 0 as DCMTK decodes the frames: 8-px block means within 2 grey levels on average', async () => {
    const token = new TileTokens(SESSION_SECRET).issue(id, await createTileGrant(t.database.db, SESSION_SECRET), 600);
    const z = maxTmsZoom(900, 900);
    const tiles = [];
    for (let y = 0; y < 4; y++)
      for (let x = 0; x < 4; x++) {
        const response = await t.app.inject({ url: `/tiles/${id}/${z}/${x}/${y}?t=${encodeURIComponent(token)}` });
        expect(response.statusCode, `tile ${x},${y}`).toBe(200);
        tiles.push({ input: response.rawPayload, left: x * 256, top: y * 256 });
      }
    // Composited, then cut to the slide (sharp extracts before it composites within one pipeline).
    const whole = await sharp({ create: { width: 1024, height: 1024, channels: 3, background: '#ffffff' } })
      .composite(tiles)
      .png()
      .toBuffer();
    const data = await sharp(whole)
      .extract({ left: 0, top: 0, width: 900, height: 900 })
      .removeAlpha()
      .raw()
      .toBuffer();
    const { mean } = differences(
      blockMeans({ data, width: 900, height: 900 }, 8),
      await dicomReference('orthanc-jpeg-level0-block8.png'),
    );
    for (const m of mean) expect(m).toBeLessThan(2);
  }, 60_000);
});

describe('one .dcm file', () => {
  it('a single-instance series (level 0 of Orthanc’s uncompressed series) processes to SUCCESS', async () => {
    const [level0] = await seriesFiles('orthanc-native');
    const id = await processFile(level0!, 'native-level0.dcm');
    expect(await imageRow(id)).toMatchObject({
      processing_status: 'SUCCESS',
      width: 320,
      height: 320,
      levels: 1,
      source_format: 'dicom',
    });
  }, 30_000);

  it('a DICOM that is not a whole slide image fails with the reason, audited', async () => {
    const id = await processFile(
      path.join(DICOM_FIXTURES, 'img2dcm', 'cmu-small-secondary-capture.dcm'),
      'secondary-capture.dcm',
    );
    const row = await imageRow(id);
    expect(row.processing_status).toBe('FAIL');
    expect(row.status_message).toBe(
      'secondary-capture.dcm is not a whole slide image (SOP class 1.2.840.10008.5.1.4.1.1.7, expected VL Whole Slide Microscopy Image Storage 1.2.840.10008.5.1.4.1.1.77.1.6)',
    );
    expect(await h.failureAuditReason(id)).toBe(row.status_message);
  }, 30_000);
});

describe('a name that promises what the content is not', () => {
  it('a TIFF named .zip or .dcm fails saying what it is not', async () => {
    const svs = path.join(WSI_DIR, 'small.svs');
    expect((await imageRow(await processFile(svs, 'slide.zip'))).status_message).toBe('slide.zip is not a zip archive');
    expect((await imageRow(await processFile(svs, 'slide.dcm'))).status_message).toBe(
      'slide.dcm is not a DICOM file (no DICM preamble)',
    );
  }, 30_000);
});

describe('an archive of two series', () => {
  it('fails naming both series', async () => {
    const files = [
      ...(await seriesFiles('orthanc-jpeg')).slice(0, 1),
      ...(await seriesFiles('orthanc-native')).slice(0, 1),
    ];
    const id = await processFile(await zipOf(files, 'two.zip'), 'two-series.zip');
    const row = await imageRow(id);
    expect(row.processing_status).toBe('FAIL');
    expect(row.status_message).toContain('cmu-crop-jpeg-00.dcm');
    expect(row.status_message).toContain('cmu-small-native-00.dcm');
  }, 30_000);
});
