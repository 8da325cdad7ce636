import { IMAGE_MESSAGES, type CreateImageRequest } from '@lamina/domain';
import { imageFileNameError } from '../platform/openslide/slideFormats.js';
import type { Db } from '../platform/db/database.js';
import type { Principal } from '../platform/auth/principal.js';
import { recordAudit, type Actor } from '../platform/audit/audit.js';
import { BadRequestError, ConflictError, NotFoundError } from '../platform/errors.js';
import { extensionOf, studyIdOfUploadKey } from '../platform/storage/keys.js';
import type { ObjectStorage } from '../platform/storage/storage.js';
import { inTransaction, QUEUES, type JobQueue } from '../platform/jobs/jobQueue.js';
import type { ImageViewRow } from '../modules/images/imagePresenter.js';
import { selectImageView } from '../modules/images/imageQueries.js';
import { assertMayReplace } from '../modules/images/imageReplacement.js';
import { carryQueriesOver } from '../modules/queries/queryService.js';

export interface RegisterImageDeps {
  db: Db;
  storage: ObjectStorage;
  jobs: JobQueue;
  /** Uploads of at least this size are processed from the large-slide queue. */
  largeSlideBytes: number;
  /** Told the size of each upload registered (the upload metrics). */
  metrics?: { uploadRegistered(bytes: number): void } | undefined;
}

/**
 * POST /api/images: the upload exists and belongs to the study; the row is created and processing
 * enqueued. A replacement (doc 3 §6, issue 15; who may replace: imageReplacement.ts) archives the
 * replaced image, gives the new one its case and carries its open queries over to the new image:
 * images, case membership and queries change in one transaction with their audit rows.
 */
export async function registerImage(
  deps: RegisterImageDeps,
  principal: Principal,
  actor: Actor,
  request: CreateImageRequest,
): Promise<ImageViewRow> {
  const { db, storage, jobs } = deps;
  const { name, s3Key, studyId } = request;
  if (studyIdOfUploadKey(s3Key) !== studyId) throw new BadRequestError(IMAGE_MESSAGES.uploadNotInStudy);
  // The name is kept as given (any script); the key's file name is its safe form with the same extension.
  const nameError = imageFileNameError(name);
  if (nameError) throw new BadRequestError(nameError);
  if (extensionOf(name) !== extensionOf(s3Key)) throw new BadRequestError(IMAGE_MESSAGES.extensionMismatch);
  const head = await storage.head(s3Key);
  if (!head) throw new NotFoundError(IMAGE_MESSAGES.uploadNotFound);

  await jobs.start(); // the queue's schema exists before the transaction enqueues into it
  const id = await db.transaction().execute(async (tx) => {
    const already = await tx
      .selectFrom('images')
      .select('id')
      .where('s3_key', '=', s3Key)
      .where('status', '!=', 'ARCHIVED')
      .executeTakeFirst();
    if (already) throw new ConflictError('This upload is already registered as an image');

    let replaced: { id: number; case_id: number | null; status: string; processing_status: string } | undefined;
    if (request.imageToReplaceId) {
      replaced = await tx
        .selectFrom('images')
        .select(['id', 'case_id', 'status', 'processing_status'])
        .where('id', '=', request.imageToReplaceId)
        .where('study_id', '=', studyId)
        .forUpdate()
        .executeTakeFirst();
      if (!replaced) throw new NotFoundError(IMAGE_MESSAGES.imageToReplaceNotFound);
      if (replaced.status === 'ARCHIVED') throw new ConflictError(IMAGE_MESSAGES.imageToReplaceArchived);
      // Only through an open query sent to the replacer's role (doc 3 §6), its queries read locked.
      await assertMayReplace(tx, replaced, principal);
    }

    const image = await tx
      .insertInto('images')
      .values({
        study_id: studyId,
        case_id: replaced?.case_id ?? null,
        name,
        s3_key: s3Key,
        uploader_id: principal.id,
        organization_id: principal.organizationId,
        status: 'PROCESSING',
        processing_status: 'PENDING',
        size_bytes: head.size,
        replaces_image_id: replaced?.id ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    const events: Parameters<typeof recordAudit>[2][number][] = [
      {
        action: 'IMAGE_UPLOADED',
        entityType: 'image',
        entityId: image.id,
        studyId,
        newValue: { name, s3Key, size: head.size },
      },
    ];
    if (replaced) {
      await tx
        .updateTable('images')
        .set({ status: 'ARCHIVED', updated_at: new Date() })
        .where('id', '=', replaced.id)
        .execute();
      events.push(
        {
          action: 'IMAGE_REPLACED',
          entityType: 'image',
          entityId: image.id,
          studyId,
          field: 'replaces_image_id',
          newValue: replaced.id,
        },
        {
          action: 'IMAGE_ARCHIVED',
          entityType: 'image',
          entityId: replaced.id,
          studyId,
          field: 'status',
          oldValue: replaced.status,
          newValue: 'ARCHIVED',
          reason: `Replaced by image ${image.id}`,
        },
      );
      // The replaced image's open queries go over to its replacement (doc 3 §6, issue 15).
      events.push(...(await carryQueriesOver(tx, replaced.id, image.id, studyId)));
      if (replaced.case_id !== null) {
        events.push({
          action: 'IMAGE_CASE_ASSIGNED',
          entityType: 'image',
          entityId: image.id,
          studyId,
          field: 'case_id',
          newValue: replaced.case_id,
          reason: `Replaces image ${replaced.id}`,
        });
      }
    }
    await recordAudit(tx, actor, events);
    const queue = head.size >= deps.largeSlideBytes ? QUEUES.imageProcessingLarge : QUEUES.imageProcessing;
    await jobs.send(queue, { imageId: image.id }, { db: inTransaction(tx) });
    return image.id;
  });
  deps.metrics?.uploadRegistered(head.size);
  return selectImageView(db).where('images.id', '=', id).executeTakeFirstOrThrow();
}
