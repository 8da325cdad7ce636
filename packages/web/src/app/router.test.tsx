import { MESSAGES } from '@lamina/domain';
import { cleanup, screen, waitFor } from '@testing-library/react';
import { matchRoutes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeConfig, makeUser } from '../test/fixtures';
import { mockFetch } from '../test/mockFetch';
import { renderRoutes, testQueryClient } from '../test/render';
import { fullPageReplace } from '../lib/browser';
import { earlyPage } from '../lib/earlyStart';
import { createAppRoutes } from './router';

vi.mock(import('../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageNavigate: vi.fn(),
  fullPageReplace: vi.fn(),
  reloadPage: vi.fn(),
}));

afterEach(() => {
  cleanup();
  vi.mocked(fullPageReplace).mockClear();
});

/** The app's routes, their loaders prefetching into the query client the test renders with. */
function renderApp(options: Parameters<typeof renderRoutes>[1] & { path: string }) {
  const queryClient = testQueryClient();
  return renderRoutes(createAppRoutes(queryClient), { ...options, queryClient });
}

function matchedPath(pathname: string): string | undefined {
  return matchRoutes(createAppRoutes(testQueryClient()), pathname)?.at(-1)?.route.path;
}

const everything = makeUser({
  actions: [
    'S_Main_ViewStudyPage',
    'S_Main_EditStudy',
    'S_Main_CreateStudy',
    'UM_ViewUsersPage',
    'R_ViewReportsTab',
    'IM_ImageListTab_ViewImageslistTab',
    'Q_ViewQueriesCases',
    'AP_ImageViewer_ViewimageViewer',
    'AP_CaseViewer_ViewCaseViewer',
  ],
});

function serve(user: unknown, status = 200) {
  return mockFetch({
    'GET /api/config': { body: makeConfig() },
    'GET /api/users/info': { status, body: user },
  });
}

describe('route table (doc 1 §2.1)', () => {
  it.each([
    ['/login', '/login'],
    ['/', '/'],
    ['/welcome', '/welcome'],
    ['/accessDenied', '/accessDenied'],
    ['/changePassword', '/changePassword'],
    ['/successMessage', '/successMessage'],
    ['/studies', '/studies'],
    ['/studies/3', '/studies/:id/:tab?'],
    ['/studies/3/cases', '/studies/:id/:tab?'],
    ['/studies/3/images', '/studies/:id/:tab?'],
    ['/studies/3/images/9', '/studies/:studyId/images/:id'],
    ['/studies/3/cases/12', '/studies/:studyId/cases/:id'],
    ['/studies/new/configure', '/studies/:id/configure/:tab?'],
    ['/studies/new/configure/', '/studies/:id/configure/:tab?'],
    ['/studies/3/configure/settings', '/studies/:id/configure/:tab?'],
    ['/studies/3/configure/users', '/studies/:id/configure/:tab?'],
    ['/studies/3/configure/associate-users', '/studies/:id/configure/associate-users'],
    ['/users', '/users'],
    ['/users/4', '/users/:id/:tab?'],
    ['/users/4/studyAccess', '/users/:id/:tab?'],
    ['/image-management', '/image-management/:tab?'],
    ['/image-management/annotations', '/image-management/:tab?'],
    ['/reports', '/reports'],
    ['/queries', '/queries/:tab?'],
    ['/queries/images', '/queries/:tab?'],
    ['/no/such/page', '*'],
    ['/studies/3/images/9/extra', '*'],
  ])('%s → %s', (pathname, pattern) => {
    expect(matchedPath(pathname)).toBe(pattern);
  });

  // The document's early script (lib/earlyStart.ts) knows the viewer routes without the router.
  it.each([
    '/studies/3/images/9',
    '/studies/3/cases/12',
    '/studies/3/images/9/',
    '/studies/3/images',
    '/studies/3/images/9/extra',
    '/studies/new/configure',
    '/studies/3/cases',
    '/image-management/annotations',
    '/',
  ])('the early script sees %s as the route table does', (pathname) => {
    const viewer = { '/studies/:studyId/images/:id': 'image', '/studies/:studyId/cases/:id': 'case' } as const;
    const route = matchedPath(pathname) as keyof typeof viewer | undefined;
    expect(earlyPage(pathname).kind).toBe((route && viewer[route]) ?? 'other');
  });
});

describe('guarded routes', () => {
  it('sends a logged-out visitor to /login with the path and query', async () => {
    serve({ success: false, message: MESSAGES.pleaseLogIn }, 401);
    renderApp({ path: '/studies/3/cases?sort=name' });
    await waitFor(() =>
      expect(fullPageReplace).toHaveBeenCalledWith('/login?redirect=%2Fstudies%2F3%2Fcases%3Fsort%3Dname'),
    );
    screen.getByRole('link', { name: 'Log in' });
  });

  it('sends a user with a one-time password to /changePassword first, with the path to come back to', async () => {
    serve(makeUser({ mustChangePassword: true }));
    renderApp({ path: '/studies?x=1' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/changePassword?redirect=%2Fstudies%3Fx%3D1'));
    cleanup();
    vi.mocked(fullPageReplace).mockClear();
    serve(makeUser({ mustChangePassword: true, registered: false }));
    renderApp({ path: '/welcome' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/changePassword?redirect=%2Fwelcome'));
  });

  it('opens /changePassword to a user with a one-time password, registered or not, without tabs', async () => {
    serve(makeUser({ mustChangePassword: true, registered: false }));
    renderApp({ path: '/changePassword?redirect=%2Fstudies' });
    await screen.findByText(MESSAGES.passwordChangeRequired);
    screen.getByLabelText('Current password');
    expect(screen.queryByRole('navigation', { name: 'Main' })).toBeNull();
    expect(fullPageReplace).not.toHaveBeenCalled();
  });

  it('sends a logged-out visitor of /changePassword to /login', async () => {
    serve({ success: false, message: MESSAGES.pleaseLogIn }, 401);
    renderApp({ path: '/changePassword' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/login?redirect=%2FchangePassword'));
  });

  it('sends an unregistered user to /welcome', async () => {
    serve(makeUser({ registered: false }));
    renderApp({ path: '/studies' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/welcome'));
  });

  it('shows the welcome text and a Logout button to an unregistered user', async () => {
    serve(makeUser({ registered: false }));
    renderApp({ path: '/welcome' });
    await screen.findByText(MESSAGES.welcome);
    screen.getByRole('button', { name: 'Logout' });
    expect(fullPageReplace).not.toHaveBeenCalled();
  });

  it('tells a browser back from a single sign-on that logged nobody in why, without a session (issue 19)', async () => {
    const { calls } = mockFetch({
      'GET /api/config': { body: makeConfig({ oidcName: 'Acme ID' }) },
      'GET /api/auth/session': { body: { authenticated: false } },
    });
    renderApp({ path: '/welcome?sso=unknown' });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(MESSAGES.ssoUnknownUser);
    expect(screen.getByRole('button', { name: 'Back to login' }).getAttribute('href')).toBe('/login');
    expect(calls.map((c) => c.path)).not.toContain('/api/users/info');
    expect(fullPageReplace).not.toHaveBeenCalled();
    cleanup();
    renderApp({ path: '/welcome?sso=failed' });
    expect((await screen.findByRole('alert')).textContent).toBe(MESSAGES.ssoFailed);
  });

  it('sends a registered user from /welcome to their start page, not to finish registering (issue 20)', async () => {
    serve(everything);
    renderApp({ path: '/welcome' });
    await screen.findByRole('heading', { name: 'Studies' });
    expect(screen.queryByText(MESSAGES.welcome)).toBeNull();
  });

  it('starts a NOTO reader on the assigned cases, each opening the case viewer embedded (issue 20)', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': {
        body: makeUser({
          workAsRole: { id: 11, name: 'NOTO', displayName: 'NOTO' },
          actions: ['S_Main_ViewAssignedStudies', 'AP_CaseViewer_ViewCaseViewer', 'AP_ImageViewer_ViewimageViewer'],
        }),
      },
      'GET /api/cases/assigned': {
        body: {
          success: true,
          cases: [
            {
              id: 5,
              studyId: 2,
              studyName: 'UC-2',
              procId: 'ENDO-5',
              histoProcedureId: null,
              status: 'PROCESSED',
              numberOfImages: 2,
              assignedAt: '2026-11-20T10:00:00.000Z',
              myReadAt: null,
            },
          ],
        },
      },
    });
    renderApp({ path: '/studies' });
    const link = await screen.findByRole('link', { name: 'ENDO-5' });
    expect(link.getAttribute('href')).toBe('/studies/2/cases/5?embeddedBy=NOTO');
    screen.getByText(/reading platform \(NOTO\)/);
    expect(fullPageReplace).not.toHaveBeenCalledWith('/accessDenied');
  });

  it('sends a user without the permission to /accessDenied', async () => {
    serve(makeUser({ actions: ['S_Main_ViewStudyPage'] }));
    renderApp({ path: '/users' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/accessDenied'));
  });

  it('guards the viewers with their own permission', async () => {
    serve(makeUser({ actions: ['S_Main_ViewStudyPage'] }));
    renderApp({ path: '/studies/3/images/9' });
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/accessDenied'));
  });

  it('opens the query reason catalogue only to a user working as system admin', async () => {
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': { body: makeUser({ isSystemAdmin: true }) },
    });
    renderApp({ path: '/admin/query-reasons' });
    await screen.findByText(MESSAGES.accessDeniedHelp);
    cleanup();
    mockFetch({
      'GET /api/config': { body: makeConfig() },
      'GET /api/users/info': {
        body: makeUser({
          isSystemAdmin: true,
          workAsRole: { id: 1, name: 'SystemAdmin', displayName: 'System Admin' },
        }),
      },
      'GET /api/query-reasons': { body: { success: true, reasons: [] } },
    });
    renderApp({ path: '/admin/query-reasons' });
    await screen.findByRole('heading', { level: 2, name: 'Query reasons' });
  });

  it('offers Work As on /accessDenied to a user with other roles', async () => {
    serve(makeUser({ actions: [] }));
    renderApp({ path: '/accessDenied' });
    await screen.findByText(MESSAGES.accessDeniedHelp);
    screen.getByRole('button', { name: 'Work As...' });
  });

  it('does not offer Work As on /accessDenied to a user with one role', async () => {
    serve(makeUser({ actions: [], roles: [{ id: 2, name: 'ISC', displayName: 'ISC Reviewer' }] }));
    renderApp({ path: '/accessDenied' });
    await screen.findByText(MESSAGES.accessDeniedHelp);
    expect(screen.queryByRole('button', { name: 'Work As...' })).toBeNull();
  });

  it('shows a permitted page with its title and the header', async () => {
    serve(everything);
    renderApp({ path: '/studies' });
    await screen.findByRole('heading', { level: 2, name: 'Studies' });
    expect(screen.getByRole('link', { name: 'Studies' }).getAttribute('aria-current')).toBe('page');
    expect(screen.getByTestId('work-as-role').textContent).toBe('ISC Reviewer');
    expect(fullPageReplace).not.toHaveBeenCalled();
  });

  it('redirects / to /studies', async () => {
    serve(everything);
    renderApp({ path: '/' });
    await screen.findByRole('heading', { level: 2, name: 'Studies' });
  });

  it('opens the image viewer, not the study tab, for /studies/:id/images/:x', async () => {
    serve(everything);
    renderApp({ path: '/studies/3/images/9' });
    await screen.findByRole('heading', { level: 2, name: 'Image 9' });
  });

  it('selects the default tab and rejects unknown tabs', async () => {
    serve(everything);
    renderApp({ path: '/image-management' });
    expect((await screen.findByRole('tab', { name: 'Images' })).getAttribute('aria-selected')).toBe('true');
    cleanup();
    renderApp({ path: '/studies/3/bogus' });
    await screen.findByText(MESSAGES.pageNotFound);
  });

  it('hides the users tab when creating a study', async () => {
    serve(everything);
    renderApp({ path: '/studies/new/configure' });
    await screen.findByRole('heading', { level: 2, name: 'Create Study' });
    expect(screen.queryByRole('tab', { name: 'Users' })).toBeNull();
  });

  it('shows the scored message on /successMessage', async () => {
    serve(everything);
    renderApp({ path: '/successMessage' });
    await screen.findByText(MESSAGES.imageMarkedScored);
    screen.getByText(MESSAGES.returnToDashboard);
  });

  it('shows Page not found with a link to /studies for an unknown path', async () => {
    serve(everything);
    renderApp({ path: '/no/such/page' });
    await screen.findByText(MESSAGES.pageNotFound);
    expect(screen.getByRole('link', { name: 'Go to Studies' }).getAttribute('href')).toBe('/studies');
  });
});

describe('error screens', () => {
  it('shows a danger callout when the configuration cannot be loaded', async () => {
    mockFetch({ 'GET /api/config': { status: 500, body: { success: false, message: 'boom' } } });
    renderApp({ path: '/studies' });
    const text = await screen.findByText(MESSAGES.unableToConnect);
    expect(text.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });

  it('shows a warning callout with the message when the user cannot be loaded', async () => {
    serve({ success: false, message: 'Session store unavailable' }, 500);
    renderApp({ path: '/studies' });
    const text = await screen.findByText('Session store unavailable');
    expect(text.closest('.bp6-callout')?.classList.contains('bp6-intent-warning')).toBe(true);
    expect(fullPageReplace).not.toHaveBeenCalled();
  });
});
