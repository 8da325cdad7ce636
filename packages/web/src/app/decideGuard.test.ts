import { NAV_TABS, ROUTE_PERMISSIONS, type Permission } from '@lamina/domain';
import { describe, expect, it } from 'vitest';
import { decideGuard, guardTarget, type GuardState } from './decideGuard';

const registered = (actions: string[]): GuardState['user'] => ({
  registered: true,
  actions,
  mustChangePassword: false,
});
const unregistered = (actions: string[]): GuardState['user'] => ({
  registered: false,
  actions,
  mustChangePassword: false,
});
const mustChange = (registeredToo: boolean, actions: string[]): GuardState['user'] => ({
  registered: registeredToo,
  actions,
  mustChangePassword: true,
});

describe('decideGuard', () => {
  it('waits while the user loads', () => {
    expect(decideGuard({ user: undefined, required: [] })).toBe('loading');
    expect(decideGuard({ user: undefined, required: ['UM_ViewUsersPage'] })).toBe('loading');
    expect(decideGuard({ user: undefined, required: [], allowUnregistered: true })).toBe('loading');
  });

  it('sends a logged-out visitor to login, whatever the route needs', () => {
    expect(decideGuard({ user: null, required: [] })).toBe('login');
    expect(decideGuard({ user: null, required: ROUTE_PERMISSIONS.studies })).toBe('login');
    expect(decideGuard({ user: null, required: [], allowUnregistered: true })).toBe('login');
  });

  it('sends an unregistered user to /welcome, even when the permission is held', () => {
    expect(decideGuard({ user: unregistered(['S_Main_ViewStudyPage']), required: ROUTE_PERMISSIONS.studies })).toBe(
      'welcome',
    );
    expect(decideGuard({ user: unregistered([]), required: [] })).toBe('welcome');
  });

  it('lets an unregistered user stay on /welcome', () => {
    expect(decideGuard({ user: unregistered([]), required: [], allowUnregistered: true })).toBe('ok');
  });

  it('checks registration before permissions', () => {
    expect(decideGuard({ user: unregistered([]), required: ROUTE_PERMISSIONS.users })).toBe('welcome');
  });

  it('denies a registered user who lacks every listed permission', () => {
    expect(decideGuard({ user: registered(['S_Main_ViewStudyPage']), required: ROUTE_PERMISSIONS.users })).toBe(
      'accessDenied',
    );
    expect(decideGuard({ user: registered([]), required: ROUTE_PERMISSIONS.studies })).toBe('accessDenied');
  });

  it('accepts any one of the listed permissions (any-of)', () => {
    for (const permission of ROUTE_PERMISSIONS.queries) {
      expect(decideGuard({ user: registered([permission]), required: ROUTE_PERMISSIONS.queries })).toBe('ok');
    }
    expect(
      decideGuard({ user: registered(['IM_CaseListTab_ViewPage']), required: ROUTE_PERMISSIONS.imageManagement }),
    ).toBe('ok');
    expect(decideGuard({ user: registered(['S_Main_CreateStudy']), required: ROUTE_PERMISSIONS.studyCreate })).toBe(
      'ok',
    );
    // Creating is not editing: /studies/{id}/configure needs the edit permission.
    expect(decideGuard({ user: registered(['S_Main_CreateStudy']), required: ROUTE_PERMISSIONS.studyConfigure })).toBe(
      'accessDenied',
    );
  });

  it('sends a user with a one-time password to /changePassword before anything else', () => {
    const holdsAll = mustChange(true, [...ROUTE_PERMISSIONS.studies, ...ROUTE_PERMISSIONS.users]);
    expect(decideGuard({ user: holdsAll, required: ROUTE_PERMISSIONS.studies })).toBe('changePassword');
    expect(decideGuard({ user: holdsAll, required: [] })).toBe('changePassword');
    // Before /welcome: an unregistered user changes the password first.
    expect(decideGuard({ user: mustChange(false, []), required: [], allowUnregistered: true })).toBe('changePassword');
    expect(decideGuard({ user: mustChange(false, []), required: ROUTE_PERMISSIONS.users })).toBe('changePassword');
    // Before access denied.
    expect(decideGuard({ user: mustChange(true, []), required: ROUTE_PERMISSIONS.users })).toBe('changePassword');
  });

  it('lets a user with a one-time password stay on /changePassword, registered or not', () => {
    const page = { required: [], allowUnregistered: true, allowDuringPasswordChange: true } as const;
    expect(decideGuard({ user: mustChange(true, []), ...page })).toBe('ok');
    expect(decideGuard({ user: mustChange(false, []), ...page })).toBe('ok');
    // …which any other logged-in user may open too; logged-out visitors still log in first.
    expect(decideGuard({ user: registered([]), ...page })).toBe('ok');
    expect(decideGuard({ user: unregistered([]), ...page })).toBe('ok');
    expect(decideGuard({ user: null, ...page })).toBe('login');
    expect(decideGuard({ user: undefined, ...page })).toBe('loading');
  });

  it('lets any logged-in registered user through a route with no permission', () => {
    expect(decideGuard({ user: registered([]), required: [] })).toBe('ok');
  });

  it('does not let a permission of another route through', () => {
    const required: readonly Permission[] = ROUTE_PERMISSIONS.imageViewer;
    expect(decideGuard({ user: registered(['AP_CaseViewer_ViewCaseViewer']), required })).toBe('accessDenied');
  });

  it('agrees with the navigation tabs: a visible tab opens its page', () => {
    const pageOf: Record<string, readonly Permission[]> = {
      studies: ROUTE_PERMISSIONS.studies,
      imageManagement: ROUTE_PERMISSIONS.imageManagement,
      reports: ROUTE_PERMISSIONS.reports,
      queries: ROUTE_PERMISSIONS.queries,
      users: ROUTE_PERMISSIONS.users,
    };
    for (const tab of NAV_TABS) {
      for (const permission of tab.anyOf) {
        expect(decideGuard({ user: registered([permission]), required: pageOf[tab.id] ?? [] })).toBe('ok');
      }
    }
  });
});

describe('guardTarget', () => {
  it('maps each decision to where the browser goes', () => {
    expect(guardTarget('login', '/users?name=a')).toBe('/login?redirect=%2Fusers%3Fname%3Da');
    expect(guardTarget('changePassword', '/users?name=a')).toBe('/changePassword?redirect=%2Fusers%3Fname%3Da');
    expect(guardTarget('welcome', '/users')).toBe('/welcome');
    expect(guardTarget('accessDenied', '/users')).toBe('/accessDenied');
    expect(guardTarget('ok', '/users')).toBeNull();
    expect(guardTarget('loading', '/users')).toBeNull();
  });
});
