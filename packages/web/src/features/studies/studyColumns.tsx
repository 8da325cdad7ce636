import { Tag, Tooltip } from '@blueprintjs/core';
import { INDICATION_LABELS, MODALITY_LABELS, type StudyListKind, type StudyListRow } from '@lamina/domain';
import type { DataColumn } from '../../components/DataTable';
import { formatDate } from '../../util/formatDate';

function StudyStatus({ study }: { study: StudyListRow }) {
  if (!study.onHold) {
    return (
      <Tag minimal intent="success">
        Active
      </Tag>
    );
  }
  return (
    <Tooltip content={study.onHoldReason ?? ''} placement="top" disabled={!study.onHoldReason}>
      {/* Focusable so the hold reason can be read without a mouse. */}
      <Tag minimal intent="warning" tabIndex={0} aria-label={`On hold: ${study.onHoldReason ?? ''}`}>
        On hold
      </Tag>
    </Tooltip>
  );
}

const count = (id: string, header: string, value: (s: StudyListRow) => number | null): DataColumn<StudyListRow> => ({
  id,
  header,
  cell: (s) => value(s) ?? '-',
  sortable: true,
  align: 'right',
  width: '8.5rem',
});

/**
 * The columns of the studies list for a kind of user (doc 1 §2.4; the kind is the domain's
 * `studyListKind`, the same function the server computes the counts by). Every column the server
 * can sort by (STUDY_SORT_KEYS) sorts.
 */
export function studyColumns(kind: StudyListKind): DataColumn<StudyListRow>[] {
  const dateColumn: DataColumn<StudyListRow> =
    kind === 'uploader'
      ? {
          id: 'mostRecentUploadAt',
          header: 'Most Recent Upload',
          cell: (s) => formatDate(s.mostRecentUploadAt),
          sortable: true,
        }
      : { id: 'createdAt', header: 'Created', cell: (s) => formatDate(s.createdAt), sortable: true };

  const common: DataColumn<StudyListRow>[] = [
    { id: 'name', header: 'Name', cell: (s) => <strong>{s.name}</strong>, sortable: true, width: '22%' },
    { id: 'status', header: 'Status', cell: (s) => <StudyStatus study={s} />, sortable: true, width: '10rem' },
    { ...dateColumn, width: '13rem' },
    {
      id: 'indications',
      header: 'Indications',
      cell: (s) => s.indications.map((i) => INDICATION_LABELS[i]).join(', '),
    },
    { id: 'locations', header: 'Locations', cell: (s) => s.anatomicalSegments.join(', ') },
    { id: 'modality', header: 'Modality', cell: (s) => s.modality.map((m) => MODALITY_LABELS[m]).join(', ') },
  ];

  switch (kind) {
    case 'admin':
      return [
        ...common,
        count('numberOfUnassignedImages', 'Unassigned Images', (s) => s.numberOfUnassignedImages),
        count('numberOfCasesNeedingQC', 'Cases to QC', (s) => s.numberOfCasesNeedingQC),
        count('numberOfQueriesOpen', 'Open Queries', (s) => s.numberOfQueriesOpen),
        count('numberOfQueriesAnswered', 'Answered Queries', (s) => s.numberOfQueriesAnswered),
      ];
    case 'reader':
      return [
        ...common,
        count('numberOfAssignedReadCases', 'Read Cases', (s) => s.numberOfAssignedReadCases),
        count('numberOfAssignedUnreadCases', 'Unread Cases', (s) => s.numberOfAssignedUnreadCases),
      ];
    case 'uploader':
      return [...common, count('numberOfQueriesOpen', 'Open Queries', (s) => s.numberOfQueriesOpen)];
  }
}
