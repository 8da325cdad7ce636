import { Button, Callout, HTMLSelect, HTMLTable, Icon, NonIdealState, Spinner } from '@blueprintjs/core';
import { PAGE_SIZES } from '@lamina/domain';
import {
  flexRender,
  getCoreRowModel,
  useReactTable,
  type ColumnDef,
  type SortingState,
  type Updater,
} from '@tanstack/react-table';
import type { KeyboardEvent, ReactNode } from 'react';
import { isPageSize } from '../lib/storage';
import type { TableState } from './useTableState';

/** A column of a {@link DataTable}: what its cells show, and whether the server can sort by it. */
export interface DataColumn<T> {
  /** Unique id; for a sortable column also the server's sort field. */
  id: string;
  header: string;
  /** Shown in the header cell instead of the text (a select-all checkbox …). */
  headerContent?: ReactNode;
  cell: (row: T) => ReactNode;
  sortable?: boolean;
  /** CSS width, e.g. '14rem'. */
  width?: string;
  align?: 'left' | 'right' | 'center';
}

interface DataTableProps<T> {
  /** Accessible name of the table. */
  label: string;
  columns: readonly DataColumn<T>[];
  /** Rows of the current page; `undefined` while the first page loads. */
  rows: readonly T[] | undefined;
  getRowId: (row: T) => string;
  /** Paging and sorting (server-side). Without it every row is shown and nothing sorts. */
  state?: TableState;
  /** Rows on the server, all pages together. */
  total?: number;
  isLoading?: boolean;
  /** A later page or sort is on its way; the current rows stay, dimmed. */
  isFetching?: boolean;
  /** Shown in a red callout in place of the table (doc 1 §2.4, §8). */
  error?: string | null;
  emptyMessage: string;
  onRowClick?: (row: T) => void;
}

function toColumnDefs<T>(columns: readonly DataColumn<T>[]): ColumnDef<T>[] {
  return columns.map((column) => ({
    id: column.id,
    header: column.headerContent === undefined ? column.header : () => column.headerContent,
    // Sorting happens on the server; TanStack Table only offers it for columns with an accessor.
    accessorFn: () => null,
    cell: ({ row }) => column.cell(row.original),
    enableSorting: column.sortable === true,
  }));
}

function ariaSort(sorted: false | 'asc' | 'desc'): 'ascending' | 'descending' | 'none' {
  if (sorted === 'asc') return 'ascending';
  if (sorted === 'desc') return 'descending';
  return 'none';
}

/**
 * The app's list table: TanStack Table for the model, Blueprint for the look, server-side paging
 * and sorting (page sizes 10/20/50/100), rows 4.8rem high. Loading, empty and error states in place
 * of the rows; a clickable row also opens with Enter or Space.
 */
export function DataTable<T>(props: DataTableProps<T>) {
  const { label, columns, rows, getRowId, state, total = rows?.length ?? 0, onRowClick } = props;
  const sorting: SortingState = state ? [state.sort] : [];

  function handleSortingChange(updater: Updater<SortingState>) {
    if (!state) return;
    const next = typeof updater === 'function' ? updater(sorting) : updater;
    const first = next[0];
    if (first) state.setSort({ id: first.id, desc: first.desc });
  }

  // TanStack Table hands out unmemoizable functions; this project does not run the React Compiler.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable<T>({
    data: (rows ?? []) as T[],
    columns: toColumnDefs(columns),
    getRowId: (row) => getRowId(row),
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
    manualSorting: true,
    enableSortingRemoval: false,
    enableMultiSort: false,
    sortDescFirst: false,
    rowCount: total,
    state: {
      sorting,
      pagination: { pageIndex: state?.pageIndex ?? 0, pageSize: state?.pageSize ?? Math.max(total, 1) },
    },
    onSortingChange: handleSortingChange,
  });

  if (props.error) {
    return (
      <Callout intent="danger" title="Error" className="lamina-table-error" role="alert">
        {props.error}
      </Callout>
    );
  }

  const widthOf = (id: string) => columns.find((c) => c.id === id)?.width;
  const alignOf = (id: string) => columns.find((c) => c.id === id)?.align;

  function handleRowKeyDown(event: KeyboardEvent<HTMLTableRowElement>, row: T) {
    if (event.target !== event.currentTarget) return;
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      onRowClick?.(row);
    }
  }

  const loadingFirstPage = props.isLoading === true || rows === undefined;
  const bodyRows = table.getRowModel().rows;

  return (
    <div className="lamina-table-frame">
      <div className={`lamina-table-scroll${props.isFetching && !loadingFirstPage ? ' lamina-table-fetching' : ''}`}>
        <HTMLTable
          className="lamina-table"
          aria-label={label}
          aria-busy={props.isFetching ?? loadingFirstPage}
          interactive={onRowClick !== undefined}
        >
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => {
                  const sorted = header.column.getIsSorted();
                  const text = flexRender(header.column.columnDef.header, header.getContext());
                  return (
                    <th
                      key={header.id}
                      scope="col"
                      style={{ width: widthOf(header.column.id), textAlign: alignOf(header.column.id) }}
                      aria-sort={header.column.getCanSort() ? ariaSort(sorted) : undefined}
                    >
                      {header.column.getCanSort() ? (
                        <Button
                          variant="minimal"
                          size="small"
                          className="lamina-sort-button"
                          onClick={() => header.column.toggleSorting(sorted === 'asc', false)}
                          endIcon={
                            sorted === 'asc'
                              ? 'chevron-up'
                              : sorted === 'desc'
                                ? 'chevron-down'
                                : 'double-caret-vertical'
                          }
                        >
                          {text}
                        </Button>
                      ) : (
                        text
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          {!loadingFirstPage && bodyRows.length > 0 && (
            <tbody>
              {bodyRows.map((row) => (
                <tr
                  key={row.id}
                  className={onRowClick ? 'lamina-row-clickable' : undefined}
                  tabIndex={onRowClick ? 0 : undefined}
                  onClick={onRowClick ? () => onRowClick(row.original) : undefined}
                  onKeyDown={onRowClick ? (event) => handleRowKeyDown(event, row.original) : undefined}
                >
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id} style={{ textAlign: alignOf(cell.column.id) }}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          )}
        </HTMLTable>
        {loadingFirstPage && (
          <div className="lamina-table-state" role="status">
            <Spinner size={30} aria-label="Loading" />
          </div>
        )}
        {!loadingFirstPage && bodyRows.length === 0 && (
          <NonIdealState className="lamina-table-state" icon="th-disconnect" title={props.emptyMessage} />
        )}
      </div>
      {state && <Pagination state={state} total={total} />}
    </div>
  );
}

function Pagination({ state, total }: { state: TableState; total: number }) {
  const { pageIndex, pageSize } = state;
  const pageCount = Math.max(1, Math.ceil(total / pageSize));
  const from = total === 0 ? 0 : pageIndex * pageSize + 1;
  const to = Math.min(total, (pageIndex + 1) * pageSize);

  return (
    <nav className="lamina-pagination" aria-label="Pagination">
      <label className="lamina-pagination-size">
        Rows per page
        <HTMLSelect
          value={pageSize}
          onChange={(event) => {
            const size = Number(event.currentTarget.value);
            if (isPageSize(size)) state.setPageSize(size);
          }}
          options={PAGE_SIZES.map((size) => ({ value: size, label: String(size) }))}
        />
      </label>
      <span className="lamina-pagination-range" aria-live="polite">
        {from}–{to} of {total}
      </span>
      <Button
        variant="minimal"
        icon={<Icon icon="chevron-left" />}
        aria-label="Previous page"
        disabled={pageIndex === 0}
        onClick={() => state.setPageIndex(pageIndex - 1)}
      />
      <span className="lamina-pagination-page">
        Page {pageIndex + 1} of {pageCount}
      </span>
      <Button
        variant="minimal"
        icon={<Icon icon="chevron-right" />}
        aria-label="Next page"
        disabled={pageIndex + 1 >= pageCount}
        onClick={() => state.setPageIndex(pageIndex + 1)}
      />
    </nav>
  );
}
