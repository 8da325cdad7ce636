import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MESSAGES, maxTmsZoom } from '@lamina/domain';
import { processImage, type ProcessingDeps } from '../src/modules/processing/processImage.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { describeSlide, mppFromResolution } from '../src/modules/processing/slideInfo.js';
import {
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';

/** Every test slide and what the pipeline must make of it (testdata README). */
interface Expected {
  file: string;
  status: string;
  message?: string | RegExp;
  width?: number;
  height?: number;
  levels?: number;
  mpp?: number | null;
  objectivePower?: number | null;
  label?: [number, number];
  macro?: [number, number];
  sha256?: string;
}

const EXPECTED: Expected[] = [
  {
    file: 'CMU-1-Small-Region.svs',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 2220,
    height: 2967,
    levels: 1,
    mpp: 0.499,
    objectivePower: 20,
    label: [387, 463],
    macro: [1280, 431],
    sha256: 'ed92d5a9f2e86df67640d6f92ce3e231419ce127131697fbbce42ad5e002c8a7',
  },
  {
    // JPEG 2000 tiles (Aperio 33005), decoded by the worker's OpenJPEG; the file names no MPP.
    file: 'tcga-cr-7395-01a-01-ts1.svs',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 4443,
    height: 3567,
    levels: 2,
    mpp: null,
    objectivePower: null,
  },
  {
    file: 'small.svs',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 16,
    height: 16,
    levels: 1,
    mpp: 0.499,
    objectivePower: 20,
  },
  {
    file: 'boxes.tiff',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 300,
    height: 250,
    levels: 4,
    mpp: null,
    objectivePower: null,
  },
  {
    file: 'derived/CMU-1-Small-Region_generic-jpeg-256.tiff',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 2220,
    height: 2967,
    levels: 5,
    mpp: 0.499,
    objectivePower: null,
  },
  {
    file: 'derived/CMU-1-Small-Region_bigtiff-deflate-512.tif',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 2220,
    height: 2967,
    levels: 4,
    mpp: 0.499,
  },
  {
    file: 'derived/CMU-1-Small-Region_plain-strips-lzw.tif',
    status: 'CASE_ASSIGNMENT_PENDING',
    width: 2220,
    height: 2967,
    levels: 1,
    mpp: 0.499,
  },
  { file: 'invalid/unreadable.svs', status: 'FAIL_PROCESSING', message: /could not be decoded.*Bogus marker length/ },
  { file: 'invalid/unopenable.tiff', status: 'FAIL_PROCESSING', message: 'Unsupported TIFF compression 52479' },
  { file: 'README.md', status: 'FAIL_PROCESSING', message: new RegExp(`^${IMAGE_MESSAGES.notATiff}`) },
];

let t: SlideTestContext;
let deps: ProcessingDeps;
let studyId: number;
const results = new Map<string, number>();

async function processFile(file: string, study: number, uploadName?: string): Promise<number> {
  const key = await putUpload(t.app.slides.storage, study, path.join(WSI_DIR, file), uploadName ?? path.basename(file));
  const { id } = await createUploadedImage(t.database.db, { studyId: study, s3Key: key });
  await processImage(deps, id);
  return id;
}

async function imageRow(id: number) {
  return t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

beforeAll(async () => {
  t = await createSlideTestApp();
  deps = { db: t.database.db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') };
  studyId = (await createStudy(t.database.db)).id;
  for (const e of EXPECTED) {
    // README.md goes in as a '.svs': validation is by content, not by name.
    results.set(e.file, await processFile(e.file, studyId, e.file === 'README.md' ? 'not-a-slide.svs' : undefined));
  }
}, 120_000);

afterAll(async () => {
  await t.close();
});

describe('every test slide through the pipeline', () => {
  it.each(EXPECTED)('$file → $status', async (e) => {
    const row = await imageRow(results.get(e.file)!);
    expect(row.status).toBe(e.status);
    if (e.status === 'FAIL_PROCESSING') {
      expect(row.processing_status).toBe('FAIL');
      expect(row.cog_key).toBeNull();
      if (typeof e.message === 'string') expect(row.status_message).toBe(e.message);
      else expect(row.status_message).toMatch(e.message!);
      return;
    }
    expect(row.processing_status).toBe('SUCCESS');
    expect(row.processing_progress).toBe(100);
    expect(row.cog_key).toBe(`images/${row.id}/pyramid.tif`);
    expect(row.status_message).toBeNull();
    expect([row.width, row.height, row.levels]).toEqual([e.width, e.height, e.levels]);
    if (e.mpp !== undefined) expect(row.mpp).toBe(e.mpp);
    if (e.objectivePower !== undefined) expect(row.objective_power).toBe(e.objectivePower);
    expect(row.z_stack_size).toBe(1);
    expect(row.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    if (e.sha256) expect(row.content_sha256).toBe(e.sha256);
    expect(row.label_key !== null).toBe(e.label !== undefined);
    expect(row.macro_key !== null).toBe(e.macro !== undefined);

    // The pyramid: 256-px JPEG tiles, level 0 at full size, each level half of the one before,
    // down to the level that fits one tile (maxTmsZoom + 1 levels).
    const pyramid = await readTiffStructure(t.app.slides.storage.localPath!(row.cog_key!));
    const levels = pyramid.ifds;
    expect(levels).toHaveLength(maxTmsZoom(e.width!, e.height!) + 1);
    expect([levels[0]!.width, levels[0]!.height]).toEqual([e.width, e.height]);
    for (const [i, ifd] of levels.entries()) {
      expect(ifd.compression).toBe(7);
      expect([ifd.tileWidth, ifd.tileHeight]).toEqual([256, 256]);
      if (i > 0) expect(ifd.width).toBe(Math.max(1, Math.floor(levels[i - 1]!.width / 2)));
    }
  });

  it('label and macro images of the Aperio slide are stored as PNG and JPEG', async () => {
    const e = EXPECTED[0]!;
    const row = await imageRow(results.get(e.file)!);
    const label = await sharp(t.app.slides.storage.localPath!(row.label_key!)).metadata();
    expect([label.format, label.width, label.height]).toEqual(['png', ...e.label!]);
    const macro = await sharp(t.app.slides.storage.localPath!(row.macro_key!)).metadata();
    expect([macro.format, macro.width, macro.height]).toEqual(['jpeg', ...e.macro!]);
  });

  it.each(['CMU-1-Small-Region.svs', 'derived/CMU-1-Small-Region_bigtiff-deflate-512.tif', 'boxes.tiff'])(
    'pyramid level 0 of %s decodes to the source colours',
    async (file) => {
      const row = await imageRow(results.get(file)!);
      const pyramid = t.app.slides.storage.localPath!(row.cog_key!);
      const source = path.join(WSI_DIR, file);
      const w = Math.min(512, row.width!);
      const h = Math.min(512, row.height!);
      const regions = [
        { left: 0, top: 0, width: w, height: h },
        { left: row.width! - w, top: row.height! - h, width: w, height: h },
        { left: Math.floor((row.width! - w) / 2), top: Math.floor((row.height! - h) / 2), width: w, height: h },
      ];
      for (const region of regions) {
        const a = await sharp(source, { page: 0 }).extract(region).removeAlpha().stats();
        const b = await sharp(pyramid, { page: 0 }).extract(region).stats();
        for (let c = 0; c < 3; c++)
          expect(
            Math.abs(a.channels[c]!.mean - b.channels[c]!.mean),
            `channel ${c} of ${JSON.stringify(region)}`,
          ).toBeLessThan(2.5);
      }
      // Lower levels keep the colour too (the whole image against the smallest level).
      const all = await sharp(source, { page: 0 }).removeAlpha().stats();
      const top = await sharp(pyramid, { page: maxTmsZoom(row.width!, row.height!) }).stats();
      for (let c = 0; c < 3; c++) expect(Math.abs(all.channels[c]!.mean - top.channels[c]!.mean)).toBeLessThan(3);
    },
  );

  it('the Aperio RGB JPEG level 0 decodes with the colours of the lossless copy (no YCbCr mix-up)', async () => {
    const region = { left: 600, top: 900, width: 640, height: 640 };
    const svs = await sharp(path.join(WSI_DIR, 'CMU-1-Small-Region.svs'), { page: 0 }).extract(region).raw().toBuffer();
    const lossless = await sharp(path.join(WSI_DIR, 'derived/CMU-1-Small-Region_bigtiff-deflate-512.tif'))
      .extract(region)
      .raw()
      .toBuffer();
    let sum = 0;
    for (let i = 0; i < svs.length; i++) sum += Math.abs(svs[i]! - lossless[i]!);
    expect(sum / svs.length).toBeLessThan(1);
  });

  it('records the outcome in the audit trail as the worker', async () => {
    const ok = results.get('small.svs')!;
    const failed = results.get('invalid/unopenable.tiff')!;
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'entity_id', 'username', 'new_value', 'reason'])
      .where('entity_id', 'in', [String(ok), String(failed)])
      .where('entity_type', '=', 'image')
      .where('action', '!=', 'IMAGE_ORIGINAL_SEALED')
      .orderBy('id')
      .execute();
    expect(events).toEqual([
      {
        action: 'IMAGE_PROCESSED',
        entity_id: String(ok),
        username: 'worker',
        new_value: 'CASE_ASSIGNMENT_PENDING',
        reason: null,
      },
      {
        action: 'IMAGE_PROCESSING_FAILED',
        entity_id: String(failed),
        username: 'worker',
        new_value: 'FAIL_PROCESSING',
        reason: 'Unsupported TIFF compression 52479',
      },
    ]);
  });
});

describe('status decisions', () => {
  it('the same content again in the study is a duplicate; in another study it is not', async () => {
    const again = await imageRow(await processFile('small.svs', studyId));
    expect(again.status).toBe('DUPLICATE_IMAGE');
    expect(again.processing_status).toBe('SUCCESS');
    expect(again.cog_key).not.toBeNull();
    const other = (await createStudy(t.database.db)).id;
    expect((await imageRow(await processFile('small.svs', other))).status).toBe('CASE_ASSIGNMENT_PENDING');
  });

  it('an archived original does not make a new upload a duplicate', async () => {
    const study = (await createStudy(t.database.db)).id;
    const first = await processFile('small.svs', study);
    await t.database.db.updateTable('images').set({ status: 'ARCHIVED' }).where('id', '=', first).execute();
    expect((await imageRow(await processFile('small.svs', study))).status).toBe('CASE_ASSIGNMENT_PENDING');
  });

  it('an image without a study waits for study assignment', async () => {
    const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'small.svs'));
    const { id } = await createUploadedImage(t.database.db, { studyId: null, s3Key: key });
    await processImage(deps, id);
    expect((await imageRow(id)).status).toBe('STUDY_ASSIGNMENT_PENDING');
  });

  it('a missing upload fails with a reason; a processed or archived image is left alone', async () => {
    const { id } = await createUploadedImage(t.database.db, {
      studyId,
      s3Key: `uploads/${studyId}/00000000-0000-0000-0000-000000000000/gone.svs`,
    });
    await processImage(deps, id);
    const row = await imageRow(id);
    expect([row.status, row.processing_status, row.status_message]).toEqual([
      'FAIL_PROCESSING',
      'FAIL',
      IMAGE_MESSAGES.uploadNotFound,
    ]);

    const done = results.get('boxes.tiff')!;
    const before = await imageRow(done);
    await processImage(deps, done);
    expect((await imageRow(done)).updated_at).toEqual(before.updated_at);
  });
});

describe('slide metadata', () => {
  it('reads resolution tags in inches and centimetres, and ignores placeholder dpi', () => {
    expect(mppFromResolution({ xResolution: 20040.08, yResolution: 20040.08, resolutionUnit: 3 })).toBe(0.499);
    expect(mppFromResolution({ xResolution: 50_800, yResolution: 50_800, resolutionUnit: 2 })).toBe(0.5);
    expect(mppFromResolution({ xResolution: 72, yResolution: 72, resolutionUnit: 2 })).toBeNull();
    expect(mppFromResolution({ xResolution: 28.35, yResolution: 28.35, resolutionUnit: 3 })).toBeNull();
    expect(mppFromResolution({ xResolution: 5000, yResolution: 5000, resolutionUnit: 1 })).toBeNull();
  });

  it('detects a TIFF by content whatever its name, and BigTIFF by magic 43', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'lamina-tiff-'));
    try {
      const renamed = path.join(dir, 'slide.jpg');
      await copyFile(path.join(WSI_DIR, 'derived/CMU-1-Small-Region_bigtiff-deflate-512.tif'), renamed);
      const structure = await readTiffStructure(renamed);
      expect(structure.bigTiff).toBe(true);
      expect(describeSlide(structure)).toMatchObject({ format: 'generic-tiff', width: 2220, height: 2967, levels: 4 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
