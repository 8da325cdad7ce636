import { DEFAULT_PAGE_SIZE } from '@lamina/domain';

/**
 * Paging, sorting and searching of list queries: no page and no page size → every row; a page without a size
 * uses the default size (20). Sort values are a key, or '-' + key for descending.
 */
export function pageWindow(
  page: number | undefined,
  pageSize: number | undefined,
): { limit?: number; offset?: number } {
  const size = pageSize ?? (page !== undefined ? DEFAULT_PAGE_SIZE : undefined);
  if (size === undefined) return {};
  return { limit: size, offset: ((page ?? 1) - 1) * size };
}

export function parseSort<K extends string>(sort: K | `-${K}`): { key: K; descending: boolean } {
  return sort.startsWith('-') ? { key: sort.slice(1) as K, descending: true } : { key: sort as K, descending: false };
}

/** Escapes LIKE wildcards so a search for '50%' finds '50%', not everything starting with 50. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
