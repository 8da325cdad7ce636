import type { Permission } from './permissions.js';
import { TEXT_LIMITS } from './constants.js';
import { z } from 'zod';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';

/**
 * Images, cases and their processing: the statuses of the spec (doc 1 §9, doc 2 §4, doc 3 §4), the
 * state machines as data, the accepted upload files, the upload and image messages, the wire shapes
 * of the upload calls and of the Image the viewer reads (doc 3 §3).
 */

// ---------------------------------------------------------------------------------------------
// Statuses
// ---------------------------------------------------------------------------------------------

export const IMAGE_STATUSES = [
  'PROCESSING',
  'FAIL_PROCESSING',
  'DATA_INCOMPLETE',
  'STUDY_ASSIGNMENT_PENDING',
  'DUPLICATE_IMAGE',
  'CASE_ASSIGNMENT_PENDING',
  'LAB_QC_PENDING',
  'ISC_QC_PENDING',
  'READY_FOR_READING',
  'COMPLETE',
  'ARCHIVED',
] as const;
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

/** Labels of the image statuses (doc 2 §4). */
export const IMAGE_STATUS_LABELS: Readonly<Record<ImageStatus, string>> = {
  PROCESSING: 'Processing',
  FAIL_PROCESSING: 'Failed Processing',
  DATA_INCOMPLETE: 'Data Incomplete',
  STUDY_ASSIGNMENT_PENDING: 'Study Assignment Pending',
  DUPLICATE_IMAGE: 'Duplicate Image',
  CASE_ASSIGNMENT_PENDING: 'Case Assignment Pending',
  LAB_QC_PENDING: 'Lab QC Pending',
  ISC_QC_PENDING: 'ISC QC Pending',
  READY_FOR_READING: 'Ready For Reading',
  COMPLETE: 'Complete',
  ARCHIVED: 'Archived',
};

/** Processing status of an image (doc 3 §4). */
export const PROCESSING_STATUSES = ['HOLDING', 'PENDING', 'SUBMITTED', 'SUCCESS', 'FAIL'] as const;
export type ProcessingStatus = (typeof PROCESSING_STATUSES)[number];

export const CASE_STATUSES = [
  'PENDING_LAB_QC',
  'PENDING_QC',
  'PROCESSED',
  'PENDING_ADJUDICATION',
  'COMPLETED',
  'ON_HOLD',
  'INVALID',
  'ARCHIVED',
] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

/** Labels of the case statuses (doc 2 §2.2, §4). */
export const CASE_STATUS_LABELS: Readonly<Record<CaseStatus, string>> = {
  PENDING_LAB_QC: 'Pending Lab QC',
  PENDING_QC: 'Pending QC',
  PROCESSED: 'Processed',
  // Beyond the spec's list (issue 30): the primary reads disagree by the study's adjudication rule.
  PENDING_ADJUDICATION: 'Pending Adjudication',
  COMPLETED: 'Completed',
  ON_HOLD: 'On Hold',
  INVALID: 'Invalid',
  ARCHIVED: 'Archived',
};

// ---------------------------------------------------------------------------------------------
// State machines as data. `since` names the issue that implements a transition; later issues
// flip theirs to implemented by adding the server path that performs it.
// ---------------------------------------------------------------------------------------------

export interface Transition<S extends string> {
  from: S;
  to: S;
  /** What causes it. */
  trigger: string;
  /** 'now' when this code base performs it, else the issue area that will. */
  since: 'now' | 'cases' | 'qc' | 'reading' | 'image-management';
}

const anyImage = (except: readonly ImageStatus[]): ImageStatus[] => IMAGE_STATUSES.filter((s) => !except.includes(s));

export const IMAGE_TRANSITIONS: readonly Transition<ImageStatus>[] = [
  // Processing (the slide pipeline).
  {
    from: 'PROCESSING',
    to: 'CASE_ASSIGNMENT_PENDING',
    trigger: 'processing succeeded, the image has a study',
    since: 'now',
  },
  {
    from: 'PROCESSING',
    to: 'STUDY_ASSIGNMENT_PENDING',
    trigger: 'processing succeeded, the image has no study',
    since: 'now',
  },
  {
    from: 'PROCESSING',
    to: 'DUPLICATE_IMAGE',
    trigger: 'processing succeeded, the same content is already in the study',
    since: 'now',
  },
  {
    from: 'PROCESSING',
    to: 'FAIL_PROCESSING',
    trigger: 'processing failed (unreadable, unsupported, or retries exhausted)',
    since: 'now',
  },
  // Replacing an image archives the one it replaces, whatever its status (except archived).
  ...anyImage(['ARCHIVED']).map((from) => ({
    from,
    to: 'ARCHIVED' as const,
    trigger: 'replaced by a new upload, its case archived, or archived with a reason',
    since: 'now' as const,
  })),
  // Later issues.
  {
    from: 'STUDY_ASSIGNMENT_PENDING',
    to: 'CASE_ASSIGNMENT_PENDING',
    trigger: 'moved into a study',
    since: 'image-management',
  },
  {
    from: 'CASE_ASSIGNMENT_PENDING',
    to: 'LAB_QC_PENDING',
    trigger: 'assigned to a case (or the status of its case’s stage: ISC_QC_PENDING for a case in Pending QC)',
    since: 'now',
  },
  { from: 'CASE_ASSIGNMENT_PENDING', to: 'ISC_QC_PENDING', trigger: 'assigned to a case in Pending QC', since: 'now' },
  {
    from: 'DATA_INCOMPLETE',
    to: 'CASE_ASSIGNMENT_PENDING',
    trigger: 'missing data completed',
    since: 'image-management',
  },
  { from: 'LAB_QC_PENDING', to: 'ISC_QC_PENDING', trigger: 'its case passes lab QC (case forward)', since: 'now' },
  { from: 'ISC_QC_PENDING', to: 'READY_FOR_READING', trigger: 'its case passes ISC QC (case forward)', since: 'now' },
  // Revert Status of the case moves its images to the status of the stage it goes back to.
  ...(['ISC_QC_PENDING', 'READY_FOR_READING', 'COMPLETE'] as const).flatMap((from) =>
    (['LAB_QC_PENDING', 'ISC_QC_PENDING', 'READY_FOR_READING'] as const)
      .filter((to) => IMAGE_STATUSES.indexOf(to) < IMAGE_STATUSES.indexOf(from))
      .map((to) => ({ from, to, trigger: 'its case is set back (Revert Status)', since: 'now' as const })),
  ),
  { from: 'READY_FOR_READING', to: 'COMPLETE', trigger: 'case marked as scored', since: 'reading' },
  { from: 'LAB_QC_PENDING', to: 'CASE_ASSIGNMENT_PENDING', trigger: 'removed from its case', since: 'now' },
  { from: 'ISC_QC_PENDING', to: 'CASE_ASSIGNMENT_PENDING', trigger: 'removed from its case', since: 'now' },
];

export function canTransitionImage(from: ImageStatus, to: ImageStatus): boolean {
  return IMAGE_TRANSITIONS.some((t) => t.from === from && t.to === to);
}

/** The image status after processing (doc 3 §4): the pipeline's only forward decision. */
export function statusAfterProcessing(outcome: { ok: boolean; hasStudy: boolean; duplicate: boolean }): ImageStatus {
  if (!outcome.ok) return 'FAIL_PROCESSING';
  if (!outcome.hasStudy) return 'STUDY_ASSIGNMENT_PENDING';
  return outcome.duplicate ? 'DUPLICATE_IMAGE' : 'CASE_ASSIGNMENT_PENDING';
}

/** Processing status moves forward only: PENDING → SUBMITTED → SUCCESS | FAIL (HOLDING → PENDING). */
export const PROCESSING_TRANSITIONS: readonly (readonly [ProcessingStatus, ProcessingStatus])[] = [
  ['HOLDING', 'PENDING'],
  ['PENDING', 'SUBMITTED'],
  ['SUBMITTED', 'SUCCESS'],
  ['SUBMITTED', 'FAIL'],
  // A retried job (worker crash, transient error) is picked again.
  ['SUBMITTED', 'SUBMITTED'],
  ['PENDING', 'FAIL'],
];

export function canTransitionProcessing(from: ProcessingStatus, to: ProcessingStatus): boolean {
  return PROCESSING_TRANSITIONS.some(([a, b]) => a === from && b === to);
}

/** Study page 'Processed' column (doc 2 §4): Succeeded when the image has a cogKey, Failed, or neither. */
export function processedState(image: {
  cogKey: string | null;
  processingStatus: ProcessingStatus;
}): 'Succeeded' | 'Failed' | null {
  if (image.cogKey) return 'Succeeded';
  if (image.processingStatus === 'FAIL') return 'Failed';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Accepted files and messages
// ---------------------------------------------------------------------------------------------

/** The specification's image extensions (doc 2 §5, §9), lower case with the dot: read by Lamina's own TIFF readers. */
export const SPEC_IMAGE_EXTENSIONS = ['.svs', '.tif', '.tiff'] as const;

/**
 * The slide formats beyond the specification's three (issue 31): the extension, what a user knows
 * the format as, and whether the server reads it through OpenSlide (a system library: where it is
 * missing these are refused at upload with {@link openSlideMissing}). `.zip` carries the formats of
 * several files — a MIRAX `.mrxs` with its folder, a Hamamatsu `.vms` with its images, or the DICOM
 * instances of one series — and its content decides (MIRAX and VMS need OpenSlide, DICOM does not).
 * Philips and Ventana TIFF exports arrive as `.tiff`/`.tif` and are told apart by their content.
 */
export const VENDOR_SLIDE_FORMATS = [
  { extension: '.ndpi', label: 'Hamamatsu NDPI', openslide: true },
  { extension: '.scn', label: 'Leica SCN', openslide: true },
  { extension: '.bif', label: 'Roche Ventana BIF', openslide: true },
  { extension: '.svslide', label: 'Sakura SVSlide', openslide: true },
  { extension: '.dcm', label: 'DICOM WSI (one series)', openslide: false },
  { extension: '.zip', label: 'MIRAX .mrxs, Hamamatsu .vms or DICOM series, zipped', openslide: false },
] as const;

/** Every image extension Lamina can read on a server that has OpenSlide. */
export const IMAGE_EXTENSIONS: readonly string[] = [
  ...SPEC_IMAGE_EXTENSIONS,
  ...VENDOR_SLIDE_FORMATS.map((format) => format.extension),
];

/** The image extensions a server accepts: every one, less OpenSlide's where it is not installed. */
export function acceptedImageExtensions(server: { openslide: boolean }): string[] {
  return [
    ...SPEC_IMAGE_EXTENSIONS,
    ...VENDOR_SLIDE_FORMATS.filter((format) => server.openslide || !format.openslide).map((f) => f.extension),
  ];
}

/** The file chooser's `accept` attribute for a list of extensions (default: every one Lamina reads). */
export function imageAccept(extensions: readonly string[] = IMAGE_EXTENSIONS): string {
  return extensions.join(',');
}

/** The extension of a file name among `extensions` (longest match, lower case), or null. */
export function imageExtensionOf(fileName: string, extensions: readonly string[] = IMAGE_EXTENSIONS): string | null {
  const lower = fileName.toLowerCase();
  let found: string | null = null;
  for (const ext of extensions)
    if (lower.endsWith(ext) && lower.length > ext.length && ext.length > (found?.length ?? 0)) found = ext;
  return found;
}

export function hasImageExtension(fileName: string, extensions: readonly string[] = IMAGE_EXTENSIONS): boolean {
  return imageExtensionOf(fileName, extensions) !== null;
}

/** The vendor format of an extension that needs OpenSlide, or null. */
export function openSlideFormatOf(fileName: string): (typeof VENDOR_SLIDE_FORMATS)[number] | null {
  const ext = imageExtensionOf(fileName);
  return VENDOR_SLIDE_FORMATS.find((format) => format.openslide && format.extension === ext) ?? null;
}

/** 400 (upload) or the failure reason (processing) of a format the server cannot read without OpenSlide. */
export const openSlideMissing = (fileName: string, format: string): string =>
  `${fileName}: ${format} slides are read with OpenSlide, which is not installed on the server ` +
  `(Debian/Ubuntu: apt-get install libopenslide0; macOS: brew install openslide)`;

/** The browser switches to the resumable multipart upload above this size. */
export const MULTIPART_THRESHOLD_BYTES = 64 * 1024 * 1024;
/** Part size of multipart uploads (S3 needs at least 5 MiB except for the last part). */
export const MULTIPART_PART_BYTES = 16 * 1024 * 1024;

export const IMAGE_MESSAGES = {
  unableToCreateSignedUrls: 'Unable to create signed URLs',
  fileUploadFailed: 'File upload failed',
  unableToCreateImage: 'Unable to create image',
  unableToSendNotification: 'Unable to send new files notification',
  notificationWarning: 'Warning: failed to send email notification of upload(s)',
  imageProcessing: 'Image processing...',
  imageProcessingFailed: 'Image processing failed',
  noImagesFound: 'No image(s) found',
  couldNotDownload: 'Could not download image.',
  unableToFetchImage: 'Unable to fetch image',
  unableToFetchImages: 'Unable to fetch images',
  imageNotFound: 'Image not found',
  uploadNotFound: 'The uploaded file was not found in storage',
  uploadNotInStudy: 'The uploaded file does not belong to this study',
  imageToReplaceNotFound: 'The image to replace was not found',
  imageToReplaceArchived: 'The image to replace is archived',
  /** Replace is for an image with an open query (doc 2 §2.5) or, beyond the spec, whose processing failed. */
  imageToReplaceNotReplaceable: 'Only an image with an open query, or whose processing failed, can be replaced',
  imageToReplaceNotThroughQuery:
    'Only the target of an open query on this image may replace it, working as StudyAdmin, ISC, LabTech or Uploader',
  labelNotFound: 'No label image',
  macroNotFound: 'No macro image',
  invalidSignature: 'The link is invalid or has expired',
  uploadIncomplete: 'The upload is incomplete',
  notATiff: 'The file is not a TIFF or SVS slide',
  objectExists: 'This file was already uploaded and cannot be replaced',
  integrityFailed:
    'The stored file no longer matches the checksum recorded when it was processed; the download is blocked. Administrators can run storage:verify.',
  extensionMismatch: 'The file name’s extension does not match the uploaded file',
  tooManyNotifications: 'Too many upload notifications were sent. Try again in a few minutes.',
  // Refused before decoding (issue 9: pixel bombs); see docs/WORKFLOW.md "Limits".
  slideTilesShared: 'The slide is damaged or crafted: several of its tiles point at the same data',
  slideDataOutsideFile: 'The slide is damaged or truncated: its image data points outside the file',
  slideNoData: 'The slide has no image data',
  slideValueOutOfRange: 'The slide’s metadata holds a value out of range',
  workerStopped:
    'Processing stopped repeatedly because the worker ended unexpectedly; the file may be damaged or too large',
} as const;

const gigapixels = (pixels: number): string =>
  (pixels / 1e9).toLocaleString('en-US', { maximumFractionDigits: pixels < 1e9 ? 3 : 1 });

/** The slide's claimed size exceeds the configured limit (MAX_SLIDE_PIXELS). */
export const slideTooLarge = (width: number, height: number, maxPixels: number): string =>
  `The slide is too large to process: ${width} × ${height} px is ${gigapixels(width * height)} gigapixels, above the limit of ${gigapixels(maxPixels)} gigapixels`;

/** A side longer than any scanner makes (and than the database stores). */
export const slideSizeImpossible = (width: number, height: number): string =>
  `The slide declares an impossible size (${width} × ${height} px)`;

/** Far more pixels claimed than the file's bytes can hold. */
export const slideDataTooSmall = (pixels: number, bytes: number): string =>
  `The slide is damaged or crafted: it claims ${gigapixels(pixels)} gigapixels but holds only ${bytes.toLocaleString('en-US')} bytes of image data`;

/** The per-job time budget ran out (PROCESSING_TIME_LIMIT). */
export const processingTimedOut = (seconds: number): string =>
  `Processing took longer than the limit of ${seconds >= 120 ? `${Math.round(seconds / 60)} minutes` : `${seconds} seconds`}`;

/** Who may fetch label and macro images (they can carry patient identifiers). */
export const LABEL_PERMISSIONS: readonly Permission[] = [
  'AP_ImageViewer_ViewLabel',
  'AP_ImageViewer_ViewLabelOwnSlidesOnly',
];

/**
 * The label rule: with AP_ImageViewer_ViewLabel, the label of any image the user may see; with
 * AP_ImageViewer_ViewLabelOwnSlidesOnly (Site), only of slides the user's own organization uploaded.
 */
export function mayViewLabel(
  actions: ReadonlySet<string>,
  image: { organizationId: number | null },
  viewerOrganizationId: number | null,
): boolean {
  if (actions.has('AP_ImageViewer_ViewLabel')) return true;
  return (
    actions.has('AP_ImageViewer_ViewLabelOwnSlidesOnly') &&
    image.organizationId !== null &&
    image.organizationId === viewerOrganizationId
  );
}

/** File names often encode subject, site and visit: only users with this permission receive them. */
export const VIEW_FILE_NAME_PERMISSION: Permission = 'AP_ImageData_ViewFilename';

/**
 * What a user without the file-name permission (central readers …) sees instead of an image's file
 * name: the case's procedure ID and the image's place in the case, or the image's id.
 */
export function neutralImageLabel(image: {
  id: number;
  caseProcId: string | null;
  positionInCase: number | null;
}): string {
  if (image.caseProcId && image.positionInCase) return `${image.caseProcId} – image ${image.positionInCase}`;
  return `Image ${image.id}`;
}

/** 400 message for a file name whose extension is not accepted. */
export const unsupportedFileType = (fileName: string, accepted: readonly string[] = IMAGE_EXTENSIONS): string =>
  `File type not supported: ${fileName}. Accepted files: ${accepted.join(', ')}`;

/** The toast after a clean upload (issue 20): the files by name, and that processing has started. */
export function uploadStartedMessage(fileNames: readonly string[], replacing: boolean): string {
  const what =
    fileNames.length === 1
      ? (fileNames[0] ?? '1 file')
      : `${fileNames.length} files (${fileNames.slice(0, 3).join(', ')}${fileNames.length > 3 ? ', …' : ''})`;
  return `${replacing ? 'Replaced with' : 'Uploaded'} ${what}: processing has started`;
}

/** Upload progress messages (doc 2 §8). */
export const cancelledUpload = (file: string, url: string): string => `Cancelled upload of ${file} to ${url}`;
export const errorUploading = (file: string, url: string): string => `Error uploading ${file} to ${url}`;

/** The message the viewer shows for an image that is not ready (doc 3 §2, §4). */
export function viewerProcessingMessage(image: {
  processingStatus: ProcessingStatus;
  status: ImageStatus;
  statusMessage: string | null;
}): string | null {
  if (image.processingStatus === 'FAIL' || image.status === 'FAIL_PROCESSING') {
    return image.statusMessage
      ? `${IMAGE_MESSAGES.imageProcessingFailed}: ${image.statusMessage}`
      : IMAGE_MESSAGES.imageProcessingFailed;
  }
  if (image.processingStatus !== 'SUCCESS') return IMAGE_MESSAGES.imageProcessing;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Geometry of the viewer (doc 3 §9)
// ---------------------------------------------------------------------------------------------

export const TILE_SIZE = 256;
/** Magnification labels and jump keys (doc 3 §9). */
export const MAGNIFICATIONS = [1.25, 2.5, 5, 10, 20, 40] as const;

/** z of the full-resolution level: 0 is where the whole slide fits one 256-px tile. */
export function maxTmsZoom(width: number, height: number, tileSize = TILE_SIZE): number {
  const longest = Math.max(width, height);
  if (longest <= tileSize) return 0;
  return Math.ceil(Math.log2(longest / tileSize));
}

/** The objective power, or an estimate from the pixel size (10 µm / mpp, rounded to a standard lens). */
export function effectiveObjectivePower(objectivePower: number | null, mpp: number | null): number | null {
  if (objectivePower && objectivePower > 0) return objectivePower;
  if (!mpp || mpp <= 0) return null;
  const estimate = 10 / mpp;
  const standard = [1.25, 2.5, 5, 10, 20, 40, 60, 80, 100];
  return standard.reduce((best, m) =>
    Math.abs(Math.log(m / estimate)) < Math.abs(Math.log(best / estimate)) ? m : best,
  );
}

/** The spec's magnifications that the slide supports (≤ its objective power); empty when unknown. */
export function magnificationsFor(objectivePower: number | null, mpp: number | null = null): number[] {
  const power = effectiveObjectivePower(objectivePower, mpp);
  if (!power) return [];
  return MAGNIFICATIONS.filter((m) => m <= power + 1e-9);
}

/** Map extent in pixel space: [minX, minY, maxX, maxY] with y pointing up (OpenLayers' pixel projection). */
export function imageExtent(width: number, height: number): [number, number, number, number] {
  return [0, -height, width, 0];
}

// ---------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------

const id = z.number().int().positive();

export const signedUrlsRequestSchema = z.object({
  studyId: id,
  fileNames: z.array(z.string().min(1).max(TEXT_LIMITS.fileName)).min(1).max(100),
});
export type SignedUrlsRequest = z.infer<typeof signedUrlsRequestSchema>;

export const signedUrlSchema = z.object({ fileName: z.string(), signedUrl: z.string(), s3Key: z.string() });
export const signedUrlsResponseSchema = z.object({
  success: z.literal(true),
  data: z.object({ urls: z.array(signedUrlSchema) }),
});
export type SignedUrlsResponse = z.infer<typeof signedUrlsResponseSchema>;

export const createImageRequestSchema = z.object({
  name: z.string().trim().min(1).max(TEXT_LIMITS.fileName),
  s3Key: z.string().min(1).max(1024),
  studyId: id,
  imageToReplaceId: id.nullable().optional(),
});
export type CreateImageRequest = z.infer<typeof createImageRequestSchema>;

export const notifyUploadRequestSchema = z.object({
  studyId: id,
  numFiles: z.number().int().min(0).max(10_000),
  failures: z.union([z.number().int().min(0), z.array(z.string().max(500)).max(10_000)]).default(0),
});
export type NotifyUploadRequest = z.infer<typeof notifyUploadRequestSchema>;

/** Multipart (resumable) upload: create. */
export const createMultipartRequestSchema = z.object({
  studyId: id,
  fileName: z.string().min(1).max(TEXT_LIMITS.fileName),
  contentType: z.string().max(200).optional(),
});
export const multipartPartSchema = z.object({
  partNumber: z.number().int().min(1).max(10_000),
  etag: z.string().min(1).max(200),
});
export const completeMultipartRequestSchema = z.object({
  key: z.string().min(1).max(1024),
  parts: z.array(multipartPartSchema).min(1).max(10_000),
});
export const signPartsRequestSchema = z.object({
  key: z.string().min(1).max(1024),
  partNumbers: z.array(z.number().int().min(1).max(10_000)).min(1).max(1000),
});

/**
 * What @uppy/aws-s3 (v6) asks its `signRequest` callback to sign; the server answers a URL
 * (S3 presigned, or the local storage's own signed URL speaking the same S3 subset).
 */
export const uppySignRequestSchema = z.object({
  studyId: id,
  method: z.enum(['PUT', 'POST', 'GET', 'DELETE']),
  key: z.string().min(1).max(1024),
  uploadId: z.string().min(1).max(1024).optional(),
  partNumber: z.number().int().min(1).max(10_000).optional(),
  contentType: z.string().max(200).optional(),
  /** The original file name (the key Uppy proposes is replaced by one under the study's upload prefix). */
  fileName: z.string().min(1).max(TEXT_LIMITS.fileName).optional(),
});
export type UppySignRequest = z.infer<typeof uppySignRequestSchema>;

/** The Image as the viewer reads it (doc 3 §3) plus the tile URL template and processing progress. */
export const imageViewSchema = z.object({
  id: z.number().int(),
  /** The file name, or a neutral label for users without the file-name permission (neutralImageLabel). */
  name: z.string(),
  uploadedAt: z.string(),
  studyId: z.number().int().nullable(),
  uploaderId: z.number().int().nullable(),
  cogKey: z.string().nullable(),
  magnifications: z.array(z.number()),
  /** [minX, minY, maxX, maxY] in pixels, y up: [0, -height, width, 0]; null until processed. */
  extent: z.tuple([z.number(), z.number(), z.number(), z.number()]).nullable(),
  caseId: z.number().int().nullable(),
  processingStatus: z.enum(PROCESSING_STATUSES),
  processingProgress: z.number().int(),
  status: z.enum(IMAGE_STATUSES),
  statusMessage: z.string().nullable(),
  /** Microns per pixel at full resolution (null when the slide does not say). */
  pixelSize: z.number().nullable(),
  accessionNumber: z.string().nullable(),
  biopsyLocation: z.string().nullable(),
  /** Microns per pixel (the scale bar uses physicalResolution × 1e-6 m, default 2e-7 m). */
  physicalResolution: z.number().nullable(),
  maxTmsZoom: z.number().int(),
  zStackSize: z.number().int(),
  lastImageComment: z.string().nullable(),
  lastLabQueryId: z.number().int().nullable(),
  ignored: z.boolean(),
  acceptAiAnnotations: z.boolean(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  levels: z.number().int().nullable(),
  objectivePower: z.number().nullable(),
  replacesImageId: z.number().int().nullable(),
  hasLabel: z.boolean(),
  hasMacro: z.boolean(),
  /**
   * The imported AI annotation file (.mld) of the image, when one is linked: the viewer then offers
   * the AI opacity slider and asks at Mark as Scored whether to include the AI counts (doc 3 §2, §4).
   * Null until the .mld import links one.
   */
  mldFile: z.object({ id: z.number().int(), name: z.string(), appSequenceId: z.string().nullable() }).nullable(),
  /** `{base}/tiles/{id}/{z}/{x}/{y}?t={token}` with literal {z}, {x}, {y}; null until processed. */
  tileUrl: z.string().nullable(),
});
export type ImageView = z.infer<typeof imageViewSchema>;

/** POST /api/images. */
export const createImageResponseSchema = z.object({ success: z.literal(true), image: imageViewSchema });

/** POST /api/images/notify-upload. */
export const notifyUploadResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  recipients: z.number().int(),
  sent: z.number().int(),
  failed: z.number().int(),
  emailConfigured: z.boolean(),
});

/** A signed URL (the download of an original, a part of a multipart upload). */
export const signedUrlResponseSchema = z.object({ success: z.literal(true), url: z.string() });

/** The multipart upload calls (docs/WORKFLOW.md). */
export const createMultipartResponseSchema = z.object({
  success: z.literal(true),
  uploadId: z.string(),
  key: z.string(),
});
export const listPartsResponseSchema = z.object({
  success: z.literal(true),
  parts: z.array(z.object({ partNumber: z.number().int(), size: z.number().int(), etag: z.string() })),
});
export const signPartsResponseSchema = z.object({
  success: z.literal(true),
  urls: z.array(z.object({ partNumber: z.number().int(), url: z.string() })),
});
export const completeMultipartResponseSchema = z.object({
  success: z.literal(true),
  key: z.string(),
  size: z.number().int().nullable(),
});
export const successResponseSchema = z.object({ success: z.literal(true) });
/** POST /api/uploads/sign: the URL of one S3 request, and the new key for a new object. */
export const uppySignResponseSchema = z.object({ url: z.string(), key: z.string().optional() });

// ---------------------------------------------------------------------------------------------
// Study page, Images tab (doc 2 §2.5, §3 "Image (study page)", §7 GET /api/studies/{id}/images)
// ---------------------------------------------------------------------------------------------

export const STUDY_IMAGE_SORT_KEYS = ['name', 'uploadedAt', 'accessionNumber', 'biopsyLocation'] as const;
export type StudyImageSortKey = (typeof STUDY_IMAGE_SORT_KEYS)[number];

const queryFlag = z.enum(['true', 'false']).optional();

/** GET /api/studies/{id}/images: name (file name contains), hasQueries, isUnassigned, paging, sort. */
export const studyImageListQuerySchema = z.object({
  name: z.string().max(TEXT_LIMITS.fileName).optional(),
  hasQueries: queryFlag,
  isUnassigned: queryFlag,
  page: pageSchema.optional(),
  pageSize: pageSizeSchema.optional(),
  sort: z.enum(sortValues(STUDY_IMAGE_SORT_KEYS)).default('-uploadedAt'),
});
export type StudyImageListQuery = z.input<typeof studyImageListQuerySchema>;

export const QUERY_RESOLUTIONS = ['RESOLVED', 'UNRESOLVABLE'] as const;
export type QueryResolution = (typeof QUERY_RESOLUTIONS)[number];

/** The query icon of an image row (doc 2 §2.5): Open, Resolved or Unresolvable. */
export type ImageQueryState = 'Open' | 'Resolved' | 'Unresolvable';

export function imageQueryState(
  query: { queryStatus: 'OPEN' | 'CLOSED'; resolution: QueryResolution | null } | null,
): ImageQueryState | null {
  if (!query) return null;
  if (query.resolution === 'UNRESOLVABLE') return 'Unresolvable';
  if (query.resolution === 'RESOLVED') return 'Resolved';
  return query.queryStatus === 'OPEN' ? 'Open' : null;
}

/**
 * Replace image (doc 2 §2.5: only when the image has a query; doc 3 §6: from an open query) — an
 * image with an open query and, beyond the spec, one whose processing failed (a broken upload is
 * fixed by uploading the file again). The server refuses every other replacement.
 */
export function mayReplaceImage(image: { hasOpenQuery: boolean; processingStatus: string }): boolean {
  return image.hasOpenQuery || image.processingStatus === 'FAIL';
}

export const studyImageRowSchema = z.object({
  id: z.number().int(),
  studyId: z.number().int(),
  caseId: z.number().int().nullable(),
  name: z.string(),
  uploadedAt: z.string(),
  accessionNumber: z.string().nullable(),
  biopsyLocation: z.string().nullable(),
  processingStatus: z.enum(PROCESSING_STATUSES),
  /** 0–100 while processing. */
  processingProgress: z.number().int(),
  cogKey: z.string().nullable(),
  status: z.enum(IMAGE_STATUSES),
  statusMessage: z.string().nullable(),
  /** The image's latest query (doc 2 §3 image-and-query row). */
  lastLabQuery: z
    .object({ queryStatus: z.enum(['OPEN', 'CLOSED']), resolution: z.enum(QUERY_RESOLUTIONS).nullable() })
    .nullable(),
  simpleCase: z.object({ id: z.number().int(), procId: z.string().nullable() }).nullable(),
  /**
   * Whether the caller may replace it (the server's rule: the target of an open query on it, or a
   * failed slide, for the roles that replace images), so Replace is offered only where it works.
   */
  mayReplace: z.boolean(),
});
export type StudyImageRow = z.infer<typeof studyImageRowSchema>;

export const studyImageListResponseSchema = z.object({
  success: z.literal(true),
  images: z.array(studyImageRowSchema),
  total: z.number().int(),
});
export type StudyImageListResponse = z.infer<typeof studyImageListResponseSchema>;

/** True while an image is still on its way through the worker (the list polls for progress). */
export function isProcessing(image: { processingStatus: ProcessingStatus }): boolean {
  return (
    image.processingStatus === 'HOLDING' ||
    image.processingStatus === 'PENDING' ||
    image.processingStatus === 'SUBMITTED'
  );
}
