import {
  STUDY_MESSAGES,
  studyListResponseSchema,
  studyViewSchema,
  unableToFetchStudy,
  type StudyListResponse,
  type StudyView,
} from '@lamina/domain';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { listQuery } from '../lib/listQuery';
import { withFallbackMessage } from './ApiError';
import { apiFetch } from './client';
import { studyKeys, type StudyListParams } from './queryKeys';

export function fetchStudyList(params: StudyListParams, signal?: AbortSignal): Promise<StudyListResponse> {
  const query = listQuery({
    name: params.name?.trim(),
    page: params.pageIndex + 1,
    pageSize: params.pageSize,
    sort: params.sort,
  });
  return withFallbackMessage(
    apiFetch(`/api/studies/list${query}`, { schema: studyListResponseSchema, signal }),
    STUDY_MESSAGES.unableToFetchStudies,
  );
}

/** GET /api/studies/list: one page of the studies the user may see, with the total. */
export function useStudyList(params: StudyListParams, enabled = true) {
  return useQuery({
    queryKey: studyKeys.list(params),
    queryFn: ({ signal }) => fetchStudyList(params, signal),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** GET /api/studies/{id}; a 404 comes back as an ApiError with status 404 ('Study not found'). */
export function useStudy(id: number | null) {
  return useQuery({
    queryKey: studyKeys.detail(id ?? 0),
    queryFn: ({ signal }): Promise<StudyView> =>
      withFallbackMessage(
        apiFetch(`/api/studies/${id}`, { schema: studyViewSchema, signal }),
        unableToFetchStudy(id ?? ''),
      ),
    enabled: id !== null,
  });
}
