import {
  organizationViewSchema,
  roleViewSchema,
  type StudyAccessChange,
  studyAccessChangeResponseSchema,
  studyAccessRowSchema,
  USER_MESSAGES,
  type UserCreate,
  type UserCreateResponse,
  userCreateResponseSchema,
  type UserListResponse,
  userListResponseSchema,
  type UserListRow,
  userListRowSchema,
  type UserSaveResponse,
  userSaveResponseSchema,
  type UserUpdate,
} from '@lamina/domain';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import { listQuery } from '../../components/useTableState';
import { studyKeys } from '../studies/api';

export interface UserListParams {
  name?: string;
  /** Counts from 0 here; the server's `page` counts from 1. */
  pageIndex: number;
  pageSize: number;
  sort: string;
}

const studyAccessListSchema = studyAccessRowSchema.array();
const organizationListSchema = organizationViewSchema.array();
const roleListSchema = roleViewSchema.array();

export const userKeys = {
  /** Every page of the users list (not the current user's info, which also starts with 'users'). */
  lists: ['users', 'list'] as const,
  list: (params: UserListParams) => ['users', 'list', params] as const,
  detail: (id: number) => ['users', 'detail', id] as const,
  studyAccess: (id: number) => ['users', 'studyAccess', id] as const,
  organizations: ['organizations'] as const,
  roles: ['permissions', 'roles'] as const,
};

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
