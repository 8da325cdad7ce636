import {
  actionResponseSchema,
  loginResponseSchema,
  logoutResponseSchema,
  sessionStateSchema,
  type ActionResponse,
  type ChangePasswordRequest,
  type LoginRequest,
  type LoginResponse,
} from '@lamina/domain';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { fullPageNavigate } from '../lib/browser';
import { apiFetch, setCsrfToken } from './client';
import { useConfig } from './config';
import { queryKeys } from './queryKeys';

/** POST /api/auth/login. Keeps the returned CSRF token; the caller decides where to go next. */
export function useLogin() {
  return useMutation({
    mutationFn: (credentials: LoginRequest): Promise<LoginResponse> =>
      apiFetch('/api/auth/login', {
        method: 'POST',
        body: credentials,
        schema: loginResponseSchema,
        csrf: false,
        redirectOn401: false,
      }),
    onSuccess: (response) => setCsrfToken(response.csrfToken),
  });
}

/**
 * POST /api/auth/logout, then a full page load of the identity provider's logout when the server
 * names one (a single sign-on session), else of the configured logout URL (or /login).
 * The browser leaves even when the call fails: an expired session is logged out anyway.
 */
export function useLogout() {
  const logoutUrl = useConfig().data?.ssoLogoutUrl ?? '/login';
  return useMutation({
    mutationFn: () =>
      apiFetch('/api/auth/logout', { method: 'POST', schema: logoutResponseSchema, redirectOn401: false }),
    onSettled: (response) => {
      setCsrfToken(null);
      fullPageNavigate(response?.redirectUrl ?? logoutUrl);
    },
  });
}

/**
 * POST /api/auth/password: the user's own password, given the current one. The session (and its
 * CSRF token) stays; users/info is refetched before the caller's onSuccess runs, so the guard of
 * the next page already sees that no change is pending.
 */
export function useChangePassword() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (change: ChangePasswordRequest): Promise<ActionResponse> =>
      apiFetch('/api/auth/password', { method: 'POST', body: change, schema: actionResponseSchema }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.userInfo }),
  });
}

/**
 * GET /api/auth/session: whether there is a live session, asked on /login instead of the user's
 * info, so a logged-out visit logs no 401 in the browser console (issue 20).
 */
export function useSessionState(enabled = true) {
  return useQuery({
    queryKey: ['auth', 'session'],
    queryFn: ({ signal }) =>
      apiFetch('/api/auth/session', { schema: sessionStateSchema, redirectOn401: false, signal }),
    enabled,
    staleTime: 0,
  });
}
