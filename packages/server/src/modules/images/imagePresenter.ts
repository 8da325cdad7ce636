import {
  imageExtent,
  magnificationsFor,
  maxTmsZoom,
  type ImageStatus,
  type ImageView,
  type ProcessingStatus,
  type StudyImageRow,
} from '@lamina/domain';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import type { StudyImageListRow } from './imageQueries.js';

/** The columns the viewer's Image is built from. */
export const IMAGE_VIEW_COLUMNS = [
  'images.id',
  'images.name',
  'images.s3_key',
  'images.uploaded_at',
  'images.study_id',
  'images.uploader_id',
  'images.cog_key',
  'images.case_id',
  'images.processing_status',
  'images.processing_progress',
  'images.status',
  'images.status_message',
  'images.accession_number',
  'images.biopsy_location',
  'images.mpp',
  'images.objective_power',
  'images.width',
  'images.height',
  'images.levels',
  'images.z_stack_size',
  'images.ignored',
  'images.accept_ai_annotations',
  'images.replaces_image_id',
  'images.label_key',
  'images.macro_key',
] as const;

export interface ImageViewRow {
  id: number;
  name: string;
  s3_key: string;
  uploaded_at: Date;
  study_id: number | null;
  uploader_id: number | null;
  cog_key: string | null;
  case_id: number | null;
  processing_status: string;
  processing_progress: number;
  status: string;
  status_message: string | null;
  accession_number: string | null;
  biopsy_location: string | null;
  mpp: number | null;
  objective_power: number | null;
  width: number | null;
  height: number | null;
  levels: number | null;
  z_stack_size: number;
  ignored: boolean;
  accept_ai_annotations: boolean;
  replaces_image_id: number | null;
  label_key: string | null;
  macro_key: string | null;
}

export interface TileUrlOptions {
  tileTokens: TileTokens;
  /** Base of the tile server ('' = same origin). */
  tileServerLocation: string;
  userId: number;
  ttlSeconds: number;
}

/** Tile tokens live as long as a working session could reasonably keep the viewer open. */
export const TILE_TOKEN_TTL_SECONDS = 12 * 60 * 60;

/**
 * The Image as the viewer sees it (doc 3 §3). No subject, site or visit fields: nothing to blind.
 * The tile URL (with its token) is given only once a pyramid exists.
 */
export function presentImage(row: ImageViewRow, tiles: TileUrlOptions): ImageView {
  const processed = row.cog_key !== null && row.width !== null && row.height !== null;
  const base = tiles.tileServerLocation.replace(/\/+$/, '');
  const token = processed ? tiles.tileTokens.issue(row.id, tiles.userId, tiles.ttlSeconds) : null;
  return {
    id: row.id,
    name: row.name,
    s3Key: row.s3_key,
    uploadedAt: row.uploaded_at.toISOString(),
    studyId: row.study_id,
    uploaderId: row.uploader_id,
    cogKey: row.cog_key,
    magnifications: magnificationsFor(row.objective_power, row.mpp),
    extent: processed && row.width !== null && row.height !== null ? imageExtent(row.width, row.height) : null,
    caseId: row.case_id,
    processingStatus: row.processing_status as ProcessingStatus,
    processingProgress: row.processing_progress,
    status: row.status as ImageStatus,
    statusMessage: row.status_message,
    pixelSize: row.mpp,
    accessionNumber: row.accession_number,
    biopsyLocation: row.biopsy_location,
    physicalResolution: row.mpp,
    maxTmsZoom: row.width !== null && row.height !== null ? maxTmsZoom(row.width, row.height) : 0,
    zStackSize: row.z_stack_size,
    lastImageComment: null,
    lastLabQueryId: null,
    ignored: row.ignored,
    acceptAiAnnotations: row.accept_ai_annotations,
    width: row.width,
    height: row.height,
    levels: row.levels,
    objectivePower: row.objective_power,
    replacesImageId: row.replaces_image_id,
    hasLabel: row.label_key !== null,
    hasMacro: row.macro_key !== null,
    tileUrl: token ? `${base}/tiles/${row.id}/{z}/{x}/{y}?t=${encodeURIComponent(token)}` : null,
  };
}

/**
 * A row of the study page's Images tab (doc 2 §3 "Image (study page)" with the image-and-query
 * additions). No subject, site or visit fields: nothing to blind for central readers.
 */
export function presentStudyImageRow(row: StudyImageListRow): StudyImageRow {
  return {
    id: row.id,
    studyId: row.study_id ?? 0,
    caseId: row.case_id,
    name: row.name,
    uploadedAt: row.uploaded_at.toISOString(),
    accessionNumber: row.accession_number,
    biopsyLocation: row.biopsy_location,
    processingStatus: row.processing_status as ProcessingStatus,
    processingProgress: row.processing_progress,
    cogKey: row.cog_key,
    status: row.status as ImageStatus,
    statusMessage: row.status_message,
    lastLabQuery: row.query_status ? { queryStatus: row.query_status, resolution: row.resolution } : null,
    simpleCase: row.case_id !== null ? { id: row.case_id, procId: row.case_proc_id } : null,
  };
}
