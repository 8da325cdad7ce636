import type { Permission } from '@lamina/domain';
import { useEffect, type ReactNode } from 'react';
import { useLocation } from 'react-router';
import { errorMessage } from '../api/ApiError';
import { useUserInfo } from '../api/users';
import { PageSpinner } from '../components/PageSpinner';
import { fullPageReplace } from '../lib/browser';
import { ConfigErrorScreen } from './ConfigErrorScreen';
import { decideGuard, guardTarget } from './decideGuard';

interface RequireAuthProps {
  /** Any-of permissions (`ROUTE_PERMISSIONS.*`); omitted means being logged in is enough. */
  anyOf?: readonly Permission[];
  allowUnregistered?: boolean;
  /** Open while a one-time password must still be changed (only /changePassword). */
  allowDuringPasswordChange?: boolean;
  children: ReactNode;
}

const NONE: readonly Permission[] = [];

/**
 * Route guard (doc 1 §2.2). Redirects reload the page, and replace the history entry so that Back
 * does not bounce straight into the same redirect.
 */
export function RequireAuth({
  anyOf = NONE,
  allowUnregistered = false,
  allowDuringPasswordChange = false,
  children,
}: RequireAuthProps) {
  const { data, error, isPending } = useUserInfo();
  const location = useLocation();
  const decision = error
    ? 'loading'
    : decideGuard({
        user: isPending ? undefined : data,
        required: anyOf,
        allowUnregistered,
        allowDuringPasswordChange,
      });
  const target = guardTarget(decision, `${location.pathname}${location.search}`);

  useEffect(() => {
    if (target !== null) fullPageReplace(target);
  }, [target]);

  if (error) return <ConfigErrorScreen kind="user" message={errorMessage(error)} />;
  if (decision !== 'ok') return <PageSpinner />;
  return children;
}
