import { parsePositiveId } from '../../lib/ids';
import { hasAny, type Permission } from '@lamina/domain';
import type { RouteTab } from '../../components/RouteTabs';

export type StudyTab = 'cases' | 'images';
export const STUDY_TABS: readonly RouteTab<StudyTab>[] = [
  { id: 'cases', label: 'Cases' },
  { id: 'images', label: 'Images' },
];

/** Each study tab is shown only with its own permission (doc 1 §2.5). */
export const STUDY_TAB_PERMISSION: Readonly<Record<StudyTab, Permission>> = {
  cases: 'S_Main_ViewCasesTab',
  images: 'S_Main_ViewImagesTab',
};

export function allowedStudyTabs(actions: readonly string[]): RouteTab<StudyTab>[] {
  return STUDY_TABS.filter((t) => hasAny(actions, [STUDY_TAB_PERMISSION[t.id]]));
}

/**
 * The tab to show: the requested one when allowed, else the other allowed one; `null` when neither
 * is allowed (the user goes to /accessDenied).
 */
export function resolveStudyTab(requested: StudyTab, actions: readonly string[]): StudyTab | null {
  const allowed = allowedStudyTabs(actions).map((t) => t.id);
  if (allowed.includes(requested)) return requested;
  return allowed[0] ?? null;
}

export type StudyConfigureTab = 'settings' | 'users';
export const STUDY_CONFIGURE_TABS: readonly RouteTab<StudyConfigureTab>[] = [
  { id: 'settings', label: 'Settings' },
  { id: 'users', label: 'Users' },
];

/** The id that /studies/:id/configure uses for a study being created (doc 1 §2.1). */
export const NEW_STUDY_ID = 'new';

/** A study id from the URL, or null when it is not a positive integer. */
export const parseStudyId = parsePositiveId;
