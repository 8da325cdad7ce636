import { Suspense } from 'react';
import { Outlet, useLocation } from 'react-router';
import { useSessionState } from '../api/auth';
import { errorMessage } from '../api/ApiError';
import { useConfig } from '../api/config';
import { useUserInfo } from '../api/users';
import { PageSpinner } from '../components/PageSpinner';
import { AppHeader } from './AppHeader';
import { ConfigErrorScreen } from './ConfigErrorScreen';
import { useEmbeddedMode } from '../components/embedded';

/** Layout of every page: header, then the route's page. Waits for the public config first. */
export function AppShell() {
  const config = useConfig();
  // On /login (and /welcome?sso=…, after a single sign-on that logged nobody in) the user's info is
  // read only when a session exists (its 401 would be logged otherwise).
  const location = useLocation();
  const onLogin =
    location.pathname === '/login' ||
    (location.pathname === '/welcome' && new URLSearchParams(location.search).has('sso'));
  const session = useSessionState(onLogin);
  const user = useUserInfo(!onLogin || session.data?.authenticated === true);
  const embedded = useEmbeddedMode();

  if (config.isPending) return <PageSpinner />;
  if (config.isError) return <ConfigErrorScreen kind="config" message={errorMessage(config.error)} />;

  return (
    <div className="lamina-app">
      <AppHeader config={config.data} user={user.data} embedded={embedded} />
      <main className="lamina-main" id="main">
        <Suspense fallback={<PageSpinner />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}
