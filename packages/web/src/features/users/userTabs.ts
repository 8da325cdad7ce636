import type { RouteTab } from '../../components/RouteTabs';

export type UserTab = 'settings' | 'studyAccess';
export const USER_TABS: readonly RouteTab<UserTab>[] = [
  { id: 'settings', label: 'Settings' },
  { id: 'studyAccess', label: 'Study Access' },
];
