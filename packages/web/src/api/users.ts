import {
  roleViewSchema,
  USER_MESSAGES,
  type UserListResponse,
  userListResponseSchema,
  actionResponseSchema,
  availableRolesResponseSchema,
  userInfoSchema,
  type AvailableRole,
  type UserInfo,
} from '@lamina/domain';
import { keepPreviousData, queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { listQuery } from '../lib/listQuery';
import { reloadPage } from '../lib/browser';
import { isApiError } from './ApiError';
import { apiFetch } from './client';
import { queryKeys, userKeys, type UserListParams } from './queryKeys';
import { withFallbackMessage } from './ApiError';

/** The current user, or `null` when not logged in (401). The guard decides where a `null` goes. */
export async function fetchUserInfo(signal?: AbortSignal): Promise<UserInfo | null> {
  try {
    return await apiFetch('/api/users/info', { schema: userInfoSchema, redirectOn401: false, signal });
  } catch (error) {
    if (isApiError(error, 401)) return null;
    throw error;
  }
}

/** The current user's query: the guard's (useUserInfo) and the viewer routes' loaders' (router.tsx). */
export const userInfoQueryOptions = queryOptions({
  queryKey: queryKeys.userInfo,
  queryFn: ({ signal }) => fetchUserInfo(signal),
  staleTime: 60_000,
});

/** The current user (`enabled: false` while it is known there is no session, e.g. on /login). */
export function useUserInfo(enabled = true) {
  return useQuery({ ...userInfoQueryOptions, enabled });
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

/** GET /api/users: one page of users, sorted and searched on the server. */
/** The users list (`enabled`: false while nothing shows it, e.g. a form the user may not use). */
export function useUserList(params: UserListParams, enabled = true) {
  const query = listQuery({
    name: params.name?.trim(),
    page: params.pageIndex + 1,
    pageSize: params.pageSize,
    sort: params.sort,
  });
  return useQuery({
    queryKey: userKeys.list(params),
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch<UserListResponse>(`/api/users${query}`, { schema: userListResponseSchema, signal }),
        USER_MESSAGES.unableToFetchUsers,
      ),
    placeholderData: keepPreviousData,
    enabled,
  });
}

const roleListSchema = roleViewSchema.array();

/** GET /api/permissions/roles: the roles, for the study-access pickers. */
export function usePermissionRoles() {
  return useQuery({
    queryKey: userKeys.roles,
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch('/api/permissions/roles', { schema: roleListSchema, signal }),
        USER_MESSAGES.unableToFetchPermissionRoles,
      ),
    staleTime: 5 * 60_000,
  });
}
