import {
  VIEW_FILE_NAME_PERMISSION,
  celiacRatio,
  endpointUnit,
  imageDetailsColumns,
  isCancelled,
  mayViewCaseField,
  queryDynamicStatus,
  type CaseStatus,
  type CsvValue,
  type EndpointDefinition,
  type ReportImageColumnKey,
} from '@lamina/domain';
import { caseFinalOutcomes } from '../outcomes/caseFinal.js';
import type {
  AccessRow,
  CeliacRowDb,
  HpfRow,
  ImageDetailsRow,
  QueryReportRow,
  ReadOutcomesRow,
} from './reportQueries.js';

/** How a report's file is laid out: its header and each row's cells (docs/REPORTS.md). */
export interface ReportLayout<R> {
  header: string[];
  cells: (row: R) => CsvValue[];
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
const wholeUm = (v: number | null): number | null => (v === null ? null : Math.round(v));

/** Image details (and its sponsor variant): the columns the reader may view, in the file's order. */
export function imageDetailsLayout(
  type: 'image-details' | 'image-details-sponsor',
  actions: ReadonlySet<string>,
): ReportLayout<ImageDetailsRow> {
  const columns = imageDetailsColumns(type, actions);
  const value: Record<ReportImageColumnKey, (r: ImageDetailsRow) => CsvValue> = {
    imageId: (r) => r.id,
    studyName: (r) => r.study_name,
    sponsor: (r) => r.sponsor,
    protocolId: (r) => r.protocol_id,
    siteId: (r) => r.site_id,
    subjectId: (r) => r.subject_id,
    visitId: (r) => r.visit_id,
    labVisitId: (r) => r.lab_visit_id,
    histoProcedureId: (r) => r.histo_procedure_id,
    endoProcedureId: (r) => r.proc_id,
    accessionNumber: (r) => r.accession_number,
    imageFilename: (r) => r.name,
    anatomicalSegment: (r) => r.biopsy_location,
    specimenCollectionDate: (r) => r.collection_date,
    uploadedAt: (r) => iso(r.uploaded_at),
    uploadedBy: (r) => r.uploaded_by,
    organizationName: (r) => r.organization,
    status: (r) => r.status,
    caseStatus: (r) => r.case_status,
    labQcBy: (r) => r.lab_qc_by,
    iscQcBy: (r) => r.isc_qc_by,
    qcCompletedAt: (r) => iso(r.qc_completed_at),
    readers: (r) => r.readers,
    readCompletedAt: (r) => iso(r.read_completed_at),
    inQuery: (r) => r.open_queries > 0,
    openQueries: (r) => r.open_queries,
    qaComments: (r) => r.qa_comments,
  };
  return {
    header: columns.map((c) => c.label),
    cells: (row) => columns.map((c) => value[c.key](row)),
  };
}

/** The study and case columns the case reports start with; subject and visit only for who may see them. */
function caseIdColumns(actions: ReadonlySet<string>) {
  const subject = mayViewCaseField(actions, 'subjectId');
  const visit = mayViewCaseField(actions, 'visitId');
  return {
    header: [
      'Study',
      'Endo Procedure ID',
      'Histo Procedure ID',
      ...(subject ? ['Subject ID'] : []),
      ...(visit ? ['Visit ID'] : []),
    ],
    cells: (r: {
      study_name: string;
      proc_id: string | null;
      histo_procedure_id: string | null;
      subject_id: string | null;
      visit_id: string | null;
    }): CsvValue[] => [
      r.study_name,
      r.proc_id,
      r.histo_procedure_id,
      ...(subject ? [r.subject_id] : []),
      ...(visit ? [r.visit_id] : []),
    ],
  };
}

/** The case columns every annotation report starts with, then the image; its file name for who may see it. */
function caseColumns(actions: ReadonlySet<string>) {
  const kase = caseIdColumns(actions);
  const names = actions.has(VIEW_FILE_NAME_PERMISSION);
  return {
    header: [...kase.header, 'Image ID', ...(names ? ['File Name'] : [])],
    cells: (
      r: Parameters<typeof kase.cells>[0] & {
        image_id: number;
        image_name: string;
      },
    ): CsvValue[] => [...kase.cells(r), r.image_id, ...(names ? [r.image_name] : [])],
  };
}

/**
 * HPF annotations: a count column per point class of the study (and 'Other' for points without a
 * class), the total, the HPF's area in mm² (π r² from the stored radius and the slide's pixel size).
 */
export function hpfLayout(
  actions: ReadonlySet<string>,
  classes: readonly { id: number; name: string }[],
): ReportLayout<HpfRow> {
  const kase = caseColumns(actions);
  return {
    header: [
      ...kase.header,
      'Reader',
      'Source',
      'HPF Class',
      'HPF ID',
      ...classes.map((c) => `Count: ${c.name}`),
      'Count: Other',
      'Total Points',
      'HPF Area (mm²)',
      'Created At',
    ],
    cells: (r) => {
      const counts = r.counts ?? {};
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      const area = r.radius !== null && r.mpp !== null ? (Math.PI * (r.radius * r.mpp) ** 2) / 1e6 : null;
      return [
        ...kase.cells(r),
        r.reader,
        r.source === 'CR' ? 'Reader' : 'AI',
        r.hpf_id === null ? 'Orphan' : r.hpf_class,
        r.hpf_id,
        ...classes.map((c) => counts[String(c.id)] ?? 0),
        counts['0'] ?? 0,
        total,
        area === null ? null : Number(area.toFixed(4)),
        iso(r.created_at),
      ];
    },
  };
}

/** Celiac line measurements: whole µm and Vh:Cd to one decimal, as the viewer's table shows them. */
export function celiacLayout(actions: ReadonlySet<string>): ReportLayout<CeliacRowDb> {
  const kase = caseColumns(actions);
  return {
    header: [...kase.header, 'Reader', 'Line Class', 'Villus Height (µm)', 'Crypt Depth (µm)', 'Vh:Cd', 'Measured At'],
    cells: (r) => [
      ...kase.cells(r),
      r.reader,
      r.class_name,
      wholeUm(r.villus_height),
      wholeUm(r.crypt_depth),
      celiacRatio(r.villus_height, r.crypt_depth),
      iso(r.measured_at),
    ],
  };
}

/** Queries: every field of the query with its people, dates and days open. */
export function queryLayout(actions: ReadonlySet<string>, now: Date): ReportLayout<QueryReportRow> {
  const names = actions.has(VIEW_FILE_NAME_PERMISSION);
  return {
    header: [
      'Query ID',
      'Object Type',
      'Object ID',
      'Study',
      'Endo Procedure ID',
      'Histo Procedure ID',
      ...(names ? ['File Name'] : []),
      'Status',
      'Resolution',
      'Dynamic Status',
      'Cancelled',
      'Category',
      'Category Text',
      'Reason',
      'Sub-reason',
      'Opened At',
      'Opened By',
      'Opened By Role',
      'Query With',
      'Follow-up Date',
      'Follow-up Dates Set',
      'Last Reminder Sent',
      'Comments',
      'Resolved At',
      'Resolved By',
      'Resolution Option',
      'Resolution Details',
      'Closed At',
      'Closed By',
      'Close Text',
      'Days Open',
    ],
    cells: (r) => {
      const end = r.closed_at ?? now;
      return [
        r.id,
        r.object_type,
        r.object_id,
        r.study_name,
        r.proc_id,
        r.histo_procedure_id,
        ...(names ? [r.image_name] : []),
        r.query_status,
        r.resolution,
        queryDynamicStatus(
          {
            queryStatus: r.query_status,
            resolution: r.resolution,
            latestFollowUpOnDt: r.latest_follow_up_on,
            followUps: Math.max(0, r.reminders - 1),
          },
          now,
        ),
        isCancelled({ queryStatus: r.query_status, resolution: r.resolution }),
        r.category,
        r.category_other_text,
        r.reason_text,
        r.child_reason_text,
        iso(r.opened_at),
        r.opener,
        r.opener_role_name,
        r.with_role_name,
        r.latest_follow_up_on,
        r.reminders,
        iso(r.last_reminded),
        r.comments,
        iso(r.resolved_at),
        r.resolver,
        r.resolution_option,
        r.resolution_text,
        iso(r.closed_at),
        r.closer,
        r.close_text,
        Math.max(0, Math.floor((end.getTime() - r.opened_at.getTime()) / 86_400_000)),
      ];
    },
  };
}

/** Access: who held which role in the study, granted and revoked when and by whom. */
export function accessLayout(): ReportLayout<AccessRow> {
  return {
    header: [
      'User ID',
      'Username',
      'Name',
      'Organization',
      'Role',
      'Scope',
      'Held Now',
      'Granted At',
      'Granted By',
      'Revoked At',
      'Revoked By',
      'Account Status',
      'Last Login',
    ],
    cells: (r) => [
      r.user_id,
      r.username,
      [r.first_name, r.last_name].filter(Boolean).join(' ') || null,
      r.organization,
      r.role_display ?? r.role_name,
      r.scope === 'Global' ? 'Global (every study)' : 'Study',
      r.held,
      iso(r.granted_at),
      r.granted_by,
      iso(r.revoked_at),
      r.revoked_by,
      !r.registered ? 'Unregistered' : r.active ? 'Active' : 'Deactivated',
      iso(r.last_login_at),
    ],
  };
}

/** A report whose cursor row stands for several lines of the file (a case and its reads). */
export interface ReportLinesLayout<R> {
  header: string[];
  lines: (row: R) => CsvValue[][];
}

/**
 * Read outcomes (issue 30; docs/REPORTS.md): per case, each frozen value (reader × endpoint) in the
 * order they were frozen, then — once the case's read is decided — one Final row per endpoint of the
 * study, from caseFinalOutcomes (the one rule the case route and the Reads tab use). The range keeps
 * the rows whose Scored At falls in it (a Final row's is the last read's, when the final was
 * decided); the user filter, that reader's rows and the final rows of the cases they read.
 */
export function readOutcomesLayout(
  actions: ReadonlySet<string>,
  endpoints: readonly EndpointDefinition[],
  filter: { userId: number | null; from: Date | null; to: Date | null },
): ReportLinesLayout<ReadOutcomesRow> {
  const kase = caseIdColumns(actions);
  const byKey = new Map(endpoints.map((d) => [d.key, d]));
  const inRange = (at: Date) => (filter.from === null || at >= filter.from) && (filter.to === null || at < filter.to);
  return {
    header: [
      ...kase.header,
      'Reader',
      'Reader Role',
      'Endpoint',
      'Value',
      'Unit',
      'Positive',
      'Scored At (UTC)',
      'Signature Meaning',
      'Final',
      'Adjudicated',
      'Endpoint Key',
      'Reason (No Value)',
    ],
    lines: (row) => {
      const ids = kase.cells(row);
      // An endpoint removed from the study since the value was frozen: its key stands for its label.
      const label = (key: string) => byKey.get(key)?.label ?? key;
      const unit = (key: string) => {
        const definition = byKey.get(key);
        return definition ? endpointUnit(definition.kind) : null;
      };
      const lines: CsvValue[][] = [];
      for (const o of row.outcomes) {
        const scoredAt = new Date(o.scored_at);
        if ((filter.userId !== null && o.reader_id !== filter.userId) || !inRange(scoredAt)) continue;
        lines.push([
          ...ids,
          o.reader,
          o.reader_role,
          label(o.endpoint_key),
          o.value,
          unit(o.endpoint_key),
          o.positive,
          iso(scoredAt),
          // The read's electronic signature, where the study signs its reads (Part 11, issue 30).
          o.signature,
          false,
          null,
          o.endpoint_key,
          o.reason,
        ]);
      }
      const reads = row.reads.map((r) => ({
        user_id: r.user_id,
        role: r.role,
        read_at: r.read_at === null ? null : new Date(r.read_at),
      }));
      const final = caseFinalOutcomes(endpoints, row.status as CaseStatus, reads, row.outcomes);
      // Decided when the last of its reads was marked (every read is marked once there is a final).
      const decidedAt = new Date(Math.max(...reads.map((r) => r.read_at?.getTime() ?? 0)));
      if (final === null || !inRange(decidedAt)) return lines;
      for (const f of final)
        lines.push([
          ...ids,
          null,
          null,
          label(f.endpointKey),
          f.value,
          unit(f.endpointKey),
          f.positive,
          iso(decidedAt),
          null,
          true,
          f.adjudicated,
          f.endpointKey,
          null,
        ]);
      return lines;
    },
  };
}
