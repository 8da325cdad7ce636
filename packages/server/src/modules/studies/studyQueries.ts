import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { likeContains } from '../../platform/db/paging.js';
import type { StudySortKey } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';

/** Queries of the studies module: SQL only, no rules (those live in studyService.ts). */
type Q = Kysely<DB>;
type StudiesEb = ExpressionBuilder<DB, 'studies'>;

/** Image statuses that never count as waiting for a case (spec doc 1 §3, unassigned images). */
const NOT_ASSIGNABLE_IMAGE_STATUSES = ['ARCHIVED', 'FAIL_PROCESSING', 'DUPLICATE_IMAGE'];
/** Case statuses that wait for a quality check (lab QC or ISC QC). */
const NEEDS_QC_CASE_STATUSES = ['PENDING_QC', 'PENDING_LAB_QC'];

/**
 * The study columns and the §3 counts, each a correlated subquery, so the whole list (any page,
 * any sort) is one SQL statement. Reader counts are those of `userId` (the requesting user).
 */
function summarySelection(eb: StudiesEb, userId: number) {
  const count = (name: string) => sql<number>`count(*)::int`.as(name);
  return [
    'studies.id',
    'studies.name',
    'studies.sponsor',
    'studies.protocol_ids',
    'studies.visit_ids',
    'studies.lab_visit_ids',
    'studies.indications',
    'studies.segments',
    'studies.anatomical_segments',
    'studies.modality',
    'studies.on_hold',
    'studies.on_hold_reason',
    'studies.is_noto',
    'studies.created_at',
    eb
      .selectFrom('images')
      .select((ib) => ib.fn.max('images.uploaded_at').as('v'))
      .whereRef('images.study_id', '=', 'studies.id')
      .as('most_recent_upload_at'),
    eb
      .selectFrom('images')
      .select(count('n'))
      .whereRef('images.study_id', '=', 'studies.id')
      .where('images.case_id', 'is', null)
      .where('images.status', 'not in', NOT_ASSIGNABLE_IMAGE_STATUSES)
      .as('unassigned_images'),
    eb
      .selectFrom('cases')
      .select(count('n'))
      .whereRef('cases.study_id', '=', 'studies.id')
      .where('cases.status', 'in', NEEDS_QC_CASE_STATUSES)
      .as('cases_needing_qc'),
    eb
      .selectFrom('queries')
      .select(count('n'))
      .whereRef('queries.study_id', '=', 'studies.id')
      .where('queries.query_status', '=', 'OPEN')
      .where((qb) => qb.or([qb('queries.resolution', 'is', null), qb('queries.resolution', '!=', 'RESOLVED')]))
      .as('queries_open'),
    eb
      .selectFrom('queries')
      .select(count('n'))
      .whereRef('queries.study_id', '=', 'studies.id')
      .where('queries.query_status', '=', 'OPEN')
      .where('queries.resolution', '=', 'RESOLVED')
      .as('queries_answered'),
    eb
      .selectFrom('case_readers')
      .innerJoin('cases', 'cases.id', 'case_readers.case_id')
      .select(count('n'))
      .whereRef('cases.study_id', '=', 'studies.id')
      .where('case_readers.user_id', '=', userId)
      .where('case_readers.read_at', 'is not', null)
      .as('assigned_read_cases'),
    eb
      .selectFrom('case_readers')
      .innerJoin('cases', 'cases.id', 'case_readers.case_id')
      .select(count('n'))
      .whereRef('cases.study_id', '=', 'studies.id')
      .where('case_readers.user_id', '=', userId)
      .where('case_readers.read_at', 'is', null)
      .as('assigned_unread_cases'),
  ] as const;
}

export interface StudyListFilter {
  userId: number;
  visible: (eb: StudiesEb) => Expression<SqlBool>;
  name?: string | undefined;
  sort: StudySortKey;
  descending: boolean;
  limit?: number | undefined;
  offset?: number | undefined;
}

const SORT_COLUMNS: Record<StudySortKey, string> = {
  name: 'lower_name',
  sponsor: 'lower_sponsor',
  createdAt: 'created_at',
  mostRecentUploadAt: 'most_recent_upload_at',
  status: 'on_hold',
  numberOfUnassignedImages: 'unassigned_images',
  numberOfCasesNeedingQC: 'cases_needing_qc',
  numberOfQueriesOpen: 'queries_open',
  numberOfQueriesAnswered: 'queries_answered',
  numberOfAssignedReadCases: 'assigned_read_cases',
  numberOfAssignedUnreadCases: 'assigned_unread_cases',
};

/** One page of the studies a user may see, with counts, sorted in SQL; `total` counts every match. */
export async function listStudies(db: Q, filter: StudyListFilter) {
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  let query = db
    .selectFrom('studies')
    .select((eb) => [
      ...summarySelection(eb, filter.userId),
      sql<string>`lower(studies.name)`.as('lower_name'),
      sql<string | null>`lower(studies.sponsor)`.as('lower_sponsor'),
      sql<number>`count(*) over ()`.as('total'),
    ])
    .where(filter.visible);
  if (filter.name) query = query.where('studies.name', 'ilike', likeContains(filter.name));
  let ordered = query
    .orderBy(sql`${sql.ref(SORT_COLUMNS[filter.sort])} ${direction}`)
    .orderBy('studies.id', filter.descending ? 'desc' : 'asc');
  if (filter.limit !== undefined) ordered = ordered.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await ordered.execute();
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && (filter.offset ?? 0) > 0) {
    let counted = db
      .selectFrom('studies')
      .select(sql<number>`count(*)::int`.as('n'))
      .where(filter.visible);
    if (filter.name) counted = counted.where('studies.name', 'ilike', likeContains(filter.name));
    total = (await counted.executeTakeFirst())?.n ?? 0;
  }
  return { rows, total };
}

export type StudySummaryRow = Awaited<ReturnType<typeof listStudies>>['rows'][number];

/**
 * One study with its counts and its read-outcome configuration, which the list leaves out
 * (visibility is checked by the route's policy before this runs).
 */
export async function findStudySummary(db: Q, studyId: number, userId: number) {
  return db
    .selectFrom('studies')
    .select((eb) => [
      ...summarySelection(eb, userId),
      'studies.endpoints',
      'studies.adjudication',
      'studies.signatures',
    ])
    .where('studies.id', '=', studyId)
    .executeTakeFirst();
}

export type StudyRowWithCounts = NonNullable<Awaited<ReturnType<typeof findStudySummary>>>;

/**
 * The live (not deleted) annotation classes of a study, each with its count of live annotations —
 * only `onlyOf`'s when given (a blinded reader counts their own: readers never see each other's work).
 */
export async function listStudyClasses(db: Q, studyId: number, onlyOf: number | null = null) {
  return db
    .selectFrom('annotation_classes')
    .select((eb) => [
      'annotation_classes.id',
      'annotation_classes.type',
      'annotation_classes.name',
      'annotation_classes.color',
      'annotation_classes.sort_order',
      'annotation_classes.enabled',
      'annotation_classes.deleted',
      eb
        .selectFrom('annotations')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('annotations.annotation_class_id', '=', 'annotation_classes.id')
        .where('annotations.deleted_at', 'is', null)
        .$if(onlyOf !== null, (q) => q.where('annotations.user_id', '=', onlyOf))
        .as('count'),
    ])
    .where('annotation_classes.study_id', '=', studyId)
    .where('annotation_classes.deleted', '=', false)
    .orderBy('annotation_classes.type')
    .orderBy('annotation_classes.sort_order')
    .orderBy('annotation_classes.id')
    .execute();
}

export type StudyClassRow = Awaited<ReturnType<typeof listStudyClasses>>[number];

/** Annotations that are not deleted, per class: a class with any cannot be deleted. */
export async function classesWithAnnotations(db: Q, classIds: readonly number[]): Promise<number[]> {
  if (classIds.length === 0) return [];
  const rows = await db
    .selectFrom('annotations')
    .select('annotation_class_id')
    .distinct()
    .where('annotation_class_id', 'in', [...classIds])
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((r) => r.annotation_class_id).filter((id): id is number => id !== null);
}

/** Whether another study already uses this name (names are unique regardless of case). */
export async function studyNameTaken(db: Q, name: string, exceptId?: number): Promise<boolean> {
  let query = db
    .selectFrom('studies')
    .select('id')
    .where(sql`lower(name)`, '=', name.toLowerCase());
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}
