import {
  CASE_STATUS_LABELS,
  IMAGE_STATUS_LABELS,
  imImageEditRefusals,
  userDisplayName,
  type CsvValue,
  type ImCaseColumnKey,
  type ImCaseRecord,
  type ImImageColumnKey,
  type ImImageRecord,
} from '@lamina/domain';
import type { CaseRecordRow, ImageRecordRow } from './imQueries.js';

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : (value as string));

/**
 * An image record: the identifiers, then exactly the columns the query selected (the user's
 * viewable ones) — a column the user may not view is absent, not null — and why each column of
 * `editable` (those the user may edit) cannot be edited now, by the rule the edit is refused with
 * (issue 29 item 17): the status the rule reads is not sent.
 */
export function presentImageRecord(row: ImageRecordRow, editable: readonly string[] = []): ImImageRecord {
  const { id, study_id, case_id, edit_status, ...columns } = row;
  const record: Record<string, unknown> = { id, studyId: study_id, caseId: case_id, ...columns };
  if ('uploadedAt' in columns) record.uploadedAt = iso(columns.uploadedAt);
  if (editable.length > 0)
    record.editRefusals = imImageEditRefusals({ caseId: case_id, studyId: study_id, status: edit_status }, editable);
  return record as ImImageRecord;
}

type UserJson = { id: number; username: string; firstName: string | null; lastName: string | null };

export function presentCaseRecord(row: CaseRecordRow): ImCaseRecord {
  const { case_id, study_id, prev_workflow_statuses, ...columns } = row;
  const record: Record<string, unknown> = {
    caseId: case_id,
    studyId: study_id,
    prevWorkflowStatuses: prev_workflow_statuses,
    ...columns,
  };
  if ('caseCreatedAt' in columns) record.caseCreatedAt = iso(columns.caseCreatedAt);
  for (const key of ['labTech', 'iscQc'] as const)
    if (key in columns)
      record[key] = ((columns[key] as UserJson[] | null) ?? []).map((u) => ({
        id: u.id,
        username: u.username,
        displayName: userDisplayName(u),
      }));
  if ('crAssignments' in columns)
    record.crAssignments = ((columns.crAssignments as Omit<UserJson, 'id'>[] | null) ?? []).map((u) =>
      userDisplayName(u),
    );
  return record as ImCaseRecord;
}

/** An image record's CSV cells for the export's columns: statuses by their labels, times ISO 8601 UTC. */
export function imageCsvCells(record: ImImageRecord, columns: readonly ImImageColumnKey[]): CsvValue[] {
  return columns.map((key) => {
    if (key === 'status') return record.status ? IMAGE_STATUS_LABELS[record.status] : null;
    return record[key];
  });
}

/** A case record's CSV cells: statuses by their labels, people by their names ('; ' between). */
export function caseCsvCells(record: ImCaseRecord, columns: readonly ImCaseColumnKey[]): CsvValue[] {
  return columns.map((key) => {
    switch (key) {
      case 'status':
        return record.status ? CASE_STATUS_LABELS[record.status] : null;
      case 'labTech':
      case 'iscQc':
        return (record[key] ?? []).map((u) => u.displayName).join('; ');
      case 'crAssignments':
        return (record.crAssignments ?? []).join('; ');
      default:
        return record[key];
    }
  });
}
