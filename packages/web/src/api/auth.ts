import { actionResponseSchema, loginResponseSchema, type LoginRequest, type LoginResponse } from '@lamina/domain';
import { useMutation } from '@tanstack/react-query';
import { fullPageNavigate } from '../app/browser';
import { apiFetch, setCsrfToken } from './client';
import { useConfig } from './config';

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
 * POST /api/auth/logout, then a full page load of the configured logout URL (or /login).
 * The browser leaves even when the call fails: an expired session is logged out anyway.
 */
export function useLogout() {
  const logoutUrl = useConfig().data?.ssoLogoutUrl ?? '/login';
  return useMutation({
    mutationFn: () =>
      apiFetch('/api/auth/logout', { method: 'POST', schema: actionResponseSchema, redirectOn401: false }),
    onSettled: () => {
      setCsrfToken(null);
      fullPageNavigate(logoutUrl);
    },
  });
}
