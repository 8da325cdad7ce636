import type { Permission } from './permissions.js';

/** The viewer sidebar's tabs (doc 3 §2 "Sidebar"). */
export const VIEWER_TABS = ['overview', 'annotations', 'queries'] as const;
export type ViewerTab = (typeof VIEWER_TABS)[number];

/** The permission that shows each tab (doc 3 §2, §6). */
export const VIEWER_TAB_PERMISSIONS: Readonly<Record<ViewerTab, Permission>> = {
  overview: 'AP_ImageCaseViewer_ViewOverviewtab',
  annotations: 'AP_ImageCaseViewer_ViewAnnotationstab',
  queries: 'AP_CaseViewer_ViewQueries',
};

/**
 * The sidebar tabs a user sees, in order. The sidebar is shown to users with the overview
 * permission or to the image's uploader (doc 3 §2): the uploader sees the Overview tab even without
 * it; without an Overview (no permission, not the uploader) there is no sidebar at all.
 */
export function viewerTabs(actions: ReadonlySet<string> | readonly string[], isUploader: boolean): ViewerTab[] {
  const has = (p: Permission) =>
    Array.isArray(actions) ? actions.includes(p) : (actions as ReadonlySet<string>).has(p);
  const overview = has(VIEWER_TAB_PERMISSIONS.overview) || isUploader;
  if (!overview) return [];
  return VIEWER_TABS.filter((tab) => tab === 'overview' || has(VIEWER_TAB_PERMISSIONS[tab]));
}
