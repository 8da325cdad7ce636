import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { IMAGE_MESSAGES, statusAfterProcessing, type ImageStatus } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { imageKeys, studyIdOfUploadKey } from '../../platform/storage/keys.js';
import { STORAGE_KEY_IN_MESSAGE, withoutStorageKeys } from '../../platform/storage/keysInText.js';
import { recordAudit, SYSTEM_ACTOR, type Actor } from '../../platform/audit/audit.js';
import { SlideRejectedError } from './slideInfo.js';
import { DecodeError } from './pyramid.js';
import { DEFAULT_SLIDE_LIMITS, type SlideLimits } from './slideLimits.js';
import { openSlideSource, type SlideSource, type StoredSlideInfo } from './slideSource.js';
import { Deadline } from './deadline.js';

/** Default time budget of one processing job: a 40-gigapixel slide takes about 10 minutes here. */
export const DEFAULT_PROCESSING_TIME_LIMIT_SECONDS = 3600;

export interface ProcessingDeps {
  db: Db;
  storage: ObjectStorage;
  /** Scratch folder for downloads and the pyramid before it is stored. */
  tmpDir: string;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void } | undefined;
  /** What a slide may claim before it is decoded (MAX_SLIDE_PIXELS …); defaults DEFAULT_SLIDE_LIMITS. */
  limits?: SlideLimits | undefined;
  /** Seconds one job may take (PROCESSING_TIME_LIMIT). */
  timeLimitSeconds?: number | undefined;
}

export interface Attempt {
  retryCount: number;
  retryLimit: number;
}

export const WORKER_ACTOR: Actor = { ...SYSTEM_ACTOR, username: 'worker' };

/** Progress milestones (0–100) stored on the image. */
const PROGRESS = {
  picked: 2,
  hashed: 30,
  described: 32,
  associated: 35,
  pyramidStart: 35,
  pyramidEnd: 90,
  stored: 97,
} as const;

/**
 * Processes one uploaded image: hash, validate by content, read metadata, extract label and macro,
 * build and store the serving pyramid, then decide the status. Idempotent: a finished or archived
 * image is left alone, so a retried or duplicated job does no harm.
 *
 * A slide refused for what it is (not a TIFF, JPEG 2000, unreadable pixels) fails at once with a
 * human reason. Any other error (storage, database) is thrown for pg-boss to retry; on the last
 * attempt the image fails with that error as the reason.
 */
export async function processImage(
  deps: ProcessingDeps,
  imageId: number,
  attempt: Attempt = { retryCount: 0, retryLimit: 0 },
): Promise<void> {
  const { db, storage } = deps;
  const image = await db
    .selectFrom('images')
    .select(['id', 'study_id', 's3_key', 'status', 'processing_status', 'processing_attempts'])
    .where('id', '=', imageId)
    .executeTakeFirst();
  if (
    !image ||
    image.status === 'ARCHIVED' ||
    image.processing_status === 'SUCCESS' ||
    image.processing_status === 'FAIL'
  )
    return;

  await db
    .updateTable('images')
    .set({
      processing_status: 'SUBMITTED',
      processing_started_at: new Date(),
      processing_attempts: image.processing_attempts + 1,
      processing_progress: PROGRESS.picked,
      status_message: null,
      updated_at: new Date(),
    })
    .where('id', '=', imageId)
    .execute();

  const deadline = new Deadline(deps.timeLimitSeconds ?? DEFAULT_PROCESSING_TIME_LIMIT_SECONDS);
  const progress = progressWriter(db, imageId);
  // What an earlier attempt left (a worker killed mid-way): its scratch folder on this machine and
  // the derived objects of an image that never reached SUCCESS. Storage keeps no half objects.
  await removeWorkOf(deps.tmpDir, imageId);
  for (const key of [imageKeys.pyramid(imageId), imageKeys.label(imageId), imageKeys.macro(imageId)])
    await storage.delete(key);
  const work = path.join(deps.tmpDir, `image-${imageId}-${randomUUID()}`);
  await mkdir(work, { recursive: true });
  try {
    // 1. The upload sealed under a key no signed URL was issued for (a re-used upload URL can no
    //    longer replace it), then read as a local file and hashed on the same pass.
    const originalKey = await sealOriginal(deps, imageId, image.s3_key);
    const size = (await storage.head(originalKey))?.size;
    if (size === undefined) throw new SlideRejectedError(IMAGE_MESSAGES.uploadNotFound);
    const { file: source, sha256 } = await localSource(storage, originalKey, work, size, (f) =>
      progress.set(PROGRESS.picked + f * (PROGRESS.hashed - PROGRESS.picked)),
    );
    const originalVersion = (await storage.head(originalKey))?.version ?? null;
    await progress.set(PROGRESS.hashed, true);
    deadline.check();

    // 2. Validate by content and read the metadata; refuse what no decoder should be given.
    const pyramidFile = path.join(work, 'pyramid.tif');
    let described: StoredSlideInfo;
    let labelKey: string | null;
    let macroKey: string | null;
    const slide = await openSlideSource(
      source,
      path.basename(originalKey),
      work,
      size,
      deps.limits ?? DEFAULT_SLIDE_LIMITS,
    );
    try {
      const { info } = slide;
      await db
        .updateTable('images')
        .set({
          content_sha256: sha256,
          original_version: originalVersion,
          size_bytes: size,
          width: info.width,
          height: info.height,
          levels: info.levels,
          mpp: info.mpp,
          objective_power: info.objectivePower,
          z_stack_size: info.zStackSize,
          source_format: info.format,
          source_compression: info.compression,
          processing_progress: PROGRESS.described,
          updated_at: new Date(),
        })
        .where('id', '=', imageId)
        .execute();
      described = info;

      // 3. Label and macro: kept only for users allowed to see labels.
      labelKey = await storeAssociated(deps, slide, 'label', imageKeys.label(imageId));
      macroKey = await storeAssociated(deps, slide, 'macro', imageKeys.macro(imageId));
      await progress.set(PROGRESS.associated, true);

      // 4. The serving pyramid.
      try {
        await slide.buildPyramid(
          pyramidFile,
          (f) => void progress.set(PROGRESS.pyramidStart + f * (PROGRESS.pyramidEnd - PROGRESS.pyramidStart)),
          { deadline },
        );
      } catch (error) {
        if (error instanceof DecodeError) throw new SlideRejectedError(error.message);
        throw error;
      }
    } finally {
      await slide.close();
    }
    await progress.set(PROGRESS.pyramidEnd, true);
    deadline.check();
    const cogKey = imageKeys.pyramid(imageId);
    const pyramidSha256 = await sha256OfFile(pyramidFile);
    await storage.write(cogKey, { filePath: pyramidFile }, 'image/tiff');
    await progress.set(PROGRESS.stored, true);

    // 5. Status: duplicate of another live image of the study, else ready for case assignment.
    await db.transaction().execute(async (tx) => {
      const current = await tx
        .selectFrom('images')
        .select(['status', 'study_id'])
        .where('id', '=', imageId)
        .forUpdate()
        .executeTakeFirst();
      if (!current || current.status === 'ARCHIVED') return;
      const duplicate =
        current.study_id !== null &&
        (await tx
          .selectFrom('images')
          .select('id')
          .where('study_id', '=', current.study_id)
          .where('content_sha256', '=', sha256)
          .where('id', '<', imageId)
          .where('status', '!=', 'ARCHIVED')
          .limit(1)
          .executeTakeFirst()) !== undefined;
      const status = statusAfterProcessing({ ok: true, hasStudy: current.study_id !== null, duplicate });
      await tx
        .updateTable('images')
        .set({
          status,
          processing_status: 'SUCCESS',
          processing_progress: 100,
          status_message: duplicate ? 'The same file is already in this study' : null,
          cog_key: cogKey,
          pyramid_sha256: pyramidSha256,
          label_key: labelKey,
          macro_key: macroKey,
          processed_at: new Date(),
          updated_at: new Date(),
        })
        .where('id', '=', imageId)
        .execute();
      await recordAudit(tx, WORKER_ACTOR, [
        {
          action: 'IMAGE_PROCESSED',
          entityType: 'image',
          entityId: imageId,
          studyId: current.study_id,
          field: 'status',
          oldValue: current.status,
          newValue: status,
        },
      ]);
    });
    deps.log?.info(
      { imageId, width: described.width, height: described.height, format: described.format },
      'image processed',
    );
  } catch (error) {
    // A value of the slide the database cannot hold (SQLSTATE class 22) fails the same way every time.
    const code = (error as { code?: unknown } | null)?.code;
    const dataError = typeof code === 'string' && code.startsWith('22');
    const permanent = error instanceof SlideRejectedError || dataError;
    const lastAttempt = attempt.retryCount >= attempt.retryLimit;
    if (permanent || lastAttempt) {
      const reason = dataError
        ? IMAGE_MESSAGES.slideValueOutOfRange
        : error instanceof Error
          ? error.message
          : String(error);
      await markFailed(db, imageId, reason);
      deps.log?.warn({ imageId, reason }, 'image processing failed');
      return;
    }
    await db
      .updateTable('images')
      .set({
        status_message: withoutStorageKeys(
          `Retrying after an error: ${error instanceof Error ? error.message : String(error)}`,
          STORAGE_KEY_IN_MESSAGE,
        ).slice(0, 500),
        updated_at: new Date(),
      })
      .where('id', '=', imageId)
      .execute();
    throw error;
  } finally {
    progress.stop();
    await rm(work, { recursive: true, force: true });
  }
}

export async function markFailed(db: Db, imageId: number, error: string): Promise<void> {
  // What users read (the status message, the audit row) names no storage key; the log keeps it.
  const reason = withoutStorageKeys(error, STORAGE_KEY_IN_MESSAGE);
  await db.transaction().execute(async (tx) => {
    const current = await tx
      .selectFrom('images')
      .select(['status', 'study_id'])
      .where('id', '=', imageId)
      .forUpdate()
      .executeTakeFirst();
    if (!current || current.status === 'ARCHIVED') return;
    const status: ImageStatus = statusAfterProcessing({
      ok: false,
      hasStudy: current.study_id !== null,
      duplicate: false,
    });
    await tx
      .updateTable('images')
      .set({
        status,
        processing_status: 'FAIL',
        status_message: reason.slice(0, 1000),
        processed_at: new Date(),
        updated_at: new Date(),
      })
      .where('id', '=', imageId)
      .execute();
    await recordAudit(tx, WORKER_ACTOR, [
      {
        action: 'IMAGE_PROCESSING_FAILED',
        entityType: 'image',
        entityId: imageId,
        studyId: current.study_id,
        field: 'status',
        oldValue: current.status,
        newValue: status,
        reason,
      },
    ]);
  });
}

async function storeAssociated(
  deps: ProcessingDeps,
  slide: SlideSource,
  kind: 'label' | 'macro',
  key: string,
): Promise<string | null> {
  try {
    const bytes = await slide.associated(kind);
    if (!bytes) return null;
    await deps.storage.write(key, bytes, kind === 'label' ? 'image/png' : 'image/jpeg');
    return key;
  } catch (error) {
    deps.log?.warn({ key, err: error }, 'associated image not extracted');
    return null;
  }
}

/**
 * The upload as a local file, with its SHA-256 computed on the same pass: local storage is read
 * in place; S3 is downloaded into the work folder.
 */
async function localSource(
  storage: ObjectStorage,
  key: string,
  work: string,
  size: number,
  onProgress: (fraction: number) => Promise<void> | void,
): Promise<{ file: string; sha256: string }> {
  const hash = createHash('sha256');
  let seen = 0;
  let lastReport = 0;
  const count = (chunk: Buffer) => {
    hash.update(chunk);
    seen += chunk.length;
    if (seen - lastReport > 32 * 1024 * 1024) {
      lastReport = seen;
      void onProgress(seen / Math.max(1, size));
    }
  };
  const inPlace = storage.localPath?.(key);
  if (inPlace) {
    for await (const chunk of createReadStream(inPlace, { highWaterMark: 1024 * 1024 })) count(chunk as Buffer);
    if (seen !== size) throw new Error(`Read ${seen} of ${size} bytes`);
    return { file: inPlace, sha256: hash.digest('hex') };
  }
  // The original's extension kept: OpenSlide tells some formats (Hamamatsu VMS, MIRAX) by it.
  const file = path.join(work, `source${path.extname(key)}`);
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      count(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(await storage.createReadStream(key), meter, createWriteStream(file));
  const written = (await stat(file)).size;
  if (written !== size) throw new Error(`Downloaded ${written} of ${size} bytes`);
  return { file, sha256: hash.digest('hex') };
}

/**
 * Moves a registered upload (`uploads/{study}/{token}/{file}`) to `originals/{id}/{file}` and
 * points the image at it, audited (IMAGE_ORIGINAL_SEALED by the worker). The signed upload URL
 * named the old key: re-used, it can only create a new, unregistered object there. Idempotent: a
 * retry after the move (before the row was updated) finds the sealed object and finishes.
 */
async function sealOriginal(deps: ProcessingDeps, imageId: number, key: string): Promise<string> {
  if (studyIdOfUploadKey(key) === null) return key; // sealed already (or a key of another kind)
  const { db, storage } = deps;
  const sealed = imageKeys.original(imageId, key);
  if (!(await storage.head(sealed))) {
    if (!(await storage.head(key))) throw new SlideRejectedError(IMAGE_MESSAGES.uploadNotFound);
    await storage.move(key, sealed);
  }
  await db.transaction().execute(async (tx) => {
    const moved = await tx
      .updateTable('images')
      .set({ s3_key: sealed, updated_at: new Date() })
      .where('id', '=', imageId)
      .where('s3_key', '=', key)
      .returning('study_id')
      .executeTakeFirst();
    if (!moved) return;
    await recordAudit(tx, WORKER_ACTOR, [
      {
        action: 'IMAGE_ORIGINAL_SEALED',
        entityType: 'image',
        entityId: imageId,
        studyId: moved.study_id,
        field: 's3_key',
        oldValue: key,
        newValue: sealed,
      },
    ]);
  });
  return sealed;
}

async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Scratch folders of earlier attempts at this image (`image-{id}-{uuid}`). */
async function removeWorkOf(tmpDir: string, imageId: number): Promise<void> {
  const prefix = `image-${imageId}-`;
  const names = await readdir(tmpDir).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix)) await rm(path.join(tmpDir, name), { recursive: true, force: true });
  }
}

/** Writes progress at most once a second and only forward. */
function progressWriter(db: Db, imageId: number) {
  let last = 0;
  let lastAt = 0;
  let stopped = false;
  return {
    /** A milestone (`force`) is written at once; estimates at most once a second. */
    async set(value: number, force = false): Promise<void> {
      const v = Math.max(0, Math.min(99, Math.floor(value)));
      const now = Date.now();
      if (stopped || v <= last || (!force && now - lastAt < 1000)) return;
      last = v;
      lastAt = now;
      await db
        .updateTable('images')
        .set({ processing_progress: v })
        .where('id', '=', imageId)
        .where('processing_status', '=', 'SUBMITTED')
        .execute()
        .catch(() => undefined);
    },
    stop(): void {
      stopped = true;
    },
  };
}
