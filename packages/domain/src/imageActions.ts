import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import type { Permission } from './permissions.js';
import { hasImageExtension, IMAGE_STATUS_LABELS, unsupportedFileType } from './images.js';

/**
 * The image row actions of the study page (issue 11; doc 2 §2.5, §4, §5, §7, §8): edit, move to a
 * study or a case, copy, archive. Messages, permissions, field rules and wire shapes, once.
 */

export const IMAGE_ACTION_MESSAGES = {
  updateReasonRequired: 'Unable to update image. Must include reason for change.',
  archiveReasonRequired: 'Could not archive image. Must include reason for change.',
  unableToCopy: 'Unable to copy image',
  unableToMoveStudy: 'Unable to move image to new study.',
  unableToMoveCase: 'Unable to move image to new case.',
  unableToTransitionImage: 'Unable to transition image status.',
  moveConfirmation: 'Are you sure you want to move this image?',
  copied: 'Image copied successfully',
  archived: 'The image was archived successfully',
  moved: 'The image was moved successfully',
  updated: 'The image was updated successfully',
  // Lamina's: the reasons behind the spec's generic refusals.
  moveBlocked: `Images that are ${IMAGE_STATUS_LABELS.READY_FOR_READING} or ${IMAGE_STATUS_LABELS.COMPLETE} cannot be moved`,
  sameStudy: 'The image is already in this study',
  sameCase: 'The image is already in this case',
  noStudy: 'The image has no study; move it into a study first',
  notProcessed: 'Only processed images can be copied',
  alreadyArchived: 'The image is already archived',
  moveReasonRequired: 'Must include reason for change.',
  fileNameReadOnly: 'You may not change the file name',
  fieldNotEditable: 'You may not change this field',
  /** Names the valid values (issue 29 item 13; the spec has no message for it). */
  segmentNotInStudy: (segments: readonly string[]) =>
    `Anatomical segment must be one of the study’s segments: ${segments.join(', ')}`,
  // doc 3 §8, and Lamina's reasons behind them.
  unableToTransitionImageStatus: 'Unable to transition image status',
  notInCase: 'The image is not in a case',
  qcNotNow: 'The image is not waiting for this quality check in its case’s status',
  passedQc: 'The image passed quality check',
  unableToAcceptAi: 'Unable to accept ai annotations.',
  aiAccepted: 'AI annotations are accepted for this image',
  aiRejected: 'AI annotations are no longer accepted for this image',
  shownToReaders: 'The image is shown to readers',
  hiddenFromReaders: 'The image is hidden from readers',
  notInQueryChain: 'Only an image in a query chain can be hidden from readers',
} as const;

export const archiveImageConfirmation = (name: string): string => `Are you sure you want to archive ${name}?`;

/** 'Unable to hide image for reader for image {id}' (doc 3 §8). */
export const unableToHideImage = (id: number): string => `Unable to hide image for reader for image ${id}`;

/** PATCH /api/images/{id}/accept-ai-annotations: a value, or toggle without one. */
export const acceptAiRequestSchema = z.object({ acceptAiAnnotations: z.boolean().optional() }).nullish();

export const EDITABLE_IMAGE_FIELDS = ['imageName', 'accessionNumber', 'biopsyLocation'] as const;
export type EditableImageField = (typeof EDITABLE_IMAGE_FIELDS)[number];

/** The permission each Edit Image field needs (doc 2 §6); the file name also needs pass-lab-QC (doc 2 §5). */
export const IMAGE_FIELD_EDIT_PERMISSIONS: Readonly<Record<EditableImageField, Permission>> = {
  imageName: 'AP_ImageData_EditFileName',
  accessionNumber: 'AP_ImageData_EditAccessionNumber',
  biopsyLocation: 'AP_ImageData_EditAnatomicalSegment',
};
export const FILE_NAME_EXTRA_PERMISSION: Permission = 'AP_ImageViewer_ViewButtonPassLabQC';

export const IMAGE_FIELD_LABELS: Readonly<Record<EditableImageField, string>> = {
  imageName: 'File Name',
  accessionNumber: 'Accession #',
  biopsyLocation: 'Anatomical Segment',
};

/** Whether the user may edit one Edit Image field. */
export function mayEditImageField(actions: ReadonlySet<string>, field: EditableImageField): boolean {
  if (!actions.has(IMAGE_FIELD_EDIT_PERMISSIONS[field])) return false;
  return field !== 'imageName' || actions.has(FILE_NAME_EXTRA_PERMISSION);
}

/** The Edit Image button (doc 2 §6): any of the three edit permissions. */
export const EDIT_IMAGE_PERMISSIONS: readonly Permission[] = Object.values(IMAGE_FIELD_EDIT_PERMISSIONS);

/** The message for an Edit Image value, or null. */
export function imageFieldError(field: EditableImageField, value: string | null): string | null {
  if (field === 'imageName') {
    if (value === null || value.trim() === '') return 'File Name is required';
    if (value.length > TEXT_LIMITS.fileName) return `File Name must be less than ${TEXT_LIMITS.fileName} characters`;
    if (!hasImageExtension(value.trim())) return unsupportedFileType(value.trim());
    return null;
  }
  if (value !== null && value.length > TEXT_LIMITS.identifier)
    return `${IMAGE_FIELD_LABELS[field]} must be less than ${TEXT_LIMITS.identifier} characters`;
  return null;
}

/** The copy's proposed name (doc 2 §5 "a name field prefilled from a derived name"): name (copy).ext. */
export function copyImageName(name: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return `${name} (copy)`;
  return `${name.slice(0, dot)} (copy)${name.slice(dot)}`;
}

const id = z.number().int().positive();
const reason = z.string().max(TEXT_LIMITS.reason);
const changeValue = z.object({
  value: z
    .string()
    .max(TEXT_LIMITS.fileName + 1)
    .nullable(),
  reasonForChange: reason.nullable().optional(),
});

/** PATCH /api/images/{id}: only changed fields, each a value plus reasonForChange. */
export const editImageRequestSchema = z
  .object({ imageName: changeValue, accessionNumber: changeValue, biopsyLocation: changeValue })
  .partial();
export type EditImageRequest = z.infer<typeof editImageRequestSchema>;

/** PATCH /api/images/{id}/study and /case: the target id plus reasonForChange; `preview` lists the changes only. */
export const moveImageRequestSchema = z.object({
  value: id,
  reasonForChange: reason.nullable().optional(),
  preview: z.boolean().optional(),
});
export type MoveImageRequest = z.infer<typeof moveImageRequestSchema>;

/** POST /api/images/{id}/copy (also imageId, duplicateImageName in the spec's other form). */
export const copyImageRequestSchema = z.object({
  name: z
    .string()
    .max(TEXT_LIMITS.fileName + 1)
    .optional(),
  duplicateImageName: z
    .string()
    .max(TEXT_LIMITS.fileName + 1)
    .optional(),
  imageId: id.optional(),
});
/** POST /api/images/{id}: archive. */
export const archiveImageRequestSchema = z.object({ reasonForChange: reason.nullable().optional() });

/** A data point a move changes (doc 2 §4 warnings): study name, sponsor, case subject/visit/site id, case status. */
export const moveChangeSchema = z.object({ label: z.string(), from: z.string().nullable(), to: z.string().nullable() });
export type MoveChange = z.infer<typeof moveChangeSchema>;

export const imageActionResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  imageId: z.number().int(),
  /** Moves: the data points that changed (or, with preview, would change). */
  changes: z.array(moveChangeSchema).optional(),
});
export type ImageActionResponse = z.infer<typeof imageActionResponseSchema>;
