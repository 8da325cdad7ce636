import path from 'node:path';
import { processImage, type ProcessingDeps } from '../../src/modules/processing/processImage.js';
import {
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  putUpload,
  type SlideTestContext,
} from '../factories.js';

/**
 * A slide test app with a study, and the worker's processing called directly: what the tests of a
 * slide format through the worker share (jp2k.processing, openslide.processing, dicom.processing).
 */
export interface ProcessingHarness {
  t: SlideTestContext;
  deps: ProcessingDeps;
  studyId: number;
  /** Stores `file` as an upload named `name`, registers it and processes it; the image id. */
  processFile(file: string, name: string, deps?: ProcessingDeps): Promise<number>;
  imageRow(id: number): ReturnType<typeof imageRowOf>;
  /** The reason of the image's IMAGE_PROCESSING_FAILED audit row (throws when there is none). */
  failureAuditReason(id: number): Promise<string | null>;
  close(): Promise<void>;
}

function imageRowOf(t: SlideTestContext, id: number) {
  return t.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function startProcessingHarness(env: Record<string, string> = {}): Promise<ProcessingHarness> {
  const t = await createSlideTestApp(env);
  const deps: ProcessingDeps = {
    db: t.database.db,
    storage: t.app.slides.storage,
    tmpDir: path.join(t.dataDir, 'tmp'),
  };
  const studyId = (await createStudy(t.database.db)).id;
  return {
    t,
    deps,
    studyId,
    async processFile(file, name, processing = deps) {
      const key = await putUpload(t.app.slides.storage, studyId, file, name);
      const { id } = await createUploadedImage(t.database.db, { studyId, s3Key: key });
      await processImage(processing, id);
      return id;
    },
    imageRow: (id) => imageRowOf(t, id),
    async failureAuditReason(id) {
      const row = await t.database.db
        .selectFrom('audit_events')
        .select('reason')
        .where('entity_type', '=', 'image')
        .where('entity_id', '=', String(id))
        .where('action', '=', 'IMAGE_PROCESSING_FAILED')
        .executeTakeFirstOrThrow();
      return row.reason;
    },
    close: () => t.close(),
  };
}
