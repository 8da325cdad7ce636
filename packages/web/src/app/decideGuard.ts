import { hasAny, type Permission, type UserInfo } from '@lamina/domain';
import { changePasswordUrlFor, loginUrlFor } from '../lib/safeRedirect';

export type GuardDecision = 'ok' | 'login' | 'changePassword' | 'welcome' | 'accessDenied' | 'loading';

export interface GuardState {
  /** `undefined` while users/info loads; `null` when not logged in (401). */
  user: Pick<UserInfo, 'registered' | 'actions' | 'mustChangePassword'> | null | undefined;
  /** Any one of these is enough (doc 1 §6); empty means being logged in is enough. */
  required: readonly Permission[];
  /** Only /welcome and /changePassword are open to a logged-in user who is not registered yet. */
  allowUnregistered?: boolean;
  /** Only /changePassword is open to a user who still has to change a one-time password. */
  allowDuringPasswordChange?: boolean;
}

/**
 * The route guard of doc 1 §2.2 as a pure decision. A pending password change (not in the spec)
 * comes before everything else, registration included: the server refuses every other call until
 * it is done.
 */
export function decideGuard({
  user,
  required,
  allowUnregistered = false,
  allowDuringPasswordChange = false,
}: GuardState): GuardDecision {
  if (user === undefined) return 'loading';
  if (user === null) return 'login';
  if (user.mustChangePassword && !allowDuringPasswordChange) return 'changePassword';
  if (!user.registered && !allowUnregistered) return 'welcome';
  if (!hasAny(user.actions, required)) return 'accessDenied';
  return 'ok';
}

/** Where a decision sends the browser; `null` when it stays. `path` is the current path plus query. */
export function guardTarget(decision: GuardDecision, path: string): string | null {
  switch (decision) {
    case 'login':
      return loginUrlFor(path);
    case 'changePassword':
      return changePasswordUrlFor(path);
    case 'welcome':
      return '/welcome';
    case 'accessDenied':
      return '/accessDenied';
    case 'ok':
    case 'loading':
      return null;
  }
}
