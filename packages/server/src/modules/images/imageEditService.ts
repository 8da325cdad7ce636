import type { Transaction } from 'kysely';
import {
  EDITABLE_IMAGE_FIELDS,
  IMAGE_ACTION_MESSAGES,
  copyImageName,
  imageFieldError,
  isEmptyValue,
  mayEditImageField,
  reasonForChangeError,
  unableToHideImage,
  type EditImageRequest,
  type EditableImageField,
  type ImageStatus,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { changeEvents, requireReasonsForChange, type FieldChange } from '../../platform/audit/changes.js';
import { BadRequestError, ConflictError, ForbiddenError } from '../../platform/errors.js';
import { revokeCaseReaders } from '../../access/readerVisibility.js';
import { inQueryChain } from './queryChain.js';
import { lockImage, type LockedImage } from './imageQueries.js';

type Tx = Transaction<DB>;

const COLUMN: Record<EditableImageField, 'name' | 'accession_number' | 'biopsy_location'> = {
  imageName: 'name',
  accessionNumber: 'accession_number',
  biopsyLocation: 'biopsy_location',
};

/** Image edits: a changed field whose previous value was not empty needs a reason (doc 2 §5), the spec's message. */
const imageEditReasonRule = (before: unknown, after: unknown, reason: string | null | undefined) =>
  reasonForChangeError(before, after, reason) ? IMAGE_ACTION_MESSAGES.updateReasonRequired : null;

/**
 * Inserts a copy of an image row: the same stored original, pyramid, label and metadata, its own
 * name, no case, waiting for a case (or for a study); `copied_from_image_id` names the source.
 * Used by Copy Image and by the demo data. Returns the new id.
 */
export async function insertImageCopy(
  tx: Tx,
  source: LockedImage,
  over: {
    name: string;
    caseId?: number | null;
    status?: ImageStatus;
    accessionNumber?: string | null;
    biopsyLocation?: string | null;
    /** Another study (the demo data's reading studies share the one demo slide). */
    studyId?: number;
  },
): Promise<number> {
  const row = await tx
    .insertInto('images')
    .values({
      // What a copy carries over: the stored slide and what processing learnt of it, and its metadata.
      study_id: over.studyId ?? source.study_id,
      s3_key: source.s3_key,
      cog_key: source.cog_key,
      uploader_id: source.uploader_id,
      organization_id: source.organization_id,
      processing_status: source.processing_status,
      processing_progress: source.processing_progress,
      processed_at: source.processed_at,
      status_message: source.status_message,
      accession_number: source.accession_number,
      biopsy_location: source.biopsy_location,
      protocol_id: source.protocol_id,
      site_id: source.site_id,
      subject_id: source.subject_id,
      visit_id: source.visit_id,
      lab_visit_id: source.lab_visit_id,
      specimen_collection_date: source.specimen_collection_date,
      lab_image_created_at: source.lab_image_created_at,
      lab_image_id: source.lab_image_id,
      machine_readable_barcode: source.machine_readable_barcode,
      stain_type: source.stain_type,
      qa_comments: source.qa_comments,
      content_sha256: source.content_sha256,
      original_version: source.original_version,
      pyramid_sha256: source.pyramid_sha256,
      size_bytes: source.size_bytes,
      width: source.width,
      height: source.height,
      levels: source.levels,
      mpp: source.mpp,
      objective_power: source.objective_power,
      z_stack_size: source.z_stack_size,
      label_key: source.label_key,
      macro_key: source.macro_key,
      source_format: source.source_format,
      source_compression: source.source_compression,
      name: over.name,
      case_id: over.caseId ?? null,
      status: over.status ?? (source.study_id === null ? 'STUDY_ASSIGNMENT_PENDING' : 'CASE_ASSIGNMENT_PENDING'),
      ...(over.accessionNumber !== undefined ? { accession_number: over.accessionNumber } : {}),
      ...(over.biopsyLocation !== undefined ? { biopsy_location: over.biopsyLocation } : {}),
      replaces_image_id: null,
      copied_from_image_id: source.id,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The image row actions (issue 11; doc 2 §2.5): edit with reasons, copy (a new row sharing the
 * stored original and pyramid), archive, show to / hide from readers, accept AI counts. Moving an
 * image to another case or study changes its case too: a command (commands/moveImage.ts). Each
 * locks the image row and audits in its transaction.
 */
export class ImageEditService {
  constructor(private readonly db: Db) {}

  /** PATCH /api/images/{id}. */
  async edit(principal: Principal, actor: Actor, imageId: number, request: EditImageRequest): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const image = await lockImage(tx, imageId);
      if (image.status === 'ARCHIVED') throw new ConflictError(IMAGE_ACTION_MESSAGES.alreadyArchived);
      const changes: FieldChange[] = [];
      for (const field of EDITABLE_IMAGE_FIELDS) {
        const given = request[field];
        if (!given) continue;
        const trimmed = given.value?.trim() ?? '';
        const value = trimmed === '' ? null : trimmed;
        const message = imageFieldError(field, value);
        if (message) throw new BadRequestError(message);
        const before = image[COLUMN[field]];
        if ((before ?? null) === value) continue;
        if (!mayEditImageField(principal.actions, field))
          throw new ForbiddenError(
            field === 'imageName' ? IMAGE_ACTION_MESSAGES.fileNameReadOnly : IMAGE_ACTION_MESSAGES.fieldNotEditable,
          );
        if (field === 'biopsyLocation' && value !== null) await checkSegment(tx, image.study_id, value);
        changes.push({ field, before, after: value, reason: given.reasonForChange });
      }
      const real = requireReasonsForChange(changes, imageEditReasonRule);
      if (real.length === 0) return;
      const set: { name?: string; accession_number?: string | null; biopsy_location?: string | null } = {};
      for (const change of real) {
        const value = change.after as string | null;
        if (change.field === 'imageName' && value !== null) set.name = value;
        if (change.field === 'accessionNumber') set.accession_number = value;
        if (change.field === 'biopsyLocation') set.biopsy_location = value;
      }
      await tx
        .updateTable('images')
        .set({ ...set, updated_at: new Date() })
        .where('id', '=', imageId)
        .execute();
      await recordAudit(
        tx,
        actor,
        changeEvents({ action: 'IMAGE_EDITED', entityType: 'image', entityId: imageId, studyId: image.study_id }, real),
      );
    });
  }

  /** POST /api/images/{id}/copy: a new row sharing the stored original and pyramid; no case. */
  async copy(actor: Actor, imageId: number, requestedName: string | undefined): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      const source = await lockImage(tx, imageId);
      if (source.status === 'ARCHIVED')
        throw new ConflictError(`${IMAGE_ACTION_MESSAGES.unableToCopy}. ${IMAGE_ACTION_MESSAGES.alreadyArchived}`);
      if (!source.cog_key || source.processing_status !== 'SUCCESS')
        throw new ConflictError(`${IMAGE_ACTION_MESSAGES.unableToCopy}. ${IMAGE_ACTION_MESSAGES.notProcessed}`);
      const name = requestedName?.trim() || copyImageName(source.name);
      const message = imageFieldError('imageName', name);
      if (message) throw new BadRequestError(message);
      const copy = { id: await insertImageCopy(tx, source, { name }) };
      await recordAudit(tx, actor, [
        {
          action: 'IMAGE_COPIED',
          entityType: 'image',
          entityId: copy.id,
          studyId: source.study_id,
          field: 'copied_from_image_id',
          newValue: { copiedFrom: source.id, name },
        },
      ]);
      return copy.id;
    });
  }

  /** POST /api/images/{id}: archive, with a reason. */
  async archive(actor: Actor, imageId: number, reasonForChange: string | null | undefined): Promise<void> {
    if (isEmptyValue(reasonForChange)) throw new BadRequestError(IMAGE_ACTION_MESSAGES.archiveReasonRequired);
    await this.db.transaction().execute(async (tx) => {
      const image = await lockImage(tx, imageId);
      if (image.status === 'ARCHIVED') throw new ConflictError(IMAGE_ACTION_MESSAGES.alreadyArchived);
      await revokeCaseReaders(tx, image.case_id);
      await tx
        .updateTable('images')
        .set({ status: 'ARCHIVED', updated_at: new Date() })
        .where('id', '=', imageId)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'IMAGE_ARCHIVED',
          entityType: 'image',
          entityId: imageId,
          studyId: image.study_id,
          field: 'status',
          oldValue: image.status,
          newValue: 'ARCHIVED',
          reason: (reasonForChange ?? '').trim(),
        },
      ]);
    });
  }

  /**
   * PATCH /api/images/{id}/toggle-image-visibility: shows or hides an image from readers — only an
   * image in a query chain (doc 3 §4). Hiding it stops its readers' tile tokens.
   */
  async toggleVisibility(actor: Actor, imageId: number): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const image = await lockImage(tx, imageId);
      const accepted = await tx
        .selectFrom('images')
        .select('images.id')
        .where('images.id', '=', imageId)
        .where(inQueryChain)
        .executeTakeFirst();
      if (!accepted) throw new ConflictError(`${unableToHideImage(imageId)}. ${IMAGE_ACTION_MESSAGES.notInQueryChain}`);
      const ignored = !image.ignored;
      if (ignored) await revokeCaseReaders(tx, image.case_id);
      await tx.updateTable('images').set({ ignored, updated_at: new Date() }).where('id', '=', imageId).execute();
      await recordAudit(tx, actor, [
        {
          action: 'IMAGE_VISIBILITY_CHANGED',
          entityType: 'image',
          entityId: imageId,
          studyId: image.study_id,
          field: 'ignored',
          oldValue: image.ignored,
          newValue: ignored,
        },
      ]);
      return ignored;
    });
  }

  /** PATCH /api/images/{id}/accept-ai-annotations: sets (or toggles) whether AI counts are accepted. */
  async acceptAi(actor: Actor, imageId: number, value: boolean | undefined): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const image = await lockImage(tx, imageId);
      if (image.status === 'ARCHIVED')
        throw new ConflictError(`${IMAGE_ACTION_MESSAGES.unableToAcceptAi} ${IMAGE_ACTION_MESSAGES.alreadyArchived}`);
      const accept = value ?? !image.accept_ai_annotations;
      if (accept !== image.accept_ai_annotations) {
        await tx
          .updateTable('images')
          .set({ accept_ai_annotations: accept, updated_at: new Date() })
          .where('id', '=', imageId)
          .execute();
        await recordAudit(tx, actor, [
          {
            action: 'IMAGE_AI_ACCEPTANCE_CHANGED',
            entityType: 'image',
            entityId: imageId,
            studyId: image.study_id,
            field: 'accept_ai_annotations',
            oldValue: image.accept_ai_annotations,
            newValue: accept,
          },
        ]);
      }
      return accept;
    });
  }
}

/** An anatomical segment must be one of the study's, when the study names its segments. */
export async function checkSegment(tx: Tx, studyId: number | null, value: string): Promise<void> {
  if (studyId === null) return;
  const study = await tx
    .selectFrom('studies')
    .select('anatomical_segments')
    .where('id', '=', studyId)
    .executeTakeFirst();
  const error = segmentError(study?.anatomical_segments ?? [], value);
  if (error) throw new BadRequestError(error);
}

/** The study's segments, when it names any, are the only anatomical segments its images may have. */
export function segmentError(segments: readonly string[], value: string): string | null {
  return segments.length > 0 && !segments.includes(value) ? IMAGE_ACTION_MESSAGES.segmentNotInStudy(segments) : null;
}
