import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import type { Permission } from './permissions.js';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';

/**
 * Imported AI annotations (issue 17; spec doc 2 §2.3, §3, §4, §7, §8; doc 3 §2, §3, §4, §9): the
 * .mld import's statuses, messages and call shapes, the Image Management Annotations tab's records,
 * and what the viewer needs of an image's imports. docs/MLD.md explains the import.
 */

export const MLD_STATUSES = ['UPLOADED', 'QUEUED', 'PROCESSING', 'COMPLETE', 'ERROR', 'ARCHIVED'] as const;
export type MldStatus = (typeof MLD_STATUSES)[number];

/** Doc 2 §3: the statuses as shown, each with its icon. */
export const MLD_STATUS_LABELS: Record<MldStatus, string> = {
  UPLOADED: 'Uploaded',
  QUEUED: 'Queued',
  PROCESSING: 'Processing',
  COMPLETE: 'Complete',
  ERROR: 'Error',
  ARCHIVED: 'Archived',
};

export const MLD_IMPORT_PERMISSION: Permission = 'IM_AnnotationListTab_ImportAnnotations';

/** The source of imported annotations (doc 3 §3 Annotation.source). */
export const AI_SOURCE = 'VisioPharm';

/** How many files one dialog uploads at once, and the largest file taken (Lamina's bounds). */
export const MLD_MAX_FILES = 20;
export const MLD_MAX_BYTES = 512 * 1024 * 1024;

export const MLD_IMPORT_MESSAGES = {
  unableToUpload: 'Unable to upload MLD file',
  notMld: (name: string) => `Only .mld files can be imported: ${name}`,
  noImageMatches: (name: string) => `No image matches ${name}`,
  severalImagesMatch: (name: string) => `Several images match ${name}`,
  imageNotFound: 'Image not found',
  imageArchived: 'The image is archived',
  uploadNotFound: 'The uploaded file was not found: upload it again',
  alreadyRegistered: 'This upload is already registered',
  tooLarge: `An .mld file may be at most ${MLD_MAX_BYTES / 1024 / 1024} MB`,
  registered: 'The file was uploaded and its import queued',
  replaced: (id: number) => `Replaced by import ${id}`,
  imageArchivedSince: 'Its image was archived',
  workerStopped: 'The import stopped: the worker went away and no retry was left',
} as const;

/**
 * The APP sequence of a file, from its name (docs/MLD.md): Visiopharm names result files after the
 * APP that made them. `APP12`, `APP_12`, `App-12` anywhere, else a leading number (`0012_…`);
 * null when neither is there.
 */
export function appSequenceOf(fileName: string): string | null {
  const base = fileName.replace(/\.mld$/i, '');
  const app = /(?:^|[^A-Za-z])app[ _-]?(\d{1,9})(?!\d)/i.exec(base);
  if (app?.[1]) return app[1];
  const leading = /^(\d{1,9})[ _-]/.exec(base);
  return leading?.[1] ?? null;
}

/** The image name an .mld names in its [ImageInfo] path: the file name without folders or extension. */
export function imageBaseName(path: string): string {
  const file = path.split(/[\\/]/).pop() ?? path;
  const dot = file.lastIndexOf('.');
  return (dot > 0 ? file.slice(0, dot) : file).trim();
}

// ---------------------------------------------------------------------------------------------
// Calls (doc 2 §7)
// ---------------------------------------------------------------------------------------------

const id = z.number().int().positive().max(2_147_483_647);
const fileName = z.string().trim().min(1).max(TEXT_LIMITS.fileName);

/** POST /api/mld/get-signed-urls { fileNames }. */
export const mldSignedUrlsRequestSchema = z.object({ fileNames: z.array(fileName).min(1).max(MLD_MAX_FILES) });
export const mldSignedUrlsResponseSchema = z.object({
  success: z.literal(true),
  urls: z.array(z.object({ fileName: z.string(), signedUrl: z.string(), s3Key: z.string() })),
});

/** POST /api/mld { name, s3Key, imageId? }: registers an uploaded file and queues its import. */
export const registerMldRequestSchema = z.object({
  name: fileName,
  s3Key: z.string().min(1).max(1024),
  imageId: id.nullish(),
});
export type RegisterMldRequest = z.infer<typeof registerMldRequestSchema>;

/** An import as the Annotations tab lists it (doc 2 §3 "Annotation (imported file) record"). */
export const mldRecordSchema = z.object({
  mldId: z.number().int(),
  mldName: z.string(),
  mldFileLength: z.number().int(),
  status: z.enum(MLD_STATUSES),
  errorMessage: z.string().nullable(),
  appSequenceId: z.string().nullable(),
  numLayers: z.number().int().nullable(),
  imageId: z.number().int().nullable(),
  /** The image's file name, or the neutral label without the file-name permission. */
  imageName: z.string().nullable(),
  studyId: z.number().int().nullable(),
  caseId: z.number().int().nullable(),
  /** The case's Endo / Histo Procedure IDs (the case link's label). */
  procId: z.string().nullable(),
  histoProcedureId: z.string().nullable(),
  /** What the import added: objects per kind. */
  counts: z
    .object({ hpfs: z.number().int(), points: z.number().int(), regions: z.number().int(), lines: z.number().int() })
    .nullable(),
  uploadedAt: z.string(),
  uploadedBy: z.string().nullable(),
});
export type MldRecord = z.infer<typeof mldRecordSchema>;

export const registerMldResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  mld: mldRecordSchema,
});

export const MLD_SORT_KEYS = ['uploadedAt', 'mldName', 'status', 'appSequenceId', 'imageName'] as const;

/** POST /api/imageManagement/annotations: the Annotations tab (search, status, paging; ?reportFormat=csv). */
export const mldListRequestSchema = z.object({
  searchText: z.string().max(TEXT_LIMITS.search).optional(),
  annotationStatusFilter: z.array(z.enum(MLD_STATUSES)).max(MLD_STATUSES.length).optional(),
  studyFilter: z
    .object({ selectedIds: z.array(id).max(200).default([]) })
    .partial()
    .optional(),
  page: pageSchema.default(1),
  pageSize: pageSizeSchema.default(20),
  sort: z.enum(sortValues(MLD_SORT_KEYS)).default('-uploadedAt'),
});
export type MldListRequest = z.input<typeof mldListRequestSchema>;
export const mldListResponseSchema = z.object({
  success: z.literal(true),
  results: z.array(mldRecordSchema),
  total: z.number().int(),
});

/** The Annotations tab's CSV columns (the same record). */
export const MLD_CSV_HEADER = [
  'Imported Annotations File',
  'File Size (bytes)',
  'Status',
  'Error',
  'APP Sequence',
  'Layers',
  'Image File',
  'Endo Procedure ID',
  'Histo Procedure ID',
  'Import Date',
  'User',
] as const;

/** Doc 2 §2.3: the help text of the Annotations tab. */
export const MLD_HELP_TEXT =
  'Layers are imported from .mld files to give central readers AI annotations: heatmap, HPFs, tissue detection and point counts.';

/** File sizes in 1024 steps (doc 3 §9): B, kB, MB, GB, TB with 2 decimals. */
export function formatFileSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)} ${units[unit]}`;
}

/** GET /api/images/{id}/ai-layers: the image's completed imports and AI classes (the viewer's AI tree). */
export const aiLayersResponseSchema = z.object({
  success: z.literal(true),
  imageId: z.number().int(),
  /** 'Include AI annotation counts in reports' (doc 3 §2): the image's acceptAiAnnotations. */
  acceptAiAnnotations: z.boolean(),
  imports: z.array(
    z.object({
      mldId: z.number().int(),
      name: z.string(),
      appSequenceId: z.string().nullable(),
      numLayers: z.number().int().nullable(),
      counts: mldRecordSchema.shape.counts,
      /** The heatmap overlay (GET /api/mld/{id}/heatmap, a PNG stretched over the image), when the file had one. */
      heatmap: z.object({ name: z.string().nullable(), url: z.string() }).nullable(),
      completedAt: z.string().nullable(),
    }),
  ),
  /** The AI classes of the image's imported annotations, with their live object counts. */
  classes: z.array(
    z.object({ id: z.number().int(), name: z.string(), color: z.string().nullable(), count: z.number().int() }),
  ),
});
export type AiLayers = z.infer<typeof aiLayersResponseSchema>;
