import {
  ROUTE_PERMISSIONS,
  isWorkingAsSystemAdmin,
  landingPath,
  ssoFailureMessage,
  type Permission,
} from '@lamina/domain';
import type { ReactNode } from 'react';
import type { QueryClient } from '@tanstack/react-query';
import {
  Navigate,
  createBrowserRouter,
  useLocation,
  useParams,
  useSearchParams,
  type LoaderFunctionArgs,
  type RouteObject,
} from 'react-router';
import { NEW_STUDY_ID } from '../features/studies/studyTabs';
import { LoginPage } from '../features/auth/LoginPage';
import { AppShell } from './AppShell';
import { lazyPage } from './lazyPage';
import { NotFoundPage } from '../components/NotFoundPage';
import { PageSpinner } from '../components/PageSpinner';
import { RequireAuth } from './RequireAuth';
import { RouteErrorScreen } from './RouteErrorScreen';
import { CHANGE_PASSWORD_PATH } from '../lib/safeRedirect';
import { userInfoQueryOptions, useUserInfo } from '../api/users';
import { QUERY_REASONS_PATH } from './adminPaths';
import { prefetchCaseViewer, prefetchImageViewer } from '../features/viewer/viewerPrefetch';

const WelcomePage = lazyPage(() => import('../features/auth/WelcomePage'), 'WelcomePage');
const SsoFailurePage = lazyPage(() => import('../features/auth/WelcomePage'), 'SsoFailurePage');
const AssignedCasesPage = lazyPage(() => import('../features/cases/AssignedCasesPage'), 'AssignedCasesPage');
const AccessDeniedPage = lazyPage(() => import('../features/auth/AccessDeniedPage'), 'AccessDeniedPage');
const SuccessMessagePage = lazyPage(() => import('../features/auth/SuccessMessagePage'), 'SuccessMessagePage');
const ChangePasswordPage = lazyPage(() => import('../features/auth/ChangePasswordPage'), 'ChangePasswordPage');
const StudiesPage = lazyPage(() => import('../features/studies/StudiesPage'), 'StudiesPage');
const StudyPage = lazyPage(() => import('../features/studies/StudyPage'), 'StudyPage');
const StudyConfigurePage = lazyPage(() => import('../features/studies/StudyConfigurePage'), 'StudyConfigurePage');
const StudyAccessPage = lazyPage(() => import('../features/studies/StudyAccessPage'), 'StudyAccessPage');
const loadImageViewer = () => import('../features/viewer/ImageViewerPage');
const loadCaseViewer = () => import('../features/viewer/CaseViewerPage');
const UsersPage = lazyPage(() => import('../features/users/UsersPage'), 'UsersPage');
const UserProfilePage = lazyPage(() => import('../features/users/UserProfilePage'), 'UserProfilePage');
const ImageManagementPage = lazyPage(
  () => import('../features/imageManagement/ImageManagementPage'),
  'ImageManagementPage',
);
const ReportsPage = lazyPage(() => import('../features/reports/ReportsPage'), 'ReportsPage');
const QueriesPage = lazyPage(() => import('../features/queries/QueriesPage'), 'QueriesPage');
const QueryReasonsPage = lazyPage(() => import('../features/queries/QueryReasonsPage'), 'QueryReasonsPage');

/** `/` → `/studies`, keeping the query string. */
function RootRedirect() {
  const { search } = useLocation();
  return <Navigate to={{ pathname: '/studies', search }} replace />;
}

/**
 * /studies, everyone's start after login: a reader without the studies page (NOTO) starts on their
 * assigned cases instead of 'Access denied' (issue 20).
 */
function StudiesRoute() {
  const actions = useUserInfo().data?.actions;
  if (actions && landingPath(actions) === '/assigned') return <Navigate to="/assigned" replace />;
  return guarded(ROUTE_PERMISSIONS.studies, <StudiesPage />);
}

/**
 * /welcome: for a logged-in user not registered yet; with `?sso=` (a single sign-on that logged
 * nobody in, so no session) the reason, open to anyone.
 */
function WelcomeRoute() {
  const [params] = useSearchParams();
  if (ssoFailureMessage(params.get('sso')) !== null) return <SsoFailurePage />;
  return (
    <RequireAuth allowUnregistered>
      <WelcomePage />
    </RequireAuth>
  );
}

/** /studies/new/configure needs the create-study permission; /studies/{id}/configure the edit one. */
function StudyConfigureRoute() {
  const { id } = useParams();
  const required = id === NEW_STUDY_ID ? ROUTE_PERMISSIONS.studyCreate : ROUTE_PERMISSIONS.studyConfigure;
  return guarded(required, <StudyConfigurePage />);
}

/**
 * A system-admin screen: logged in (RequireAuth), then the system-admin flag and working as
 * SystemAdmin (the server's `systemAdmin` policy), else Access denied.
 */
function SystemAdminRoute({ children }: { children: ReactNode }) {
  const user = useUserInfo().data;
  return <RequireAuth>{isWorkingAsSystemAdmin(user) ? children : <Navigate to="/accessDenied" replace />}</RequireAuth>;
}

function guarded(anyOf: readonly Permission[], page: ReactNode): ReactNode {
  return <RequireAuth anyOf={anyOf}>{page}</RequireAuth>;
}

/**
 * A viewer route's loader (issue 28): starts the page's data the moment the URL is known, beside the
 * session check rather than after it (the document's early script has usually asked already: the
 * client takes those answers), and settles once the data and the user are in, or have failed. With
 * the page's chunk (the route's `lazy`) React Router waits for both, so the page's first render
 * finds everything in TanStack Query's cache and makes the viewer at once, instead of rendering its
 * loading state and then again for each answer. A failure is the page's or the guard's to show.
 */
function viewerLoader(
  client: QueryClient,
  prefetch: (client: QueryClient, params: LoaderFunctionArgs['params']) => Promise<void>,
) {
  return async ({ params }: LoaderFunctionArgs): Promise<null> => {
    await Promise.all([prefetch(client, params), client.query(userInfoQueryOptions).catch(() => undefined)]);
    return null;
  };
}

/**
 * A viewer route's page through React Router's `lazy` rather than React.lazy: the router renders
 * the route once its chunk is in, so the page never suspends. A suspended page shows the shell's
 * Suspense fallback, and React then holds back the page's first commit until 300 ms after that
 * fallback appeared (its fallback throttle) — most of the gap between the viewer's engine and its
 * first frame (issue 28). A failed chunk load shows the route's error screen.
 */
function viewerPage<M>(load: () => Promise<M>, page: (module: M) => ReactNode) {
  return async () => ({ element: page(await load()) });
}

/** A viewer route's data is fetched again only for another image or case, not for ?queryId= and the like. */
function otherViewerTarget({ currentParams, nextParams }: { currentParams: object; nextParams: object }): boolean {
  return JSON.stringify(currentParams) !== JSON.stringify(nextParams);
}

/**
 * The route table of doc 1 §2.1. React Router ranks routes by specificity, so the viewer routes
 * (/studies/:studyId/images/:id) and the configure routes win over /studies/:id/:tab regardless of
 * order; they are listed first anyway, to read as they match. The viewer routes' loaders prefetch
 * into `client`, the app's query client.
 */
export const createAppRoutes = (client: QueryClient): RouteObject[] => [
  {
    element: <AppShell />,
    errorElement: <RouteErrorScreen />,
    children: [
      { path: '/login', element: <LoginPage /> },
      { path: '/', element: <RootRedirect /> },
      { path: '/welcome', element: <WelcomeRoute /> },
      {
        // Not in the spec: the one page open while a one-time password must be changed.
        path: CHANGE_PASSWORD_PATH,
        element: (
          <RequireAuth allowUnregistered allowDuringPasswordChange>
            <ChangePasswordPage />
          </RequireAuth>
        ),
      },
      { path: '/accessDenied', element: guarded([], <AccessDeniedPage />) },
      { path: '/successMessage', element: guarded([], <SuccessMessagePage />) },

      {
        path: '/studies/:studyId/images/:id',
        loader: viewerLoader(client, prefetchImageViewer),
        lazy: viewerPage(loadImageViewer, ({ ImageViewerPage }) =>
          guarded(ROUTE_PERMISSIONS.imageViewer, <ImageViewerPage />),
        ),
        shouldRevalidate: otherViewerTarget,
        // While the page's chunk and data load on the first load.
        hydrateFallbackElement: <PageSpinner />,
      },
      {
        path: '/studies/:studyId/cases/:id',
        loader: viewerLoader(client, prefetchCaseViewer),
        lazy: viewerPage(loadCaseViewer, ({ CaseViewerPage }) =>
          guarded(ROUTE_PERMISSIONS.caseViewer, <CaseViewerPage />),
        ),
        shouldRevalidate: otherViewerTarget,
        // While the page's chunk and data load on the first load.
        hydrateFallbackElement: <PageSpinner />,
      },
      {
        path: '/studies/:id/configure/associate-users',
        element: guarded(ROUTE_PERMISSIONS.studyConfigure, <StudyAccessPage />),
      },
      { path: '/studies/:id/configure/:tab?', element: <StudyConfigureRoute /> },
      { path: '/studies/:id/:tab?', element: guarded(ROUTE_PERMISSIONS.study, <StudyPage />) },
      { path: '/studies', element: <StudiesRoute /> },
      { path: '/assigned', element: guarded(ROUTE_PERMISSIONS.assignedCases, <AssignedCasesPage />) },

      { path: '/users', element: guarded(ROUTE_PERMISSIONS.users, <UsersPage />) },
      { path: '/users/:id/:tab?', element: guarded(ROUTE_PERMISSIONS.users, <UserProfilePage />) },
      { path: '/image-management/:tab?', element: guarded(ROUTE_PERMISSIONS.imageManagement, <ImageManagementPage />) },
      { path: '/reports', element: guarded(ROUTE_PERMISSIONS.reports, <ReportsPage />) },
      { path: '/queries/:tab?', element: guarded(ROUTE_PERMISSIONS.queries, <QueriesPage />) },
      {
        path: QUERY_REASONS_PATH,
        element: (
          <SystemAdminRoute>
            <QueryReasonsPage />
          </SystemAdminRoute>
        ),
      },

      { path: '*', element: <NotFoundPage /> },
    ],
  },
];

export function createAppRouter(client: QueryClient) {
  return createBrowserRouter(createAppRoutes(client));
}
