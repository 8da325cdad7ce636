import type { AppConfig, UserInfo } from '@lamina/domain';

export function makeUser(overrides: Partial<UserInfo> = {}): UserInfo {
  return {
    id: 7,
    username: 'ada',
    firstName: 'Ada',
    lastName: 'Lovelace',
    organizationId: 1,
    organizationName: 'Lamina Labs',
    registered: true,
    lastLoginDt: null,
    workAsRole: { id: 2, name: 'ISC', displayName: 'ISC Reviewer' },
    roles: [
      { id: 2, name: 'ISC', displayName: 'ISC Reviewer' },
      { id: 5, name: 'DM', displayName: 'Data Manager' },
    ],
    actions: ['S_Main_ViewStudyPage', 'UM_ViewUsersPage'],
    isSystemAdmin: false,
    studyCount: 3,
    ...overrides,
  };
}

export function makeConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return { ssoLoginUrl: null, ssoLogoutUrl: null, tileServerLocation: '/tiles', ...overrides };
}
