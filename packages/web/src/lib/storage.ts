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

/**
 * Filters a study page remembers for the browser tab (sessionStorage), e.g. the status filter of the
 * cases tab. Each list stores its filters under `savedFiltersKey(list)`; opening a study from the
 * studies list starts over with `clearSavedFilters()` (doc 1 §2.4).
 */
export const SAVED_FILTERS_PREFIX = 'lamina.filters.';

export function savedFiltersKey(list: string): string {
  return `${SAVED_FILTERS_PREFIX}${list}`;
}

/** Removes every saved study-page filter of this browser tab. */
export function clearSavedFilters(): void {
  try {
    const storage = window.sessionStorage;
    const keys: string[] = [];
    for (let i = 0; i < storage.length; i += 1) {
      const key = storage.key(i);
      if (key?.startsWith(SAVED_FILTERS_PREFIX)) keys.push(key);
    }
    for (const key of keys) storage.removeItem(key);
  } catch {
    // Storage unavailable: nothing was saved either.
  }
}
