import { parsePositiveId } from '../../lib/ids';
import { READ_OUTCOMES_PERMISSION, hasAny, type Permission } from '@lamina/domain';
import type { RouteTab } from '../../components/RouteTabs';

export type StudyTab = 'cases' | 'images' | 'reads';
export const STUDY_TABS: readonly RouteTab<StudyTab>[] = [
  { id: 'cases', label: 'Cases' },
  { id: 'images', label: 'Images' },
  { id: 'reads', label: 'Reads' },
];

/** Each study tab is shown only with its own permission (doc 1 §2.5; Reads: issue 30). */
export const STUDY_TAB_PERMISSION: Readonly<Record<StudyTab, Permission>> = {
  cases: 'S_Main_ViewCasesTab',
  images: 'S_Main_ViewImagesTab',
  reads: READ_OUTCOMES_PERMISSION,
};

/**
 * The tabs the user may open. Reads (issue 30) only on a study with endpoints: `hasEndpoints` is
 * true until the study is loaded (the URL's tab is kept until then).
 */
export function allowedStudyTabs(actions: readonly string[], hasEndpoints = true): RouteTab<StudyTab>[] {
  return STUDY_TABS.filter((t) => hasAny(actions, [STUDY_TAB_PERMISSION[t.id]]) && (t.id !== 'reads' || hasEndpoints));
}

/**
 * The tab to show: the requested one when allowed, else the first allowed one; `null` when none
 * is allowed (the user goes to /accessDenied).
 */
export function resolveStudyTab(requested: StudyTab, actions: readonly string[], hasEndpoints = true): StudyTab | null {
  const allowed = allowedStudyTabs(actions, hasEndpoints).map((t) => t.id);
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
