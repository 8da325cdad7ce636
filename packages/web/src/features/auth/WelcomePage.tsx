import { Button, NonIdealState } from '@blueprintjs/core';
import { MESSAGES } from '@lamina/domain';
import { useLogout } from '../../api/auth';
import { usePageTitle } from '../../components/usePageTitle';
import { useUserInfo } from '../../api/users';
import { Navigate } from 'react-router';

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
