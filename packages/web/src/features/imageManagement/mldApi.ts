import {
  IM_MESSAGES,
  MLD_IMPORT_MESSAGES,
  mldListResponseSchema,
  mldSignedUrlsResponseSchema,
  registerMldResponseSchema,
  type MldListRequest,
  type MldRecord,
  type MldStatus,
  type RegisterMldRequest,
} from '@lamina/domain';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiDownload, apiFetch, saveDownload } from '../../api/client';
import { imKeys } from './api';

/** The calls of the Annotations tab and the Import Annotations dialog (doc 2 §2.3, §4, §7). */

/** While a row is on its way to Complete or Error, the tab asks again this often. */
export const MLD_POLL_MS = 2000;

/** Statuses a worker will still move on (the list polls while a shown row has one). */
const PENDING: readonly MldStatus[] = ['UPLOADED', 'QUEUED', 'PROCESSING'];

export interface MldListParams {
  searchText: string;
  /** One status, or every one. */
  status: MldStatus | null;
  pageIndex: number;
  pageSize: number;
  sort: string;
}

/** Under Image Management's key: its Refresh button and the other tabs' invalidations reach it. */
export const mldKeys = {
  all: [...imKeys.all, 'annotations'] as const,
  list: (params: MldListParams) => [...imKeys.all, 'annotations', params] as const,
};

function filtersOf(params: Pick<MldListParams, 'searchText' | 'status'>): MldListRequest {
  return {
    ...(params.searchText ? { searchText: params.searchText } : {}),
    ...(params.status ? { annotationStatusFilter: [params.status] } : {}),
  };
}

export function isPending(record: Pick<MldRecord, 'status'>): boolean {
  return PENDING.includes(record.status);
}

/** POST /api/imageManagement/annotations: one page of imports; polled every 2 s while one is pending. */
export function useMldList(params: MldListParams) {
  return useQuery({
    queryKey: mldKeys.list(params),
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch('/api/imageManagement/annotations', {
          method: 'POST',
          body: {
            ...filtersOf(params),
            page: params.pageIndex + 1,
            pageSize: params.pageSize,
            sort: params.sort,
          },
          schema: mldListResponseSchema,
          signal,
        }),
        // Doc 2 §8: the images message serves the annotations fetch too.
        IM_MESSAGES.unableToFetchImages,
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.results.some(isPending) ? MLD_POLL_MS : false),
  });
}

/** Export as CSV: the list's filters and order (`?reportFormat=csv`), saved as the server names it. */
export async function exportMldList(
  params: Pick<MldListParams, 'searchText' | 'status' | 'sort'>,
  onProgress: (bytes: number) => void,
): Promise<void> {
  const download = await withFallbackMessage(
    apiDownload('/api/imageManagement/annotations?reportFormat=csv', {
      method: 'POST',
      body: { ...filtersOf(params), sort: params.sort },
      onProgress,
    }),
    IM_MESSAGES.unableToFetchImages,
  );
  saveDownload(download, 'image-mgmt-annotations.csv');
}

export type MldSignedUrl = { fileName: string; signedUrl: string; s3Key: string };

/** POST /api/mld/get-signed-urls { fileNames }: one signed PUT URL per file, in order. */
export async function createMldSignedUrls(fileNames: string[], signal?: AbortSignal): Promise<MldSignedUrl[]> {
  const response = await withFallbackMessage(
    apiFetch('/api/mld/get-signed-urls', {
      method: 'POST',
      body: { fileNames },
      schema: mldSignedUrlsResponseSchema,
      signal,
    }),
    MLD_IMPORT_MESSAGES.unableToUpload,
  );
  return response.urls;
}

/** POST /api/mld { name, s3Key, imageId? }: registers an uploaded file; its import is queued. */
export function registerMld(request: RegisterMldRequest) {
  return withFallbackMessage(
    apiFetch('/api/mld', { method: 'POST', body: request, schema: registerMldResponseSchema }),
    MLD_IMPORT_MESSAGES.unableToUpload,
  );
}
