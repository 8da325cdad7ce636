import { z } from 'zod';
import { ddMmmYyyy } from './csv.js';
import { IM_IMAGE_COLUMNS, viewableColumns, type ImColumn, type ImImageColumnKey } from './imageManagement.js';
import { READ_OUTCOMES_PERMISSION } from './outcomes.js';
import type { Permission } from './permissions.js';
import { ROLE_PERMISSIONS } from './rolePermissions.js';

/**
 * Reports and the audit trail export (issue 16; spec doc 1 §2.9, §6, §7, §8, §9): the report types,
 * who may download what, the filters and their date rule, the file names, the messages. The columns
 * of each report are the server's (docs/REPORTS.md), the image-details columns come from the
 * Image Management column table (IM_IMAGE_COLUMNS) so a report never shows a column its reader may
 * not view.
 */

export const REPORT_TYPES = [
  'image-details',
  'image-details-sponsor',
  'hpf-annotations',
  'celiac-annotations',
  'query',
  'access',
  'read-outcomes',
] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** The sections of the Reports page (doc 1 §2.9), in order. */
export const REPORT_LABELS: Record<ReportType, string> = {
  'image-details': 'Image Details Report',
  'image-details-sponsor': 'Sponsor Image Details Report',
  'hpf-annotations': 'HPF Annotations Report',
  'celiac-annotations': 'Celiac Annotations Report',
  query: 'Query Report',
  access: 'Access Report',
  'read-outcomes': 'Read Outcomes Report',
};

/** The permission each report needs (doc 1 §6 report family). */
export const REPORT_PERMISSION: Record<ReportType, Permission> = {
  'image-details': 'R_GenerateImageDetailsReport',
  'image-details-sponsor': 'R_GenerateImageDetailsReport',
  'hpf-annotations': 'R_GenerateHPFAnnotationsReport',
  'celiac-annotations': 'R_GenerateHPFAnnotationsReport',
  query: 'R_QueryLevelAccess',
  access: 'R_StudyLevelAccess',
  // Issue 30, beyond the spec: every reader's values and the final ones, so the permission that shows
  // them (ISC, Study Admin, DM, Sponsor) — not a report permission of its own, which a role could hold
  // without seeing the values on screen. Blinded readers never (the server also refuses a reading role).
  'read-outcomes': READ_OUTCOMES_PERMISSION,
};

/**
 * Reports that may be downloaded without a study (Global) by a system admin: the image details
 * (doc 1 §5: "the global Image Details report may be downloaded without a study by a system admin"),
 * and, beyond the spec, its sponsor variant. Every other report needs a study.
 */
export const GLOBAL_REPORTS: readonly ReportType[] = ['image-details', 'image-details-sponsor'];

export const AUDIT_TRAIL_FORMATS = ['pdf', 'csv'] as const;
export type AuditTrailFormat = (typeof AUDIT_TRAIL_FORMATS)[number];

/** R_GenerateAuditTrailPDFonly allows only PDF, R_GenerateAuditTrailPDForCSV both (doc 1 §6). */
export const AUDIT_TRAIL_PERMISSIONS: Record<AuditTrailFormat, readonly Permission[]> = {
  pdf: ['R_GenerateAuditTrailPDFonly', 'R_GenerateAuditTrailPDForCSV'],
  csv: ['R_GenerateAuditTrailPDForCSV'],
};

/** The formats of the audit trail a user holding `actions` may download. */
export function auditTrailFormats(actions: ReadonlySet<string>): AuditTrailFormat[] {
  return AUDIT_TRAIL_FORMATS.filter((f) => AUDIT_TRAIL_PERMISSIONS[f].some((p) => actions.has(p)));
}

/** The report sections a user holding `actions` may download. */
export function reportTypesFor(actions: ReadonlySet<string>): ReportType[] {
  return REPORT_TYPES.filter((t) => actions.has(REPORT_PERMISSION[t]));
}

export const REPORT_MESSAGES = {
  unableToFetchAuditTrail: (format: string) => `Unable to fetch audit trail ${format}`,
  unableToFetchReport: (type: string) => `Unable to fetch report ${type}`,
  // Lamina's: the reasons after the spec's messages.
  studyRequired: 'Choose a study',
  globalOnlyForSystemAdmins: 'Only a system admin may download this report without a study',
  celiacOnly: 'The celiac annotations report is for celiac studies only',
  invalidDate: 'Dates are written DD-MMM-YYYY, e.g. 05-Mar-2026',
  endBeforeStart: 'The end date is before the start date',
  invalidTimeZone: 'Unknown time zone',
  formatNotAllowed: 'You may download the audit trail as PDF only',
  userFilterSystemAdminOnly: 'Only a system admin filters by user',
} as const;

// ---------------------------------------------------------------------------------------------
// The image details reports' columns
// ---------------------------------------------------------------------------------------------

/** Columns the image details report adds to Image Management's image columns (docs/REPORTS.md). */
export const REPORT_IMAGE_EXTRA_COLUMNS = [
  { key: 'imageId', label: 'Image ID', view: null },
  { key: 'caseStatus', label: 'Case Status', view: null },
  { key: 'uploadedBy', label: 'Uploaded By', view: 'AP_ImageData_ViewUploaderOrganization' },
  { key: 'labQcBy', label: 'Lab QC By', view: 'AP_ImageData_ViewImageStatus' },
  { key: 'iscQcBy', label: 'ISC QC By', view: 'AP_ImageData_ViewImageStatus' },
  { key: 'qcCompletedAt', label: 'QC Completed', view: 'AP_ImageData_ViewImageStatus' },
  { key: 'readers', label: 'Readers', view: 'AP_CaseViewer_ManualCRassignment' },
  { key: 'readCompletedAt', label: 'Read Completed', view: 'AP_CaseViewer_ManualCRassignment' },
  { key: 'openQueries', label: 'Open Queries', view: 'AP_ImageData_ViewInQuery' },
] as const satisfies readonly { key: string; label: string; view: Permission | null }[];
export type ReportImageExtraKey = (typeof REPORT_IMAGE_EXTRA_COLUMNS)[number]['key'];
export type ReportImageColumnKey = ImImageColumnKey | ReportImageExtraKey;

/** The image details report's columns, in the order of the file. */
const IMAGE_DETAILS_ORDER: readonly ReportImageColumnKey[] = [
  'imageId',
  'studyName',
  'sponsor',
  'protocolId',
  'siteId',
  'subjectId',
  'visitId',
  'labVisitId',
  'histoProcedureId',
  'endoProcedureId',
  'accessionNumber',
  'imageFilename',
  'anatomicalSegment',
  'specimenCollectionDate',
  'uploadedAt',
  'uploadedBy',
  'organizationName',
  'status',
  'caseStatus',
  'labQcBy',
  'iscQcBy',
  'qcCompletedAt',
  'readers',
  'readCompletedAt',
  'inQuery',
  'openQueries',
  'qaComments',
];

/**
 * The columns of an image details report for a user holding `actions`: the columns they may view
 * (Image Management's column permissions, doc 2 §6, and those of the extra columns); the sponsor
 * variant keeps only those the Sponsor role may view too — the same table, not a second list.
 */
export function imageDetailsColumns(
  type: 'image-details' | 'image-details-sponsor',
  actions: ReadonlySet<string>,
): { key: ReportImageColumnKey; label: string }[] {
  const all: { key: ReportImageColumnKey; label: string; view: Permission | null }[] = [
    ...(IM_IMAGE_COLUMNS as readonly ImColumn<ImImageColumnKey>[]),
    ...REPORT_IMAGE_EXTRA_COLUMNS,
  ];
  const sponsor = ROLE_PERMISSIONS.SPONSOR;
  const allowed = (view: Permission | null) =>
    viewableColumns([{ view } as ImColumn<string>], actions).length > 0 &&
    (type === 'image-details' || viewableColumns([{ view } as ImColumn<string>], sponsor).length > 0);
  return IMAGE_DETAILS_ORDER.flatMap((key) => {
    const c = all.find((x) => x.key === key);
    return c && allowed(c.view) ? [{ key: c.key, label: c.label }] : [];
  });
}

// ---------------------------------------------------------------------------------------------
// Dates (doc 1 §5, §9): DD-MMM-YYYY; the end date counts as the whole day (the following day is the bound)
// ---------------------------------------------------------------------------------------------

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DATE = /^(\d{2})-([A-Za-z]{3})-(\d{4})$/;

/** A DD-MMM-YYYY date as { year, month (1-12), day }, or null when it is not a real date. */
export function parseReportDate(text: string): { year: number; month: number; day: number } | null {
  const m = DATE.exec(text.trim());
  if (!m) return null;
  const [, dd, mmm, yyyy] = m;
  const month = MONTHS.findIndex((x) => x.toLowerCase() === mmm?.toLowerCase()) + 1;
  const day = Number(dd);
  const year = Number(yyyy);
  if (month === 0 || year < 1900 || year > 9999) return null;
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return null;
  return { year, month, day };
}

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The offset of `zone` from UTC at `at`, in minutes (e.g. 60 for Europe/Paris in winter). */
export function zoneOffsetMinutes(zone: string, at: Date): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

/** The instant a calendar day starts in `zone`. */
export function startOfDayIn(zone: string, date: { year: number; month: number; day: number }): Date {
  const guess = Date.UTC(date.year, date.month - 1, date.day);
  // Two steps: the offset at the guess, then at the corrected instant (DST changes near midnight).
  const first = guess - zoneOffsetMinutes(zone, new Date(guess)) * 60_000;
  return new Date(guess - zoneOffsetMinutes(zone, new Date(first)) * 60_000);
}

/**
 * The instants of a report's date range in the viewer's time zone: from the start of the start date
 * to the start of the day after the end date (doc 1 §5: "the end date is treated as the following
 * day", so the whole end date is included). Missing dates leave that side open.
 */
export function reportRange(
  startDate: string | undefined,
  endDate: string | undefined,
  zone: string,
): { from: Date | null; to: Date | null } | { error: string } {
  const start = startDate ? parseReportDate(startDate) : null;
  const end = endDate ? parseReportDate(endDate) : null;
  if ((startDate && !start) || (endDate && !end)) return { error: REPORT_MESSAGES.invalidDate };
  const from = start ? startOfDayIn(zone, start) : null;
  let to: Date | null = null;
  if (end) {
    const next = new Date(Date.UTC(end.year, end.month - 1, end.day + 1));
    to = startOfDayIn(zone, { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() });
  }
  if (from && to && to <= from) return { error: REPORT_MESSAGES.endBeforeStart };
  return { from, to };
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** The calendar and clock of `at` in `zone`, with the zone's short name (e.g. CET, GMT+9). */
export function zonedParts(
  at: Date,
  zone: string,
): { year: string; month: string; day: string; hour: string; minute: string; second: string; zoneName: string } {
  let format = zoneFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'short',
    });
    if (zoneFormats.size > 100) zoneFormats.clear();
    zoneFormats.set(zone, format);
  }
  const parts = format.formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
    zoneName: get('timeZoneName').replace(/[^A-Za-z0-9+-]/g, '') || 'UTC',
  };
}

/** The date and time of `at` in `zone`: DD-MMM-YYYY, HHmm and the zone's short name (file names). */
export function zonedStamp(at: Date, zone: string): { date: string; time: string; zoneName: string } {
  const p = zonedParts(at, zone);
  const local = new Date(Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day)));
  return { date: ddMmmYyyy(local), time: `${p.hour}${p.minute}`, zoneName: p.zoneName };
}

/** A name made safe for a file name: letters, digits, '-', '_' and '.' (spaces dropped). */
export function fileNamePart(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/\s+/g, '')
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 80) || 'Study'
  );
}

/** {studyName without spaces, or Global}_{report}_{DD-MMM-YYYY}.csv (doc 1 §7). */
export function reportFileName(studyName: string | null, type: ReportType, at: Date, zone = 'UTC'): string {
  return `${studyName === null ? 'Global' : fileNamePart(studyName)}_${type}_${zonedStamp(at, zone).date}.csv`;
}

/** {StudyName}_{username}_audit-trail_{DD-MMM-YYYY}_{HHmm}_{TZ}.{pdf|csv} (doc 1 §7). */
export function auditTrailFileName(
  studyName: string | null,
  username: string,
  format: AuditTrailFormat,
  at: Date,
  zone: string,
): string {
  const s = zonedStamp(at, zone);
  return `${studyName === null ? 'Global' : fileNamePart(studyName)}_${fileNamePart(username)}_audit-trail_${s.date}_${s.time}_${s.zoneName}.${format}`;
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

const id = z.number().int().positive().max(2_147_483_647);
const reportDate = z.string().max(20).optional();
const timeZone = z.string().max(64).optional();

/** GET /api/audit-trail. */
export const auditTrailQuerySchema = z.object({
  reportFormat: z.enum(AUDIT_TRAIL_FORMATS),
  studyId: id.optional(),
  userId: id.optional(),
  startDate: reportDate,
  endDate: reportDate,
  /** The viewer's IANA time zone: the second time column, the date range, the file name. Default UTC. */
  tz: timeZone,
});
export type AuditTrailQuery = z.infer<typeof auditTrailQuerySchema>;

/** GET /api/report/{studyId}/{type} and GET /api/report/{type} (doc 1 §7). */
export const reportQuerySchema = z.object({
  studyId: id.optional(),
  userId: id.optional(),
  startDate: reportDate,
  endDate: reportDate,
  tz: timeZone,
});
export type ReportQuery = z.infer<typeof reportQuerySchema>;
export const reportTypeParamsSchema = z.object({ type: z.enum(REPORT_TYPES) });
export const studyReportParamsSchema = z.object({ studyId: id, type: z.enum(REPORT_TYPES) });
