import {
  AnchorButton,
  Button,
  Checkbox,
  Dialog,
  DialogBody,
  DialogFooter,
  InputGroup,
  Tag,
  Tooltip,
} from '@blueprintjs/core';
import {
  IM_EXPORT_PERMISSIONS,
  SAMPLE_UPLOAD_PERMISSION,
  imFilterCount,
  mayEditImColumn,
  viewableColumns,
  visibleByDefault,
  type ImColumn,
  type ImEditTab,
  type ImFilters,
  type RoleName,
} from '@lamina/domain';
import { useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { useMemo, useState, type MouseEvent, type ReactNode } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { useUserInfo } from '../../api/users';
import { DataTable, type DataColumn } from '../../components/DataTable';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../components/useTableState';
import { exportImList, imKeys, type ImListParams, type ImListTab as Tab } from './api';
import { EditColumnDialog, type ColumnEdit } from './EditColumnDialog';
import { ImFilterDialog } from './ImFilterDialog';
import { SampleImportDialog } from '../samples/SampleImportDialog';
import { readColumnChoices, readFilters, writeColumnChoices, writeFilters } from './imPreferences';

interface ImListTabProps<Row, K extends string> {
  tab: Tab;
  /** The tab's column table (the domain's IM_IMAGE_COLUMNS or IM_CASE_COLUMNS). */
  columns: readonly ImColumn<K>[];
  sortable: readonly string[];
  defaultSort: { id: K; desc: boolean };
  cell: (key: K, row: Row) => ReactNode;
  useList: (params: ImListParams) => UseQueryResult<{ results: Row[]; total: number }>;
  rowId: (row: Row) => string;
  onRowClick: (row: Row) => void;
  statuses: readonly { value: string; label: string }[];
  statusKey: 'imageStatusFilter' | 'caseStatusFilter';
  statusTitle: string;
  label: string;
  emptyMessage: string;
  /** The row's '…' menu (its actions by permission). */
  rowMenu: (row: Row) => ReactNode;
  /** Edit Column: the row's id and study for the call, and a column's value as the dialog shows it. */
  edit: {
    tab: ImEditTab;
    target: (row: Row) => { id: number; studyId: number | null };
    value: (key: K, row: Row) => string | null;
    /** Why the server would refuse an edit of this cell (the domain's rule), or null to offer it. */
    refusal?: (key: K, row: Row) => string | null;
  };
}

/**
 * One list of Image Management (doc 2 §2.1–2.2): the toolbar (search, Add Filter with its count
 * badge, refresh, Show/Hide Columns with the hidden count) over a server-side table of the columns
 * the user may view, shown per the role's defaults or the user's saved choice.
 */
export function ImListTab<Row, K extends string>(props: ImListTabProps<Row, K>) {
  const { tab } = props;
  const user = useUserInfo().data;
  const role = (user?.workAsRole?.name ?? null) as RoleName | null;
  const queryClient = useQueryClient();
  const viewable = useMemo(() => viewableColumns(props.columns, user?.actions ?? []), [props.columns, user]);
  const [choices, setChoices] = useState<Record<string, boolean>>(() => readColumnChoices(tab));
  const shown = viewable.filter((c) => choices[c.key] ?? visibleByDefault(c, role));
  const [filters, setFiltersState] = useState<ImFilters>(() => readFilters(tab));
  const [search, setSearch] = useState(filters.searchText ?? '');
  const [dialog, setDialog] = useState<'filter' | 'columns' | 'samples' | null>(null);
  const [editing, setEditing] = useState<ColumnEdit | null>(null);
  const editable = useMemo(
    () => new Set(viewable.filter((c) => mayEditImColumn(c, user?.actions ?? [])).map((c) => c.key)),
    [viewable, user],
  );
  const searchText = useDebouncedValue(search.trim());
  const applied: ImFilters = { ...filters, searchText: searchText || undefined };
  const table = useTableState('userRowsPerPage', props.defaultSort, JSON.stringify(applied));
  const list = props.useList({
    filters: applied,
    pageIndex: table.pageIndex,
    pageSize: table.pageSize,
    sort: sortParam(table.sort),
  });

  const setFilters = (next: ImFilters) => {
    setFiltersState(next);
    writeFilters(tab, { ...next, searchText: search.trim() || undefined });
  };
  const setSearchText = (text: string) => {
    setSearch(text);
    writeFilters(tab, { ...filters, searchText: text.trim() || undefined });
  };
  const mayExport = (user?.actions ?? []).includes(IM_EXPORT_PERMISSIONS[tab]);
  // Sample data updates images: offered on the images tab (doc 2 §2.1).
  const mayImport = tab === 'images' && (user?.actions ?? []).includes(SAMPLE_UPLOAD_PERMISSION);
  /** Bytes received of a running export, or null. */
  const [exporting, setExporting] = useState<number | null>(null);
  const exportReport = () => {
    setExporting(0);
    exportImList(tab, { filters: applied, sort: sortParam(table.sort), columns: shown.map((c) => c.key) }, setExporting)
      .catch((error: unknown) => void showToast(errorMessage(error), 'danger'))
      .finally(() => setExporting(null));
  };
  const count = imFilterCount(applied, tab);
  const hidden = viewable.length - shown.length;

  const columns: DataColumn<Row>[] = [
    ...shown.map((c) => ({
      id: c.key,
      header: c.label,
      sortable: props.sortable.includes(c.key),
      cell: (row: Row) =>
        editable.has(c.key) ? (
          <EditableCell
            label={c.label}
            refusal={props.edit.refusal?.(c.key, row) ?? null}
            onEdit={() =>
              setEditing({
                tab: props.edit.tab,
                column: c,
                current: props.edit.value(c.key, row),
                ...props.edit.target(row),
              })
            }
          >
            {props.cell(c.key, row)}
          </EditableCell>
        ) : (
          props.cell(c.key, row)
        ),
    })),
    { id: 'actions', header: 'Actions', align: 'center', width: '6rem', cell: props.rowMenu },
  ];

  return (
    <>
      <div className="lamina-toolbar">
        <InputGroup
          className="lamina-search"
          leftIcon="search"
          placeholder="Search"
          aria-label={`Search ${props.label.toLowerCase()}`}
          value={search}
          onValueChange={setSearchText}
        />
        <Button icon="filter" onClick={() => setDialog('filter')} aria-label={`Add Filter (${count} set)`}>
          Add Filter{' '}
          {count > 0 && (
            <Tag round intent="primary" data-testid="filter-count">
              {count}
            </Tag>
          )}
        </Button>
        <Tooltip content="Refresh" placement="top">
          <Button
            icon="refresh"
            aria-label="Refresh"
            onClick={() => void queryClient.invalidateQueries({ queryKey: imKeys.all })}
          />
        </Tooltip>
        <Button icon="column-layout" onClick={() => setDialog('columns')}>
          Show/Hide Columns{' '}
          {hidden > 0 && (
            <Tag round minimal data-testid="hidden-count">
              {hidden}
            </Tag>
          )}
        </Button>
        {mayImport && (
          <Button icon="upload" onClick={() => setDialog('samples')}>
            Upload
          </Button>
        )}
        {mayExport && (
          <Button icon="export" onClick={exportReport} disabled={exporting !== null} aria-busy={exporting !== null}>
            {exporting === null ? 'Export Report' : `Exporting… ${formatBytes(exporting)}`}
          </Button>
        )}
      </div>
      <div className="lamina-im-list">
        <DataTable
          label={props.label}
          columns={columns}
          rows={list.data?.results}
          getRowId={props.rowId}
          state={table}
          total={list.data?.total ?? 0}
          isLoading={list.isPending}
          isFetching={list.isFetching}
          error={list.isError ? errorMessage(list.error) : null}
          emptyMessage={props.emptyMessage}
          onRowClick={props.onRowClick}
        />
      </div>
      {dialog === 'filter' && (
        <ImFilterDialog
          filters={filters}
          onChange={setFilters}
          statuses={props.statuses}
          statusKey={props.statusKey}
          statusTitle={props.statusTitle}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'samples' && (
        <SampleImportDialog
          onClose={() => setDialog(null)}
          onImported={() => void queryClient.invalidateQueries({ queryKey: imKeys.all })}
        />
      )}
      {editing && <EditColumnDialog edit={editing} onClose={() => setEditing(null)} />}
      {dialog === 'columns' && (
        <ColumnsDialog
          columns={viewable}
          isShown={(c) => shown.includes(c)}
          isDefault={(c) => visibleByDefault(c, role)}
          onApply={(next) => {
            setChoices(next);
            writeColumnChoices(tab, next);
            setDialog(null);
          }}
          onClose={() => setDialog(null)}
        />
      )}
    </>
  );
}

/**
 * Show/Hide Columns (doc 2 §2.1, §6; "Show/Hide Columns (Apply, Cancel)"): only the columns the
 * user may view. Ticks (and Reset to defaults) are staged in the dialog; Apply shows them and saves
 * the choices that differ from the role's defaults, Cancel, Escape and closing abandon them
 * (issue 29 item 15).
 */
function ColumnsDialog<K extends string>(props: {
  columns: readonly ImColumn<K>[];
  isShown: (column: ImColumn<K>) => boolean;
  isDefault: (column: ImColumn<K>) => boolean;
  onApply: (choices: Record<string, boolean>) => void;
  onClose: () => void;
}) {
  const [staged, setStaged] = useState<Record<string, boolean>>(() =>
    Object.fromEntries(props.columns.map((c) => [c.key, props.isShown(c)])),
  );
  const apply = () =>
    props.onApply(
      Object.fromEntries(
        props.columns.filter((c) => staged[c.key] !== props.isDefault(c)).map((c) => [c.key, staged[c.key] ?? false]),
      ),
    );
  return (
    <Dialog isOpen onClose={props.onClose} title="Show/Hide Columns" style={{ width: 380 }}>
      <DialogBody>
        <div className="lamina-im-choices" role="group" aria-label="Columns">
          {props.columns.map((c) => (
            <Checkbox
              key={c.key}
              label={c.label}
              checked={staged[c.key] ?? false}
              onChange={(event) => {
                const checked = event.currentTarget.checked;
                setStaged((s) => ({ ...s, [c.key]: checked }));
              }}
            />
          ))}
        </div>
      </DialogBody>
      <DialogFooter
        actions={
          <>
            <Button
              variant="minimal"
              text="Reset to defaults"
              onClick={() => setStaged(Object.fromEntries(props.columns.map((c) => [c.key, props.isDefault(c)])))}
            />
            <Button text="Cancel" onClick={props.onClose} />
            <Button intent="primary" text="Apply" onClick={apply} />
          </>
        }
      />
    </Dialog>
  );
}

/**
 * A value the user may edit: the value and a pencil (shown on the row's hover or focus, always
 * reachable by Tab) that opens Edit Column. Its clicks and keys do not open the row. A cell the
 * server would refuse now (`refusal`, issue 29 item 13) shows a disabled pencil whose tooltip says why.
 */
function EditableCell({
  label,
  refusal,
  onEdit,
  children,
}: {
  label: string;
  refusal: string | null;
  onEdit: () => void;
  children: ReactNode;
}) {
  const open = (event: MouseEvent) => {
    event.stopPropagation();
    onEdit();
  };
  if (refusal !== null)
    return (
      <span className="lamina-im-editable">
        <span className="lamina-im-editable-value">{children}</span>
        {/* A click on the disabled pencil does not open the row either. */}
        <Tooltip
          content={refusal}
          placement="top"
          className="lamina-im-edit-refused"
          targetProps={{ onClick: (event) => event.stopPropagation() }}
        >
          <AnchorButton
            className="lamina-im-edit"
            variant="minimal"
            size="small"
            icon="edit"
            disabled
            aria-label={`Edit ${label}`}
            aria-description={refusal}
          />
        </Tooltip>
      </span>
    );
  return (
    <span className="lamina-im-editable">
      <span className="lamina-im-editable-value">{children}</span>
      <Button
        className="lamina-im-edit"
        variant="minimal"
        size="small"
        icon="edit"
        aria-label={`Edit ${label}`}
        onClick={open}
        onKeyDown={(event) => event.stopPropagation()}
      />
    </span>
  );
}

/** Bytes as people read them: 0 B, 12.3 kB, 4.5 MB. */
function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
