import { Button, NonIdealState } from '@blueprintjs/core';
import { MESSAGES } from '@lamina/domain';
import { useLogout } from '../../api/auth';
import { usePageTitle } from '../../components/usePageTitle';

/** /welcome: for logged-in users whose account is not registered yet (doc 1 §2.1). */
export function WelcomePage() {
  usePageTitle('Welcome');
  const logout = useLogout();

  function handleLogout() {
    logout.mutate();
  }

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
