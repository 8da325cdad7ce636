import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import { ddMmmYyyy } from './csv.js';
import { CASE_FIELD_RULES, CASE_MESSAGES, caseFieldError, type CaseField } from './cases.js';
import { FILE_NAME_EXTRA_PERMISSION, IMAGE_ACTION_MESSAGES, imageFieldError } from './imageActions.js';
import { CASE_STATUSES, IMAGE_STATUSES, type ImageStatus } from './images.js';
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

/**
 * How an editable column's value is given (Edit Column, doc 2 §5): free text, one of the study
 * configuration's visit or lab visit IDs, a study or organization by name, a date, a count.
 */
export type ImEditKind = 'text' | 'visitOption' | 'labVisitOption' | 'study' | 'organization' | 'date' | 'count';

export interface ImColumnEdit {
  /** The AP_*_Edit* permission (doc 2 §6); the study name's is the one for an empty study (see mayEditImColumn). */
  permission: Permission;
  kind: ImEditKind;
}

export interface ImColumn<K extends string> {
  key: K;
  /** The table header and the CSV header. */
  label: string;
  /** Who may view the column (doc 2 §6); null: whoever may view the tab. */
  view: Permission | null;
  /** Who sees it before choosing (doc 2 §6 default column visibility). */
  defaultFor: DefaultFor;
  /** Whether and how the column is edited with Edit Column; null: never (derived or counted values). */
  edit: ImColumnEdit | null;
}

const col = <K extends string>(
  key: K,
  label: string,
  view: Permission | null,
  defaultFor: DefaultFor,
  edit: ImColumnEdit | null = null,
): ImColumn<K> => ({
  key,
  label,
  view,
  defaultFor,
  edit,
});
const edits = (permission: Permission, kind: ImEditKind = 'text'): ImColumnEdit => ({ permission, kind });

const LAB = ['LabTech', 'UPLOADER'] as const;

/** The image table's columns (doc 2 §3 image record, §6 default visibility, image table). */
export const IM_IMAGE_COLUMNS = [
  col(
    'imageFilename',
    'File Name',
    'AP_ImageData_ViewFilename',
    only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB),
    edits('AP_ImageData_EditFileName'),
  ),
  col(
    'accessionNumber',
    'Accession Number',
    'AP_ImageData_ViewAccesionNumber',
    ALL,
    edits('AP_ImageData_EditAccessionNumber'),
  ),
  col('sponsor', 'Sponsor', 'AP_StudyData_ViewSponsor', only(...LAB, 'DM')),
  col('studyName', 'Study Name', 'AP_StudyData_ViewStudyName', ALL, edits('AP_StudyData_EditStudyName', 'study')),
  col(
    'protocolId',
    'Protocol ID',
    'AP_ImageData_ViewProtocolID',
    except('PM', 'SPONSOR'),
    edits('AP_ImageData_EditProtocolID'),
  ),
  col('siteId', 'Site ID', 'AP_CaseData_ViewSiteID', ALL, edits('AP_CaseData_EditSiteID')),
  col('subjectId', 'Subject ID', 'AP_CaseData_ViewSubjectID', ALL, edits('AP_CaseData_EditSubjectID')),
  col(
    'visitId',
    'Visit ID',
    'AP_CaseData_ViewVisitID',
    except(...LAB),
    edits('AP_CaseData_EditVisitID', 'visitOption'),
  ),
  // The lab's name for the visit: viewed and edited with the Visit ID (the spec lists no permission of its own).
  col(
    'labVisitId',
    'Lab Visit ID',
    'AP_CaseData_ViewVisitID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB),
    edits('AP_CaseData_EditVisitID', 'labVisitOption'),
  ),
  // The case's procedure IDs: an edit changes the image's case.
  col(
    'histoProcedureId',
    'Histo Procedure ID',
    'AP_CaseData_ViewHistopathologyProcedureID',
    only('DM'),
    edits('AP_CaseData_EditHistopathologyProcedureID'),
  ),
  col(
    'endoProcedureId',
    'Endo Procedure ID',
    'AP_CaseData_ViewEndoProcedureID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', 'PM', 'DM'),
    edits('AP_CaseData_EditEndoProcedureID'),
  ),
  col(
    'anatomicalSegment',
    'Anatomical Segment',
    'AP_ImageData_ViewAnatomicalSegment',
    ALL,
    edits('AP_ImageData_EditAnatomicalSegment'),
  ),
  col(
    'specimenCollectionDate',
    'Collection Date',
    'AP_CaseData_ViewCollectionDate',
    ALL,
    edits('AP_CaseData_EditCollectionDate', 'date'),
  ),
  col(
    'uploadedAt',
    'Upload Date',
    'AP_ImageData_ViewImageUploadDate',
    except('DM', 'SPONSOR'),
    edits('AP_ImageData_EditImageUploadDate', 'date'),
  ),
  col('status', 'Status', 'AP_ImageData_ViewImageStatus', except(...LAB)),
  col('inQuery', 'In Query', 'AP_ImageData_ViewInQuery', only(...LAB, 'PM', 'DM', 'SPONSOR')),
  col(
    'organizationName',
    'Organization',
    'AP_ImageData_ViewUploaderOrganization',
    only('SystemAdmin', 'StudyAdmin', 'ISC', ...LAB),
    edits('AP_ImageData_EditUploaderOrganization', 'organization'),
  ),
  col('qaComments', 'QA Comments', 'AP_ImageData_ViewQAComments', only(...LAB), edits('AP_ImageData_EditQAComments')),
] as const;

/** The case table's columns (doc 2 §3 case record, §6 default visibility, case table). */
export const IM_CASE_COLUMNS = [
  col(
    'histoProcedureId',
    'Histo Procedure ID',
    'AP_CaseData_ViewHistopathologyProcedureID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', 'PM', 'DM'),
    edits('AP_CaseData_EditHistopathologyProcedureID'),
  ),
  col(
    'procId',
    'Endo Procedure ID',
    'AP_CaseData_ViewEndoProcedureID',
    only('SystemAdmin', 'StudyAdmin', 'ISC', 'PM', 'DM'),
    edits('AP_CaseData_EditEndoProcedureID'),
  ),
  col('studyName', 'Study Name', 'AP_StudyData_ViewStudyName', ALL),
  col('siteId', 'Site ID', 'AP_CaseData_ViewSiteID', ALL, edits('AP_CaseData_EditSiteID')),
  col('subjectId', 'Subject ID', 'AP_CaseData_ViewSubjectID', ALL, edits('AP_CaseData_EditSubjectID')),
  col('visitId', 'Visit ID', 'AP_CaseData_ViewVisitID', ALL, edits('AP_CaseData_EditVisitID', 'visitOption')),
  col('caseCreatedAt', 'Date Created', null, only('DM')),
  col(
    'imagesExpected',
    'Images Expected',
    'AP_CaseData_ViewExpectedNoofimages',
    except(...LAB),
    edits('AP_CaseData_EditExpectedNoofImages', 'count'),
  ),
  // Counted from the case's live images: not a value anyone types (AP_CaseData_EditNoofImagesReceived
  // has nothing to edit).
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
  /**
   * The columns the user shows (Show/Hide Columns), for the CSV export; the server keeps only those
   * they may view. Absent: the role's default columns.
   */
  columns: z.array(z.string().max(100)).max(100).optional(),
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
  /**
   * Why a column the user may edit cannot be edited now (imImageEditRefusals), by key: the pencil
   * is offered only on the others. In every list row and one-row refresh; not a column (no CSV).
   */
  editRefusals: z.record(z.string(), z.string()).optional(),
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
} as const;

// ---------------------------------------------------------------------------------------------
// Edit Column (doc 2 §5, §6, §7): POST /api/imageManagement/{id}/editImageColumn
// ---------------------------------------------------------------------------------------------

export const IM_EDIT_TABS = ['images', 'cases'] as const;
export type ImEditTab = (typeof IM_EDIT_TABS)[number];

/** The spec's Edit Column messages (doc 2 §8) and Lamina's reasons behind its refusals. */
export const IM_EDIT_MESSAGES = {
  unableToEditColumn: 'Unable to edit column successfully',
  noOptionsConfigured: 'No options configured',
  unableToLoadLabVisitIds: 'Unable to load lab visit ids from study config.',
  unchanged: 'The value is unchanged',
  organizationNotFound: 'Organization not found',
  notEditable: (label: string) => `${label} cannot be edited`,
  notPermitted: (label: string) => `You may not edit ${label}`,
  required: (label: string) => `${label} is required`,
  notAnOption: (label: string) => `${label} must be one of the study configuration's options`,
  labVisitNotNow:
    'Lab Visit ID can be edited only for an image without a case, in a study, while it is Processing, Case Assignment Pending or Lab QC Pending',
  onlyWithoutCase: (label: string) =>
    `${label} can be edited only for an image without a case; edit the case to change it for its images`,
  noCase: (label: string) => `The image has no case, so it has no ${label}`,
  noStudy: (label: string) => `The image has no study, so it has no ${label}`,
  badDate: (label: string) => `${label} must be a date (YYYY-MM-DD)`,
  futureDate: (label: string) => `${label} cannot be in the future`,
  badCount: (label: string) => `${label} must be a whole number from 0 to ${IM_MAX_IMAGES_EXPECTED}`,
  updated: (label: string) => `${label} updated`,
} as const;

/** The largest Images Expected a case may hold. */
export const IM_MAX_IMAGES_EXPECTED = 1000;
/** QA comments: longer than an identifier (a lab's remark). */
export const IM_QA_COMMENTS_MAX = 1000;

/** Image statuses in which the Lab Visit ID may be edited (doc 2 §5). */
export const LAB_VISIT_EDITABLE_STATUSES: readonly ImageStatus[] = [
  'PROCESSING',
  'CASE_ASSIGNMENT_PENDING',
  'LAB_QC_PENDING',
];

/** doc 2 §5: the Lab Visit ID is editable only without a case, in a study, in one of three statuses. */
export function labVisitEditable(image: { caseId: number | null; studyId: number | null; status: string }): boolean {
  return (
    image.caseId === null &&
    image.studyId !== null &&
    (LAB_VISIT_EDITABLE_STATUSES as readonly string[]).includes(image.status)
  );
}

/** Image columns that belong to the image's case when it has one (doc 2 §5: edited only without a case). */
export const IM_IMAGE_CASE_OWNED: readonly ImImageColumnKey[] = ['siteId', 'subjectId', 'visitId'];
/** Image columns that are the case's own fields: an edit changes the image's case. */
export const IM_IMAGE_CASE_FIELDS: Readonly<Partial<Record<ImImageColumnKey, CaseField>>> = {
  histoProcedureId: 'histoProcedureId',
  endoProcedureId: 'procId',
};

/** Case columns that are the case dialog's fields. */
export const IM_CASE_FIELDS: Readonly<Partial<Record<ImCaseColumnKey, CaseField>>> = {
  histoProcedureId: 'histoProcedureId',
  procId: 'procId',
  siteId: 'siteId',
  subjectId: 'subjectId',
  visitId: 'visitId',
};

/**
 * Why an image's column cannot be edited now, whoever asks (doc 2 §5), or null: archived images;
 * Site, Subject and Visit ID of an image in a case (they are the case's: edit the case); the
 * procedure ids of an image without a case; the Lab Visit ID outside labVisitEditable. The server
 * refuses with this message, and sends it with each row of the Images tab (imImageEditRefusals) so
 * that Image Management offers no pencil there, with this as its tooltip (issue 29 items 13, 17):
 * the rule needs the image's status, which not every role may view.
 */
export function imImageEditRefusal(
  key: string,
  image: { caseId: number | null; studyId: number | null; status: string },
): string | null {
  const column = imColumn('images', key);
  if (!column?.edit) return null;
  if (image.status === 'ARCHIVED') return IMAGE_ACTION_MESSAGES.alreadyArchived;
  const imageKey = key as ImImageColumnKey;
  if (IM_IMAGE_CASE_OWNED.includes(imageKey) && image.caseId !== null)
    return IM_EDIT_MESSAGES.onlyWithoutCase(column.label);
  if (IM_IMAGE_CASE_FIELDS[imageKey] && image.caseId === null) return IM_EDIT_MESSAGES.noCase(column.label);
  if (key === 'labVisitId' && !labVisitEditable(image)) return IM_EDIT_MESSAGES.labVisitNotNow;
  return null;
}

/**
 * The refusals of one image row for the columns the user may edit (`editable`), by column key; a
 * column not named can be edited. Computed once by the server for every row it lists, as
 * `editRefusals` (issue 29 item 17).
 */
export function imImageEditRefusals(
  image: { caseId: number | null; studyId: number | null; status: string },
  editable: readonly string[],
): Partial<Record<ImImageColumnKey, string>> {
  const refusals: Partial<Record<ImImageColumnKey, string>> = {};
  for (const key of editable) {
    const refusal = imImageEditRefusal(key, image);
    if (refusal !== null) refusals[key as ImImageColumnKey] = refusal;
  }
  return refusals;
}

/** Why a case's column cannot be edited now (an archived case), or null; as imImageEditRefusal. */
export function imCaseEditRefusal(aCase: { status?: string | undefined }): string | null {
  return aCase.status === 'ARCHIVED' ? IM_EDIT_MESSAGES.notEditable('An archived case') : null;
}

/** A column of a tab by its key, or undefined. */
export function imColumn(tab: ImEditTab, key: string): ImColumn<string> | undefined {
  const columns: readonly ImColumn<string>[] = tab === 'images' ? IM_IMAGE_COLUMNS : IM_CASE_COLUMNS;
  return columns.find((c) => c.key === key);
}

/**
 * Whether the user may edit a column (doc 2 §5–6): they view it and hold its edit permission; the
 * study name needs EditStudyName when the image has none and EditStudyNamePopulated when it has one;
 * the file name also needs the pass-lab-QC permission (doc 2 §5, Edit Image).
 */
export function mayEditImColumn(column: ImColumn<string>, actions: Held, current?: { populated: boolean }): boolean {
  if (!column.edit) return false;
  if (column.view !== null && !holds(actions, column.view)) return false;
  if (column.key === 'studyName' && column.edit.kind === 'study')
    return current === undefined
      ? holds(actions, 'AP_StudyData_EditStudyName') || holds(actions, 'AP_StudyData_EditStudyNamePopulated')
      : holds(actions, current.populated ? 'AP_StudyData_EditStudyNamePopulated' : 'AP_StudyData_EditStudyName');
  if (!holds(actions, column.edit.permission)) return false;
  return column.key !== 'imageFilename' || holds(actions, FILE_NAME_EXTRA_PERMISSION);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether a YYYY-MM-DD string is a real calendar date. */
export function isCalendarDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

/**
 * The message for a typed Edit Column value (format and length, the same in the dialog and on the
 * server), or null. `value` is trimmed; null or '' is empty. Options, studies and organizations are
 * checked against the database by the server.
 */
export function imColumnValueError(
  tab: ImEditTab,
  column: ImColumn<string>,
  value: string | null,
  now: Date = new Date(),
): string | null {
  const { key, label } = column;
  const kind = column.edit?.kind;
  const caseField =
    tab === 'cases'
      ? IM_CASE_FIELDS[key as ImCaseColumnKey]
      : (IM_IMAGE_CASE_FIELDS[key as ImImageColumnKey] ??
        (IM_IMAGE_CASE_OWNED.includes(key as ImImageColumnKey) ? (key as CaseField) : undefined));
  if (caseField) {
    if (caseField === 'procId' && (value === null || value === ''))
      return IM_EDIT_MESSAGES.required(CASE_FIELD_RULES.procId.label);
    return caseFieldError(caseField, value || null);
  }
  if (key === 'imageFilename') return imageFieldError('imageName', value);
  if (key === 'accessionNumber') return imageFieldError('accessionNumber', value || null);
  if (key === 'anatomicalSegment') return imageFieldError('biopsyLocation', value || null);
  if (value === null || value === '') return null;
  switch (kind) {
    case 'date':
      if (!isCalendarDate(value)) return IM_EDIT_MESSAGES.badDate(label);
      return value > now.toISOString().slice(0, 10) ? IM_EDIT_MESSAGES.futureDate(label) : null;
    case 'count': {
      const n = Number(value);
      return /^\d+$/.test(value) && n <= IM_MAX_IMAGES_EXPECTED ? null : IM_EDIT_MESSAGES.badCount(label);
    }
    case 'study':
      return Array.from(value).length > TEXT_LIMITS.studyName
        ? `${label} must be less than ${TEXT_LIMITS.studyName} characters`
        : null;
    default: {
      const max = key === 'qaComments' ? IM_QA_COMMENTS_MAX : TEXT_LIMITS.identifier;
      return Array.from(value).length > max ? `${label} must be less than ${max} characters` : null;
    }
  }
}

/** The refusal when a reason is missing (doc 2 §8): the image's or the case's message. */
export function imReasonRequired(tab: ImEditTab): string {
  return tab === 'images' ? IMAGE_ACTION_MESSAGES.updateReasonRequired : CASE_MESSAGES.editReasonRequired;
}

/**
 * The body (doc 2 §7): `{ tabName, columnName, columnValue, reasonForChange }`; the call's other form
 * (`editingColumnName`, `newColumnValue`, `imageId`) is read the same way.
 */
export const editImColumnRequestSchema = z.preprocess(
  (body) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
    const b = body as Record<string, unknown>;
    return {
      tabName: b.tabName,
      columnName: b.columnName ?? b.editingColumnName,
      columnValue: b.columnValue !== undefined ? b.columnValue : b.newColumnValue,
      reasonForChange: b.reasonForChange,
    };
  },
  z.object({
    tabName: z.enum(IM_EDIT_TABS),
    columnName: z.string().min(1).max(100),
    columnValue: z
      .union([z.string().max(2000), z.number().int().min(0).max(1_000_000)])
      .nullable()
      .transform((v) => (v === null ? null : String(v).trim())),
    reasonForChange: z.string().max(TEXT_LIMITS.reason).nullish(),
  }),
);
export type EditImColumnRequest = z.input<typeof editImColumnRequestSchema>;

export const editImColumnResponseSchema = z.object({ success: z.literal(true), message: z.string() });

/** Image statuses that the completeness of an image's study data moves between. */
const DATA_STATUSES: readonly string[] = ['STUDY_ASSIGNMENT_PENDING', 'DATA_INCOMPLETE', 'CASE_ASSIGNMENT_PENDING'];

/**
 * The status an image's study data gives it (docs/SAMPLE-DATA.md): an image in a study, without a
 * case and waiting for one, whose subject, site and visit are all known waits for a case
 * (CASE_ASSIGNMENT_PENDING); lacking any of them it is DATA_INCOMPLETE — set by a sample-data
 * import (`markIncomplete`), left by any edit that completes the data. Other images keep theirs.
 */
export function imageDataStatus(
  image: {
    status: string;
    studyId: number | null;
    caseId: number | null;
    siteId: string | null;
    subjectId: string | null;
    visitId: string | null;
  },
  options: { markIncomplete: boolean },
): ImageStatus {
  const status = image.status as ImageStatus;
  if (!DATA_STATUSES.includes(status) || image.studyId === null || image.caseId !== null) return status;
  const complete = [image.siteId, image.subjectId, image.visitId].every((v) => v !== null && v.trim() !== '');
  if (complete) return 'CASE_ASSIGNMENT_PENDING';
  if (options.markIncomplete) return 'DATA_INCOMPLETE';
  return status === 'STUDY_ASSIGNMENT_PENDING' ? 'CASE_ASSIGNMENT_PENDING' : status;
}

/** Who may call Edit Column at all: any column's edit permission (each column then checks its own). */
export const IM_EDIT_PERMISSIONS: readonly Permission[] = [
  ...new Set<Permission>([
    ...[...IM_IMAGE_COLUMNS, ...IM_CASE_COLUMNS].flatMap((c) => (c.edit ? [c.edit.permission] : [])),
    'AP_StudyData_EditStudyNamePopulated',
  ]),
];

// ---------------------------------------------------------------------------------------------
// CSV export (doc 2 §7): ?reportFormat=csv on both list calls
// ---------------------------------------------------------------------------------------------

/** The export permission of each tab (doc 2 §6, image toolbar and case menu). */
export const IM_EXPORT_PERMISSIONS: Readonly<Record<'images' | 'cases', Permission>> = {
  images: 'IM_ImagesListTab_ExportImageManagementTable',
  cases: 'IM_CaseListTab_ExportCaseLevelReport',
};

/** `image-mgmt-images_{date}.csv` / `image-mgmt-cases_{date}.csv` (doc 2 §7), the date DD-MMM-YYYY. */
export function imCsvFileName(tab: 'images' | 'cases', now: Date): string {
  return `image-mgmt-${tab}_${ddMmmYyyy(now)}.csv`;
}

/**
 * The columns an export writes, in the table's order: those the user shows (or, without a choice,
 * the role's defaults), of those they may view — never a column their role may not view.
 */
export function imExportColumns<K extends string>(
  columns: readonly ImColumn<K>[],
  actions: Held,
  role: RoleName | null,
  shown: readonly string[] | undefined,
): ImColumn<K>[] {
  const viewable = viewableColumns(columns, actions);
  return shown === undefined
    ? viewable.filter((c) => visibleByDefault(c, role))
    : viewable.filter((c) => shown.includes(c.key));
}
