import {
  imageExtent,
  magnificationsFor,
  maxTmsZoom,
  mayViewLabel,
  type ImageStatus,
  type ImageView,
  type ProcessingStatus,
  type StudyImageRow,
} from '@lamina/domain';
import type { TileGrant, TileTokens } from '../../platform/tiles/tileToken.js';
import type { StudyImageListRow } from './imageQueries.js';
import type { Principal } from '../../platform/auth/principal.js';
import { replacementDecision } from './imageReplacement.js';
import { imageName } from '../../access/imageLabel.js';

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
  'images.organization_id',
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
  /** Organization of the uploader (the label rule of Site). */
  organization_id: number | null;
  /** The case's procedure ID and the image's place among the case's live images (neutral labels). */
  case_proc_id: string | null;
  case_position: number | null;
  /** The latest completed .mld import (issue 17); absent where a query does not read it. */
  mld_file?: { id: number; name: string; appSequenceId: string | null } | null;
}

/** Who the image is presented to: what they may see of it depends on their permissions. */
export interface ImageViewer {
  actions: ReadonlySet<string>;
  organizationId: number | null;
}

export interface TileUrlOptions {
  tileTokens: TileTokens;
  /** Base of the tile server ('' = same origin). */
  tileServerLocation: string;
  /** Who the tile token is for: the user, their access generation and their session. */
  grant: TileGrant;
  ttlSeconds: number;
}

/** Tile tokens live as long as a working session could reasonably keep the viewer open. */
export const TILE_TOKEN_TTL_SECONDS = 12 * 60 * 60;

/** Tile URLs for a user and their session: the token stops when either loses access. */
export function tileUrlOptions(
  tileTokens: TileTokens,
  tileServerLocation: string,
  principal: Pick<Principal, 'id' | 'accessGeneration'>,
  sessionId: string,
): TileUrlOptions {
  return {
    tileTokens,
    tileServerLocation,
    grant: { userId: principal.id, generation: principal.accessGeneration, sessionId },
    ttlSeconds: TILE_TOKEN_TTL_SECONDS,
  };
}

/**
 * The Image as the viewer sees it (doc 3 §3). No subject, site or visit fields, and no storage key;
 * the file name only with the file-name permission (else a neutral label: central readers are
 * blinded), label and macro flags only when the viewer may fetch them. The tile URL (with its
 * token) is given only once a pyramid exists.
 */
export function presentImage(row: ImageViewRow, tiles: TileUrlOptions, viewer: ImageViewer): ImageView {
  const labels = mayViewLabel(viewer.actions, { organizationId: row.organization_id }, viewer.organizationId);
  const processed = row.cog_key !== null && row.width !== null && row.height !== null;
  const base = tiles.tileServerLocation.replace(/\/+$/, '');
  const token = processed ? tiles.tileTokens.issue(row.id, tiles.grant, tiles.ttlSeconds) : null;
  return {
    id: row.id,
    name: imageName(row, viewer),
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
    hasLabel: labels && row.label_key !== null,
    hasMacro: labels && row.macro_key !== null,
    mldFile: row.mld_file ?? null,
    tileUrl: token ? `${base}/tiles/${row.id}/{z}/{x}/{y}?t=${encodeURIComponent(token)}` : null,
  };
}

/**
 * A row of the study page's Images tab (doc 2 §3 "Image (study page)" with the image-and-query
 * additions). No subject, site or visit fields; the file name as for the viewer (imageName).
 */
export function presentStudyImageRow(
  row: StudyImageListRow,
  viewer: Pick<ImageViewer, 'actions'> & Pick<Principal, 'id' | 'workAsRole'>,
): StudyImageRow {
  return {
    id: row.id,
    studyId: row.study_id ?? 0,
    caseId: row.case_id,
    name: imageName(row, viewer),
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
    mayReplace:
      replacementDecision(
        { processingStatus: row.processing_status },
        row.open_queries.map((q) => ({ queryStatus: 'OPEN' as const, ...q })),
        viewer,
      ) === 'allowed',
  };
}
