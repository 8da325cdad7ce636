import {
  IM_EDIT_MESSAGES,
  IM_MESSAGES,
  editImColumnResponseSchema,
  imCaseListResponseSchema,
  imImageListResponseSchema,
  type EditImColumnRequest,
  type ImFilters,
} from '@lamina/domain';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiDownload, apiFetch, saveDownload } from '../../api/client';

export type ImListTab = 'images' | 'cases';

export interface ImListParams {
  filters: ImFilters;
  pageIndex: number;
  pageSize: number;
  sort: string;
}

export const imKeys = {
  all: ['imageManagement'] as const,
  list: (tab: ImListTab, params: ImListParams) => ['imageManagement', tab, params] as const,
};

function body(params: ImListParams) {
  return { ...params.filters, page: params.pageIndex + 1, pageSize: params.pageSize, sort: params.sort };
}

/**
 * Export Report (doc 2 §7): the list's filters and order, the shown columns, as CSV
 * (`?reportFormat=csv`), saved as the file the server names. The cases export's failure has the
 * spec's own message; the images export uses the list's.
 */
export async function exportImList(
  tab: ImListTab,
  params: { filters: ImFilters; sort: string; columns: readonly string[] },
  onProgress: (bytes: number) => void,
): Promise<void> {
  const download = await withFallbackMessage(
    apiDownload(`/api/imageManagement/${tab}?reportFormat=csv`, {
      method: 'POST',
      body: { ...params.filters, sort: params.sort, columns: params.columns },
      onProgress,
    }),
    tab === 'cases' ? IM_MESSAGES.unableToFetchCasesCsv : IM_MESSAGES.unableToFetchImages,
  );
  saveDownload(download, `image-mgmt-${tab}.csv`);
}

/** POST /api/imageManagement/images: one page of the image list with the total (doc 2 §7). */
export function fetchImImages(params: ImListParams, signal?: AbortSignal) {
  return withFallbackMessage(
    apiFetch('/api/imageManagement/images', {
      method: 'POST',
      body: body(params),
      schema: imImageListResponseSchema,
      signal,
    }),
    IM_MESSAGES.unableToFetchImages,
  );
}

/** POST /api/imageManagement/cases (the spec uses the images message for both fetches, doc 2 §8). */
export function fetchImCases(params: ImListParams, signal?: AbortSignal) {
  return withFallbackMessage(
    apiFetch('/api/imageManagement/cases', {
      method: 'POST',
      body: body(params),
      schema: imCaseListResponseSchema,
      signal,
    }),
    IM_MESSAGES.unableToFetchImages,
  );
}

export function useImImages(params: ImListParams) {
  return useQuery({
    queryKey: imKeys.list('images', params),
    queryFn: ({ signal }) => fetchImImages(params, signal),
    placeholderData: keepPreviousData,
  });
}

export function useImCases(params: ImListParams) {
  return useQuery({
    queryKey: imKeys.list('cases', params),
    queryFn: ({ signal }) => fetchImCases(params, signal),
    placeholderData: keepPreviousData,
  });
}

/**
 * POST /api/imageManagement/{id}/editImageColumn (doc 2 §7): `id` is the image's (images tab) or the
 * case's (cases tab). On success both lists refresh (a case edit shows in the image rows too).
 */
export function useEditColumn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: EditImColumnRequest }) =>
      withFallbackMessage(
        apiFetch(`/api/imageManagement/${id}/editImageColumn`, {
          method: 'POST',
          body,
          schema: editImColumnResponseSchema,
        }),
        IM_EDIT_MESSAGES.unableToEditColumn,
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: imKeys.all }),
  });
}
