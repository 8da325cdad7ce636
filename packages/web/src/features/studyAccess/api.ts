import {
  studyAccessChangeResponseSchema,
  studyAccessRowSchema,
  USER_MESSAGES,
  type StudyAccessChange,
} from '@lamina/domain';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { studyKeys, userKeys } from '../../api/queryKeys';

const studyAccessListSchema = studyAccessRowSchema.array();

/** GET /api/users/{id}/studyAccess: a user's study access (the studies the viewer may see). */
export function useStudyAccess(userId: number) {
  return useQuery({
    queryKey: userKeys.studyAccess(userId),
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch(`/api/users/${userId}/studyAccess`, { schema: studyAccessListSchema, signal }),
        USER_MESSAGES.unableToFetchUserStudyAccess,
      ),
  });
}

function useStudyAccessChange(method: 'PATCH' | 'PUT', path: string, fallback: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (change: StudyAccessChange) =>
      withFallbackMessage(apiFetch(path, { method, body: change, schema: studyAccessChangeResponseSchema }), fallback),
    onSuccess: (response, change) =>
      Promise.all([
        // The answer carries the user's study access as it is now.
        queryClient.setQueryData(userKeys.studyAccess(change.userId), response.studyAccess),
        queryClient.invalidateQueries({ queryKey: userKeys.lists }),
        queryClient.invalidateQueries({ queryKey: studyKeys.all }),
      ]),
  });
}

/** PATCH /api/users/studies/add { studyId, userId, roleId }. */
export function useAddStudyAccess() {
  return useStudyAccessChange('PATCH', '/api/users/studies/add', USER_MESSAGES.unableToAddStudyAccess);
}

/** PUT /api/users/studies/remove { userId, studyId, roleId }. */
export function useRemoveStudyAccess() {
  return useStudyAccessChange('PUT', '/api/users/studies/remove', USER_MESSAGES.unableToRemoveStudyAccess);
}
