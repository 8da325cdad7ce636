import { H2, NonIdealState } from '@blueprintjs/core';
import {
  auditTrailFormats,
  GLOBAL_REPORTS,
  isWorkingAsSystemAdmin,
  REPORT_LABELS,
  reportTypesFor,
  type AuditTrailFormat,
  type ReportType,
} from '@lamina/domain';
import { useMemo } from 'react';
import { useUserInfo } from '../../api/users';
import { usePageTitle } from '../../components/usePageTitle';
import { auditTrailRequest, browserTimeZone, reportRequest } from './api';
import { ReportCard, type ReportButton } from './ReportCard';
import './reports.css';

const REPORT_DESCRIPTIONS: Record<ReportType, string> = {
  'image-details': 'One row per image: identifiers, dates, uploader, statuses, QC, readers and open queries (CSV).',
  'image-details-sponsor': 'The image details with the columns a sponsor may see (CSV).',
  'hpf-annotations': 'One row per HPF per reader, with the count of each point class and the HPF area (CSV).',
  'celiac-annotations': 'Villus height, crypt depth and their ratio per image and reader, celiac studies only (CSV).',
  query: 'One row per query: opener, role queried, reason, the dates and days open (CSV).',
  access: 'Who held which role in the study: granted and revoked, by whom, account status and last login (CSV).',
  'read-outcomes':
    "Each reader's frozen endpoint values per case, then the case's final values, adjudicated or not (CSV).",
};

const FORMAT_TEXT: Record<AuditTrailFormat, string> = { pdf: 'Download PDF', csv: 'Download CSV' };

/**
 * /reports (doc 1 §2.9, issue 16): the Audit Trail and the seven CSV reports (read outcomes: issue 30), each section shown only
 * when the user's permissions allow it, in the spec's order, each with its own filters, button(s)
 * and error. A system admin also filters by user and may download the image details Global.
 */
export function ReportsPage() {
  usePageTitle('Reports');
  const user = useUserInfo().data;
  const tz = useMemo(() => browserTimeZone(), []);
  const actions = new Set(user?.actions ?? []);
  const systemAdmin = isWorkingAsSystemAdmin(user);
  const formats = auditTrailFormats(actions);
  const types = reportTypesFor(actions);
  const username = user?.username ?? 'user';

  const auditButtons: ReportButton[] = formats.map((format) => ({
    key: format,
    text: FORMAT_TEXT[format],
    icon: format === 'pdf' ? 'document' : 'th',
    request: (filters) => auditTrailRequest(format, filters, username, tz),
  }));

  return (
    <section className="lamina-page lamina-reports" aria-labelledby="reports-title">
      <header className="lamina-page-header">
        <H2 id="reports-title">Reports</H2>
        <span className="lamina-reports-zone">Dates and times in {tz}</span>
      </header>
      {formats.length === 0 && types.length === 0 && (
        <NonIdealState icon="document" title="No reports" description="Your role may not download any report." />
      )}
      {formats.length > 0 && (
        <ReportCard
          id="report-audit-trail"
          title="Audit Trail"
          description="Every recorded change: who, when, what, old and new value, reason. PDF for reading, CSV for analysis."
          tz={tz}
          studyOptional={systemAdmin}
          userFilter={systemAdmin}
          buttons={auditButtons}
        />
      )}
      {types.map((type) => (
        <ReportCard
          key={type}
          id={`report-${type}`}
          title={REPORT_LABELS[type]}
          description={REPORT_DESCRIPTIONS[type]}
          tz={tz}
          studyOptional={systemAdmin && GLOBAL_REPORTS.includes(type)}
          celiacOnly={type === 'celiac-annotations'}
          userFilter={systemAdmin}
          buttons={[
            {
              key: type,
              text: 'Download CSV',
              icon: 'download',
              request: (filters) => reportRequest(type, filters, tz),
            },
          ]}
        />
      ))}
    </section>
  );
}
