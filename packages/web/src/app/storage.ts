import { DEFAULT_PAGE_SIZE, PAGE_SIZES } from '@lamina/domain';
import type { ROWS_PER_PAGE_KEYS } from '@lamina/domain';

export type RowsPerPageKey = (typeof ROWS_PER_PAGE_KEYS)[number];
export type PageSize = (typeof PAGE_SIZES)[number];

export function isPageSize(value: unknown): value is PageSize {
  return typeof value === 'number' && (PAGE_SIZES as readonly number[]).includes(value);
}

function defaultPageSize(): PageSize {
  return isPageSize(DEFAULT_PAGE_SIZE) ? DEFAULT_PAGE_SIZE : 20;
}

/** The page size a list remembers (doc 1 §9); anything missing or not one of 10/20/50/100 reads as 20. */
export function getRowsPerPage(key: RowsPerPageKey): PageSize {
  let raw: string | null;
  try {
    raw = window.localStorage.getItem(key);
  } catch {
    return defaultPageSize();
  }
  if (raw === null || !/^\d+$/.test(raw)) return defaultPageSize();
  const value = Number(raw);
  return isPageSize(value) ? value : defaultPageSize();
}

export function setRowsPerPage(key: RowsPerPageKey, size: PageSize): void {
  if (!isPageSize(size)) return;
  try {
    window.localStorage.setItem(key, String(size));
  } catch {
    // Storage can be unavailable (private mode, quota); the list then keeps its size for this page only.
  }
}
