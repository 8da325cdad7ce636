import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { CaseStatus, MultilineCategory, OutcomeAdjudicationFilter, StudyOutcomeSortKey } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { likeContains } from '../../platform/db/paging.js';

type Q = Kysely<DB>;

/** The annotation types the endpoints read (docs/OUTCOMES.md, Kinds). */
const ENDPOINT_TYPES = ['HPF', 'POINT', 'MULTILINE'] as const;

/** An annotation an endpoint may count, with its class's name (null: no class). */
export interface EndpointAnnotationRow {
  id: number;
  annotation_type: string;
  user_id: number | null;
  class_id: number | null;
  class_name: string | null;
  parent_id: number | null;
  multiline_category: MultilineCategory | null;
  length: number | null;
}

/** The study's endpoints as stored (jsonb; the caller reads them through the domain's schema). */
export async function studyEndpointsJson(db: Q, studyId: number): Promise<unknown> {
  const row = await db.selectFrom('studies').select('endpoints').where('id', '=', studyId).executeTakeFirstOrThrow();
  return row.endpoints;
}

/** A case's status and its study's endpoints (as stored). */
export async function caseOutcomeState(db: Q, caseId: number): Promise<{ status: CaseStatus; endpoints: unknown }> {
  const row = await db
    .selectFrom('cases')
    .innerJoin('studies', 'studies.id', 'cases.study_id')
    .select(['cases.status', 'studies.endpoints'])
    .where('cases.id', '=', caseId)
    .executeTakeFirstOrThrow();
  return { status: row.status as CaseStatus, endpoints: row.endpoints };
}

/**
 * One reader's live HPFs, points and multilines on the case's live (not archived) images, drawn in
 * Lamina (not imported), with their class's name.
 */
export async function readerEndpointAnnotations(db: Q, caseId: number, readerId: number) {
  return db
    .selectFrom('annotations as a')
    .innerJoin('images as i', 'i.id', 'a.image_id')
    .leftJoin('annotation_classes as c', 'c.id', 'a.annotation_class_id')
    .select([
      'a.id',
      'a.annotation_type',
      'a.user_id',
      'a.annotation_class_id as class_id',
      'c.name as class_name',
      'a.parent_id',
      'a.multiline_category',
      'a.length',
    ])
    .where('i.case_id', '=', caseId)
    .where('i.status', '!=', 'ARCHIVED')
    .where('a.user_id', '=', readerId)
    .where('a.mld_file_id', 'is', null)
    .where('a.deleted_at', 'is', null)
    .where('a.annotation_type', 'in', ENDPOINT_TYPES)
    .orderBy('a.id')
    .execute() satisfies Promise<EndpointAnnotationRow[]>;
}

/**
 * The live imported AI HPFs and points (issue 17) on the case's live images, with their AI class's
 * name; a point's parent is the AI HPF that holds it (mldImport.ts).
 */
export async function aiEndpointAnnotations(db: Q, caseId: number) {
  return db
    .selectFrom('annotations as a')
    .innerJoin('images as i', 'i.id', 'a.image_id')
    .leftJoin('ai_classes as k', 'k.id', 'a.ai_class_id')
    .select([
      'a.id',
      'a.annotation_type',
      'a.user_id',
      'a.ai_class_id as class_id',
      'k.name as class_name',
      'a.parent_id',
      'a.multiline_category',
      'a.length',
    ])
    .where('i.case_id', '=', caseId)
    .where('i.status', '!=', 'ARCHIVED')
    .where('a.mld_file_id', 'is not', null)
    .where('a.deleted_at', 'is', null)
    .where('a.annotation_type', 'in', ENDPOINT_TYPES)
    .orderBy('a.id')
    .execute() satisfies Promise<EndpointAnnotationRow[]>;
}

/** A frozen value with its reader's names. */
export interface ReadOutcomeRow {
  id: number;
  reader_id: number;
  username: string;
  first_name: string | null;
  last_name: string | null;
  reader_role: 'PRIMARY' | 'ADJUDICATOR';
  endpoint_key: string;
  value: number | null;
  positive: boolean | null;
  reason: string | null;
  scored_at: Date;
}

/**
 * The frozen values of a case — of one reader only when `readerIds` is given — in the order they
 * were frozen (readers in the order they marked, each reader's endpoints in the study's order).
 */
export async function readOutcomeRows(db: Q, caseId: number, readerIds: readonly number[] | null) {
  if (readerIds !== null && readerIds.length === 0) return [];
  return frozenValuesOf(db)
    .where('o.case_id', '=', caseId)
    .$if(readerIds !== null, (q) => q.where('o.reader_id', 'in', readerIds ?? []))
    .execute() satisfies Promise<ReadOutcomeRow[]>;
}

/** Frozen values with their readers' names, in the order they were frozen. */
function frozenValuesOf(db: Q) {
  return db
    .selectFrom('read_outcomes as o')
    .innerJoin('users as u', 'u.id', 'o.reader_id')
    .select([
      'o.id',
      'o.case_id',
      'o.reader_id',
      'u.username',
      'u.first_name',
      'u.last_name',
      'o.reader_role',
      'o.endpoint_key',
      'o.value',
      'o.positive',
      'o.reason',
      'o.scored_at',
    ])
    .orderBy('o.scored_at')
    .orderBy('o.id');
}

/** The case's reads — its primary readers' and its adjudicator's — and when each was marked (null: not yet). */
export async function caseReads(db: Q, caseId: number) {
  return db
    .selectFrom('case_readers')
    .select(['user_id', 'read_at', 'role'])
    .where('case_id', '=', caseId)
    .orderBy('user_id')
    .execute();
}

/**
 * The primary readers' frozen values of a study's cases (archived and invalid cases left out): one
 * row per endpoint, its readings as four aligned JSON arrays — one aggregation pass feeds every
 * aggregate the same rows in the same order; no order is asked for, agreementCases orders cases and
 * readers itself. Grouped by the database because a row per reading is what costs: the 40 000 of a
 * 10 000-case study with two readers and two endpoints took ~0.7 s through embedded PGlite, four
 * arrays per endpoint under a tenth of that; JSON arrays, not SQL ones, whose text the pg driver
 * parses slower (docs/BENCHMARKS.md, bench:agreement).
 */
export async function studyPrimaryReadings(db: Q, studyId: number, endpointKey?: string) {
  return db
    .selectFrom('read_outcomes as o')
    .innerJoin('cases as c', 'c.id', 'o.case_id')
    .select([
      'o.endpoint_key',
      sql<number[]>`json_agg(o.case_id)`.as('case_ids'),
      sql<number[]>`json_agg(o.reader_id)`.as('reader_ids'),
      sql<(number | null)[]>`json_agg(o.value)`.as('values'),
      sql<(boolean | null)[]>`json_agg(o.positive)`.as('positives'),
    ])
    .where('c.study_id', '=', studyId)
    .where('c.status', 'not in', ['ARCHIVED', 'INVALID'])
    .where('o.reader_role', '=', 'PRIMARY')
    .$if(endpointKey !== undefined, (query) => query.where('o.endpoint_key', '=', endpointKey ?? ''))
    .groupBy('o.endpoint_key')
    .execute();
}

// ---------------------------------------------------------------------------------------------
// The study's Reads tab (GET /api/studies/{id}/outcomes and …/outcomes/pairs)
// ---------------------------------------------------------------------------------------------

export interface StudyOutcomeFilter {
  studyId: number;
  procId?: string | undefined;
  adjudicated?: OutcomeAdjudicationFilter | undefined;
  sort: StudyOutcomeSortKey;
  descending: boolean;
  limit?: number | undefined;
  offset?: number | undefined;
}

const OUTCOME_SORT_COLUMNS: Record<StudyOutcomeSortKey, string> = {
  scoredAt: 'last_scored_at',
  procId: 'lower_proc_id',
  histoProcedureId: 'cases.histo_procedure_id',
  subjectId: 'cases.subject_id',
  visitId: 'cases.visit_id',
  status: 'cases.status',
};

/**
 * The Reads tab's cases: the study's cases not archived that have at least one frozen value or wait
 * for adjudication, with the Cases tab's Procedure ID search and the adjudication filter.
 */
function readCaseMatches(eb: ExpressionBuilder<DB, 'cases'>, filter: StudyOutcomeFilter): Expression<SqlBool> {
  const frozen = eb.selectFrom('read_outcomes as o').select('o.id').whereRef('o.case_id', '=', 'cases.id');
  const adjudicator = eb
    .selectFrom('case_readers as adj')
    .select('adj.user_id')
    .whereRef('adj.case_id', '=', 'cases.id')
    .where('adj.role', '=', 'ADJUDICATOR');
  const pending = eb.or([
    eb('cases.status', '=', 'PENDING_ADJUDICATION'),
    eb.exists(adjudicator.where('adj.read_at', 'is', null)),
  ]);
  const adjudicated = eb.exists(adjudicator.where('adj.read_at', 'is not', null));
  const conditions: Expression<SqlBool>[] = [
    eb('cases.study_id', '=', filter.studyId),
    eb('cases.status', '!=', 'ARCHIVED'),
    eb.or([eb.exists(frozen), eb('cases.status', '=', 'PENDING_ADJUDICATION')]),
  ];
  if (filter.procId) {
    const like = likeContains(filter.procId);
    conditions.push(eb.or([eb('cases.proc_id', 'ilike', like), eb('cases.histo_procedure_id', 'ilike', like)]));
  }
  if (filter.adjudicated === 'yes') conditions.push(adjudicated);
  else if (filter.adjudicated === 'pending') conditions.push(pending);
  else if (filter.adjudicated === 'no') conditions.push(eb.not(adjudicated), eb.not(pending));
  return eb.and(conditions);
}

/** One page of the Reads tab's cases, filtered, sorted and paged in one statement (a study may have 10^4). */
export async function listStudyOutcomeCases(db: Q, filter: StudyOutcomeFilter) {
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  let query = db
    .selectFrom('cases')
    .where((eb) => readCaseMatches(eb, filter))
    .select((eb) => [
      'cases.id',
      'cases.proc_id',
      'cases.histo_procedure_id',
      'cases.subject_id',
      'cases.visit_id',
      'cases.status',
      eb
        .selectFrom('read_outcomes as last')
        .select((e) => e.fn.max('last.scored_at').as('at'))
        .whereRef('last.case_id', '=', 'cases.id')
        .as('last_scored_at'),
      sql<string>`lower(cases.proc_id)`.as('lower_proc_id'),
      sql<number>`count(*) over ()::int`.as('total'),
    ])
    .orderBy(sql`${sql.ref(OUTCOME_SORT_COLUMNS[filter.sort])} ${direction}`)
    .orderBy('cases.id', filter.descending ? 'desc' : 'asc');
  if (filter.limit !== undefined) query = query.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await query.execute();
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && (filter.offset ?? 0) > 0) {
    const counted = await db
      .selectFrom('cases')
      .select(sql<number>`count(*)::int`.as('n'))
      .where((eb) => readCaseMatches(eb, filter))
      .executeTakeFirst();
    total = counted?.n ?? 0;
  }
  return { rows, total };
}
export type StudyOutcomeCaseRow = Awaited<ReturnType<typeof listStudyOutcomeCases>>['rows'][number];

/** The reads of the given cases — primary readers' and adjudicators' — with the readers' names. */
export async function casesReads(db: Q, caseIds: readonly number[]) {
  if (caseIds.length === 0) return [];
  return db
    .selectFrom('case_readers as cr')
    .innerJoin('users as u', 'u.id', 'cr.user_id')
    .select(['cr.case_id', 'cr.user_id', 'cr.read_at', 'cr.role', 'u.username', 'u.first_name', 'u.last_name'])
    .where('cr.case_id', 'in', caseIds)
    .orderBy('cr.case_id')
    .orderBy('cr.user_id')
    .execute();
}

/** The frozen values of the given cases, in the order they were frozen. */
export async function casesReadOutcomes(db: Q, caseIds: readonly number[]) {
  if (caseIds.length === 0) return [];
  return frozenValuesOf(db).where('o.case_id', 'in', caseIds).execute() satisfies Promise<
    (ReadOutcomeRow & { case_id: number })[]
  >;
}
