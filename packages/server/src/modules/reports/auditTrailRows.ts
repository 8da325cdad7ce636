import { sql, type Kysely } from 'kysely';
import { zonedParts, type CsvValue } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import type { AuditValueRenderer } from './auditTrailValues.js';

/** What an audit trail export covers: one study (or all: null), a user, a time range, up to an event. */
export interface AuditTrailFilter {
  studyId: number | null;
  userId: number | null;
  from: Date | null;
  to: Date | null;
  /** The last event the export covers (the chain's head when it started): one fixed set of rows. */
  maxId: number;
  /** Whether object names of images are their file names (AP_ImageData_ViewFilename). */
  imageNames: boolean;
}

/**
 * The audit events of an export in chain order, with the user's name and a human name of the object
 * (a case's Endo Procedure ID, an image's file name, a study's name, a user's username, a query's
 * object). SQL only.
 */
export function auditTrailQuery(db: Kysely<DB>, filter: AuditTrailFilter) {
  const imageName = filter.imageNames ? sql`i.name` : sql`'Image ' || i.id`;
  let query = db
    .selectFrom('audit_events as a')
    .leftJoin('users as u', 'u.id', 'a.user_id')
    .select([
      'a.id',
      'a.occurred_at',
      'a.username',
      'a.work_as_role',
      'a.action',
      'a.entity_type',
      'a.entity_id',
      'a.field',
      'a.old_value',
      'a.new_value',
      'a.reason',
      'a.client_ip',
      'u.first_name',
      'u.last_name',
      sql<string | null>`case when a.entity_id ~ '^[0-9]{1,9}$' then (case a.entity_type
          when 'case' then (select c.proc_id from cases c where c.id = a.entity_id::int)
          when 'image' then (select ${imageName} from images i where i.id = a.entity_id::int)
          when 'study' then (select s.name from studies s where s.id = a.entity_id::int)
          when 'user' then (select x.username from users x where x.id = a.entity_id::int)
          when 'organization' then (select o.name from organizations o where o.id = a.entity_id::int)
          when 'role' then (select r.display_name from roles r where r.id = a.entity_id::int)
          when 'query' then (select q.object_type || ' ' || q.object_id from queries q where q.id = a.entity_id::int)
          when 'query_reason' then (select qr.reason_text from query_reasons qr where qr.id = a.entity_id::int)
        end) end`.as('object_name'),
    ])
    .where('a.id', '<=', filter.maxId);
  if (filter.studyId !== null) query = query.where('a.study_id', '=', filter.studyId);
  if (filter.userId !== null) query = query.where('a.user_id', '=', filter.userId);
  if (filter.from) query = query.where('a.occurred_at', '>=', filter.from);
  if (filter.to) query = query.where('a.occurred_at', '<', filter.to);
  return query.orderBy('a.id');
}
export type AuditTrailDbRow = Awaited<ReturnType<ReturnType<typeof auditTrailQuery>['execute']>>[number];

/** The columns of the audit trail export (CSV header; the PDF groups them). */
export const AUDIT_TRAIL_HEADER = [
  'Event',
  'Time (UTC)',
  'Time (local)',
  'User',
  'Username',
  'Role',
  'Action',
  'Object Type',
  'Object ID',
  'Object',
  'Field',
  'Old Value',
  'New Value',
  'Reason for Change',
  'Client IP',
] as const;

/** A clock time of `zone`: YYYY-MM-DD HH:mm:ss and the zone's short name. */
export function zonedClock(zone: string): (at: Date) => string {
  return (at) => {
    const p = zonedParts(at, zone);
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.zoneName}`;
  };
}

/**
 * One audit event as the export's cells, in AUDIT_TRAIL_HEADER order. Old and New Value are as
 * `values` renders them for the exporter (auditTrailValues.ts: no storage keys, file names by
 * permission, ids named, fields the exporter may not view hidden), and so is a failure's reason (an
 * error message: no storage keys, file names by permission); every other cell is the row's.
 */
export function auditTrailCells(
  row: AuditTrailDbRow,
  local: (at: Date) => string,
  values: AuditValueRenderer,
): CsvValue[] {
  const name = [row.first_name, row.last_name].filter(Boolean).join(' ');
  const [oldValue, newValue] = values.values(row);
  return [
    row.id,
    `${row.occurred_at.toISOString().replace('T', ' ').replace('Z', '')} UTC`,
    local(row.occurred_at),
    name || (row.username === 'system' || row.username === null ? 'System' : ''),
    row.username,
    row.work_as_role,
    row.action,
    row.entity_type,
    row.entity_id,
    row.object_name,
    row.field,
    oldValue,
    newValue,
    values.reason(row),
    row.client_ip,
  ];
}
