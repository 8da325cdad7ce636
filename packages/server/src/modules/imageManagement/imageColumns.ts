import type { ImImageColumnKey, Permission } from '@lamina/domain';
import type { ImagesTable } from '../../platform/db/schema.js';

/** Who sees each tab of Image Management: its list's view permission. */
export const IM_IMAGES_PERMISSION: Permission = 'IM_ImageListTab_ViewImageslistTab';
export const IM_CASES_PERMISSION: Permission = 'IM_CaseListTab_ViewPage';

/**
 * Image-management columns stored as text on the image row, and their column (Edit Column and the
 * sample-data import write them).
 */
export const IMAGE_TEXT_COLUMN = {
  imageFilename: 'name',
  accessionNumber: 'accession_number',
  protocolId: 'protocol_id',
  siteId: 'site_id',
  subjectId: 'subject_id',
  visitId: 'visit_id',
  labVisitId: 'lab_visit_id',
  anatomicalSegment: 'biopsy_location',
  specimenCollectionDate: 'specimen_collection_date',
  qaComments: 'qa_comments',
} as const satisfies Partial<Record<ImImageColumnKey, keyof ImagesTable>>;
export type ImageTextKey = keyof typeof IMAGE_TEXT_COLUMN;
