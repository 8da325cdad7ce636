import type { RouteTab } from '../../components/RouteTabs';

export type UserTab = 'settings' | 'studyAccess';
export const USER_TABS: readonly RouteTab<UserTab>[] = [
  { id: 'settings', label: 'User Settings' },
  { id: 'studyAccess', label: 'Study Access' },
];
