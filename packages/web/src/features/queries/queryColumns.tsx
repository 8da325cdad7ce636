import { Tag } from '@blueprintjs/core';
import { truncateReason, type QueryListRow, type QueryObjectType } from '@lamina/domain';
import type { DataColumn } from '../../components/DataTable';
import { formatDate, formatDay } from '../../util/formatDate';
import { queryStatusLabel } from './queryStatus';

/** Where a row opens (doc 3 §2): the case viewer or the image viewer, with the query named. */
export function queryRowTarget(row: Pick<QueryListRow, 'id' | 'objectType' | 'objectId' | 'studyId' | 'caseId'>) {
  return row.objectType === 'CASE'
    ? `/studies/${row.studyId}/cases/${row.caseId ?? row.objectId}?queryId=${row.id}`
    : `/studies/${row.studyId}/images/${row.objectId}?queryId=${row.id}`;
}

const dash = <span className="bp6-text-muted">-</span>;
const text = (value: string | null) => (value === null || value === '' ? dash : value);

/** The reason and sub-reason, cut to 34 characters and '...' (doc 3 §9); the whole text on hover. */
function ReasonCell({ row }: { row: QueryListRow }) {
  const full = row.queryReasonText ?? row.reasonText;
  if (full === null) return dash;
  return <span title={full}>{truncateReason(full)}</span>;
}

function StatusCell({ row }: { row: QueryListRow }) {
  const { label, intent } = queryStatusLabel(row);
  return (
    <Tag intent={intent} minimal={intent === 'none' || intent === 'primary'} data-testid="row-status">
      {label}
    </Tag>
  );
}

/** The columns of a queries list (doc 3 §3 list row); every one sorts on the server. */
export function queryColumns(objectType: QueryObjectType): DataColumn<QueryListRow>[] {
  const object: DataColumn<QueryListRow>[] =
    objectType === 'CASE'
      ? [
          { id: 'caseName', header: 'Endo Procedure ID', sortable: true, cell: (r) => text(r.caseName) },
          {
            id: 'histoProcedureId',
            header: 'Histo Procedure ID',
            sortable: true,
            cell: (r) => text(r.histoProcedureId),
          },
        ]
      : [
          {
            id: 'imageName',
            header: 'Image',
            sortable: true,
            cell: (r) => <span className="lamina-query-cell-name">{text(r.imageName)}</span>,
          },
          { id: 'caseName', header: 'Endo Procedure ID', sortable: true, cell: (r) => text(r.caseName) },
        ];
  return [
    {
      id: 'studyName',
      header: 'Study',
      sortable: true,
      cell: (r) => (
        <span className="lamina-query-cell-name" title={r.studyName}>
          {r.studyName}
        </span>
      ),
    },
    ...object,
    { id: 'reason', header: 'Reason', sortable: true, width: '20rem', cell: (r) => <ReasonCell row={r} /> },
    {
      id: 'queryWith',
      header: 'Query With',
      sortable: true,
      cell: (r) => text(r.queryWithUser ? `${r.queryWith ?? ''} · ${r.queryWithUser}` : r.queryWith),
    },
    { id: 'openedBy', header: 'Opened By', sortable: true, cell: (r) => text(r.openedByUsername) },
    { id: 'openedAt', header: 'Opened', sortable: true, cell: (r) => formatDate(r.openedAt) },
    {
      id: 'followUp',
      header: 'Follow-up',
      sortable: true,
      cell: (r) =>
        r.latestFollowUpOnDt === null || r.group !== 'open' ? (
          dash
        ) : (
          <span className={r.overdue ? 'lamina-overdue' : undefined}>{formatDay(r.latestFollowUpOnDt)}</span>
        ),
    },
    { id: 'status', header: 'Status', sortable: true, cell: (r) => <StatusCell row={r} /> },
    { id: 'updatedAt', header: 'Updated', sortable: true, cell: (r) => formatDate(r.updatedAt) },
  ];
}
