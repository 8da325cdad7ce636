import type { ImageView } from '@lamina/domain';
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { isApiError } from './ApiError';
import { apiFetch } from './client';
import { queryKeys } from './queryKeys';

/** Poll interval while an image is processing (doc 3 §4 via issue 3). */
export const PROCESSING_POLL_MS = 2000;

export const imageQueryKey = (id: number) => ['images', id] as const;

export function isProcessing(image: Pick<ImageView, 'processingStatus' | 'status'>): boolean {
  return (
    image.processingStatus !== 'SUCCESS' && image.processingStatus !== 'FAIL' && image.status !== 'FAIL_PROCESSING'
  );
}

export function isFailed(image: Pick<ImageView, 'processingStatus' | 'status'>): boolean {
  return image.processingStatus === 'FAIL' || image.status === 'FAIL_PROCESSING';
}

/** Image id of the route, or null when it is not a positive whole number. */
export function parseImageId(raw: string | undefined): number | null {
  return raw && /^\d{1,10}$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
}

/**
 * GET /api/images/{id}: polled every 2 s while processing. A processed image is not refetched on
 * focus: each response carries a new tile token, and a new tile URL would reload every tile.
 * The viewer routes' prefetch uses the same options with `redirectOn401: false`: it starts before
 * the session is known, and a 401 then is the guard's to handle (one redirect, not two).
 */
export function imageQueryOptions(id: number, { redirectOn401 = true } = {}) {
  return queryOptions({
    queryKey: imageQueryKey(id),
    queryFn: ({ signal }) => apiFetch<ImageView>(`/api/images/${id}`, { signal, redirectOn401 }),
    refetchInterval: (query) => (query.state.data && isProcessing(query.state.data) ? PROCESSING_POLL_MS : false),
    refetchOnWindowFocus: false,
    staleTime: Infinity,
    retry: (count, error) => !isApiError(error, 401) && !isApiError(error, 404) && !isApiError(error, 403) && count < 2,
  });
}

export function useImage(id: number | null) {
  return useQuery({ ...imageQueryOptions(id ?? 0), enabled: id !== null });
}

/**
 * After tile errors (the engine throttles them to one per 2 s): re-check the user (a 401 sends the
 * browser to the login page) and fetch the image again for a fresh tile URL.
 */
export function useTileErrorRecheck(id: number): () => void {
  const client = useQueryClient();
  return useCallback(() => {
    void client.invalidateQueries({ queryKey: queryKeys.userInfo });
    void client.invalidateQueries({ queryKey: imageQueryKey(id) });
  }, [client, id]);
}
