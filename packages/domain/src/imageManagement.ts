import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import { CASE_STATUSES, IMAGE_STATUSES } from './images.js';
import type { Permission } from './permissions.js';
import type { RoleName } from './roles.js';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';

/**
 * Image Management (doc 2 §2.1–2.2, §3, §6): the cross-study image and case tables. One table per
 * tab of column → view permission → default visibility per role drives everything: the server's
 * projection (a column the user may not view is not in the response), the CSV export, the
 * Show/Hide Columns dialog and the default visibility.
 */

export const IM_TABS = ['images', 'cases', 'annotations'] as const;
export type ImTab = (typeof IM_TABS)[number];

/** Roles that see a column by default: a list, or every role but some. */
type DefaultFor = { only: readonly RoleName[] } | { except: readonly RoleName[] };
const ALL: DefaultFor = { except: [] };
const only = (...roles: RoleName[]): DefaultFor => ({ only: roles });
const except = (...roles: RoleName[]): DefaultFor => ({ except: roles });

export interface ImColumn<K extends string> {
  key: K;
  /** The table header and the CSV header. */
  label: string;
  /** Who may view the column (doc 2 §6); null: whoever may view the tab. */
  view: Permission | null;
  /** Who sees it before choosing (doc 2 §6 default column visibility). */
  defaultFor: DefaultFor;
}

const col = <K extends string>(
  key: K,
  label: string,
  view: Permission | null,
  defaultFor: DefaultFor,
): ImColumn<K> => ({
  key,
  label,
  view,
  defaultFor,
});

const LAB = ['LabTech', 'UPLOADER'] as const;

/** The image table's columns (doc 2 §3 image record, §6 default visibility, image table). */
export const IM_IMAGE_COLUMNS = [
  col('imageFilename', 'File Name', 'AP_ImageData_ViewFilename', only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB)),
  col('accessionNumber', 'Accession Number', 'AP_ImageData_ViewAccesionNumber', ALL),
  col('sponsor', 'Sponsor', 'AP_StudyData_ViewSponsor', only(...LAB, 'DM')),
  col('studyName', 'Study Name', 'AP_StudyData_ViewStudyName', ALL),
  col('protocolId', 'Protocol ID', 'AP_ImageData_ViewProtocolID', except('PM', 'SPONSOR')),
  col('siteId', 'Site ID', 'AP_CaseData_ViewSiteID', ALL),
  col('subjectId', 'Subject ID', 'AP_CaseData_ViewSubjectID', ALL),
  col('visitId', 'Visit ID', 'AP_CaseData_ViewVisitID', except(...LAB)),
  // The lab's name for the visit: viewed with the Visit ID (the spec lists no permission of its own).
  col('labVisitId', 'Lab Visit ID', 'AP_CaseData_ViewVisitID', only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB)),
  col('histoProcedureId', 'Histo Procedure ID', 'AP_CaseData_ViewHistopathologyProcedureID', only('DM')),
  col(
    'endoProcedureId',
    'Endo Procedure ID',
    'AP_CaseData_ViewEndoProcedureID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', 'PM', 'DM'),
  ),
  col('anatomicalSegment', 'Anatomical Segment', 'AP_ImageData_ViewAnatomicalSegment', ALL),
  col('specimenCollectionDate', 'Collection Date', 'AP_CaseData_ViewCollectionDate', ALL),
  col('uploadedAt', 'Upload Date', 'AP_ImageData_ViewImageUploadDate', except('DM', 'SPONSOR')),
  col('status', 'Status', 'AP_ImageData_ViewImageStatus', except(...LAB)),
  col('inQuery', 'In Query', 'AP_ImageData_ViewInQuery', only(...LAB, 'PM', 'DM', 'SPONSOR')),
  col(
    'organizationName',
    'Organization',
    'AP_ImageData_ViewUploaderOrganization',
    only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB),
  ),
  col('qaComments', 'QA Comments', 'AP_ImageData_ViewQAComments', only(...LAB)),
] as const;

/** The case table's columns (doc 2 §3 case record, §6 default visibility, case table). */
export const IM_CASE_COLUMNS = [
  col(
    'histoProcedureId',
    'Histo Procedure ID',
    'AP_CaseData_ViewHistopathologyProcedureID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', 'PM', 'DM'),
  ),
  col(
    'procId',
    'Endo Procedure ID',
    'AP_CaseData_ViewEndoProcedureID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', 'PM', 'DM'),
  ),
  col('studyName', 'Study Name', 'AP_StudyData_ViewStudyName', ALL),
  col('siteId', 'Site ID', 'AP_CaseData_ViewSiteID', ALL),
  col('subjectId', 'Subject ID', 'AP_CaseData_ViewSubjectID', ALL),
  col('visitId', 'Visit ID', 'AP_CaseData_ViewVisitID', ALL),
  col('caseCreatedAt', 'Date Created', null, only('DM')),
  col('imagesExpected', 'Images Expected', 'AP_CaseData_ViewExpectedNoofimages', except(...LAB)),
  col('totalImages', 'Images Received', 'AP_CaseData_ViewNoofimagesReceived', except(...LAB)),
  col('status', 'Status', null, ALL),
  col('openQueries', 'Queries', null, only(...LAB, 'PM', 'DM', 'SPONSOR')),
  col('labTech', 'Lab Tech QC', null, only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB)),
  col('iscQc', 'ISC QC', null, only('PM')),
  col('crAssignments', 'CR Assignment', null, only('DM')),
] as const;

export type ImImageColumnKey = (typeof IM_IMAGE_COLUMNS)[number]['key'];
export type ImCaseColumnKey = (typeof IM_CASE_COLUMNS)[number]['key'];

type Held = ReadonlySet<string> | readonly string[];
const holds = (actions: Held, permission: Permission) =>
  Array.isArray(actions) ? actions.includes(permission) : (actions as ReadonlySet<string>).has(permission);

/** The columns of a table this user may view (the server sends only these; the dialog lists only these). */
export function viewableColumns<K extends string>(columns: readonly ImColumn<K>[], actions: Held): ImColumn<K>[] {
  return columns.filter((c) => c.view === null || holds(actions, c.view));
}

/** Whether a role sees a column before the user chooses (doc 2 §6). */
export function visibleByDefault(column: ImColumn<string>, role: RoleName | null): boolean {
  const d = column.defaultFor;
  if ('only' in d) return role !== null && d.only.includes(role);
  return role === null || !d.except.includes(role);
}

/** The upload-date quick ranges (doc 2 §9). */
export const IM_DATE_FILTERS = ['Yesterday', 'Last7', 'Last14', 'Last60', 'AllTime'] as const;
export type ImDateFilter = (typeof IM_DATE_FILTERS)[number];

/** Days back from now for each range (Yesterday: since the start of yesterday, computed by the server). */
export const IM_DATE_FILTER_DAYS: Readonly<Record<Exclude<ImDateFilter, 'AllTime' | 'Yesterday'>, number>> = {
  Last7: 7,
  Last14: 14,
  Last60: 60,
};

export const IM_DATE_FILTER_LABELS: Readonly<Record<ImDateFilter, string>> = {
  Yesterday: 'Yesterday',
  Last7: 'Last 7 Days',
  Last14: 'Last 14 Days',
  Last60: 'Last 60 Days',
  AllTime: 'All time',
};

const id = z.number().int().positive().max(2_147_483_647);

/** The filters of both lists (doc 2 §3 image-management filters). */
export const imFiltersSchema = z.object({
  searchText: z.string().max(TEXT_LIMITS.search).optional(),
  studyFilter: z
    .object({
      selectedIds: z.array(id).max(200).default([]),
      /** The chosen studies' names, for the filter's tags (the server reads the ids). */
      selected: z
        .array(z.object({ id, name: z.string().max(500) }))
        .max(200)
        .optional(),
    })
    .optional(),
  dateFilter: z.enum(IM_DATE_FILTERS).nullish(),
  imageStatusFilter: z.array(z.enum(IMAGE_STATUSES)).max(IMAGE_STATUSES.length).optional(),
  caseStatusFilter: z.array(z.enum(CASE_STATUSES)).max(CASE_STATUSES.length).optional(),
});
export type ImFilters = z.input<typeof imFiltersSchema>;

/**
 * The Add Filter badge (doc 2 §2.1): 1 for search text, 1 for a study filter, 1 for a date filter,
 * plus the number of chosen statuses.
 */
export function imFilterCount(filters: ImFilters, tab: 'images' | 'cases'): number {
  const statuses = tab === 'images' ? filters.imageStatusFilter : filters.caseStatusFilter;
  return (
    (filters.searchText?.trim() ? 1 : 0) +
    ((filters.studyFilter?.selectedIds?.length ?? 0) > 0 ? 1 : 0) +
    (filters.dateFilter ? 1 : 0) +
    (statuses?.length ?? 0)
  );
}

/** Sortable columns: every column stored as a value (not the lists). */
export const IM_IMAGE_SORT_KEYS = [
  'imageFilename',
  'accessionNumber',
  'sponsor',
  'studyName',
  'protocolId',
  'siteId',
  'subjectId',
  'visitId',
  'labVisitId',
  'histoProcedureId',
  'endoProcedureId',
  'anatomicalSegment',
  'specimenCollectionDate',
  'uploadedAt',
  'status',
  'organizationName',
] as const satisfies readonly ImImageColumnKey[];
export type ImImageSortKey = (typeof IM_IMAGE_SORT_KEYS)[number];

export const IM_CASE_SORT_KEYS = [
  'histoProcedureId',
  'procId',
  'studyName',
  'siteId',
  'subjectId',
  'visitId',
  'caseCreatedAt',
  'status',
  'openQueries',
] as const satisfies readonly ImCaseColumnKey[];
export type ImCaseSortKey = (typeof IM_CASE_SORT_KEYS)[number];

export const imImageListRequestSchema = imFiltersSchema.extend({
  page: pageSchema.default(1),
  pageSize: pageSizeSchema.default(20),
  sort: z.enum(sortValues(IM_IMAGE_SORT_KEYS)).default('-uploadedAt'),
});
export type ImImageListRequest = z.input<typeof imImageListRequestSchema>;

export const imCaseListRequestSchema = imFiltersSchema.extend({
  page: pageSchema.default(1),
  pageSize: pageSizeSchema.default(20),
  sort: z.enum(sortValues(IM_CASE_SORT_KEYS)).default('-caseCreatedAt'),
});
export type ImCaseListRequest = z.input<typeof imCaseListRequestSchema>;

export const imListQuerySchema = z.object({ reportFormat: z.enum(['csv']).optional() });

/**
 * An image record (doc 2 §3): identifiers always; every other field only when its column is
 * viewable (absent, not null, otherwise).
 */
export const imImageRecordSchema = z.object({
  id: z.number().int(),
  studyId: z.number().int().nullable(),
  caseId: z.number().int().nullable(),
  imageFilename: z.string().optional(),
  accessionNumber: z.string().nullable().optional(),
  sponsor: z.string().nullable().optional(),
  studyName: z.string().nullable().optional(),
  protocolId: z.string().nullable().optional(),
  siteId: z.string().nullable().optional(),
  subjectId: z.string().nullable().optional(),
  visitId: z.string().nullable().optional(),
  labVisitId: z.string().nullable().optional(),
  histoProcedureId: z.string().nullable().optional(),
  endoProcedureId: z.string().nullable().optional(),
  anatomicalSegment: z.string().nullable().optional(),
  specimenCollectionDate: z.string().nullable().optional(),
  uploadedAt: z.string().optional(),
  status: z.enum(IMAGE_STATUSES).optional(),
  inQuery: z.boolean().optional(),
  organizationName: z.string().nullable().optional(),
  qaComments: z.string().nullable().optional(),
});
export type ImImageRecord = z.infer<typeof imImageRecordSchema>;

const userNames = z.array(z.object({ id: z.number().int(), username: z.string(), displayName: z.string() }));

export const imCaseRecordSchema = z.object({
  caseId: z.number().int(),
  studyId: z.number().int(),
  /** Workflow data, not a column: the statuses a revert may go back to. */
  prevWorkflowStatuses: z.array(z.enum(CASE_STATUSES)),
  histoProcedureId: z.string().nullable().optional(),
  procId: z.string().nullable().optional(),
  studyName: z.string().optional(),
  siteId: z.string().nullable().optional(),
  subjectId: z.string().nullable().optional(),
  visitId: z.string().nullable().optional(),
  caseCreatedAt: z.string().optional(),
  imagesExpected: z.number().int().nullable().optional(),
  totalImages: z.number().int().optional(),
  status: z.enum(CASE_STATUSES).optional(),
  openQueries: z.number().int().optional(),
  labTech: userNames.optional(),
  iscQc: userNames.optional(),
  crAssignments: z.array(z.string()).optional(),
});
export type ImCaseRecord = z.infer<typeof imCaseRecordSchema>;

export const imImageListResponseSchema = z.object({
  success: z.literal(true),
  results: z.array(imImageRecordSchema),
  total: z.number().int(),
});
export const imCaseListResponseSchema = z.object({
  success: z.literal(true),
  results: z.array(imCaseRecordSchema),
  total: z.number().int(),
});
export const imImageRecordResponseSchema = z.object({ success: z.literal(true), results: imImageRecordSchema });
export const imCaseRecordResponseSchema = z.object({ success: z.literal(true), results: imCaseRecordSchema });

export const IM_MESSAGES = {
  unableToFetchImages: 'Unable to fetch image management images tab results',
  unableToFetchCasesCsv: 'Unable to fetch image management cases tab results',
  unableToFetchCaseRecord: 'Unable to fetch image management case record by id.',
  noOptionsConfigured: 'No options configured',
  unableToEditColumn: 'Unable to edit column successfully',
} as const;
