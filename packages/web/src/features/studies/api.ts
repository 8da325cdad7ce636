import {
  STUDY_MESSAGES,
  studyListResponseSchema,
  studySaveResponseSchema,
  studyViewSchema,
  unableToFetchStudy,
  type StudyCreate,
  type StudyListResponse,
  type StudySaveResponse,
  type StudyUpdate,
  type StudyView,
  USER_MESSAGES,
  usersInStudyResponseSchema,
} from '@lamina/domain';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { listQuery } from '../../components/useTableState';

export interface StudyListParams {
  name?: string;
  /** Counts from 0 here; the server's `page` counts from 1. */
  pageIndex: number;
  pageSize: number;
  /** A sort key for ascending, `-key` for descending (`-createdAt` is newest first). */
  sort: string;
}

export const studyKeys = {
  all: ['studies'] as const,
  list: (params: StudyListParams) => ['studies', 'list', params] as const,
  detail: (id: number) => ['studies', 'detail', id] as const,
};

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

export type SaveStudyInput =
  { kind: 'create'; config: StudyCreate } | { kind: 'update'; id: number; changes: StudyUpdate };

/** POST /api/studies (create) or PUT /api/studies/{id} with only the changed fields (update). */
export function useSaveStudy() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: SaveStudyInput): Promise<StudySaveResponse> =>
      input.kind === 'create'
        ? withFallbackMessage(
            apiFetch('/api/studies', { method: 'POST', body: input.config, schema: studySaveResponseSchema }),
            STUDY_MESSAGES.unableToCreateStudy,
          )
        : withFallbackMessage(
            apiFetch(`/api/studies/${input.id}`, {
              method: 'PUT',
              body: input.changes,
              schema: studySaveResponseSchema,
            }),
            STUDY_MESSAGES.unableToUpdateStudy,
          ),
    onSuccess: (response) => {
      queryClient.setQueryData(studyKeys.detail(response.study.id), response.study);
      return queryClient.invalidateQueries({ queryKey: ['studies', 'list'] });
    },
  });
}

/** Users holding access to a study; under the study's key, so study-access changes refresh it. */
export const studyUsersKey = (studyId: number) => ['studies', studyId, 'users'] as const;

/** POST /api/users/inStudy/{studyId}: every user with access to the study, one row per role. */
export function useUsersInStudy(studyId: number | null) {
  return useQuery({
    queryKey: studyUsersKey(studyId ?? 0),
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/users/inStudy/${studyId}`, {
            method: 'POST',
            body: {},
            schema: usersInStudyResponseSchema,
            signal,
          }),
          USER_MESSAGES.unableToFetchUsersInStudy,
        )
      ).users,
    enabled: studyId !== null,
  });
}
