import { Icon, Spinner, Tooltip, type IconName, type Intent } from '@blueprintjs/core';
import { formatFileSize, MLD_STATUS_LABELS, type MldRecord, type MldStatus } from '@lamina/domain';
import { Link } from 'react-router';
import type { DataColumn } from '../../components/DataTable';
import { formatLongDate } from '../../util/formatDate';

/** The Annotations tab's columns (doc 2 §2.3), in the spec's order. */

/** Each status with its icon (doc 2 §4 "Annotation file statuses … each with an icon"). */
const STATUS_ICONS: Record<MldStatus, { icon: IconName; intent: Intent }> = {
  UPLOADED: { icon: 'cloud-upload', intent: 'none' },
  QUEUED: { icon: 'time', intent: 'none' },
  PROCESSING: { icon: 'refresh', intent: 'primary' },
  COMPLETE: { icon: 'tick-circle', intent: 'success' },
  ERROR: { icon: 'error', intent: 'danger' },
  ARCHIVED: { icon: 'archive', intent: 'none' },
};

const muted = (text = '-') => <span className="bp6-text-muted">{text}</span>;

/** Status: icon and label; on Error the error message is appended (doc 2 §2.3). */
export function MldStatusCell({ record }: { record: Pick<MldRecord, 'status' | 'errorMessage'> }) {
  const { status, errorMessage } = record;
  const { icon, intent } = STATUS_ICONS[status];
  const label = MLD_STATUS_LABELS[status];
  const text = status === 'ERROR' && errorMessage ? `${label}: ${errorMessage}` : label;
  return (
    <span
      className={`lamina-mld-status lamina-mld-status-${status.toLowerCase()}`}
      data-testid="mld-status"
      // The whole message on hover (the cell ends in an ellipsis); an archived import says why.
      title={errorMessage ? `${label}: ${errorMessage}` : label}
    >
      {status === 'PROCESSING' ? (
        <Spinner size={14} intent="primary" aria-hidden="true" />
      ) : (
        <Icon icon={icon} intent={intent} aria-hidden="true" />
      )}{' '}
      <span className={status === 'ERROR' ? 'bp6-text-intent-danger' : undefined}>{text}</span>
    </span>
  );
}

function DateCell({ value }: { value: string }) {
  const { date, time } = formatLongDate(value);
  return (
    <Tooltip content={time} placement="top" disabled={time === ''}>
      <span>{date}</span>
    </Tooltip>
  );
}

/** 'ENDO-1001 / HISTO-77': the case's Endo and Histo Procedure IDs, whichever it has. */
export function procedureLabel(record: Pick<MldRecord, 'procId' | 'histoProcedureId' | 'caseId'>): string {
  const ids = [record.procId, record.histoProcedureId].filter((id): id is string => !!id);
  return ids.length > 0 ? ids.join(' / ') : `Case ${record.caseId ?? ''}`.trim();
}

export const MLD_COLUMNS: readonly DataColumn<MldRecord>[] = [
  {
    id: 'mldName',
    header: 'Imported Annotations File',
    sortable: true,
    // The name, and its size under it (a long name ends in an ellipsis, whole on hover).
    cell: (r) => (
      <span className="lamina-mld-file">
        <span className="lamina-mld-file-name" title={r.mldName}>
          {r.mldName}
        </span>
        <span className="bp6-text-muted lamina-mld-size">{formatFileSize(r.mldFileLength)}</span>
      </span>
    ),
  },
  { id: 'status', header: 'Status', sortable: true, cell: (r) => <MldStatusCell record={r} /> },
  { id: 'appSequenceId', header: 'APP Sequence', sortable: true, cell: (r) => r.appSequenceId ?? muted() },
  { id: 'numLayers', header: 'Layers', align: 'right', cell: (r) => (r.numLayers === null ? muted() : r.numLayers) },
  {
    id: 'imageName',
    header: 'Image File',
    sortable: true,
    cell: (r) =>
      r.imageId !== null && r.studyId !== null ? (
        <Link to={`/studies/${r.studyId}/images/${r.imageId}`}>{r.imageName ?? `Image ${r.imageId}`}</Link>
      ) : (
        muted()
      ),
  },
  {
    id: 'procedure',
    header: 'Endo/Histo Procedure ID',
    cell: (r) =>
      r.caseId !== null && r.studyId !== null ? (
        <Link to={`/studies/${r.studyId}/cases/${r.caseId}`}>{procedureLabel(r)}</Link>
      ) : (
        muted()
      ),
  },
  { id: 'uploadedAt', header: 'Import Date', sortable: true, cell: (r) => <DateCell value={r.uploadedAt} /> },
  { id: 'uploadedBy', header: 'User', cell: (r) => r.uploadedBy ?? muted() },
];
