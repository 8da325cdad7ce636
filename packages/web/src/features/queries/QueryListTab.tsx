import { Callout, Checkbox, HTMLSelect, InputGroup } from '@blueprintjs/core';
import {
  QUERY_TARGET_ROLES,
  type QueryListRequest,
  type QueryListStatus,
  type QueryObjectType,
  type QueryStats,
} from '@lamina/domain';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useStudyList } from '../../api/studies';
import { DataTable } from '../../components/DataTable';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../components/useTableState';
import { useQueryList, useQueryStats } from './api';
import { queryColumns, queryRowTarget } from './queryColumns';

const STATUS_OPTIONS: readonly { value: QueryListStatus; label: string }[] = [
  { value: 'open', label: 'Open' },
  { value: 'answered', label: 'Answered' },
  { value: 'overdue', label: 'Overdue' },
  { value: 'closed', label: 'Closed' },
];

const STATS: readonly { status: QueryListStatus; label: string; key: keyof QueryStats }[] = [
  { status: 'open', label: 'Open', key: 'numOpen' },
  { status: 'answered', label: 'Answered', key: 'numAnswered' },
  { status: 'closed', label: 'Closed', key: 'numClosed' },
  { status: 'overdue', label: 'Overdue', key: 'numOverdue' },
];

export interface QueryListFilters {
  search: string;
  studyId: number | null;
  status: QueryListStatus | null;
  roleId: number | null;
  includeClosed: boolean;
}

const NO_FILTERS: QueryListFilters = { search: '', studyId: null, status: null, roleId: null, includeClosed: false };

/** The list call's body for the filters (a closed-status filter includes closed queries). */
export function queryListRequest(
  objectType: QueryObjectType,
  filters: QueryListFilters,
  page: { pageIndex: number; pageSize: number; sort: string },
): QueryListRequest {
  const searchText = filters.search.trim();
  return {
    objectType,
    ...(searchText === '' ? {} : { searchText }),
    ...(filters.studyId === null ? {} : { studyFilter: [filters.studyId] }),
    ...(filters.status === null ? {} : { statusFilter: [filters.status] }),
    ...(filters.roleId === null ? {} : { roleFilter: [filters.roleId] }),
    includeClosedQueries: filters.includeClosed || filters.status === 'closed',
    page: page.pageIndex + 1,
    pageSize: page.pageSize,
    sort: page.sort as QueryListRequest['sort'],
  };
}

/**
 * One tab of /queries (doc 3 §2, §9): the stats header (Open / Answered / Closed / Overdue — a click
 * filters by it), the filters (search, study, status, role queried, include closed) and the table,
 * paged and sorted on the server; a row opens its query in the viewer.
 */
export function QueryListTab({ objectType }: { objectType: QueryObjectType }) {
  const navigate = useNavigate();
  const [filters, setFilters] = useState<QueryListFilters>(NO_FILTERS);
  const search = useDebouncedValue(filters.search.trim());
  const applied = { ...filters, search };
  const table = useTableState('userRowsPerPage', { id: 'openedAt', desc: true }, JSON.stringify(applied));
  const list = useQueryList(
    queryListRequest(objectType, applied, {
      pageIndex: table.pageIndex,
      pageSize: table.pageSize,
      sort: sortParam(table.sort),
    }),
  );
  const stats = useQueryStats(objectType);
  const studies = useStudyList({ pageIndex: 0, pageSize: 100, sort: 'name' });
  const set = (patch: Partial<QueryListFilters>) => setFilters((f) => ({ ...f, ...patch }));
  const label = objectType === 'CASE' ? 'Case queries' : 'Image queries';

  return (
    <>
      <div className="lamina-query-stats" role="group" aria-label="Query statistics">
        {STATS.map((s) => (
          <button
            key={s.status}
            type="button"
            className={`lamina-query-stat lamina-query-stat-${s.status}`}
            aria-pressed={filters.status === s.status}
            title={`Show ${s.label.toLowerCase()} queries`}
            onClick={() => set({ status: filters.status === s.status ? null : s.status })}
          >
            <span className="lamina-query-stat-value" data-testid={`stat-${s.status}`}>
              {stats.data ? stats.data[s.key] : '–'}
            </span>
            <span className="lamina-query-stat-label">{s.label}</span>
          </button>
        ))}
      </div>
      {stats.isError && (
        <Callout intent="danger" role="alert" className="lamina-dialog-error">
          {errorMessage(stats.error)}
        </Callout>
      )}
      <div className="lamina-toolbar lamina-query-filters">
        <InputGroup
          type="search"
          leftIcon="search"
          placeholder="Search"
          aria-label="Search queries"
          value={filters.search}
          onValueChange={(value) => set({ search: value })}
          className="lamina-search"
        />
        <HTMLSelect
          aria-label="Study"
          value={filters.studyId ?? ''}
          onChange={(e) => set({ studyId: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })}
          options={[
            { value: '', label: 'All studies' },
            ...(studies.data?.studies ?? []).map((s) => ({ value: s.id, label: s.name })),
          ]}
        />
        <HTMLSelect
          aria-label="Status"
          value={filters.status ?? ''}
          onChange={(e) =>
            set({ status: e.currentTarget.value === '' ? null : (e.currentTarget.value as QueryListStatus) })
          }
          options={[{ value: '', label: 'Any status' }, ...STATUS_OPTIONS]}
        />
        <HTMLSelect
          aria-label="Role queried"
          value={filters.roleId ?? ''}
          onChange={(e) => set({ roleId: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })}
          options={[
            { value: '', label: 'Any role queried' },
            ...QUERY_TARGET_ROLES.map((r) => ({ value: r.id, label: r.displayName })),
          ]}
        />
        <Checkbox
          label="Include closed queries"
          checked={filters.includeClosed || filters.status === 'closed'}
          disabled={filters.status === 'closed'}
          onChange={(e) => set({ includeClosed: e.currentTarget.checked })}
          className="lamina-query-include-closed"
        />
      </div>
      <DataTable
        label={label}
        columns={queryColumns(objectType)}
        rows={list.data?.queries}
        total={list.data?.total ?? 0}
        getRowId={(row) => String(row.id)}
        state={table}
        isLoading={list.isPending}
        isFetching={list.isFetching}
        error={list.isError ? errorMessage(list.error) : null}
        emptyMessage="No queries"
        onRowClick={(row) => void navigate(queryRowTarget(row))}
      />
    </>
  );
}
