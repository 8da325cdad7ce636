import {
  auditTrailFileName,
  REPORT_MESSAGES,
  reportFileName,
  type AuditTrailFormat,
  type ReportType,
} from '@lamina/domain';
import { withFallbackMessage } from '../../api/ApiError';
import { apiDownload, saveDownload } from '../../api/client';

/** A study or user chosen in a filter: its id and the name shown (the study's also names the file). */
export interface Choice {
  id: number;
  name: string;
}

/** The filters of one section of the Reports page (doc 1 §2.9), as the user set them. */
export interface ReportFilters {
  study: Choice | null;
  user: Choice | null;
  /** DD-MMM-YYYY or empty (that side of the range open). */
  startDate: string;
  endDate: string;
}

export const NO_FILTERS: ReportFilters = { study: null, user: null, startDate: '', endDate: '' };

/** The browser's IANA time zone: the server's second time column, the day bounds and the file name. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

function query(entries: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(entries)) {
    if (value !== undefined && value !== '') params.set(key, String(value));
  }
  return params.toString();
}

function filterEntries(filters: ReportFilters, tz: string) {
  return {
    startDate: filters.startDate.trim(),
    endDate: filters.endDate.trim(),
    userId: filters.user?.id,
    tz,
  };
}

/** GET /api/audit-trail?reportFormat&studyId&userId&startDate&endDate&tz (doc 1 §7). */
export function auditTrailUrl(format: AuditTrailFormat, filters: ReportFilters, tz: string): string {
  return `/api/audit-trail?${query({ reportFormat: format, studyId: filters.study?.id, ...filterEntries(filters, tz) })}`;
}

/** GET /api/report/{studyId}/{type} or, with no study (Global), GET /api/report/{type} (doc 1 §7). */
export function reportUrl(type: ReportType, filters: ReportFilters, tz: string): string {
  const path = filters.study ? `/api/report/${filters.study.id}/${type}` : `/api/report/${type}`;
  const search = query(filterEntries(filters, tz));
  return search === '' ? path : `${path}?${search}`;
}

/** What a section downloads: the URL, the message when the server gives none, a name if it gives none. */
export interface DownloadRequest {
  url: string;
  fallbackMessage: string;
  fallbackFileName: string;
}

export function auditTrailRequest(
  format: AuditTrailFormat,
  filters: ReportFilters,
  username: string,
  tz: string,
): DownloadRequest {
  return {
    url: auditTrailUrl(format, filters, tz),
    fallbackMessage: REPORT_MESSAGES.unableToFetchAuditTrail(format),
    fallbackFileName: auditTrailFileName(filters.study?.name ?? null, username, format, new Date(), tz),
  };
}

export function reportRequest(type: ReportType, filters: ReportFilters, tz: string): DownloadRequest {
  return {
    url: reportUrl(type, filters, tz),
    fallbackMessage: REPORT_MESSAGES.unableToFetchReport(type),
    fallbackFileName: reportFileName(filters.study?.name ?? null, type, new Date(), tz),
  };
}

/**
 * Downloads a report as it streams (`onProgress` told the bytes so far) and hands it to the
 * browser's download under the server's file name. A failure without a message of the server's own
 * reads the spec's 'Unable to fetch …' (doc 1 §8).
 */
export async function downloadReport(
  request: DownloadRequest,
  onProgress: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  const file = await withFallbackMessage(apiDownload(request.url, { onProgress, signal }), request.fallbackMessage);
  saveDownload(file, request.fallbackFileName);
}

/** Bytes as people read them while a file streams: 0 KB, 12.3 KB, 4.5 MB. */
export function formatReceived(bytes: number): string {
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
