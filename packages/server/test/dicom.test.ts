import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyramidLevelSizes, tileDirectories, writeDecodedPyramid } from '../src/modules/processing/blockPyramid.js';
import {
  DicomRejectedError,
  isDicomFile,
  openDicomSeries,
  type DicomSlide,
} from '../src/modules/processing/dicom/index.js';
import { SlideRejectedError } from '../src/modules/processing/slideInfo.js';
import { WSI_DIR } from './factories.js';
import {
  blockMeans,
  crop,
  DICOM_FIXTURES,
  dicomReference as reference,
  differences,
  type Rgb,
} from './support/dicomReference.js';

/**
 * The DICOM whole-slide reader (issue 31) on real WSI DICOM files (fixtures/dicom/README.md):
 * series written by Debian's Orthanc WSI dicomizer (JPEG 2000 with level 0 in a concatenation,
 * JPEG baseline, implicit VR native; per-frame positions) and a DCMTK img2dcm secondary capture.
 * TILED_FULL series (the Google converter's, highdicom's) were read once by hand and are not kept:
 * public repositories' data files are not committed here (docs/SLIDE-FORMATS.md). Pixels are
 * compared with reference/ — the same frames decoded
 * by DCMTK or pydicom + Pillow and placed by make_references.py, reduced to block means — and the
 * numbers of the info with dcmdump's.
 */

const FIXTURES = DICOM_FIXTURES;
const TILE = 256;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'lamina-dicom-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function filesOf(folder: string, root = FIXTURES): Promise<string[]> {
  return (await readdir(path.join(root, folder))).sort().map((f) => path.join(root, folder, f));
}

async function wholeLevel0(slide: DicomSlide): Promise<Rgb> {
  const { width, height } = slide;
  return { data: await slide.decodeRegion({ left: 0, top: 0, width, height }), width, height };
}

describe('isDicomFile', () => {
  it('knows a Part 10 file by its preamble and DICM, and nothing else', async () => {
    const [dicom] = await filesOf('orthanc-native');
    expect(isDicomFile((await readFile(dicom!)).subarray(0, 132))).toBe(true);
    expect(isDicomFile((await readFile(path.join(WSI_DIR, 'CMU-1-Small-Region.svs'))).subarray(0, 132))).toBe(false);
    expect(isDicomFile((await readFile(dicom!)).subarray(0, 131))).toBe(false);
  });
});

describe('Orthanc’s JPEG 2000 series (per-frame positions, level 0 in a concatenation of 2 files)', () => {
  it('reads as dcmdump shows it and decodes level 0 exactly as pydicom + Pillow (OpenJPEG), lossless', async () => {
    const slide = await openDicomSeries(await filesOf('orthanc-j2k'), { threads: 2 });
    try {
      expect(slide.info).toMatchObject({
        width: 900,
        height: 900,
        levels: 3,
        mpp: 0.499,
        transferSyntax: '1.2.840.10008.1.2.4.90',
        organization: 'TILED_SPARSE',
        tileWidth: 256,
        tileHeight: 256,
        photometric: 'YBR_FULL_422',
      });
      const { max } = differences(
        blockMeans(await wholeLevel0(slide), 8),
        await reference('orthanc-j2k-level0-block8.png'),
      );
      expect(max).toEqual([0, 0, 0]);
    } finally {
      await slide.close();
    }
  }, 60_000);

  it('leaves white where a sparse level has no frame (the second file of the concatenation left out)', async () => {
    const files = (await filesOf('orthanc-j2k')).filter((f) => !f.endsWith('-01.dcm'));
    const all = await openDicomSeries(await filesOf('orthanc-j2k'), { threads: 2 });
    const part = await openDicomSeries(files, { threads: 2 });
    try {
      // The first file holds frames 1-10: rows 1-2 and the first two tiles of row 3 (4 tiles a row).
      const kept = { left: 0, top: 0, width: 900, height: 512 };
      expect((await part.decodeRegion(kept)).equals(await all.decodeRegion(kept))).toBe(true);
      const gone = await part.decodeRegion({ left: 512, top: 512, width: 388, height: 388 });
      expect(gone.every((v) => v === 255)).toBe(true);
      const present = await all.decodeRegion({ left: 512, top: 512, width: 388, height: 388 });
      expect(present.every((v) => v === 255)).toBe(false);
    } finally {
      await all.close();
      await part.close();
    }
  }, 60_000);
});

describe('Orthanc’s JPEG baseline series (RGB frames with an Adobe marker, per-frame positions)', () => {
  let slide: DicomSlide;
  let level0: Rgb;

  beforeAll(async () => {
    slide = await openDicomSeries(await filesOf('orthanc-jpeg'));
    level0 = await wholeLevel0(slide);
  });

  afterAll(async () => {
    await slide.close();
  });

  it('reads as dcmdump shows it: 900 x 900, 3 sizes, 0.499 µm, 256-px frames', () => {
    expect(slide.info).toMatchObject({
      width: 900,
      height: 900,
      levels: 3,
      mpp: 0.499,
      opticalPaths: 1,
      focalPlanes: 1,
      transferSyntax: '1.2.840.10008.1.2.4.50',
      organization: 'TILED_SPARSE',
      tileWidth: 256,
      tileHeight: 256,
      photometric: 'RGB',
      seriesInstanceUid: '1.2.276.0.7230010.3.1.3.8323328.17851.1795796885.934525',
      hasLabel: false,
      hasOverview: false,
      notes: [],
    });
  });

  it('decodes level 0 as DCMTK does: 8-px block means within 1 grey level', async () => {
    const { mean, max } = differences(blockMeans(level0, 8), await reference('orthanc-jpeg-level0-block8.png'));
    for (const m of mean) expect(m).toBeLessThan(1);
    for (const m of max) expect(m).toBeLessThanOrEqual(2);
  });

  it('a region across frame edges is the same pixels as the whole level', async () => {
    const region = { left: 201, top: 97, width: 633, height: 700 };
    expect((await slide.decodeRegion(region)).equals(crop(level0, 201, 97, 633, 700))).toBe(true);
  });

  it('writes the serving pyramid: the levels and tiles pyramidLevelSizes gives, level 0 as the reference', async () => {
    const target = path.join(work, 'orthanc-jpeg.tif');
    const progress: number[] = [];
    await writeDecodedPyramid(slide, target, { quality: 90, blockSize: 512, onProgress: (f) => progress.push(f) });
    expect(progress.at(-1)).toBe(1);
    const sizes = pyramidLevelSizes(900, 900);
    const directories = await tileDirectories(target);
    expect(directories.map((d) => [d.width, d.height])).toEqual(sizes.map((s) => [s.width, s.height]));
    expect(directories.map((d) => d.tileOffsets.length)).toEqual(
      sizes.map((s) => Math.ceil(s.width / TILE) * Math.ceil(s.height / TILE)),
    );
    const { data, info } = await sharp(target, { page: 0 }).raw().toBuffer({ resolveWithObject: true });
    const written = blockMeans({ data, width: info.width, height: info.height }, 8);
    const { mean } = differences(written, await reference('orthanc-jpeg-level0-block8.png'));
    for (const m of mean) expect(m).toBeLessThan(2);
  }, 60_000);
});

describe('Orthanc’s uncompressed series (implicit VR little endian, 128-px frames over 320 px)', () => {
  it('reads as dcmdump shows it and decodes level 0 exactly as pydicom', async () => {
    const slide = await openDicomSeries(await filesOf('orthanc-native'));
    try {
      expect(slide.info).toMatchObject({
        width: 320,
        height: 320,
        levels: 3,
        mpp: 0.499,
        transferSyntax: '1.2.840.10008.1.2',
        tileWidth: 128,
        tileHeight: 128,
      });
      const { max } = differences(
        blockMeans(await wholeLevel0(slide), 2),
        await reference('orthanc-native-level0-block2.png'),
      );
      expect(max).toEqual([0, 0, 0]);
    } finally {
      await slide.close();
    }
  });
});

describe('refusals', () => {
  async function refusal(files: string[]): Promise<string> {
    const error = await openDicomSeries(files).then(
      async (slide) => {
        await slide.close();
        return null;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DicomRejectedError);
    expect(error).toBeInstanceOf(SlideRejectedError);
    return (error as Error).message;
  }

  it('a DICOM that is not a whole slide image (img2dcm’s secondary capture): names its SOP class', async () => {
    expect(await refusal([path.join(FIXTURES, 'img2dcm', 'cmu-small-secondary-capture.dcm')])).toBe(
      'cmu-small-secondary-capture.dcm is not a whole slide image (SOP class 1.2.840.10008.5.1.4.1.1.7, expected VL Whole Slide Microscopy Image Storage 1.2.840.10008.5.1.4.1.1.77.1.6)',
    );
  });

  it('files of two series: names both series and their files', async () => {
    const message = await refusal([
      path.join(FIXTURES, 'orthanc-jpeg', 'cmu-crop-jpeg-00.dcm'),
      path.join(FIXTURES, 'orthanc-native', 'cmu-small-native-00.dcm'),
    ]);
    expect(message).toBe(
      "The DICOM files are of 2 series; upload one slide's series: " +
        '1.2.276.0.7230010.3.1.3.8323328.17851.1795796885.934525 (cmu-crop-jpeg-00.dcm); ' +
        '1.2.276.0.7230010.3.1.3.8323328.17863.1795796886.174296 (cmu-small-native-00.dcm)',
    );
  });

  it('a file that is not DICOM', async () => {
    expect(await refusal([path.join(WSI_DIR, 'small.svs')])).toBe('small.svs is not a DICOM file (no DICM preamble)');
  });

  it('a native file cut short: missing frames', async () => {
    const source = path.join(FIXTURES, 'orthanc-native', 'cmu-small-native-00.dcm');
    const cut = path.join(work, 'cmu-small-native-cut.dcm');
    const bytes = await readFile(source);
    const frameBytes = 128 * 128 * 3;
    await writeFile(cut, bytes.subarray(0, bytes.length - frameBytes - 1000));
    expect((await stat(cut)).size).toBe(bytes.length - frameBytes - 1000);
    expect(await refusal([cut])).toBe('cmu-small-native-cut.dcm is missing frames: its pixel data holds 7 of 9');
  });
});
