import {
  actionResponseSchema,
  availableRolesResponseSchema,
  userInfoSchema,
  type AvailableRole,
  type UserInfo,
} from '@lamina/domain';
import { useMutation, useQuery } from '@tanstack/react-query';
import { reloadPage } from '../app/browser';
import { isApiError } from './ApiError';
import { apiFetch } from './client';
import { queryKeys } from './queryKeys';

/** The current user, or `null` when not logged in (401). The guard decides where a `null` goes. */
export async function fetchUserInfo(signal?: AbortSignal): Promise<UserInfo | null> {
  try {
    return await apiFetch('/api/users/info', { schema: userInfoSchema, redirectOn401: false, signal });
  } catch (error) {
    if (isApiError(error, 401)) return null;
    throw error;
  }
}

export function useUserInfo() {
  return useQuery({
    queryKey: queryKeys.userInfo,
    queryFn: ({ signal }) => fetchUserInfo(signal),
    staleTime: 60_000,
  });
}

/** All of the user's roles, the current one included. */
export function useAvailableRoles(enabled = true) {
  return useQuery({
    queryKey: queryKeys.availableRoles,
    queryFn: ({ signal }): Promise<AvailableRole[]> =>
      apiFetch('/api/users/availableRoles', { schema: availableRolesResponseSchema, signal }),
    enabled,
    staleTime: 0,
  });
}

const workAsResponseSchema = actionResponseSchema.extend({ user: userInfoSchema });

/** PUT /api/users/workAs, then reload the page so every screen starts over in the new role (doc 1 §2.3). */
export function useWorkAs() {
  return useMutation({
    mutationFn: (roleId: number) =>
      apiFetch('/api/users/workAs', { method: 'PUT', body: { roleId }, schema: workAsResponseSchema }),
    onSuccess: () => reloadPage(),
  });
}
