import { sql, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { principalSeesQuery } from '../../access/queryVisibility.js';

/** Read models of the reports (docs/REPORTS.md): SQL only, each in a stable order for a cursor. */
type Q = Kysely<DB>;

/** A raw query as a cursor reads it. */
function compilable<R>(db: Q, query: RawBuilder<R>): Compilable<R> {
  return { compile: () => query.compile(db) };
}

export interface ReportFilter {
  /** null: every study (the Global image details report of system admins). */
  studyId: number | null;
  userId: number | null;
  from: Date | null;
  to: Date | null;
}

/** Image details: one row per live image, every column the report may show (projected later). */
export function imageDetailsQuery(db: Q, filter: ReportFilter) {
  let query = db
    .selectFrom('images as i')
    .leftJoin('studies as s', 's.id', 'i.study_id')
    .leftJoin('cases as c', 'c.id', 'i.case_id')
    .leftJoin('organizations as o', 'o.id', 'i.organization_id')
    .leftJoin('users as up', 'up.id', 'i.uploader_id')
    .leftJoin('users as qc1', 'qc1.id', 'c.qc1_by')
    .leftJoin('users as qc2', 'qc2.id', 'c.qc2_by')
    .select((eb) => [
      'i.id',
      's.name as study_name',
      's.sponsor',
      'i.protocol_id',
      eb.fn.coalesce('c.site_id', 'i.site_id').as('site_id'),
      eb.fn.coalesce('c.subject_id', 'i.subject_id').as('subject_id'),
      eb.fn.coalesce('c.visit_id', 'i.visit_id').as('visit_id'),
      'i.lab_visit_id',
      'c.histo_procedure_id',
      'c.proc_id',
      'i.accession_number',
      'i.name',
      'i.biopsy_location',
      eb.fn.coalesce('i.specimen_collection_date', 'c.specimen_collection_date').as('collection_date'),
      'i.uploaded_at',
      'up.username as uploaded_by',
      'o.name as organization',
      'i.status',
      'c.status as case_status',
      'qc1.username as lab_qc_by',
      'qc2.username as isc_qc_by',
      'c.qc_completed_at',
      'c.read_completed_at',
      'i.qa_comments',
      sql<string | null>`(select string_agg(u.username, '; ' order by u.username) from case_readers cr
        join users u on u.id = cr.user_id where cr.case_id = i.case_id)`.as('readers'),
      sql<number>`(select count(*)::int from queries q where q.object_type = 'IMAGE' and q.object_id = i.id
        and q.query_status = 'OPEN')`.as('open_queries'),
    ])
    .where('i.status', '!=', 'ARCHIVED');
  if (filter.studyId !== null) query = query.where('i.study_id', '=', filter.studyId);
  if (filter.userId !== null) query = query.where('i.uploader_id', '=', filter.userId);
  if (filter.from) query = query.where('i.uploaded_at', '>=', filter.from);
  if (filter.to) query = query.where('i.uploaded_at', '<', filter.to);
  return query.orderBy('i.id');
}
export type ImageDetailsRow = Awaited<ReturnType<ReturnType<typeof imageDetailsQuery>['execute']>>[number];

/** The study's point classes (the HPF report's count columns), in the study's order. */
export async function pointClasses(db: Q, studyId: number) {
  return db
    .selectFrom('annotation_classes')
    .select(['id', 'name'])
    .where('study_id', '=', studyId)
    .where('type', '=', 'POINT')
    .where('deleted', '=', false)
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
}

/**
 * HPF annotations: one row per live HPF with its points counted per point class, and one row per
 * image and reader for the points outside any HPF (HPF 'Orphan'). Imported (AI) annotations only
 * where the image accepts them.
 */
export interface HpfRow {
  hpf_id: number | null;
  image_id: number;
  image_name: string;
  proc_id: string | null;
  histo_procedure_id: string | null;
  subject_id: string | null;
  visit_id: string | null;
  study_name: string;
  reader: string | null;
  source: string;
  hpf_class: string | null;
  radius: number | null;
  mpp: number | null;
  created_at: Date | null;
  counts: Record<string, number> | null;
}

export function hpfQuery(db: Q, filter: ReportFilter & { studyId: number }): Compilable<HpfRow> {
  const counts = sql<Record<string, number> | null>`(select jsonb_object_agg(coalesce(x.cls, 0)::text, x.n) from (
      select p.annotation_class_id as cls, count(*)::int as n from annotations p
      where p.parent_id = h.id and p.annotation_type = 'POINT' and p.deleted_at is null group by 1) x)`;
  const orphanCounts = sql<Record<string, number> | null>`(select jsonb_object_agg(coalesce(x.cls, 0)::text, x.n) from (
      select p.annotation_class_id as cls, count(*)::int as n from annotations p
      where p.image_id = h.image_id and p.parent_id is null and p.annotation_type = 'POINT' and p.deleted_at is null
        and p.user_id is not distinct from h.user_id and p.source = h.source group by 1) x)`;
  const when = (column: string) =>
    sql<boolean>`(${filter.from === null ? sql`true` : sql`${sql.ref(column)} >= ${filter.from}`})
      and (${filter.to === null ? sql`true` : sql`${sql.ref(column)} < ${filter.to}`})`;
  const user = filter.userId === null ? sql`true` : sql`h.user_id = ${filter.userId}`;
  return compilable(
    db,
    sql<HpfRow>`
    with live as (
      select i.* from images i where i.study_id = ${filter.studyId} and i.status <> 'ARCHIVED'
    ), rows as (
      select h.id as hpf_id, h.image_id, h.user_id, h.source, h.annotation_class_id, h.ai_class_id, h.radius,
             h.created_at, ${counts} as counts
      from annotations h join live on live.id = h.image_id
      where h.annotation_type = 'HPF' and h.deleted_at is null and ${user} and ${when('h.created_at')}
        and (h.source = 'CR' or live.accept_ai_annotations)
      union all
      select null, h.image_id, h.user_id, h.source, null, null, null, max(h.created_at), ${orphanCounts}
      from annotations h join live on live.id = h.image_id
      where h.annotation_type = 'POINT' and h.parent_id is null and h.deleted_at is null and ${user}
        and ${when('h.created_at')} and (h.source = 'CR' or live.accept_ai_annotations)
      group by h.image_id, h.user_id, h.source
    )
    select r.hpf_id, r.image_id, i.name as image_name, c.proc_id, c.histo_procedure_id,
           coalesce(c.subject_id, i.subject_id) as subject_id, coalesce(c.visit_id, i.visit_id) as visit_id,
           s.name as study_name, u.username as reader, r.source, coalesce(ac.name, aic.name) as hpf_class,
           r.radius, i.mpp,
           r.created_at, r.counts
    from rows r
    join images i on i.id = r.image_id
    join studies s on s.id = i.study_id
    left join cases c on c.id = i.case_id
    left join users u on u.id = r.user_id
    left join annotation_classes ac on ac.id = r.annotation_class_id
    left join ai_classes aic on aic.id = r.ai_class_id
    order by c.proc_id nulls last, r.image_id, u.username nulls last, r.source, r.hpf_id nulls last`,
  );
}
/**
 * Celiac line measurements: per image, reader and multiline class, the newest villus-height and
 * crypt-depth line (µm), as the viewer's Celiac Line Measurements table takes them.
 */
export function celiacQuery(db: Q, filter: ReportFilter & { studyId: number }) {
  let query = db
    .selectFrom(
      db
        .selectFrom('annotations as a')
        .innerJoin('images as i', 'i.id', 'a.image_id')
        .select(['a.image_id', 'a.user_id', 'a.annotation_class_id'])
        .where('i.study_id', '=', filter.studyId)
        .where('i.status', '!=', 'ARCHIVED')
        .where('a.annotation_type', '=', 'MULTILINE')
        .where('a.deleted_at', 'is', null)
        .where('a.annotation_class_id', 'is not', null)
        .groupBy(['a.image_id', 'a.user_id', 'a.annotation_class_id'])
        .as('g'),
    )
    .innerJoin('images as i', 'i.id', 'g.image_id')
    .innerJoin('studies as s', 's.id', 'i.study_id')
    .leftJoin('cases as c', 'c.id', 'i.case_id')
    .leftJoin('users as u', 'u.id', 'g.user_id')
    .innerJoin('annotation_classes as ac', 'ac.id', 'g.annotation_class_id')
    .select((eb) => [
      'i.id as image_id',
      'i.name as image_name',
      's.name as study_name',
      'c.proc_id',
      'c.histo_procedure_id',
      eb.fn.coalesce('c.subject_id', 'i.subject_id').as('subject_id'),
      eb.fn.coalesce('c.visit_id', 'i.visit_id').as('visit_id'),
      'u.username as reader',
      'ac.name as class_name',
      sql<number | null>`(select a.length from annotations a where a.image_id = g.image_id
        and a.user_id is not distinct from g.user_id and a.annotation_class_id = g.annotation_class_id
        and a.multiline_category = 'VILLUS_HEIGHT' and a.deleted_at is null order by a.id desc limit 1)`.as(
        'villus_height',
      ),
      sql<number | null>`(select a.length from annotations a where a.image_id = g.image_id
        and a.user_id is not distinct from g.user_id and a.annotation_class_id = g.annotation_class_id
        and a.multiline_category = 'CRYPT_DEPTH' and a.deleted_at is null order by a.id desc limit 1)`.as(
        'crypt_depth',
      ),
      sql<Date>`(select max(a.created_at) from annotations a where a.image_id = g.image_id
        and a.user_id is not distinct from g.user_id and a.annotation_class_id = g.annotation_class_id
        and a.annotation_type = 'MULTILINE' and a.deleted_at is null)`.as('measured_at'),
    ]);
  if (filter.userId !== null) query = query.where('g.user_id', '=', filter.userId);
  if (filter.from)
    query = query.where(
      sql<boolean>`(select max(a.created_at) from annotations a where a.image_id = g.image_id and a.user_id is not distinct from g.user_id and a.annotation_class_id = g.annotation_class_id and a.deleted_at is null) >= ${filter.from}`,
    );
  if (filter.to)
    query = query.where(
      sql<boolean>`(select max(a.created_at) from annotations a where a.image_id = g.image_id and a.user_id is not distinct from g.user_id and a.annotation_class_id = g.annotation_class_id and a.deleted_at is null) < ${filter.to}`,
    );
  return query.orderBy('c.proc_id').orderBy('i.id').orderBy('u.username').orderBy('ac.sort_order').orderBy('ac.id');
}
export type CeliacRowDb = Awaited<ReturnType<ReturnType<typeof celiacQuery>['execute']>>[number];

/** Queries: one row per query of the study the caller sees (principalSeesQuery). */
export function queryReportQuery(db: Q, principal: Principal, filter: ReportFilter & { studyId: number }) {
  let query = db
    .selectFrom('queries')
    .innerJoin('studies as s', 's.id', 'queries.study_id')
    .leftJoin('cases as c', 'c.id', 'queries.case_id')
    .leftJoin('images as i', (join) =>
      join.onRef('i.id', '=', 'queries.object_id').on('queries.object_type', '=', 'IMAGE'),
    )
    .leftJoin('users as opener', 'opener.id', 'queries.opened_by')
    .leftJoin('users as resolver', 'resolver.id', 'queries.resolved_by')
    .leftJoin('users as closer', 'closer.id', 'queries.closed_by')
    .leftJoin('roles as with_role', 'with_role.id', 'queries.with_role_id')
    .leftJoin('roles as opener_role', 'opener_role.id', 'queries.opened_by_role_id')
    .selectAll('queries')
    .select([
      's.name as study_name',
      'c.proc_id',
      'c.histo_procedure_id',
      'i.name as image_name',
      'opener.username as opener',
      'resolver.username as resolver',
      'closer.username as closer',
      'with_role.display_name as with_role_name',
      'opener_role.display_name as opener_role_name',
      sql<number>`(select count(*)::int from query_reminders r where r.query_id = queries.id)`.as('reminders'),
      sql<number>`(select count(*)::int from query_comments m where m.query_id = queries.id)`.as('comments'),
      sql<Date | null>`(select max(r.reminded_on) from query_reminders r where r.query_id = queries.id)`.as(
        'last_reminded',
      ),
    ])
    .where('queries.study_id', '=', filter.studyId)
    .where(principalSeesQuery(principal));
  if (filter.userId !== null) query = query.where('queries.opened_by', '=', filter.userId);
  if (filter.from) query = query.where('queries.opened_at', '>=', filter.from);
  if (filter.to) query = query.where('queries.opened_at', '<', filter.to);
  return query.orderBy('queries.id');
}
export type QueryReportRow = Awaited<ReturnType<ReturnType<typeof queryReportQuery>['execute']>>[number];

export interface AccessRow {
  user_id: number;
  username: string;
  first_name: string | null;
  last_name: string | null;
  organization: string | null;
  role_name: string;
  role_display: string | null;
  scope: string;
  granted_at: Date | null;
  granted_by: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  held: boolean;
  active: boolean;
  registered: boolean;
  last_login_at: Date | null;
}

/**
 * Access: per user, study and role, the last grant and the last revocation (from the audit trail),
 * whether it is held now, and the account's status and last login; global roles (Study Admin: every
 * study) as rows of their own.
 */
export function accessQuery(db: Q, filter: ReportFilter & { studyId: number }): Compilable<AccessRow> {
  const user = filter.userId === null ? sql`true` : sql`p.user_id = ${filter.userId}`;
  const inRange =
    filter.from === null && filter.to === null
      ? sql`true`
      : sql`exists (select 1 from events e where e.user_id = p.user_id and e.role_name = p.role_name
          and (${filter.from === null ? sql`true` : sql`e.occurred_at >= ${filter.from}`})
          and (${filter.to === null ? sql`true` : sql`e.occurred_at < ${filter.to}`}))`;
  return compilable(
    db,
    sql<AccessRow>`
    with events as (
      select a.entity_id::int as user_id, coalesce(a.new_value, a.old_value) as role_name, a.action,
             a.occurred_at, a.username as by_user, a.id
      from audit_events a
      where a.action in ('STUDY_ACCESS_GRANTED', 'STUDY_ACCESS_REVOKED') and a.study_id = ${filter.studyId}
        and a.entity_type = 'user' and a.entity_id ~ '^[0-9]{1,9}$'
    ), pairs as (
      select user_id, role_name, 'Study' as scope from events
      union
      select sa.user_id, r.name, 'Study' from study_access sa join roles r on r.id = sa.role_id where sa.study_id = ${filter.studyId}
      union
      select ur.user_id, r.name, 'Global' from user_roles ur join roles r on r.id = ur.role_id
    )
    select p.user_id, u.username, u.first_name, u.last_name, o.name as organization, p.role_name,
      r.display_name as role_display, p.scope,
      g.occurred_at as granted_at, g.by_user as granted_by, v.occurred_at as revoked_at, v.by_user as revoked_by,
      case when p.scope = 'Global' then true else exists (select 1 from study_access sa join roles x on x.id = sa.role_id
        where sa.study_id = ${filter.studyId} and sa.user_id = p.user_id and x.name = p.role_name) end as held,
      u.active, u.registered, u.last_login_at
    from pairs p
    join users u on u.id = p.user_id
    left join organizations o on o.id = u.organization_id
    left join roles r on r.name = p.role_name
    left join lateral (select e.occurred_at, e.by_user from events e where e.user_id = p.user_id
      and e.role_name = p.role_name and e.action = 'STUDY_ACCESS_GRANTED' order by e.id desc limit 1) g on true
    left join lateral (select e.occurred_at, e.by_user from events e where e.user_id = p.user_id
      and e.role_name = p.role_name and e.action = 'STUDY_ACCESS_REVOKED' order by e.id desc limit 1) v on true
    where ${user} and ${inRange}
    order by lower(u.username), p.scope desc, p.role_name`,
  );
}

/** One of a case's reads in the read-outcomes report's row: `read_at` in ms since the epoch (null: not marked). */
export interface ReadOutcomesReadJson {
  user_id: number;
  role: 'PRIMARY' | 'ADJUDICATOR';
  read_at: number | null;
}

/** One frozen value in the read-outcomes report's row, with its reader's username; `scored_at` in ms. */
export interface ReadOutcomesValueJson {
  reader_id: number;
  reader: string;
  reader_role: 'PRIMARY' | 'ADJUDICATOR';
  endpoint_key: string;
  value: number | null;
  positive: boolean | null;
  reason: string | null;
  scored_at: number;
  /** The meaning of the read's electronic signature (issue 30), where the study signs its reads. */
  signature: string | null;
}

/**
 * Read outcomes (issue 30): one row per case of the study with readers — archived and invalid cases
 * left out, as the agreement leaves them out — with its reads (case_readers, by reader id) and its
 * frozen values (read_outcomes, in the order they were frozen) as JSON, so the report's rows of a
 * case (each reader's, then the final ones) are made from one cursor row. Times travel as epoch
 * milliseconds (a timestamp inside JSON would be text in the session's time zone); values as
 * float8's shortest exact text, read back to the same number.
 */
export interface ReadOutcomesRow {
  id: number;
  study_name: string;
  proc_id: string | null;
  histo_procedure_id: string | null;
  subject_id: string | null;
  visit_id: string | null;
  status: string;
  reads: ReadOutcomesReadJson[];
  outcomes: ReadOutcomesValueJson[];
}

export function readOutcomesQuery(db: Q, filter: ReportFilter & { studyId: number }): Compilable<ReadOutcomesRow> {
  const ms = (column: string) => sql`(extract(epoch from ${sql.ref(column)}) * 1000)::float8`;
  const reader =
    filter.userId === null
      ? sql`true`
      : sql`exists (select 1 from case_readers x where x.case_id = c.id and x.user_id = ${filter.userId})`;
  return compilable(
    db,
    sql<ReadOutcomesRow>`
    select c.id, s.name as study_name, c.proc_id, c.histo_procedure_id, c.subject_id, c.visit_id, c.status,
      (select json_agg(json_build_object('user_id', cr.user_id, 'role', cr.role, 'read_at', ${ms('cr.read_at')})
         order by cr.user_id) from case_readers cr where cr.case_id = c.id) as reads,
      coalesce((select json_agg(json_build_object('reader_id', o.reader_id, 'reader', u.username,
         'reader_role', o.reader_role, 'endpoint_key', o.endpoint_key, 'value', o.value, 'positive', o.positive,
         'reason', o.reason, 'scored_at', ${ms('o.scored_at')},
         -- The read's signature carries the read's own time (signatureService.ts).
         'signature', (select sg.meaning from signatures sg where sg.case_id = o.case_id
           and sg.user_id = o.reader_id and sg.kind = 'READ' and sg.signed_at = o.scored_at limit 1))
         order by o.scored_at, o.id)
         from read_outcomes o join users u on u.id = o.reader_id where o.case_id = c.id), '[]'::json) as outcomes
    from cases c
    join studies s on s.id = c.study_id
    where c.study_id = ${filter.studyId} and c.status not in ('ARCHIVED', 'INVALID')
      and exists (select 1 from case_readers r where r.case_id = c.id) and ${reader}
    order by c.proc_id, c.id`,
  );
}
