import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describeSlide } from '../processing/slideInfo.js';
import { readTiffStructure } from '../processing/tiffStructure.js';
import type { Db } from '../../platform/db/database.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { JobQueue } from '../../platform/jobs/jobQueue.js';
import { demoImageExists, demoUploadTarget, uploadDemoSlide, writeDemoSlide } from './demoSlide.js';

export const DEMO_ZSTACK_NAME = 'DEMO-zstack-CMU-1-Small-Region.tif';

/**
 * The real test slide the demo z-stack is made from, beside the repository (`../shared/testdata`,
 * as in CI). A fresh clone without it makes the planes from the synthetic demo slide instead.
 */
export const ZSTACK_SOURCE = path.resolve(
  import.meta.dirname,
  '../../../../../../shared/testdata/wsi/CMU-1-Small-Region.svs',
);

/** Gaussian blur (sigma, px) of each focal plane: in focus in the middle, defocused either side. */
export const FOCUS_BLUR = [4, 2, 0, 2, 4] as const;

/**
 * Writes a z-stack TIFF: one full-resolution page per focal plane (FOCUS_BLUR), 256-px JPEG tiles,
 * the source's pixel size in the resolution tags — the layout the worker reads as focal planes
 * (slideInfo.ts, focalPlanes). Returns where the pixels came from.
 */
export async function writeZStackSlide(
  target: string,
  source: string = ZSTACK_SOURCE,
): Promise<'test slide' | 'synthetic'> {
  let from: 'test slide' | 'synthetic' = 'test slide';
  let input = source;
  const found = await access(source).then(
    () => true,
    () => false,
  );
  if (!found) {
    from = 'synthetic';
    input = path.join(path.dirname(target), 'synthetic-source.tif');
    await writeDemoSlide(input, 2400, 1800);
  }
  const base = await sharp(input, { page: 0 }).removeAlpha().toColourspace('srgb').raw().toBuffer({
    resolveWithObject: true,
  });
  const { width, height } = base.info;
  // The source's pixel size as the worker reads it (an Aperio slide keeps it in its description,
  // not in the resolution tags sharp reports); tiff wants pixels per mm.
  const { mpp } = describeSlide(await readTiffStructure(input));
  const pixelsPerMm = mpp ? 1000 / mpp : null;
  const planes = await Promise.all(
    FOCUS_BLUR.map((sigma) => {
      const plane = sharp(base.data, { raw: { width, height, channels: 3 } });
      return (sigma > 0 ? plane.blur(sigma) : plane).png({ compressionLevel: 1 }).toBuffer();
    }),
  );
  await sharp(planes, { join: { animated: true } })
    .tiff({
      tile: true,
      tileWidth: 256,
      tileHeight: 256,
      compression: 'jpeg',
      quality: 90,
      ...(pixelsPerMm ? { xres: pixelsPerMm, yres: pixelsPerMm, resolutionUnit: 'cm' as const } : {}),
    })
    .toFile(target);
  if (from === 'synthetic') await rm(input, { force: true });
  return from;
}

/**
 * At start with demo data: when the demo study has no z-stack slide yet, make one (five focal planes
 * of a real test slide) and upload it like any slide; the worker builds a pyramid with a plane per
 * focus, and the viewer shows the z-stack slider at full resolution. Returns the image id and where
 * its pixels came from, or null when nothing was done.
 */
export async function ensureDemoZStack(deps: {
  db: Db;
  storage: ObjectStorage;
  jobs: JobQueue;
}): Promise<{ id: number; from: 'test slide' | 'synthetic' } | null> {
  const target = await demoUploadTarget(deps.db);
  if (!target) return null;
  if (await demoImageExists(deps.db, target.studyId, DEMO_ZSTACK_NAME)) return null;
  const dir = await mkdtemp(path.join(tmpdir(), 'lamina-demo-zstack-'));
  try {
    const file = path.join(dir, DEMO_ZSTACK_NAME);
    const from = await writeZStackSlide(file);
    const id = await uploadDemoSlide(deps, target, { file, name: DEMO_ZSTACK_NAME, accessionNumber: 'DEMO-ZSTACK' });
    return { id, from };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
