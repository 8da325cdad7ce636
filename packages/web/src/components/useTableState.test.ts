import { describe, expect, it } from 'vitest';
import { listQuery, sortParam } from './useTableState';

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
