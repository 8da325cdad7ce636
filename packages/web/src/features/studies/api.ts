import {
  STUDY_MESSAGES,
  studySaveResponseSchema,
  type StudyCreate,
  type StudySaveResponse,
  type StudyUpdate,
  USER_MESSAGES,
  usersInStudyResponseSchema,
} from '@lamina/domain';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { studyKeys, studyUsersKey } from '../../api/queryKeys';

export { studyKeys, studyUsersKey };
export { fetchStudyList, useStudy, useStudyList } from '../../api/studies';
export type { StudyListParams } from '../../api/queryKeys';

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
