import { Button, HTMLSelect, InputGroup, MenuItem, Tag, Tooltip } from '@blueprintjs/core';
import {
  CASE_STATUSES,
  CASE_STATUS_LABELS,
  CREATE_CASE_PERMISSION,
  EDIT_CASE_PERMISSION,
  mayViewCaseField,
  readsAssignedCasesOnly,
  type CaseStatus,
  type StudyCaseRow,
  type StudyView,
} from '@lamina/domain';
import { useMemo, useState } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { CaseStatusTag } from '../../components/CaseStatusTag';
import { DataTable, type DataColumn } from '../../components/DataTable';
import { RowMenu } from '../../components/RowMenu';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../components/useTableState';
import { formatLongDate } from '../../util/formatDate';
import { useCase, useStudyCases, useStudyReaders } from './api';
import {
  CaseActionDialog,
  caseActionOffered,
  forwardLabel,
  type CaseActionKind,
  type CaseRef,
} from './CaseActionDialog';
import { CaseDialog } from './CaseDialog';
import { scoredLabel } from './CaseReads';
import './cases.css';

/** Statuses a study's case list can filter by (archived cases are not listed). */
const FILTER_STATUSES = CASE_STATUSES.filter((s) => s !== 'ARCHIVED');
/** Readers shown in a row before the ellipsis (doc 2 §9). */
const ROW_READERS = 2;

type Dialog = { kind: 'create' } | { kind: 'edit'; caseId: number } | { kind: CaseActionKind; target: CaseRef } | null;

function CreatedCell({ value }: { value: string }) {
  const { date, time } = formatLongDate(value);
  return (
    <Tooltip content={time} placement="top" disabled={time === ''}>
      <span>{date}</span>
    </Tooltip>
  );
}

function ReadersCell({ names }: { names: readonly string[] | null }) {
  if (!names || names.length === 0) return <span className="bp6-text-muted">-</span>;
  const shown = names.slice(0, ROW_READERS).join(', ');
  return names.length > ROW_READERS ? (
    <Tooltip content={names.join(', ')} placement="top">
      <span>{shown}, …</span>
    </Tooltip>
  ) : (
    <span>{shown}</span>
  );
}

/** The Edit case dialog loads the case (its readers and images) first. */
function EditCaseDialog({ study, caseId, onClose }: { study: StudyView; caseId: number; onClose: () => void }) {
  const loaded = useCase(caseId);
  if (!loaded.data) return null;
  return <CaseDialog study={study} existing={loaded.data} onClose={onClose} />;
}

/**
 * The study page's Cases tab (doc 2 §2.4): search by Procedure ID, a status filter (not for blinded
 * readers), an assignee filter, Create case, the columns each user may see, and the row menu (Edit,
 * Revert status, and beyond the spec Pass QC, Put On Hold / Remove Hold and Archive, each by its
 * permission). Row click opens /studies/{studyId}/cases/{id}; newest first; caseRowsPerPage.
 */
export function StudyCasesTab({ study }: { study: StudyView }) {
  const navigate = useNavigate();
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const actionSet = useMemo(() => new Set(actions), [actions]);
  const reader = readsAssignedCasesOnly(user?.workAsRole ?? null);
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<CaseStatus | ''>('');
  const [assignee, setAssignee] = useState('any');
  const [dialog, setDialog] = useState<Dialog>(null);
  const procId = useDebouncedValue(search.trim());
  const table = useTableState('caseRowsPerPage', { id: 'createdAt', desc: true }, `${procId}|${status}|${assignee}`);
  const cases = useStudyCases({
    studyId: study.id,
    procId,
    status,
    assignee,
    pageIndex: table.pageIndex,
    pageSize: table.pageSize,
    sort: sortParam(table.sort),
  });
  const readers = useStudyReaders(study.id, '', !reader);

  const ref = (row: StudyCaseRow): CaseRef => ({
    id: row.id,
    studyId: row.studyId,
    procId: row.procId,
    status: row.status ?? 'PENDING_LAB_QC',
    prevWorkflowStatuses: row.prevWorkflowStatuses,
  });

  function CaseRowMenu({ row }: { row: StudyCaseRow }) {
    const target = ref(row);
    const offered = (kind: CaseActionKind) => caseActionOffered(kind, target, actions);
    const items = [
      actions.includes(EDIT_CASE_PERMISSION) && row.status !== 'ARCHIVED' && (
        <MenuItem key="edit" icon="edit" text="Edit" onClick={() => setDialog({ kind: 'edit', caseId: row.id })} />
      ),
      offered('revert') && (
        <MenuItem key="revert" icon="undo" text="Revert status" onClick={() => setDialog({ kind: 'revert', target })} />
      ),
      offered('forward') && (
        <MenuItem
          key="forward"
          icon="tick"
          text={forwardLabel(row.status ?? 'PENDING_LAB_QC')}
          onClick={() => setDialog({ kind: 'forward', target })}
        />
      ),
      offered('hold') && (
        <MenuItem key="hold" icon="pause" text="Put on Hold" onClick={() => setDialog({ kind: 'hold', target })} />
      ),
      offered('unhold') && (
        <MenuItem key="unhold" icon="play" text="Remove Hold" onClick={() => setDialog({ kind: 'unhold', target })} />
      ),
      offered('archive') && (
        <MenuItem
          key="archive"
          icon="archive"
          intent="danger"
          text="Archive Case"
          onClick={() => setDialog({ kind: 'archive', target })}
        />
      ),
    ];
    return <RowMenu label={`Actions for case ${row.procId ?? row.id}`} items={items} />;
  }

  const columns: DataColumn<StudyCaseRow>[] = [
    { id: 'procId', header: 'Endo Procedure ID', sortable: true, cell: (row) => row.procId ?? '-' },
    {
      id: 'histoProcedureId',
      header: 'Histo Procedure ID',
      sortable: true,
      cell: (row) => row.histoProcedureId ?? '-',
    },
    {
      id: 'createdAt',
      header: 'Created',
      sortable: true,
      width: '11rem',
      cell: (row) => <CreatedCell value={row.createdAt} />,
    },
    ...(mayViewCaseField(actionSet, 'subjectId')
      ? [{ id: 'subjectId', header: 'Subject ID', sortable: true, cell: (row: StudyCaseRow) => row.subjectId ?? '-' }]
      : []),
    ...(mayViewCaseField(actionSet, 'visitId')
      ? [{ id: 'visitId', header: 'Visit ID', sortable: true, cell: (row: StudyCaseRow) => row.visitId ?? '-' }]
      : []),
    {
      id: 'status',
      header: 'Status',
      sortable: true,
      width: reader ? '16rem' : '9rem',
      // The case's status, and beside it the caller's own read (issue 29): "Scored {date}".
      cell: (row) => (
        <span className="lamina-case-status-cell">
          {row.status ? <CaseStatusTag status={row.status} /> : '-'}
          {row.myReadAt && (
            <Tag minimal intent="success" title={new Date(row.myReadAt).toLocaleString()}>
              {scoredLabel(row.myReadAt)}
            </Tag>
          )}
        </span>
      ),
    },
    ...(!reader
      ? [
          { id: 'qcUser', header: 'QC user', cell: (row: StudyCaseRow) => row.qc1User ?? '-' },
          {
            id: 'readers',
            header: 'Assigned readers',
            cell: (row: StudyCaseRow) => <ReadersCell names={row.assignedReaders} />,
          },
        ]
      : []),
    { id: 'images', header: 'Images', align: 'center' as const, width: '6rem', cell: (row) => row.numberOfImages },
    ...(!reader
      ? [
          {
            id: 'queries',
            header: 'Queries',
            align: 'center' as const,
            width: '6rem',
            cell: (row: StudyCaseRow) => row.openQueries ?? 0,
          },
        ]
      : []),
    { id: 'actions', header: 'Actions', align: 'center', width: '6rem', cell: (row) => <CaseRowMenu row={row} /> },
  ];

  const filtered = Boolean(procId) || status !== '' || assignee !== 'any';
  return (
    <div className="lamina-study-cases">
      <div className="lamina-toolbar">
        <InputGroup
          type="search"
          leftIcon="search"
          placeholder="Search by Procedure ID"
          aria-label="Search by Procedure ID"
          value={search}
          onValueChange={setSearch}
          className="lamina-search"
        />
        {!reader && (
          <HTMLSelect
            aria-label="Status"
            value={status}
            onChange={(event) => setStatus(event.currentTarget.value as CaseStatus | '')}
            options={[
              { value: '', label: 'All statuses' },
              ...FILTER_STATUSES.map((s) => ({ value: s, label: CASE_STATUS_LABELS[s] })),
            ]}
          />
        )}
        {!reader && (
          <HTMLSelect
            aria-label="Assignee"
            value={assignee}
            onChange={(event) => setAssignee(event.currentTarget.value)}
            options={[
              { value: 'any', label: 'Any assignee' },
              ...(readers.data ?? []).map((r) => ({ value: String(r.id), label: `Assigned to ${r.displayName}` })),
              { value: 'unassigned', label: 'Unassigned' },
            ]}
          />
        )}
        <span className="lamina-toolbar-spacer" />
        {actions.includes(CREATE_CASE_PERMISSION) && (
          <Button intent="primary" icon="add" text="Create case" onClick={() => setDialog({ kind: 'create' })} />
        )}
      </div>
      <DataTable
        label="Cases"
        columns={columns}
        rows={cases.data?.cases}
        total={cases.data?.total ?? 0}
        getRowId={(row) => String(row.id)}
        state={table}
        isLoading={cases.isPending}
        isFetching={cases.isFetching && cases.isPlaceholderData}
        error={cases.isError ? errorMessage(cases.error) : null}
        emptyMessage={filtered ? 'No cases match' : 'No cases yet'}
        onRowClick={(row) => void navigate(`/studies/${study.id}/cases/${row.id}`)}
      />
      {dialog?.kind === 'create' && <CaseDialog study={study} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'edit' && (
        <EditCaseDialog study={study} caseId={dialog.caseId} onClose={() => setDialog(null)} />
      )}
      {dialog && 'target' in dialog && (
        <CaseActionDialog kind={dialog.kind} target={dialog.target} onClose={() => setDialog(null)} />
      )}
    </div>
  );
}
