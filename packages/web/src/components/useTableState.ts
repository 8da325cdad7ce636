import { useState } from 'react';
import { getRowsPerPage, setRowsPerPage, type PageSize, type RowsPerPageKey } from '../lib/storage';

export interface TableSort {
  /** The column id, which is also the server's sort field. */
  id: string;
  desc: boolean;
}

export interface TableState {
  pageIndex: number;
  pageSize: PageSize;
  sort: TableSort;
  setPageIndex: (pageIndex: number) => void;
  setPageSize: (pageSize: PageSize) => void;
  setSort: (sort: TableSort) => void;
}

/**
 * Paging and sorting of a server-side list: the page size is remembered under the list's key
 * (doc 1 §9); changing size or sort goes back to the first page, and so does a new search or
 * filter: `filters` is any text that changes with them (e.g. the searched name and the filter
 * switches joined).
 */
export function useTableState(storageKey: RowsPerPageKey, defaultSort: TableSort, filters = ''): TableState {
  const [pageIndex, setPageIndex] = useState(0);
  const [pageSize, setPageSizeState] = useState<PageSize>(() => getRowsPerPage(storageKey));
  const [sort, setSortState] = useState<TableSort>(defaultSort);
  const [pagedFilters, setPagedFilters] = useState(filters);
  if (pagedFilters !== filters) {
    // Adjusting state while rendering (React's pattern for state derived from props): the list is
    // asked for the first page at once, never for a page of the old filters.
    setPagedFilters(filters);
    setPageIndex(0);
  }

  return {
    pageIndex,
    pageSize,
    sort,
    setPageIndex,
    setPageSize: (size) => {
      setRowsPerPage(storageKey, size);
      setPageSizeState(size);
      setPageIndex(0);
    },
    setSort: (next) => {
      setSortState(next);
      setPageIndex(0);
    },
  };
}

/** The `sort` query parameter of the list calls: the field for ascending, `-field` for descending. */
export function sortParam(sort: TableSort): string {
  return `${sort.desc ? '-' : ''}${sort.id}`;
}

export { listQuery } from '../lib/listQuery';
