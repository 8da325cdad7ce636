import { sql, type Expression, type ExpressionBuilder, type Kysely } from 'kysely';
import {
  IM_DATE_FILTER_DAYS,
  VIEW_ALL_STUDIES,
  readsAssignedCasesOnly,
  type CaseStatus,
  type ImCaseColumnKey,
  type ImCaseSortKey,
  type ImDateFilter,
  type ImageStatus,
  type ImImageColumnKey,
  type ImImageSortKey,
} from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { likeContains } from '../../platform/db/paging.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';
import { readerSeesCase, readerSeesImage } from '../cases/readerVisibility.js';

/** Queries of Image Management: SQL only (which columns a user may see is the domain's table). */

/** A column's SQL under its record key; subqueries in parentheses. */
const aliased = (expression: Expression<unknown>, key: string) => sql`(${expression})`.as(key);
type Q = Kysely<DB>;
type ImageEb = ExpressionBuilder<
  DB & { s: DB['studies']; c: DB['cases']; o: DB['organizations'] },
  'images' | 's' | 'c' | 'o'
>;
type CaseEb = ExpressionBuilder<DB & { s: DB['studies'] }, 'cases' | 's'>;

export interface ListWindow {
  limit?: number;
  offset?: number;
}

export interface ImListFilters {
  /** Trimmed; searched in the columns the user may view only (a search must not reveal a hidden value). */
  searchText?: string | undefined;
  studyIds: readonly number[];
  dateFilter?: ImDateFilter | null | undefined;
  now: Date;
  /** The columns searched (those the user may view); the selected columns when absent. */
  searchIn?: readonly string[] | undefined;
  /**
   * The search's candidate rows, fetched first (searchImageIds / searchCaseIds): with them the list
   * reads those rows by id; null or absent, it filters by the candidate subquery.
   */
  searchIds?: readonly number[] | null | undefined;
}

/**
 * Most candidate ids a search passes on by value. A broader search (a few characters, a study's
 * name) filters by the subquery: it reads most of the list anyway, and a scan is the right plan.
 */
export const MAX_SEARCH_IDS = 10_000;

/** Passes the fetched candidates on, or null when there are too many to pass by value. */
function cappedIds(rows: { id: number }[]): number[] | null {
  return rows.length > MAX_SEARCH_IDS ? null : rows.map((r) => r.id);
}

/** The first upload time a quick range keeps (server time), or null for All time. */
export function dateFloor(filter: ImDateFilter | null | undefined, now: Date): Date | null {
  if (!filter || filter === 'AllTime') return null;
  if (filter === 'Yesterday') {
    const start = new Date(now);
    start.setUTCHours(0, 0, 0, 0);
    start.setUTCDate(start.getUTCDate() - 1);
    return start;
  }
  return new Date(now.getTime() - IM_DATE_FILTER_DAYS[filter] * 86_400_000);
}

/**
 * Sort keys that are never null (NOT NULL columns, counts): ordered without NULLS LAST, the same
 * order, so that one btree (key, id) serves both directions (migration 0011). A nullable key keeps
 * NULLS LAST and has an index for each direction.
 */
const IMAGE_NEVER_NULL: ReadonlySet<string> = new Set<ImImageSortKey>(['imageFilename', 'uploadedAt', 'status']);
const CASE_NEVER_NULL: ReadonlySet<string> = new Set<ImCaseSortKey>(['caseCreatedAt', 'status', 'openQueries']);
const nullsLast = (neverNull: ReadonlySet<string>, key: string) => (neverNull.has(key) ? sql`` : sql` nulls last`);

// ---------------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------------

/** Each image column as SQL (a case's subject, site and visit win over the image's own). */
const IMAGE_SQL: Record<ImImageColumnKey, (eb: ImageEb) => Expression<unknown>> = {
  imageFilename: (eb) => eb.ref('images.name'),
  accessionNumber: (eb) => eb.ref('images.accession_number'),
  sponsor: (eb) => eb.ref('s.sponsor'),
  studyName: (eb) => eb.ref('s.name'),
  protocolId: (eb) => eb.ref('images.protocol_id'),
  siteId: (eb) => eb.fn.coalesce('c.site_id', 'images.site_id'),
  subjectId: (eb) => eb.fn.coalesce('c.subject_id', 'images.subject_id'),
  visitId: (eb) => eb.fn.coalesce('c.visit_id', 'images.visit_id'),
  labVisitId: (eb) => eb.ref('images.lab_visit_id'),
  histoProcedureId: (eb) => eb.ref('c.histo_procedure_id'),
  endoProcedureId: (eb) => eb.ref('c.proc_id'),
  anatomicalSegment: (eb) => eb.ref('images.biopsy_location'),
  specimenCollectionDate: (eb) => eb.fn.coalesce('images.specimen_collection_date', 'c.specimen_collection_date'),
  uploadedAt: (eb) => eb.ref('images.uploaded_at'),
  status: (eb) => eb.ref('images.status'),
  inQuery: (eb) =>
    eb.exists(
      eb
        .selectFrom('queries')
        .select('queries.id')
        .where('queries.object_type', '=', 'IMAGE')
        .whereRef('queries.object_id', '=', 'images.id')
        .where('queries.query_status', '=', 'OPEN'),
    ),
  organizationName: (eb) => eb.ref('o.name'),
  qaComments: (eb) => eb.ref('images.qa_comments'),
};

/** Text columns the search looks in (those the user may view). */
const IMAGE_SEARCHED: readonly ImImageColumnKey[] = [
  'imageFilename',
  'accessionNumber',
  'studyName',
  'protocolId',
  'siteId',
  'subjectId',
  'visitId',
  'labVisitId',
  'histoProcedureId',
  'endoProcedureId',
  'anatomicalSegment',
  'organizationName',
];

function imagesFrom(db: Q, principal: Principal) {
  const from = db
    .selectFrom('images')
    .leftJoin('studies as s', 's.id', 'images.study_id')
    .leftJoin('cases as c', 'c.id', 'images.case_id')
    .leftJoin('organizations as o', 'o.id', 'images.organization_id');
  // Who sees every study sees every image, those without a study too (sample data not yet
  // matched): no condition at all (a study_id always names a study), so that at 10^6 images the
  // planner walks a sort index instead of testing each row (issue 12, Scale).
  const scoped = principal.actions.has(VIEW_ALL_STUDIES)
    ? from
    : from.where(
        'images.study_id',
        'in',
        db.selectFrom('studies').select('studies.id').where(visibleStudies(principal)),
      );
  return scoped.where(readerSeesImage(principal));
}

export interface ImageListOptions extends ImListFilters, ListWindow {
  statuses: readonly ImageStatus[];
  columns: readonly ImImageColumnKey[];
  sort: ImImageSortKey;
  descending: boolean;
}

/** The searched text of an image row and of a case row: the expressions of the trigram indexes (0012). */
const imageSearchText = sql<string>`image_search_text(images.name, images.accession_number, images.protocol_id, images.site_id, images.subject_id, images.visit_id, images.lab_visit_id, images.biopsy_location)`;
const caseSearchText = sql<string>`case_search_text(cases.proc_id, cases.histo_procedure_id, cases.site_id, cases.subject_id, cases.visit_id)`;
/** Image columns whose values live on the image's case (a case's text match makes its images candidates). */
const CASE_VALUED: readonly ImImageColumnKey[] = [
  'siteId',
  'subjectId',
  'visitId',
  'histoProcedureId',
  'endoProcedureId',
];

/**
 * The images a search can match, from the trigram indexes: those whose own text contains it, and
 * (when the user searches those columns) the images of cases, studies and organizations whose text
 * contains it. A superset of the matches — the exact condition on each viewable column decides.
 */
function imageCandidates(db: Q, like: string, searched: readonly ImImageColumnKey[]) {
  let ids = db.selectFrom('images').select('images.id').where(imageSearchText, 'ilike', like);
  if (searched.some((key) => CASE_VALUED.includes(key)))
    ids = ids.union(
      db
        .selectFrom('images')
        .innerJoin('cases', 'cases.id', 'images.case_id')
        .select('images.id')
        .where(caseSearchText, 'ilike', like),
    );
  if (searched.includes('studyName'))
    ids = ids.union(
      db
        .selectFrom('images')
        .innerJoin('studies', 'studies.id', 'images.study_id')
        .select('images.id')
        .where('studies.name', 'ilike', like),
    );
  if (searched.includes('organizationName'))
    ids = ids.union(
      db
        .selectFrom('images')
        .innerJoin('organizations', 'organizations.id', 'images.organization_id')
        .select('images.id')
        .where('organizations.name', 'ilike', like),
    );
  return ids;
}

const searchedImageColumns = (options: ImListFilters & { columns: readonly string[] }) => {
  const visible = new Set<string>(options.searchIn ?? options.columns);
  return IMAGE_SEARCHED.filter((key) => visible.has(key));
};

/**
 * The candidate images of a list's search, by id (at most MAX_SEARCH_IDS), or null. Fetched first,
 * they let the planner read a few thousand rows by key instead of guessing the size of a trigram
 * match (it guesses 100, then hash-joins the whole image table against them: 2–5 s at 10^6).
 */
export async function searchImageIds(
  db: Q,
  options: ImListFilters & { columns: readonly string[] },
): Promise<number[] | null> {
  if (!options.searchText) return null;
  const rows = await imageCandidates(db, likeContains(options.searchText), searchedImageColumns(options))
    .limit(MAX_SEARCH_IDS + 1)
    .execute();
  return cappedIds(rows);
}

function filteredImages(db: Q, principal: Principal, options: Omit<ImageListOptions, 'sort' | 'descending'>) {
  let query = imagesFrom(db, principal);
  if (options.searchText) {
    const like = likeContains(options.searchText);
    const searched = searchedImageColumns(options);
    const ids = options.searchIds;
    query = (
      ids === null || ids === undefined
        ? query.where('images.id', 'in', imageCandidates(db, like, searched))
        : ids.length === 0
          ? query.where(sql<boolean>`false`)
          : query.where('images.id', 'in', [...ids])
    ).where((eb) => eb.or(searched.map((key) => eb(sql`${IMAGE_SQL[key](eb as ImageEb)}::text`, 'ilike', like))));
  }
  if (options.studyIds.length > 0) query = query.where('images.study_id', 'in', [...options.studyIds]);
  const floor = dateFloor(options.dateFilter, options.now);
  if (floor) query = query.where('images.uploaded_at', '>=', floor);
  // Archived images only when asked for by their status.
  query =
    options.statuses.length > 0
      ? query.where('images.status', 'in', [...options.statuses])
      : query.where('images.status', '!=', 'ARCHIVED');
  return query;
}

/** The filtered image list in its order (nulls last, then by id), every row: a page of it, or the export. */
export function imagesQuery(db: Q, principal: Principal, options: ImageListOptions) {
  const direction = options.descending ? 'desc' : 'asc';
  return filteredImages(db, principal, options)
    .select((eb) => [
      'images.id',
      'images.study_id',
      'images.case_id',
      ...options.columns.map((key) => aliased(IMAGE_SQL[key](eb as ImageEb), key)),
    ])
    .orderBy(
      (eb) =>
        sql`(${IMAGE_SQL[options.sort](eb as ImageEb)}) ${sql.raw(direction)}${nullsLast(IMAGE_NEVER_NULL, options.sort)}`,
    )
    .orderBy('images.id', direction)
    .$castTo<ImageRecordRow>();
}

/**
 * The total of an image list filtered by nothing but studies and statuses (the page as it opens),
 * summed from image_status_counts (migration 0011, kept by a trigger) instead of counting up to
 * 10^6 rows; undefined when a search or a date filter applies (those are counted), or for a reader.
 */
async function countedImageTotal(
  db: Q,
  principal: Principal,
  options: Omit<ImageListOptions, 'sort' | 'descending'>,
): Promise<number | undefined> {
  if (options.searchText || dateFloor(options.dateFilter, options.now)) return undefined;
  if (readsAssignedCasesOnly(principal.workAsRole)) return undefined;
  const visible = principal.actions.has(VIEW_ALL_STUDIES)
    ? sql`true` // study_key 0 (no study) included
    : sql`study_key in (${db.selectFrom('studies').select('studies.id').where(visibleStudies(principal))})`;
  const chosen = options.studyIds.length > 0 ? sql`study_key in (${sql.join([...options.studyIds])})` : sql`true`;
  const statuses =
    options.statuses.length > 0 ? sql`status in (${sql.join([...options.statuses])})` : sql`status <> 'ARCHIVED'`;
  const { rows } = await sql<{ n: number }>`
    select coalesce(sum(n), 0)::int as n from image_status_counts
    where ${visible} and ${chosen} and ${statuses}`.execute(db);
  return rows[0]?.n ?? 0;
}

/** One page of the image list, with the total of the filtered list. */
export async function listImages(db: Q, principal: Principal, options: ImageListOptions) {
  const base = filteredImages(db, principal, options);
  // The page's ids first (only the sort key is computed for the rows an offset skips), then the
  // columns — subqueries included — of those rows alone.
  let ids = imagesQuery(db, principal, { ...options, columns: [] });
  if (options.limit !== undefined) ids = ids.limit(options.limit);
  if (options.offset) ids = ids.offset(options.offset);
  const page = imagesQuery(db, principal, options).where(
    'images.id',
    'in',
    db.selectFrom(ids.as('page')).select('page.id'),
  );
  const [rows, total] = await Promise.all([
    page.execute(),
    countedImageTotal(db, principal, options).then(
      async (n) => n ?? (await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n,
    ),
  ]);
  return { rows, total };
}

/** One image's row (the one-row refresh), or undefined when it is not visible. */
export async function imageRecord(db: Q, principal: Principal, imageId: number, columns: readonly ImImageColumnKey[]) {
  const row = await imagesFrom(db, principal)
    .select((eb) => [
      'images.id',
      'images.study_id',
      'images.case_id',
      ...columns.map((key) => aliased(IMAGE_SQL[key](eb as ImageEb), key)),
    ])
    .where('images.id', '=', imageId)
    .executeTakeFirst();
  return row as unknown as ImageRecordRow | undefined;
}

export type ImageRecordRow = { id: number; study_id: number | null; case_id: number | null } & Partial<
  Record<ImImageColumnKey, unknown>
>;

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

const liveImages = (eb: CaseEb) =>
  eb
    .selectFrom('images')
    .select(sql<number>`count(*)::int`.as('n'))
    .whereRef('images.case_id', '=', 'cases.id')
    .where('images.status', '!=', 'ARCHIVED');

const userList = (eb: CaseEb, column: 'cases.qc1_by' | 'cases.qc2_by') =>
  eb
    .selectFrom('users')
    .select(
      sql`coalesce(json_agg(json_build_object('id', users.id, 'username', users.username, 'firstName', users.first_name, 'lastName', users.last_name)), '[]'::json)`.as(
        'list',
      ),
    )
    .whereRef('users.id', '=', column);

/** Each case column as SQL. */
const CASE_SQL: Record<ImCaseColumnKey, (eb: CaseEb) => Expression<unknown>> = {
  histoProcedureId: (eb) => eb.ref('cases.histo_procedure_id'),
  procId: (eb) => eb.ref('cases.proc_id'),
  studyName: (eb) => eb.ref('s.name'),
  siteId: (eb) => eb.ref('cases.site_id'),
  subjectId: (eb) => eb.ref('cases.subject_id'),
  visitId: (eb) => eb.ref('cases.visit_id'),
  caseCreatedAt: (eb) => eb.ref('cases.created_at'),
  imagesExpected: (eb) => eb.ref('cases.images_expected'),
  totalImages: liveImages,
  status: (eb) => eb.ref('cases.status'),
  // Kept on the case by a trigger on queries (migration 0013): its own and its images' open queries.
  openQueries: (eb) => eb.ref('cases.open_queries'),
  labTech: (eb) => userList(eb, 'cases.qc1_by'),
  iscQc: (eb) => userList(eb, 'cases.qc2_by'),
  crAssignments: (eb) =>
    eb
      .selectFrom('case_readers')
      .innerJoin('users', 'users.id', 'case_readers.user_id')
      .select(
        sql`coalesce(json_agg(json_build_object('username', users.username, 'firstName', users.first_name, 'lastName', users.last_name) order by users.username), '[]'::json)`.as(
          'list',
        ),
      )
      .whereRef('case_readers.case_id', '=', 'cases.id'),
};

const CASE_SEARCHED: readonly ImCaseColumnKey[] = [
  'histoProcedureId',
  'procId',
  'studyName',
  'siteId',
  'subjectId',
  'visitId',
];

function casesFrom(db: Q, principal: Principal) {
  const from = db.selectFrom('cases').innerJoin('studies as s', 's.id', 'cases.study_id');
  // Every study: no condition (as for images).
  const scoped = principal.actions.has(VIEW_ALL_STUDIES)
    ? from
    : from.where(
        'cases.study_id',
        'in',
        db.selectFrom('studies').select('studies.id').where(visibleStudies(principal)),
      );
  return scoped.where(readerSeesCase(principal));
}

export interface CaseListOptions extends ImListFilters, ListWindow {
  statuses: readonly CaseStatus[];
  columns: readonly ImCaseColumnKey[];
  sort: ImCaseSortKey;
  descending: boolean;
}

const searchedCaseColumns = (options: ImListFilters & { columns: readonly string[] }) => {
  const visible = new Set<string>(options.searchIn ?? options.columns);
  return CASE_SEARCHED.filter((key) => visible.has(key));
};

/**
 * The cases a search can match, from the trigram indexes (the case's text, its study's name): a
 * superset; the exact, permission-aware condition decides.
 */
function caseCandidates(db: Q, like: string, searched: readonly ImCaseColumnKey[]) {
  const ids = db.selectFrom('cases').select('cases.id').where(caseSearchText, 'ilike', like);
  return searched.includes('studyName')
    ? ids.union(
        db
          .selectFrom('cases')
          .innerJoin('studies', 'studies.id', 'cases.study_id')
          .select('cases.id')
          .where('studies.name', 'ilike', like),
      )
    : ids;
}

/** The candidate cases of a list's search, by id (at most MAX_SEARCH_IDS), or null. */
export async function searchCaseIds(
  db: Q,
  options: ImListFilters & { columns: readonly string[] },
): Promise<number[] | null> {
  if (!options.searchText) return null;
  const rows = await caseCandidates(db, likeContains(options.searchText), searchedCaseColumns(options))
    .limit(MAX_SEARCH_IDS + 1)
    .execute();
  return cappedIds(rows);
}

function filteredCases(db: Q, principal: Principal, options: Omit<CaseListOptions, 'sort' | 'descending'>) {
  let query = casesFrom(db, principal);
  if (options.searchText) {
    const like = likeContains(options.searchText);
    const searched = searchedCaseColumns(options);
    const ids = options.searchIds;
    query = (
      ids === null || ids === undefined
        ? query.where('cases.id', 'in', caseCandidates(db, like, searched))
        : ids.length === 0
          ? query.where(sql<boolean>`false`)
          : query.where('cases.id', 'in', [...ids])
    ).where((eb) => eb.or(searched.map((key) => eb(sql`${CASE_SQL[key](eb as CaseEb)}::text`, 'ilike', like))));
  }
  if (options.studyIds.length > 0) query = query.where('cases.study_id', 'in', [...options.studyIds]);
  // Upload Date of a case: when it was created.
  const floor = dateFloor(options.dateFilter, options.now);
  if (floor) query = query.where('cases.created_at', '>=', floor);
  query =
    options.statuses.length > 0
      ? query.where('cases.status', 'in', [...options.statuses])
      : query.where('cases.status', '!=', 'ARCHIVED');
  return query;
}

const caseColumns = (eb: CaseEb, columns: readonly ImCaseColumnKey[]) => [
  'cases.id as case_id' as const,
  'cases.study_id' as const,
  'cases.prev_workflow_statuses' as const,
  ...columns.map((key) => aliased(CASE_SQL[key](eb), key)),
];

/** The filtered case list in its order, every row: a page of it, or the export. */
export function casesQuery(db: Q, principal: Principal, options: CaseListOptions) {
  const direction = options.descending ? 'desc' : 'asc';
  return filteredCases(db, principal, options)
    .select((eb) => caseColumns(eb as CaseEb, options.columns))
    .orderBy(
      (eb) =>
        sql`(${CASE_SQL[options.sort](eb as CaseEb)}) ${sql.raw(direction)}${nullsLast(CASE_NEVER_NULL, options.sort)}`,
    )
    .orderBy('cases.id', direction)
    .$castTo<CaseRecordRow>();
}

export async function listCases(db: Q, principal: Principal, options: CaseListOptions) {
  const base = filteredCases(db, principal, options);
  // The page's ids, then its columns (as for images): the counted and listed columns of a case
  // are subqueries, which an offset would otherwise run for every row it skips.
  let ids = casesQuery(db, principal, { ...options, columns: [] });
  if (options.limit !== undefined) ids = ids.limit(options.limit);
  if (options.offset) ids = ids.offset(options.offset);
  const page = casesQuery(db, principal, options).where(
    'cases.id',
    'in',
    db.selectFrom(ids.as('page')).select('page.case_id'),
  );
  const [rows, total] = await Promise.all([
    page.execute(),
    base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.n };
}

export async function caseRecord(db: Q, principal: Principal, caseId: number, columns: readonly ImCaseColumnKey[]) {
  const row = await casesFrom(db, principal)
    .select((eb) => caseColumns(eb as CaseEb, columns))
    .where('cases.id', '=', caseId)
    .executeTakeFirst();
  return row as unknown as CaseRecordRow | undefined;
}

export type CaseRecordRow = { case_id: number; study_id: number; prev_workflow_statuses: string[] } & Partial<
  Record<ImCaseColumnKey, unknown>
>;
