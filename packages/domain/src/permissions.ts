/**
 * Every permission string of the product.
 *
 * `spec` permissions are spelled exactly as the specification writes them (including its
 * oddities, e.g. `AP_ImageData_ViewAccesionNumber` beside `AP_ImageData_EditAccessionNumber`).
 * `lamina` permissions name a capability the specification describes only in words
 * ("view all studies", "create study", "grant study access" …) or writes with spaces
 * ("ImageViewer ViewLabel"); they follow the spec's naming pattern.
 */
export interface PermissionDefinition {
  readonly name: string;
  readonly area: PermissionArea;
  readonly source: 'spec' | 'lamina';
  readonly description: string;
}

export type PermissionArea =
  | 'Navigation'
  | 'Studies'
  | 'Users'
  | 'Reports'
  | 'Image data (view)'
  | 'Image data (edit)'
  | 'Image management'
  | 'Cases'
  | 'Viewer'
  | 'Queries';

const p = <N extends string>(
  name: N,
  area: PermissionArea,
  description: string,
  source: 'spec' | 'lamina' = 'spec',
): PermissionDefinition & { readonly name: N } => ({ name, area, description, source });

export const PERMISSIONS = [
  // Navigation (spec doc 1 §6, doc 2 §6)
  p('S_Main_ViewStudyPage', 'Navigation', 'Studies tab, studies list and study page'),
  p('IM_CaseListTab_ViewPage', 'Navigation', 'Image Management: Cases tab'),
  p('IM_ImageListTab_ViewImageslistTab', 'Navigation', 'Image Management: Images tab'),
  p('R_ViewReportsTab', 'Navigation', 'Reports tab'),
  p('Q_ViewQueriesCases', 'Navigation', 'Queries list: case queries'),
  p('Q_ViewQueriesImages', 'Navigation', 'Queries list: image queries'),
  p('UM_ViewUsersPage', 'Navigation', 'Users list and user profiles'),

  // Studies (doc 1 §6 names these in words)
  p('S_Main_ViewAllStudies', 'Studies', 'Sees every study, not only the assigned ones', 'lamina'),
  p('S_Main_ViewAssignedStudies', 'Studies', 'Sees the studies the user is assigned to', 'lamina'),
  p('S_Main_CreateStudy', 'Studies', 'Create Study button and POST /api/studies', 'lamina'),
  p('S_Main_EditStudy', 'Studies', 'Edit Study and study configuration', 'lamina'),
  p('S_Main_ViewCasesTab', 'Studies', 'Cases tab of the study page', 'lamina'),
  p('S_Main_ViewImagesTab', 'Studies', 'Images tab of the study page', 'lamina'),
  p(
    'S_Main_ViewReadOutcomes',
    'Studies',
    'Read outcomes (issue 30): every reader’s endpoint values and the final values — a case’s, the Reads tab, the agreement, the Read Outcomes Report',
    'lamina',
  ),
  p('S_CaseListTab_CreateCase', 'Cases', 'Create case button and POST /api/cases', 'lamina'),
  p('S_CaseListTab_EditCase', 'Cases', 'Edit case and revert status on the study page'),
  p('S_ImageListTab_UploadImage', 'Image management', 'Upload image and replace image'),
  p('S_ImageListTab_MoveImage', 'Image management', 'Move image to another study or case'),

  // Users
  p('UM_RegisterUser', 'Users', 'Save a user profile, which registers the user', 'lamina'),
  p('UM_GrantStudyAccess', 'Users', 'Add study access', 'lamina'),
  p('UM_RevokeStudyAccess', 'Users', 'Remove study access', 'lamina'),

  // Reports
  p('R_GenerateAuditTrailPDFonly', 'Reports', 'Audit trail download, PDF only'),
  p('R_GenerateAuditTrailPDForCSV', 'Reports', 'Audit trail download, PDF or CSV', 'lamina'),
  p('R_GenerateImageDetailsReport', 'Reports', 'Image details reports', 'lamina'),
  p('R_GenerateHPFAnnotationsReport', 'Reports', 'HPF and celiac annotation reports', 'lamina'),
  p('R_QueryLevelAccess', 'Reports', 'Query report', 'lamina'),
  p('R_StudyLevelAccess', 'Reports', 'Access report', 'lamina'),

  // Image data columns: view (doc 2 §6)
  p('AP_ImageData_ViewAccesionNumber', 'Image data (view)', 'Accession number column'),
  p('AP_ImageData_ViewProtocolID', 'Image data (view)', 'Protocol ID column'),
  p('AP_ImageData_ViewAnatomicalSegment', 'Image data (view)', 'Anatomical segment column'),
  p('AP_ImageData_ViewImageUploadDate', 'Image data (view)', 'Upload date column'),
  p('AP_ImageData_ViewImageStatus', 'Image data (view)', 'Image status column'),
  p('AP_ImageData_ViewInQuery', 'Image data (view)', 'In query column'),
  p('AP_ImageData_ViewFilename', 'Image data (view)', 'File name column'),
  p('AP_ImageData_ViewQAComments', 'Image data (view)', 'QA comments column'),
  p('AP_ImageData_ViewUploaderOrganization', 'Image data (view)', 'Uploader organization column'),
  p('AP_StudyData_ViewSponsor', 'Image data (view)', 'Sponsor column'),
  p('AP_StudyData_ViewStudyName', 'Image data (view)', 'Study name column'),
  p('AP_CaseData_ViewSiteID', 'Image data (view)', 'Site ID (blinded from readers)'),
  p('AP_CaseData_ViewSubjectID', 'Image data (view)', 'Subject ID (blinded from readers)'),
  p('AP_CaseData_ViewVisitID', 'Image data (view)', 'Visit ID (blinded from readers)'),
  p('AP_CaseData_ViewHistopathologyProcedureID', 'Image data (view)', 'Histo procedure ID column'),
  p('AP_CaseData_ViewEndoProcedureID', 'Image data (view)', 'Endo procedure ID column'),
  p('AP_CaseData_ViewCollectionDate', 'Image data (view)', 'Collection date column'),
  p('AP_CaseData_ViewExpectedNoofimages', 'Image data (view)', 'Images expected column'),
  p('AP_CaseData_ViewNoofimagesReceived', 'Image data (view)', 'Images received column'),

  // Image data columns: edit (doc 2 §6)
  p('AP_ImageData_EditAccessionNumber', 'Image data (edit)', 'Edit accession number'),
  p('AP_StudyData_EditStudyName', 'Image data (edit)', 'Set the study of an image that has none'),
  p('AP_StudyData_EditStudyNamePopulated', 'Image data (edit)', 'Change the study of an image that has one'),
  p('AP_ImageData_EditProtocolID', 'Image data (edit)', 'Edit protocol ID'),
  p('AP_ImageData_EditFileName', 'Image data (edit)', 'Edit file name'),
  p('AP_ImageData_EditQAComments', 'Image data (edit)', 'Edit QA comments'),
  p('AP_ImageData_EditAnatomicalSegment', 'Image data (edit)', 'Edit anatomical segment'),
  p('AP_ImageData_EditImageUploadDate', 'Image data (edit)', 'Edit upload date'),
  p('AP_ImageData_EditUploaderOrganization', 'Image data (edit)', 'Edit uploader organization'),
  p('AP_CaseData_EditSiteID', 'Image data (edit)', 'Edit site ID'),
  p('AP_CaseData_EditSubjectID', 'Image data (edit)', 'Edit subject ID'),
  p('AP_CaseData_EditVisitID', 'Image data (edit)', 'Edit visit ID'),
  p('AP_CaseData_EditCollectionDate', 'Image data (edit)', 'Edit collection date'),
  p('AP_CaseData_EditHistopathologyProcedureID', 'Image data (edit)', 'Edit histo procedure ID'),
  p('AP_CaseData_EditEndoProcedureID', 'Image data (edit)', 'Edit endo procedure ID'),
  p('AP_CaseData_EditExpectedNoofImages', 'Image data (edit)', 'Edit images expected'),
  p('AP_CaseData_EditNoofImagesReceived', 'Image data (edit)', 'Edit images received'),

  // Image management (doc 2 §6)
  p('IM_ImagesListTab_AssignImagetoCase', 'Image management', 'Assign to Case'),
  p(
    'IM_ImagesListTab_CopyImage',
    'Image management',
    'Copy image (also guards the study-page Edit row action, as written)',
  ),
  p('IM_ImagesListTab_DownloadImages', 'Image management', 'View and download images'),
  p('IM_ImagesListTab_Archive', 'Image management', 'Archive image'),
  p(
    'IM_ImagesListTab_UploadImagestoAssignedStudiesOnly',
    'Image management',
    'Upload (sample data) to assigned studies',
  ),
  p('IM_ImagesListTab_ExportImageManagementTable', 'Image management', 'Export the images table'),
  p('IM_CaseListTab_ChangeStatus', 'Image management', 'Revert case status'),
  p('IM_CaseListTab_PutoHold', 'Image management', 'Put a case on hold or remove the hold'),
  p('IM_CaseListTab_ArchiveCase', 'Image management', 'Archive case'),
  p('IM_CaseListTab_ExportCaseLevelReport', 'Image management', 'Export the cases table'),
  p('IM_AnnotationListTab_ImportAnnotations', 'Image management', 'Import .mld annotation files'),

  // Viewer (doc 3 §6)
  p('AP_ImageViewer_ViewimageViewer', 'Viewer', 'Image viewer'),
  p('AP_CaseViewer_ViewCaseViewer', 'Viewer', 'Case viewer ("view case view")', 'lamina'),
  p('AP_ImageCaseViewer_ViewOverviewtab', 'Viewer', 'Overview tab of the viewer sidebar'),
  p('AP_ImageCaseViewer_ViewAnnotationstab', 'Viewer', 'Annotations tab and highlights'),
  p('AP_CaseViewer_ViewQueries', 'Viewer', 'Queries tab of the viewer sidebar'),
  p(
    'AP_ImageViewer_ViewAnnotationsToolbar',
    'Viewer',
    'Annotation toolbar (spec: "ImageViewer ViewAnnotationsToolbar")',
    'lamina',
  ),
  p(
    'AP_ImageViewer_EditCreateAnnotations',
    'Viewer',
    'Create annotations; HPF, point, freehand tools (spec: "ImageViewer EditCreateAnnotations")',
    'lamina',
  ),
  p('AP_ImageViewer_DeleteAnnotations', 'Viewer', 'Delete menus of annotations ("the delete permission")', 'lamina'),
  p(
    'AP_ImageViewer_ViewLabel',
    'Viewer',
    'Slide label and macro images (spec: "ImageViewer ViewLabel"); labels can carry patient identifiers',
    'lamina',
  ),
  p(
    'AP_ImageViewer_ViewLabelOwnSlidesOnly',
    'Viewer',
    'Slide label and macro images of the slides its own organization uploaded (Site); with AP_ImageViewer_ViewLabel, of every slide',
    'lamina',
  ),
  p('AP_ImageViewer_AcceptAIAnnotations', 'Viewer', 'Accept or reject imported AI annotations', 'lamina'),
  p('AP_ImageViewer_ViewButtonPassLabQC', 'Viewer', 'Pass lab QC; without it the file name is read-only'),
  p('AP_CaseViewer_ViewButtonPassISCQC', 'Viewer', 'Pass ISC QC; show/hide image to reader'),
  p('AP_CaseViewer_MarkCaseasScored', 'Viewer', 'Mark case as scored'),
  p(
    'AP_CaseViewer_AssignAdjudicator',
    'Viewer',
    'Assign the adjudicator of a case pending adjudication (issue 30)',
    'lamina',
  ),
  p(
    'AP_CaseViewer_ManualCRassignment',
    'Viewer',
    'Assign readers manually (spec: "CaseViewer ManualCRassignment")',
    'lamina',
  ),

  // Queries (doc 3 §6)
  p('Q_ViewAllQueries', 'Queries', 'Queries list: all queries', 'lamina'),
  p('Q_ViewAllQueriesunderAssignedStudies', 'Queries', 'Queries list: all queries of assigned studies', 'lamina'),
  p('Q_ViewQueriesAssignedtoUserRoleOnly', 'Queries', "Queries list: queries with the user's role only", 'lamina'),
  p('Q_IssueCaseQuery', 'Queries', 'Open a case query'),
  p('Q_IssueImageQueryStudy', 'Queries', 'Open an image query'),
  p('Q_MarkQueryasResolved', 'Queries', 'Mark a query resolved'),
  p('Q_MarkQueryasUnresolvable', 'Queries', 'Mark a query unresolvable', 'lamina'),
  p('Q_Commentonassignedqueries', 'Queries', 'Comment on queries (spec: "Q_Commentonassignedqueries only")'),
  p('Q_Flagforfollowup', 'Queries', 'Change the follow-up date'),
  p('Q_Close_CancelQueryunderUserRoleOnly', 'Queries', "Close or cancel queries the user's role opened"),
  p(
    'Q_Close_CancelQueryunderassignedstudies',
    'Queries',
    'Close or cancel queries of assigned studies (spec: "… and under assigned studies")',
    'lamina',
  ),
  p('QP_StudyAdminAssignedtostudytheImageCaseQuery', 'Queries', 'StudyAdmin may be chosen as the "query with" role'),
  p('QP_ISCAssignedtostudytheImageCaseQuery', 'Queries', 'ISC may be chosen as the "query with" role'),
  p('QP_DMAssignedtostudytheImageCaseQuery', 'Queries', 'DM may be chosen as the "query with" role'),
  p('QP_PMAssignedtostudytheImageCaseQuery', 'Queries', 'PM may be chosen as the "query with" role'),
  p('QP_SponsorAssignedtostudytheImageCaseQuery', 'Queries', 'Sponsor may be chosen as the "query with" role'),
  p('QP_LabTechAssignedtostudytheImageCaseQuery', 'Queries', 'LabTech may be chosen as the "query with" role'),
  p('QP_UploaderAssignedtostudytheImageCaseQuery', 'Queries', 'Uploader may be chosen as the "query with" role'),
  p('QP_CRAssignedtostudytheImageCaseQuery', 'Queries', 'CR may be chosen as the "query with" role'),
  p('QP_SiteAssignedtostudytheImageCaseQuery', 'Queries', 'Site may be chosen as the "query with" role'),
] as const satisfies readonly PermissionDefinition[];

export type Permission = (typeof PERMISSIONS)[number]['name'];

export const PERMISSION_NAMES: readonly Permission[] = PERMISSIONS.map((d) => d.name);

const names = new Set<string>(PERMISSION_NAMES);
export function isPermission(value: string): value is Permission {
  return names.has(value);
}

/** The study-scope permission: with it a user sees every study (and images not assigned to one). */
export const VIEW_ALL_STUDIES: Permission = 'S_Main_ViewAllStudies';
