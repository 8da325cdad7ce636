import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import { MESSAGES } from './messages.js';

export const loginRequestSchema = z.object({
  username: z.string().trim().min(1).max(TEXT_LIMITS.email),
  password: z.string().min(1).max(1024),
});
export type LoginRequest = z.infer<typeof loginRequestSchema>;

export const roleRefSchema = z.object({ id: z.number().int(), name: z.string(), displayName: z.string() });
export type RoleRef = z.infer<typeof roleRefSchema>;

/** The spec's User (doc 1 §3). */
export const userInfoSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  organizationId: z.number().int().nullable(),
  organizationName: z.string().nullable(),
  registered: z.boolean(),
  lastLoginDt: z.string().nullable(),
  workAsRole: roleRefSchema.nullable(),
  roles: z.array(roleRefSchema),
  actions: z.array(z.string()),
  isSystemAdmin: z.boolean(),
  studyCount: z.number().int(),
  /**
   * The account still has its one-time initial password: every call but users/info, csrf, logout
   * and the password change is refused until it is changed (not in the spec).
   */
  mustChangePassword: z.boolean(),
  /**
   * How the user signs electronically (issue 30, Lamina): 'password', or 'provider' for an account
   * without a Lamina password, which signs by signing in again at its identity provider.
   */
  signsWith: z.enum(['password', 'provider']),
});
export type UserInfo = z.infer<typeof userInfoSchema>;

export const loginResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  csrfToken: z.string(),
  user: userInfoSchema,
});
export type LoginResponse = z.infer<typeof loginResponseSchema>;

export const csrfResponseSchema = z.object({ csrfToken: z.string() });

/**
 * GET /api/auth/session (public): whether the request carries a live session. The login page asks
 * this instead of GET /api/users/info, whose expected 401 the browser would log as an error.
 */
export const sessionStateSchema = z.object({ authenticated: z.boolean() });

export const configSchema = z.object({
  ssoLoginUrl: z.string().nullable(),
  ssoLogoutUrl: z.string().nullable(),
  tileServerLocation: z.string(),
  /** Username and password login is on (LOCAL_LOGIN; not in the spec). */
  localLogin: z.boolean(),
  /** OpenID Connect single sign-on: the name of its login button ('Log in with {name}'); null → off. */
  oidcName: z.string().nullable(),
  /**
   * The image extensions this server reads (acceptedImageExtensions: the specification's three and
   * the vendor formats, less those that need OpenSlide where it is not installed; issue 31).
   */
  imageExtensions: z.array(z.string()),
});
export type AppConfig = z.infer<typeof configSchema>;

/** GET: starts the OpenID Connect login (a page load, not a fetch); `?redirect=` is followed after it. */
export const OIDC_LOGIN_PATH = '/api/auth/oidc/login';
/** GET: where the provider sends the browser back (the redirect URI registered at the provider). */
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';

/**
 * Why a single sign-on did not log the user in: the `?sso=` of /welcome, where the server's
 * callback sends the browser (no session is created).
 */
export const SSO_FAILURES = {
  unknown: MESSAGES.ssoUnknownUser,
  failed: MESSAGES.ssoFailed,
  unavailable: MESSAGES.ssoUnavailable,
} as const;
export type SsoFailure = keyof typeof SSO_FAILURES;

/** The message of /welcome's `?sso=` value, or null when it names no failure. */
export function ssoFailureMessage(value: string | null): string | null {
  return value !== null && Object.hasOwn(SSO_FAILURES, value) ? SSO_FAILURES[value as SsoFailure] : null;
}

/**
 * POST /api/auth/logout: where the browser goes next. `redirectUrl` is the identity provider's
 * logout (end_session_endpoint) for a single sign-on session; null → the configured logout URL.
 */
export const logoutResponseSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  redirectUrl: z.string().nullable(),
});
export type LogoutResponse = z.infer<typeof logoutResponseSchema>;

export const availableRoleSchema = z.object({ id: z.number().int(), displayName: z.string() });
export const availableRolesResponseSchema = z.array(availableRoleSchema);
export type AvailableRole = z.infer<typeof availableRoleSchema>;

export const workAsRequestSchema = z.object({ roleId: z.number().int().positive() });
export type WorkAsRequest = z.infer<typeof workAsRequestSchema>;

export const actionResponseSchema = z.object({ success: z.boolean(), message: z.string() });
export type ActionResponse = z.infer<typeof actionResponseSchema>;

export const errorResponseSchema = z.object({ success: z.literal(false), message: z.string() });
export type ErrorResponse = z.infer<typeof errorResponseSchema>;

/** The password rules (not in the spec), shared by the change-password form and the server. */
export const PASSWORD_RULES = {
  /** Characters as a person counts them (code points), so an emoji is one. */
  minLength: 12,
  /** A size cap in UTF-16 code units, as the schema and the input's maxLength count. */
  maxLength: 1024,
  /** A username local part shorter than this is not looked for (`a@x.org` would forbid every 'a'). */
  usernameMinLength: 3,
} as const;

export interface PasswordRuleInput {
  newPassword: string;
  currentPassword: string;
  username: string;
}

/** The part of a username before the last '@' (usernames are email addresses), else the whole name. */
export function usernameLocalPart(username: string): string {
  const at = username.lastIndexOf('@');
  return (at > 0 ? username.slice(0, at) : username).trim();
}

/**
 * Every password rule the new password breaks, in a fixed order (empty when it is acceptable):
 * at least 12 characters, at most 1024, not the current password, and not containing the
 * username's local part in any letter case.
 */
export function passwordRuleErrors({ newPassword, currentPassword, username }: PasswordRuleInput): string[] {
  const errors: string[] = [];
  if (Array.from(newPassword).length < PASSWORD_RULES.minLength) errors.push(MESSAGES.passwordTooShort);
  if (newPassword.length > PASSWORD_RULES.maxLength) errors.push(MESSAGES.passwordTooLong);
  if (newPassword !== '' && newPassword === currentPassword) errors.push(MESSAGES.passwordUnchanged);
  const local = usernameLocalPart(username).toLowerCase();
  if (local.length >= PASSWORD_RULES.usernameMinLength && newPassword.toLowerCase().includes(local)) {
    errors.push(MESSAGES.passwordContainsUsername);
  }
  return errors;
}

/** The first rule the new password breaks, or null: what the server answers with 400. */
export function passwordRuleError(input: PasswordRuleInput): string | null {
  return passwordRuleErrors(input)[0] ?? null;
}

/** POST /api/auth/password: the user's own password, changed by giving the current one. */
export const changePasswordRequestSchema = z.object({
  currentPassword: z.string().min(1, MESSAGES.currentPasswordRequired).max(PASSWORD_RULES.maxLength),
  newPassword: z.string().max(PASSWORD_RULES.maxLength, MESSAGES.passwordTooLong),
});
export type ChangePasswordRequest = z.infer<typeof changePasswordRequestSchema>;

/** PUT /api/users/workAs. */
export const workAsResponseSchema = z.object({ success: z.literal(true), message: z.string(), user: userInfoSchema });
