import { imFiltersSchema, type ImFilters } from '@lamina/domain';
import type { ImListTab } from './api';

/**
 * What Image Management remembers (doc 2 §2.1, §6): the filters of each tab for the browser tab
 * (session storage), and the user's Show/Hide Columns choices per table in a cookie (one per table),
 * which override the role's default visibility.
 */
const FILTERS_KEY = (tab: ImListTab) => `lamina.imageManagement.filters.${tab}`;

export function readFilters(tab: ImListTab): ImFilters {
  try {
    const parsed = imFiltersSchema.safeParse(JSON.parse(window.sessionStorage.getItem(FILTERS_KEY(tab)) ?? '{}'));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

export function writeFilters(tab: ImListTab, filters: ImFilters): void {
  try {
    window.sessionStorage.setItem(FILTERS_KEY(tab), JSON.stringify(filters));
  } catch {
    // Storage unavailable: the filters last for this page only.
  }
}

/** The cookie of a table's column choices: column key → shown. */
export const columnsCookie = (tab: ImListTab) => `lamina_im_${tab}_columns`;
const COOKIE_DAYS = 365;

export function readColumnChoices(tab: ImListTab): Record<string, boolean> {
  const name = `${columnsCookie(tab)}=`;
  const entry = document.cookie.split('; ').find((part) => part.startsWith(name));
  if (!entry) return {};
  try {
    const parsed: unknown = JSON.parse(decodeURIComponent(entry.slice(name.length)));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((pair): pair is [string, boolean] => typeof pair[1] === 'boolean'),
    );
  } catch {
    return {};
  }
}

export function writeColumnChoices(tab: ImListTab, choices: Record<string, boolean>): void {
  const value = encodeURIComponent(JSON.stringify(choices));
  document.cookie = `${columnsCookie(tab)}=${value}; path=/; max-age=${COOKIE_DAYS * 86_400}; SameSite=Lax`;
}
