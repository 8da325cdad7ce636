import { Button, HTMLSelect, InputGroup, Tooltip } from '@blueprintjs/core';
import { MLD_HELP_TEXT, MLD_IMPORT_PERMISSION, MLD_STATUS_LABELS, MLD_STATUSES, type MldStatus } from '@lamina/domain';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { DataTable } from '../../components/DataTable';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../components/useTableState';
import { ImportAnnotationsDialog } from './ImportAnnotationsDialog';
import { exportMldList, mldKeys, useMldList } from './mldApi';
import { MLD_COLUMNS } from './mldColumns';

const STATUS_OPTIONS = [
  { value: '', label: 'All statuses' },
  ...MLD_STATUSES.map((value) => ({ value, label: MLD_STATUS_LABELS[value] })),
];

/** The tab's search and status, kept for the browser tab like the other tabs' filters (doc 2 §2.1). */
const FILTERS_KEY = 'lamina.imageManagement.filters.annotations';

function readFilters(): { searchText: string; status: MldStatus | null } {
  try {
    const raw = JSON.parse(window.sessionStorage.getItem(FILTERS_KEY) ?? '{}') as Record<string, unknown>;
    const status = MLD_STATUSES.find((s) => s === raw.status) ?? null;
    return { searchText: typeof raw.searchText === 'string' ? raw.searchText.slice(0, 200) : '', status };
  } catch {
    return { searchText: '', status: null };
  }
}

function writeFilters(filters: { searchText: string; status: MldStatus | null }): void {
  try {
    window.sessionStorage.setItem(FILTERS_KEY, JSON.stringify(filters));
  } catch {
    // Storage unavailable: the filters last for this page only.
  }
}

/**
 * The Annotations tab of Image Management (doc 2 §2.3): the help text; search, status, refresh,
 * Export as CSV and Import Annotations (with its permission); the imported .mld files, paged and
 * sorted by the server, polled every 2 s while one is still queued or processing.
 */
export function ImAnnotationsTab() {
  const actions = useUserInfo().data?.actions ?? [];
  const queryClient = useQueryClient();
  const [initial] = useState(readFilters);
  const [search, setSearch] = useState(initial.searchText);
  const [status, setStatus] = useState<MldStatus | null>(initial.status);
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState<number | null>(null);
  const searchText = useDebouncedValue(search.trim());
  const table = useTableState('userRowsPerPage', { id: 'uploadedAt', desc: true }, `${searchText}\n${status ?? ''}`);
  const sort = sortParam(table.sort);
  const list = useMldList({ searchText, status, pageIndex: table.pageIndex, pageSize: table.pageSize, sort });
  const mayImport = actions.includes(MLD_IMPORT_PERMISSION);

  const update = (next: { searchText?: string; status?: MldStatus | null }) => {
    const merged = { searchText: next.searchText ?? search, status: next.status === undefined ? status : next.status };
    if (next.searchText !== undefined) setSearch(next.searchText);
    if (next.status !== undefined) setStatus(next.status);
    writeFilters({ searchText: merged.searchText.trim(), status: merged.status });
  };
  const refresh = () => void queryClient.invalidateQueries({ queryKey: mldKeys.all });
  const exportCsv = () => {
    setExporting(0);
    exportMldList({ searchText, status, sort }, setExporting)
      .catch((error: unknown) => void showToast(errorMessage(error), 'danger'))
      .finally(() => setExporting(null));
  };

  return (
    <>
      <p className="lamina-im-help">{MLD_HELP_TEXT}</p>
      <div className="lamina-toolbar">
        <InputGroup
          className="lamina-search"
          leftIcon="search"
          placeholder="Search"
          aria-label="Search imported annotations"
          value={search}
          onValueChange={(text) => update({ searchText: text })}
        />
        <HTMLSelect
          aria-label="Status"
          value={status ?? ''}
          options={STATUS_OPTIONS}
          onChange={(event) => {
            const value = event.currentTarget.value;
            update({ status: MLD_STATUSES.find((s) => s === value) ?? null });
          }}
        />
        <Tooltip content="Refresh" placement="top">
          <Button icon="refresh" aria-label="Refresh" onClick={refresh} />
        </Tooltip>
        {mayImport && (
          <Button icon="import" intent="primary" onClick={() => setImporting(true)}>
            Import Annotations
          </Button>
        )}
        <Button icon="export" onClick={exportCsv} disabled={exporting !== null} aria-busy={exporting !== null}>
          {exporting === null ? 'Export as CSV' : `Exporting… ${Math.round(exporting / 1024)} kB`}
        </Button>
      </div>
      <div className="lamina-im-list">
        <DataTable
          label="Imported annotations"
          columns={MLD_COLUMNS}
          rows={list.data?.results}
          getRowId={(row) => String(row.mldId)}
          state={table}
          total={list.data?.total ?? 0}
          isLoading={list.isPending}
          isFetching={list.isFetching && list.isPlaceholderData}
          error={list.isError ? errorMessage(list.error) : null}
          emptyMessage={searchText || status ? 'No imported annotations match' : 'No imported annotations'}
        />
      </div>
      {importing && <ImportAnnotationsDialog onClose={() => setImporting(false)} onImported={refresh} />}
    </>
  );
}
