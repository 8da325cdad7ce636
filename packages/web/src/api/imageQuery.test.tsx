import { act, renderHook, waitFor } from '@testing-library/react';
import { QueryClientProvider, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import { queryKeys } from './queryKeys';
import { testQueryClient } from '../test/render';
import { imageQueryKey, useTileErrorRecheck } from './imageQuery';

describe('useTileErrorRecheck', () => {
  it('after tile errors, asks again who the user is (a 401 then goes to the login page) and for the image (a fresh tile token)', async () => {
    const client = testQueryClient();
    const wrapper = ({ children }: { children: ReactNode }) => (
      <QueryClientProvider client={client}>{children}</QueryClientProvider>
    );
    let userFetches = 0;
    let imageFetches = 0;
    const { result } = renderHook(
      () => {
        useQuery({ queryKey: queryKeys.userInfo, queryFn: () => ++userFetches });
        useQuery({ queryKey: imageQueryKey(7), queryFn: () => ++imageFetches });
        return useTileErrorRecheck(7);
      },
      { wrapper },
    );
    await waitFor(() => expect([userFetches, imageFetches]).toEqual([1, 1]));
    act(() => result.current());
    await waitFor(() => expect([userFetches, imageFetches]).toEqual([2, 2]));
  });
});
