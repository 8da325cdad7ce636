import { AnchorButton, Button, Callout, NonIdealState } from '@blueprintjs/core';
import { MESSAGES, ssoFailureMessage } from '@lamina/domain';
import { useLogout } from '../../api/auth';
import { usePageTitle } from '../../components/usePageTitle';
import { useUserInfo } from '../../api/users';
import { Navigate, useSearchParams } from 'react-router';

/** /welcome: for logged-in users whose account is not registered yet (doc 1 §2.1). */
export function WelcomePage() {
  usePageTitle('Welcome');
  const logout = useLogout();
  const user = useUserInfo().data;

  function handleLogout() {
    logout.mutate();
  }

  // A registered user has nothing to finish here: on to their start page (issue 20).
  if (user?.registered) return <Navigate to="/studies" replace />;

  return (
    <NonIdealState
      className="lamina-status-page"
      icon="hand"
      title="Welcome to Lamina"
      description={MESSAGES.welcome}
      action={<Button text="Logout" icon="log-out" onClick={handleLogout} disabled={logout.isPending} />}
    />
  );
}

/**
 * /welcome?sso=… (not in the spec): a single sign-on that logged nobody in — no active account for
 * the provider's e-mail address, an answer that did not validate, or a provider out of reach. There
 * is no session, so the page needs none; it says why and leads back to the login.
 */
export function SsoFailurePage() {
  usePageTitle('Welcome');
  const [params] = useSearchParams();
  const message = ssoFailureMessage(params.get('sso')) ?? MESSAGES.ssoFailed;
  return (
    <NonIdealState
      className="lamina-status-page"
      icon="hand"
      title="Welcome to Lamina"
      description={
        <Callout intent="warning" role="alert">
          {message}
        </Callout>
      }
      action={<AnchorButton href="/login" icon="log-in" text="Back to login" />}
    />
  );
}
