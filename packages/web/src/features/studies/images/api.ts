import {
  IMAGE_MESSAGES,
  isProcessing,
  studyImageListResponseSchema,
  type StudyImageListResponse,
} from '@lamina/domain';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { withFallbackMessage } from '../../../api/ApiError';
import { apiFetch } from '../../../api/client';
import { listQuery } from '../../../components/useTableState';

export interface StudyImageListParams {
  studyId: number;
  name?: string;
  hasQueries?: boolean;
  isUnassigned?: boolean;
  /** Counts from 0 here; the server's `page` counts from 1. */
  pageIndex: number;
  pageSize: number;
  /** `uploadedAt` ascending, `-uploadedAt` newest first … */
  sort: string;
}

/** How often the list is read again while one of its images is being processed. */
export const PROCESSING_POLL_MS = 2_000;

export const studyImageKeys = {
  all: (studyId: number) => ['studies', studyId, 'images'] as const,
  list: (params: StudyImageListParams) => ['studies', params.studyId, 'images', params] as const,
};

export function fetchStudyImages(params: StudyImageListParams, signal?: AbortSignal): Promise<StudyImageListResponse> {
  const query = listQuery({
    name: params.name?.trim(),
    hasQueries: params.hasQueries ? 'true' : undefined,
    isUnassigned: params.isUnassigned ? 'true' : undefined,
    page: params.pageIndex + 1,
    pageSize: params.pageSize,
    sort: params.sort,
  });
  return withFallbackMessage(
    apiFetch(`/api/studies/${params.studyId}/images${query}`, { schema: studyImageListResponseSchema, signal }),
    IMAGE_MESSAGES.unableToFetchImages,
  );
}

/**
 * GET /api/studies/{id}/images: one page of the study's images. While any image on the page is
 * still being processed the page is read again every {@link PROCESSING_POLL_MS}, so its progress
 * and outcome show without a reload.
 */
export function useStudyImages(params: StudyImageListParams) {
  return useQuery({
    queryKey: studyImageKeys.list(params),
    queryFn: ({ signal }) => fetchStudyImages(params, signal),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.images.some(isProcessing) ? PROCESSING_POLL_MS : false),
  });
}

/** GET /api/signed-urls/image/{id}: a short-lived link to the original file (audited on the server). */
export async function fetchDownloadUrl(imageId: number): Promise<string> {
  const { url } = await withFallbackMessage(
    apiFetch<{ success: boolean; url: string }>(`/api/signed-urls/image/${imageId}`),
    IMAGE_MESSAGES.couldNotDownload,
  );
  return url;
}
