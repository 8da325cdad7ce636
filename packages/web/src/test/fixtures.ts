import {
  acceptedImageExtensions,
  ROLES,
  type AnnotationClassView,
  type AppConfig,
  type CaseView,
  type ImageView,
  type StudyCaseRow,
  type RoleView,
  type StudyListRow,
  type StudyImageRow,
  type StudyView,
  type UserInfo,
  type UserListRow,
} from '@lamina/domain';

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
    mustChangePassword: false,
    signsWith: 'password',
    ...overrides,
  };
}

export function makeConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    ssoLoginUrl: null,
    ssoLogoutUrl: null,
    tileServerLocation: '/tiles',
    localLogin: true,
    oidcName: null,
    // A server with OpenSlide installed: every format Lamina reads (issue 31).
    imageExtensions: acceptedImageExtensions({ openslide: true }),
    ...overrides,
  };
}

export function makeStudyRow(overrides: Partial<StudyListRow> = {}): StudyListRow {
  return {
    id: 3,
    name: 'GUT-301',
    sponsor: 'Acme Pharma',
    protocolIds: ['P-1'],
    visitIds: ['V1'],
    labVisitIds: ['L1'],
    indications: ['CROHNS_DISEASE'],
    segments: 2,
    anatomicalSegments: ['Ileum', 'Colon'],
    modality: ['HISTOPATHOLOGY'],
    onHold: false,
    onHoldReason: null,
    createdAt: '2024-03-09T10:00:00.000Z',
    isNoto: false,
    mostRecentUploadAt: null,
    numberOfUnassignedImages: 4,
    numberOfCasesNeedingQC: 5,
    numberOfQueriesOpen: 6,
    numberOfQueriesAnswered: 7,
    numberOfAssignedReadCases: 8,
    numberOfAssignedUnreadCases: 9,
    ...overrides,
  };
}

export function makeClass(overrides: Partial<AnnotationClassView> = {}): AnnotationClassView {
  return {
    id: 1,
    name: 'Goblet',
    color: '#87FF01',
    sortOrder: 0,
    type: 'POINT',
    enabled: true,
    deleted: false,
    count: 0,
    ...overrides,
  };
}

export function makeStudy(overrides: Partial<StudyView> = {}): StudyView {
  return {
    ...makeStudyRow(),
    endpoints: [],
    adjudication: null,
    signatures: false,
    uploaders: [],
    readers: [],
    readonlyUsers: [],
    hpfClasses: [],
    pointClasses: [],
    freehandClasses: [],
    multilineClasses: [],
    ...overrides,
  };
}

export function makeUserRow(overrides: Partial<UserListRow> = {}): UserListRow {
  return {
    id: 11,
    username: 'reader2@example.org',
    firstName: 'Rita',
    lastName: 'Reader',
    lastLoginDt: null,
    organizationId: 1,
    organizationName: 'Lamina Labs',
    studyCount: 2,
    registered: true,
    active: true,
    isSystemAdmin: false,
    ...overrides,
  };
}

/** Every role as GET /api/permissions/roles answers. */
export function makeRoleViews(): RoleView[] {
  return ROLES.map((r) => ({
    id: r.id,
    name: r.name,
    displayName: r.displayName,
    description: r.description,
    roleType: r.roleType,
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
  }));
}

/** A user working as `role` with these permissions. */
export function makeUserAs(roleName: string, actions: string[], overrides: Partial<UserInfo> = {}): UserInfo {
  const role = { id: 1, name: roleName, displayName: roleName };
  return makeUser({ workAsRole: role, roles: [role], actions, ...overrides });
}

export function makeStudyImage(overrides: Partial<StudyImageRow> = {}): StudyImageRow {
  return {
    id: 21,
    studyId: 3,
    caseId: null,
    name: 'CMU-1-Small-Region.svs',
    uploadedAt: '2025-03-04T17:06:00.000Z',
    accessionNumber: 'ACC-9',
    biopsyLocation: 'Rectum',
    processingStatus: 'SUCCESS',
    processingProgress: 100,
    cogKey: 'images/21/pyramid.tif',
    status: 'CASE_ASSIGNMENT_PENDING',
    statusMessage: null,
    lastLabQuery: null,
    simpleCase: null,
    mayReplace: false,
    ...overrides,
  };
}

export function makeCaseRow(overrides: Partial<StudyCaseRow> = {}): StudyCaseRow {
  return {
    id: 40,
    studyId: 3,
    procId: 'ENDO-40',
    histoProcedureId: null,
    createdAt: '2025-03-04T17:06:00.000Z',
    subjectId: 'SUBJ-40',
    visitId: 'SCREENING',
    siteId: 'SITE-1',
    status: 'PENDING_LAB_QC',
    prevWorkflowStatuses: [],
    openQueries: 0,
    qc1User: null,
    assignedReaders: ['Rita Reader', 'Ravi Reader', 'Rosa Reader'],
    numberOfImages: 2,
    myReadAt: null,
    ...overrides,
  };
}

export function makeCase(overrides: Partial<CaseView> = {}): CaseView {
  return {
    id: 40,
    studyId: 3,
    studyName: 'Study 3',
    procId: 'ENDO-40',
    histoProcedureId: null,
    subjectId: 'SUBJ-40',
    siteId: 'SITE-1',
    visitId: 'SCREENING',
    status: 'PENDING_LAB_QC',
    onHoldFrom: null,
    prevWorkflowStatuses: [],
    caseStatusReverted: false,
    createdAt: '2025-03-04T17:06:00.000Z',
    qc1By: null,
    qc2By: null,
    readBy: null,
    qcCompletedAt: null,
    readCompletedAt: null,
    openQueries: 0,
    readers: [],
    images: [],
    lastCaseComment: null,
    ...overrides,
  };
}

/** An image as GET /api/images/{id} answers it: a processed CMU-1-Small-Region.svs. */
export function makeImage(overrides: Partial<ImageView> = {}): ImageView {
  return {
    id: 7,
    name: 'CMU-1-Small-Region.svs',
    uploadedAt: '2026-11-20T10:00:00Z',
    studyId: 3,
    uploaderId: 1,
    cogKey: 'images/7/pyramid.tif',
    magnifications: [1.25, 2.5, 5, 10, 20],
    extent: [0, -2967, 2220, 0],
    caseId: null,
    processingStatus: 'SUCCESS',
    processingProgress: 100,
    status: 'CASE_ASSIGNMENT_PENDING',
    statusMessage: null,
    pixelSize: 0.499,
    accessionNumber: null,
    biopsyLocation: null,
    physicalResolution: 0.499,
    maxTmsZoom: 4,
    zStackSize: 1,
    lastImageComment: null,
    lastLabQueryId: null,
    ignored: false,
    acceptAiAnnotations: false,
    width: 2220,
    height: 2967,
    levels: 5,
    objectivePower: 20,
    replacesImageId: null,
    hasLabel: false,
    hasMacro: false,
    mldFile: null,
    tileUrl: '/tiles/7/{z}/{x}/{y}?t=token',
    ...overrides,
  };
}
