import type { Permission } from './permissions.js';

/** A permission check passes when any of the listed permissions is held (spec doc 1 §6). */
export function hasAny(actions: readonly string[], required: readonly Permission[]): boolean {
  return required.length === 0 || required.some((p) => actions.includes(p));
}

export interface NavTab {
  readonly id: 'studies' | 'imageManagement' | 'reports' | 'queries' | 'users';
  readonly label: string;
  readonly path: string;
  readonly anyOf: readonly Permission[];
}

/** Top navigation of spec doc 1 §2.3, in display order. */
export const NAV_TABS: readonly NavTab[] = [
  { id: 'studies', label: 'Studies', path: '/studies', anyOf: ['S_Main_ViewStudyPage'] },
  {
    id: 'imageManagement',
    label: 'Image Management',
    path: '/image-management',
    anyOf: ['IM_CaseListTab_ViewPage', 'IM_ImageListTab_ViewImageslistTab'],
  },
  { id: 'reports', label: 'Reports', path: '/reports', anyOf: ['R_ViewReportsTab'] },
  { id: 'queries', label: 'Queries', path: '/queries', anyOf: ['Q_ViewQueriesCases', 'Q_ViewQueriesImages'] },
  { id: 'users', label: 'Users', path: '/users', anyOf: ['UM_ViewUsersPage'] },
];

export function visibleNavTabs(actions: readonly string[]): NavTab[] {
  return NAV_TABS.filter((t) => hasAny(actions, t.anyOf));
}

/** Required permissions of the guarded routes of spec doc 1 §2.1 (any-of). */
export const ROUTE_PERMISSIONS = {
  studies: ['S_Main_ViewStudyPage'],
  study: ['S_Main_ViewStudyPage'],
  /** /studies/:id/configure: editing an existing study. */
  studyConfigure: ['S_Main_EditStudy'],
  /** /studies/new/configure: creating one. */
  studyCreate: ['S_Main_CreateStudy'],
  imageViewer: ['AP_ImageViewer_ViewimageViewer'],
  caseViewer: ['AP_CaseViewer_ViewCaseViewer'],
  /** /assigned: the cases assigned to a reader without the studies page (NOTO, issue 20). */
  assignedCases: ['AP_CaseViewer_ViewCaseViewer'],
  users: ['UM_ViewUsersPage'],
  imageManagement: ['IM_ImageListTab_ViewImageslistTab', 'IM_CaseListTab_ViewPage'],
  reports: ['R_ViewReportsTab'],
  queries: [
    'Q_ViewAllQueries',
    'Q_ViewAllQueriesunderAssignedStudies',
    'Q_ViewQueriesAssignedtoUserRoleOnly',
    'Q_ViewQueriesCases',
    'Q_ViewQueriesImages',
  ],
} as const satisfies Record<string, readonly Permission[]>;

/**
 * Where a logged-in user starts: the studies page, or — for a reader without it (NOTO, who works
 * inside the embedding platform) — the list of their assigned cases; null when neither is theirs.
 */
export function landingPath(actions: readonly string[]): '/studies' | '/assigned' | null {
  if (hasAny(actions, ROUTE_PERMISSIONS.studies)) return '/studies';
  if (hasAny(actions, ROUTE_PERMISSIONS.assignedCases)) return '/assigned';
  return null;
}
