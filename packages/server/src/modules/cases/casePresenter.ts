import {
  mayViewCaseField,
  readsAssignedCasesOnly,
  userDisplayName,
  type CaseImage,
  type CaseReader,
  type CaseReaderRole,
  type CaseSearchResult,
  type CaseStatus,
  type CaseView,
  type ImageStatus,
  type StudyCaseRow,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import { imageName } from '../../access/imageLabel.js';
import type {
  CaseCommentRow,
  CaseImageRow,
  CaseRow,
  CaseSearchRow,
  ReaderRow,
  StudyCaseListRow,
} from './caseQueries.js';

/**
 * What a case shows to whom (issue 11): subject, site and visit IDs only with their view
 * permissions (mayViewCaseField); readers, QC users and open queries not to blinded readers; image
 * names only with the file-name permission (else the neutral label).
 */
type Viewer = Pick<Principal, 'id' | 'actions' | 'workAsRole'>;

function blinded(viewer: Viewer, field: 'subjectId' | 'siteId' | 'visitId', value: string | null): string | null {
  return mayViewCaseField(viewer.actions, field) ? value : null;
}

export function presentReader(row: ReaderRow): CaseReader {
  return {
    id: row.id,
    username: row.username,
    firstName: row.first_name,
    lastName: row.last_name,
    displayName: userDisplayName({ username: row.username, firstName: row.first_name, lastName: row.last_name }),
    numReadCases: row.num_read_cases ?? 0,
    numTotalCases: row.num_total_cases ?? 0,
    readAt: row.read_at ? row.read_at.toISOString() : null,
  };
}

export function presentCaseImage(
  row: Omit<CaseImageRow, 'case_position'> & { case_position?: number | null },
  viewer: Viewer,
  procId: string | null,
): CaseImage {
  return {
    id: row.id,
    name: imageName(
      { id: row.id, name: row.name, case_proc_id: procId, case_position: row.case_position ?? null },
      viewer,
    ),
    status: row.status as ImageStatus,
    accessionNumber: row.accession_number,
    biopsyLocation: row.biopsy_location,
    uploadedAt: row.uploaded_at.toISOString(),
    processed: row.cog_key !== null,
    ignored: row.ignored,
    // Whether Show to reader / Hide from reader is accepted; nothing of queries to a blinded reader.
    inQueryChain: !readsAssignedCasesOnly(viewer.workAsRole) && Boolean(row.in_query_chain),
  };
}

function userRef(id: number | null, username: string | null, first: string | null, last: string | null) {
  if (id === null || username === null) return null;
  return { id, username, displayName: userDisplayName({ username, firstName: first, lastName: last }) };
}

export function presentCase(
  row: CaseRow,
  readers: readonly (ReaderRow & { role: CaseReaderRole })[],
  images: readonly CaseImageRow[],
  viewer: Viewer,
  comment: CaseCommentRow | null = null,
): CaseView {
  const reader = readsAssignedCasesOnly(viewer.workAsRole);
  return {
    id: row.id,
    studyId: row.study_id,
    studyName: row.study_name,
    procId: row.proc_id,
    histoProcedureId: row.histo_procedure_id,
    subjectId: blinded(viewer, 'subjectId', row.subject_id),
    siteId: blinded(viewer, 'siteId', row.site_id),
    visitId: blinded(viewer, 'visitId', row.visit_id),
    status: row.status,
    onHoldFrom: row.on_hold_from as CaseStatus | null,
    prevWorkflowStatuses: row.prev_workflow_statuses as CaseStatus[],
    caseStatusReverted: row.case_status_reverted,
    createdAt: row.created_at.toISOString(),
    qc1By: reader ? null : userRef(row.qc1_by, row.qc1_username, row.qc1_first_name, row.qc1_last_name),
    qc2By: reader ? null : userRef(row.qc2_by, row.qc2_username, row.qc2_first_name, row.qc2_last_name),
    readBy: reader ? null : userRef(row.read_by, row.read_by_username, row.read_by_first_name, row.read_by_last_name),
    qcCompletedAt: row.qc_completed_at ? row.qc_completed_at.toISOString() : null,
    readCompletedAt: row.read_completed_at ? row.read_completed_at.toISOString() : null,
    openQueries: reader ? 0 : (row.open_queries ?? 0),
    // A blinded reader sees no other reader, only their own assignment and whether they have read.
    readers: (reader ? readers.filter((r) => r.id === viewer.id) : readers).map((r) => ({
      ...presentReader(r),
      role: r.role,
    })),
    images: images.map((image) => presentCaseImage(image, viewer, row.proc_id)),
    lastCaseComment: comment
      ? {
          text: comment.comment,
          imageId: comment.image_id,
          by: comment.username
            ? userDisplayName({
                username: comment.username,
                firstName: comment.first_name,
                lastName: comment.last_name,
              })
            : 'Lamina',
          createdAt: comment.created_at.toISOString(),
        }
      : null,
  };
}

export function presentStudyCaseRow(row: StudyCaseListRow, viewer: Viewer): StudyCaseRow {
  const reader = readsAssignedCasesOnly(viewer.workAsRole);
  return {
    id: row.id,
    studyId: row.study_id,
    procId: row.proc_id,
    histoProcedureId: row.histo_procedure_id,
    createdAt: row.created_at.toISOString(),
    subjectId: blinded(viewer, 'subjectId', row.subject_id),
    visitId: blinded(viewer, 'visitId', row.visit_id),
    siteId: blinded(viewer, 'siteId', row.site_id),
    status: row.status,
    prevWorkflowStatuses: row.prev_workflow_statuses as CaseStatus[],
    openQueries: reader ? null : (row.open_queries ?? 0),
    qc1User: reader
      ? null
      : row.qc1_username
        ? userDisplayName({ username: row.qc1_username, firstName: row.qc1_first_name, lastName: row.qc1_last_name })
        : null,
    assignedReaders: reader ? null : row.reader_names,
    numberOfImages: row.number_of_images ?? 0,
    // The caller's own read only (selected by the caller's id): never another reader's.
    myReadAt: row.my_read_at ? row.my_read_at.toISOString() : null,
  };
}

/** A case found by the Assign to Case and Move dialogs' search (GET /api/cases). */
export function presentCaseSearchRow(row: CaseSearchRow, viewer: Viewer): CaseSearchResult {
  return {
    caseId: row.id,
    procId: row.proc_id,
    subjectId: blinded(viewer, 'subjectId', row.subject_id),
    visitId: blinded(viewer, 'visitId', row.visit_id),
    siteId: blinded(viewer, 'siteId', row.site_id),
    caseStatus: row.status as CaseStatus,
  };
}
