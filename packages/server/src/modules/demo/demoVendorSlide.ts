import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../platform/db/database.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { JobQueue } from '../../platform/jobs/jobQueue.js';
import { openSlideLibrary } from '../../platform/openslide/openslide.js';
import { demoImageExists, demoUploadTarget, uploadDemoSlide } from './demoSlide.js';

export const DEMO_VENDOR_SLIDE_NAME = 'DEMO-hamamatsu-DAPI.ndpi';

/**
 * The demo's slide of another scanner (issue 31): a real Hamamatsu NanoZoomer file from the shared
 * test data beside the repository (`../shared/testdata`, as in CI), read through OpenSlide.
 */
export const DEMO_VENDOR_SOURCE = path.resolve(
  import.meta.dirname,
  '../../../../../../shared/testdata/wsi/test3-DAPI-2-387.ndpi',
);

export type DemoVendorOutcome =
  { made: true; id: number } | { made: false; why: 'exists' | 'no demo study' | 'no test data' | 'no OpenSlide' };

/**
 * At start with demo data: when the demo study has no vendor slide yet, upload the Hamamatsu test
 * slide like any upload (the worker reads it with OpenSlide). Skipped, saying why, when the test
 * data is not beside the repository or OpenSlide is not installed.
 */
export async function ensureDemoVendorSlide(
  deps: { db: Db; storage: ObjectStorage; jobs: JobQueue },
  source: string = DEMO_VENDOR_SOURCE,
): Promise<DemoVendorOutcome> {
  const target = await demoUploadTarget(deps.db);
  if (!target) return { made: false, why: 'no demo study' };
  if (await demoImageExists(deps.db, target.studyId, DEMO_VENDOR_SLIDE_NAME)) return { made: false, why: 'exists' };
  if (!openSlideLibrary().available) return { made: false, why: 'no OpenSlide' };
  const found = await access(source).then(
    () => true,
    () => false,
  );
  if (!found) return { made: false, why: 'no test data' };
  const id = await uploadDemoSlide(deps, target, {
    file: source,
    name: DEMO_VENDOR_SLIDE_NAME,
    accessionNumber: 'DEMO-NDPI',
  });
  return { made: true, id };
}
