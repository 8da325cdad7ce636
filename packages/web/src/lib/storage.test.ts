import { PAGE_SIZES, ROWS_PER_PAGE_KEYS } from '@lamina/domain';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearSavedFilters, getRowsPerPage, isPageSize, savedFiltersKey, setRowsPerPage } from './storage';

afterEach(() => {
  window.localStorage.clear();
  window.sessionStorage.clear();
});

describe('rows per page storage', () => {
  it.each(ROWS_PER_PAGE_KEYS)('defaults %s to 20', (key) => {
    expect(getRowsPerPage(key)).toBe(20);
  });

  it.each(PAGE_SIZES)('stores and reads %i', (size) => {
    setRowsPerPage('studyRowsPerPage', size);
    expect(window.localStorage.getItem('studyRowsPerPage')).toBe(String(size));
    expect(getRowsPerPage('studyRowsPerPage')).toBe(size);
  });

  it('keeps each list separate', () => {
    setRowsPerPage('caseRowsPerPage', 50);
    setRowsPerPage('userRowsPerPage', 100);
    expect(getRowsPerPage('caseRowsPerPage')).toBe(50);
    expect(getRowsPerPage('userRowsPerPage')).toBe(100);
    expect(getRowsPerPage('imageRowsPerPage')).toBe(20);
  });

  it.each(['7', '25', 'abc', '', '50.0', '-10', '1e2'])('ignores the stored value %j', (raw) => {
    window.localStorage.setItem('imageRowsPerPage', raw);
    expect(getRowsPerPage('imageRowsPerPage')).toBe(20);
  });

  it('refuses to store a size that is not offered', () => {
    setRowsPerPage('studyRowsPerPage', 33 as never);
    expect(window.localStorage.getItem('studyRowsPerPage')).toBeNull();
  });

  it('falls back to 20 when storage throws', () => {
    vi.spyOn(Storage.prototype, 'getItem').mockImplementation(() => {
      throw new Error('denied');
    });
    expect(getRowsPerPage('studyRowsPerPage')).toBe(20);
  });

  it('isPageSize accepts only the offered sizes', () => {
    expect(PAGE_SIZES.every(isPageSize)).toBe(true);
    expect(isPageSize('20')).toBe(false);
    expect(isPageSize(30)).toBe(false);
  });
});

describe('saved study-page filters', () => {
  it('clears every saved filter and nothing else', () => {
    window.sessionStorage.setItem(savedFiltersKey('cases'), '{"status":"PENDING_QC"}');
    window.sessionStorage.setItem(savedFiltersKey('images'), '{}');
    window.sessionStorage.setItem('other', 'kept');
    window.localStorage.setItem('studyRowsPerPage', '50');
    clearSavedFilters();
    expect(window.sessionStorage.getItem(savedFiltersKey('cases'))).toBeNull();
    expect(window.sessionStorage.getItem(savedFiltersKey('images'))).toBeNull();
    expect(window.sessionStorage.getItem('other')).toBe('kept');
    expect(getRowsPerPage('studyRowsPerPage')).toBe(50);
  });

  it('does not throw when storage is unavailable', () => {
    vi.spyOn(Storage.prototype, 'key').mockImplementation(() => {
      throw new Error('denied');
    });
    window.sessionStorage.setItem(savedFiltersKey('cases'), 'x');
    expect(() => clearSavedFilters()).not.toThrow();
  });
});
