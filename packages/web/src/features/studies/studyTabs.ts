import type { RouteTab } from '../../components/RouteTabs';

export type StudyTab = 'cases' | 'images';
export const STUDY_TABS: readonly RouteTab<StudyTab>[] = [
  { id: 'cases', label: 'Cases' },
  { id: 'images', label: 'Images' },
];

export type StudyConfigureTab = 'settings' | 'users';
export const STUDY_CONFIGURE_TABS: readonly RouteTab<StudyConfigureTab>[] = [
  { id: 'settings', label: 'Settings' },
  { id: 'users', label: 'Users' },
];

/** The id that /studies/:id/configure uses for a study being created (doc 1 §2.1). */
export const NEW_STUDY_ID = 'new';
