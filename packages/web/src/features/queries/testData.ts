import type { QueryListRow, QueryMetadata, QueryReasonAdminRow, QueryView } from '@lamina/domain';

/** An open image query from ISC (role 3) to LabTech (role 9) for tests. */
export function makeQuery(overrides: Partial<QueryView> = {}): QueryView {
  return {
    id: 5,
    objectType: 'IMAGE',
    objectId: 1,
    studyId: 3,
    caseId: 40,
    organizationId: null,
    assessmentType: null,
    queryStatus: 'OPEN',
    dynamicStatus: null,
    group: 'open',
    resolution: null,
    cancelled: false,
    overdue: false,
    category: 'OTHER',
    categoryOtherText: '',
    reasonText: 'Blurry / out of focus',
    childReasonText: 'Whole slide',
    reasonOptionId: 11,
    childReasonOptionId: 12,
    closeText: null,
    resolutionText: null,
    resolutionOption: null,
    firstQueryReminderId: 70,
    lastQueryReminderId: 70,
    latestFollowUpOnDt: '2099-01-15',
    openedAt: '2026-11-20T10:00:00.000Z',
    openedByRoleId: 3,
    openedByRoleName: 'ISC',
    openedBy: 9,
    createdBy: 'isc',
    updatedAt: '2026-11-20T10:00:00.000Z',
    closedAt: null,
    closedBy: null,
    resolvedBy: null,
    resolvedAt: null,
    withRoleId: 9,
    withRoleName: 'Lab Technician',
    withUserId: null,
    withUserName: null,
    imageName: 'slide-1.svs',
    comments: [],
    reminders: [
      {
        id: 70,
        queryId: 5,
        followUpOnDt: '2099-01-15',
        remindedOnDt: null,
        remindedBy: 'isc',
        createdAt: '2026-11-20T10:00:00.000Z',
      },
    ],
    actions: [],
    showDisclaimer: false,
    ...overrides,
  };
}

/** Metadata: LabTech (9) and Data Manager (4) may be queried. */
export function makeMetadata(overrides: Partial<QueryMetadata> = {}): QueryMetadata {
  const image = [
    { reasonOptionId: 13, reasonText: 'Other', reasonOptionIsActive: true, children: [] },
    {
      reasonOptionId: 11,
      reasonText: 'Blurry / out of focus',
      reasonOptionIsActive: true,
      children: [
        { id: 12, reasonText: 'Whole slide' },
        { id: 14, reasonText: 'Part of the tissue' },
      ],
    },
    { reasonOptionId: 15, reasonText: 'Wrong stain', reasonOptionIsActive: false, children: [] },
    { reasonOptionId: 16, reasonText: 'Incorrect file name', reasonOptionIsActive: true, children: [] },
  ];
  const kase = [{ reasonOptionId: 21, reasonText: 'Visit ID mismatch', reasonOptionIsActive: true, children: [] }];
  return {
    success: true,
    roles: [
      { id: 4, name: 'DM', displayName: 'Data Manager' },
      { id: 9, name: 'LabTech', displayName: 'Lab Technician' },
    ],
    caseReasons: [
      { withRoleId: 4, values: kase },
      { withRoleId: 9, values: kase },
    ],
    imageReasons: [
      { withRoleId: 4, values: image },
      { withRoleId: 9, values: image },
    ],
    resolutionOptions: { IMAGE: ['Image replaced', 'Other'], CASE: ['Case data corrected', 'Other'] },
    ...overrides,
  };
}

export function makeQueryRow(overrides: Partial<QueryListRow> = {}): QueryListRow {
  return {
    id: 5,
    objectType: 'IMAGE',
    objectId: 1,
    studyId: 3,
    studyName: 'DEMO-UC-001',
    caseId: 40,
    caseName: 'ENDO-40',
    histoProcedureId: 'HP-40',
    imageName: 'slide-1.svs',
    queryStatus: 'OPEN',
    resolution: null,
    dynamicStatus: null,
    group: 'open',
    cancelled: false,
    overdue: false,
    reasonText: 'Blurry / out of focus',
    childReasonText: null,
    queryReasonText: 'Blurry / out of focus',
    withRoleId: 9,
    queryWith: 'Lab Technician',
    queryWithUser: null,
    openedAt: '2026-11-20T10:00:00.000Z',
    openedByUsername: 'reader1',
    latestFollowUpOnDt: '2099-01-15',
    updatedAt: '2026-11-20T10:00:00.000Z',
    closedAt: null,
    ...overrides,
  };
}

export function makeReason(overrides: Partial<QueryReasonAdminRow> = {}): QueryReasonAdminRow {
  return {
    id: 11,
    objectType: 'IMAGE',
    withRoleId: 9,
    parentId: null,
    reasonText: 'Blurry / out of focus',
    active: true,
    sortOrder: 0,
    usedBy: 0,
    updatedAt: '2026-11-20T10:00:00.000Z',
    ...overrides,
  };
}
