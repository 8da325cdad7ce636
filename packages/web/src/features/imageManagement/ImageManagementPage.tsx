import { H2, Icon, Tooltip } from '@blueprintjs/core';
import {
  CASE_STATUS_LABELS,
  CASE_STATUSES,
  IM_CASE_COLUMNS,
  IM_CASE_SORT_KEYS,
  IM_IMAGE_COLUMNS,
  IM_IMAGE_SORT_KEYS,
  IMAGE_STATUS_LABELS,
  IMAGE_STATUSES,
  imCaseEditRefusal,
  type ImCaseColumnKey,
  type ImCaseRecord,
  type ImImageColumnKey,
  type ImImageRecord,
} from '@lamina/domain';
import { useNavigate, useParams } from 'react-router';
import { NotFoundPage } from '../../components/NotFoundPage';
import { RouteTabs, parseTab, type RouteTab } from '../../components/RouteTabs';
import { usePageTitle } from '../../components/usePageTitle';
import { formatLongDate } from '../../util/formatDate';
import { useImCases, useImImages } from './api';
import { ImAnnotationsTab } from './ImAnnotationsTab';
import { ImListTab } from './ImListTab';
import { ImCaseRowMenu, ImImageRowMenu } from './ImRowMenus';
import './imageManagement.css';

type ImageManagementTab = 'images' | 'cases' | 'annotations';
const TABS: readonly RouteTab<ImageManagementTab>[] = [
  { id: 'images', label: 'Images' },
  { id: 'cases', label: 'Cases' },
  { id: 'annotations', label: 'Annotations' },
];

const IMAGE_STATUS_OPTIONS = IMAGE_STATUSES.map((value) => ({ value, label: IMAGE_STATUS_LABELS[value] }));
/**
 * The case statuses the spec's filter offers (doc 2 §2.2), and Pending Adjudication (issue 30): a
 * live status between Processed and Completed whose cases the list shows, so staff can find them.
 */
const CASE_STATUS_OPTIONS = CASE_STATUSES.filter((s) =>
  ['PENDING_QC', 'PENDING_LAB_QC', 'PROCESSED', 'PENDING_ADJUDICATION', 'ON_HOLD', 'COMPLETED'].includes(s),
).map((value) => ({ value, label: CASE_STATUS_LABELS[value] }));

/** Dates show long month, day, year, with the time in a tooltip (doc 2 §9). */
function DateCell({ value }: { value: string | null | undefined }) {
  const { date, time } = formatLongDate(value);
  return (
    <Tooltip content={time} placement="top" disabled={time === ''}>
      <span>{date}</span>
    </Tooltip>
  );
}

const text = (value: string | number | null | undefined) =>
  value === null || value === undefined || value === '' ? <span className="bp6-text-muted">-</span> : value;

function imageCell(key: ImImageColumnKey, row: ImImageRecord) {
  switch (key) {
    case 'uploadedAt':
      return <DateCell value={row.uploadedAt} />;
    case 'status':
      return row.status ? IMAGE_STATUS_LABELS[row.status] : text(null);
    case 'inQuery':
      return row.inQuery ? <Icon icon="chat" intent="warning" title="In query" /> : text(null);
    default:
      return text(row[key]);
  }
}

function caseCell(key: ImCaseColumnKey, row: ImCaseRecord) {
  switch (key) {
    case 'caseCreatedAt':
      return <DateCell value={row.caseCreatedAt} />;
    case 'status':
      return row.status ? CASE_STATUS_LABELS[row.status] : text(null);
    case 'labTech':
    case 'iscQc':
      return text((row[key] ?? []).map((u) => u.displayName).join(', '));
    case 'crAssignments':
      return text((row.crAssignments ?? []).join(', '));
    default:
      return text(row[key]);
  }
}

/** A value as Edit Column shows and edits it: text as is, the upload date as its calendar date. */
function imageValue(key: ImImageColumnKey, row: ImImageRecord): string | null {
  const value = row[key];
  if (key === 'uploadedAt' && typeof value === 'string') return value.slice(0, 10);
  return typeof value === 'string' ? value : null;
}

function caseValue(key: ImCaseColumnKey, row: ImCaseRecord): string | null {
  const value = row[key];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
}

/** /image-management/:tab? — Images (default), Cases, Annotations (doc 2 §2.1–2.3). */
export function ImageManagementPage() {
  const tab = parseTab(useParams().tab, TABS, 'images');
  const navigate = useNavigate();
  usePageTitle('Image Management');
  if (tab === null) return <NotFoundPage />;
  return (
    <section className="lamina-page" aria-labelledby="im-title">
      <header className="lamina-page-header">
        <H2 id="im-title">Image Management</H2>
      </header>
      <RouteTabs id="image-management-tabs" tabs={TABS} selected={tab} pathFor={(t) => `/image-management/${t}`} />
      <div className="lamina-route-tab-panel">
        {tab === 'images' && (
          <ImListTab<ImImageRecord, ImImageColumnKey>
            key="images"
            tab="images"
            label="Images"
            columns={IM_IMAGE_COLUMNS}
            sortable={IM_IMAGE_SORT_KEYS}
            defaultSort={{ id: 'uploadedAt', desc: true }}
            cell={imageCell}
            useList={useImImages}
            rowId={(row) => String(row.id)}
            onRowClick={(row) => void navigate(`/studies/${row.studyId ?? 'none'}/images/${row.id}`)}
            statuses={IMAGE_STATUS_OPTIONS}
            statusKey="imageStatusFilter"
            statusTitle="Status"
            emptyMessage="No images match"
            rowMenu={(row) => <ImImageRowMenu row={row} />}
            edit={{
              tab: 'images',
              target: (row) => ({ id: row.id, studyId: row.studyId }),
              value: imageValue,
              // The server's rule, per row (it reads the status, which not every role views).
              refusal: (key, row) => row.editRefusals?.[key] ?? null,
            }}
          />
        )}
        {tab === 'cases' && (
          <ImListTab<ImCaseRecord, ImCaseColumnKey>
            key="cases"
            tab="cases"
            label="Cases"
            columns={IM_CASE_COLUMNS}
            sortable={IM_CASE_SORT_KEYS}
            defaultSort={{ id: 'caseCreatedAt', desc: true }}
            cell={caseCell}
            useList={useImCases}
            rowId={(row) => String(row.caseId)}
            onRowClick={(row) => void navigate(`/studies/${row.studyId}/cases/${row.caseId}`)}
            statuses={CASE_STATUS_OPTIONS}
            statusKey="caseStatusFilter"
            statusTitle="Case Status"
            emptyMessage="No cases match"
            rowMenu={(row) => <ImCaseRowMenu row={row} />}
            edit={{
              tab: 'cases',
              target: (row) => ({ id: row.caseId, studyId: row.studyId }),
              value: caseValue,
              refusal: (_key, row) => imCaseEditRefusal(row),
            }}
          />
        )}
        {tab === 'annotations' && <ImAnnotationsTab />}
      </div>
    </section>
  );
}
