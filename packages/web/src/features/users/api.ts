import {
  organizationViewSchema,
  USER_MESSAGES,
  type UserCreate,
  type UserCreateResponse,
  userCreateResponseSchema,
  type UserListRow,
  userListRowSchema,
  type UserSaveResponse,
  userSaveResponseSchema,
  type UserUpdate,
} from '@lamina/domain';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import { userKeys } from '../../api/queryKeys';

const organizationListSchema = organizationViewSchema.array();

export function useUser(id: number | null) {
  return useQuery({
    queryKey: userKeys.detail(id ?? 0),
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch<UserListRow>(`/api/users/${id}`, { schema: userListRowSchema, signal }),
        USER_MESSAGES.unableToFetchUserById,
      ),
    enabled: id !== null,
  });
}

export function useOrganizations() {
  return useQuery({
    queryKey: userKeys.organizations,
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch('/api/organizations', { schema: organizationListSchema, signal }),
        USER_MESSAGES.unableToFetchOrganizations,
      ),
    staleTime: 5 * 60_000,
  });
}

/** PUT /api/users/{id}: first name, last name, organization; saving registers the user. */
export function useUpdateUser(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (update: UserUpdate) =>
      withFallbackMessage(
        apiFetch<UserSaveResponse>(`/api/users/${id}`, { method: 'PUT', body: update, schema: userSaveResponseSchema }),
        USER_MESSAGES.unableToUpdateUser,
      ),
    onSuccess: async (response) => {
      queryClient.setQueryData(userKeys.detail(id), response.user);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: userKeys.lists }),
        queryClient.invalidateQueries({ queryKey: queryKeys.userInfo }),
      ]);
    },
  });
}

/** POST /api/users (system admins): the answer carries the one-time initial password. */
export function useCreateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: UserCreate): Promise<UserCreateResponse> =>
      withFallbackMessage(
        apiFetch('/api/users', { method: 'POST', body: input, schema: userCreateResponseSchema }),
        USER_MESSAGES.unableToCreateUser,
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.lists }),
  });
}

/** PATCH /api/users/{id}/deactivate or /activate (system admins). Accounts are never deleted. */
export function useSetUserActive(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ active, reason }: { active: boolean; reason?: string }) =>
      withFallbackMessage(
        apiFetch(`/api/users/${id}/${active ? 'activate' : 'deactivate'}`, {
          method: 'PATCH',
          body: reason && reason.trim() !== '' ? { reason: reason.trim() } : {},
          schema: userSaveResponseSchema,
        }),
        USER_MESSAGES.unableToChangeAccountStatus,
      ),
    onSuccess: (response) => {
      queryClient.setQueryData(userKeys.detail(id), response.user);
      return queryClient.invalidateQueries({ queryKey: userKeys.lists });
    },
  });
}

export { userKeys };
export { useUserList, usePermissionRoles } from '../../api/users';
