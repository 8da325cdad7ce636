import { act, renderHook } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { listQuery, sortParam, useTableState } from './useTableState';

describe('list call parameters', () => {
  it('writes the sort as the server reads it', () => {
    expect(sortParam({ id: 'createdAt', desc: true })).toBe('-createdAt');
    expect(sortParam({ id: 'name', desc: false })).toBe('name');
  });

  it('leaves empty values out of the query string', () => {
    expect(listQuery({ name: '', page: 1, pageSize: 20, sort: '-createdAt', role: undefined, x: null })).toBe(
      '?page=1&pageSize=20&sort=-createdAt',
    );
    expect(listQuery({ name: 'a b&c' })).toBe('?name=a+b%26c');
    expect(listQuery({})).toBe('');
  });
});

describe('paging of a list', () => {
  it('goes back to the first page when the filters, the sort or the page size change', () => {
    const { result, rerender } = renderHook(
      ({ filters }) => useTableState('userRowsPerPage', { id: 'a', desc: false }, filters),
      {
        initialProps: { filters: 'x' },
      },
    );
    act(() => result.current.setPageIndex(3));
    rerender({ filters: 'x' });
    expect(result.current.pageIndex).toBe(3);
    rerender({ filters: 'xy' });
    expect(result.current.pageIndex).toBe(0);

    act(() => result.current.setPageIndex(2));
    act(() => result.current.setSort({ id: 'b', desc: true }));
    expect(result.current).toMatchObject({ pageIndex: 0, sort: { id: 'b', desc: true } });

    act(() => result.current.setPageIndex(2));
    act(() => result.current.setPageSize(50));
    expect(result.current).toMatchObject({ pageIndex: 0, pageSize: 50 });
  });
});
