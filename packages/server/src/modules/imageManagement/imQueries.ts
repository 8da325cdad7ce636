import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
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
import { readerSeesCase, readerSeesImage } from '../../access/readerVisibility.js';

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
   * The case list's search candidates, fetched first (searchCaseIds): with them the list reads
   * those rows by id; null or absent, it filters by the candidate subquery.
   */
  searchIds?: readonly number[] | null | undefined;
}

/**
 * Most candidate ids a case search passes on by value. A broader search (a few characters, a
 * study's name) filters by the subquery: it reads most of the list anyway, and a scan is the right plan.
 */
export const MAX_SEARCH_IDS = 10_000;

/** Passes the fetched candidates on, or null when there are too many to pass by value. */
function cappedIds(rows: { id: number }[]): number[] | null {
  return rows.length > MAX_SEARCH_IDS ? null : rows.map((r) => r.id);
}

/**
 * `column = any(ids)`: the candidates as one array parameter — thousands of `in ($1, …)`
 * parameters cost the planner 10–20 ms.
 */
const idIn = (column: 'images.id' | 'cases.id', ids: readonly number[]) =>
  sql<SqlBool>`${sql.ref(column)} = any(${[...ids]}::int[])`;

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

/**
 * Sort keys whose value lives on another table (the study, the case, the organization): the list
 * is ordered by the image's copy of that value (migration 0015: sort columns kept by triggers, the
 * same value the column shows, coalesce rules included), so that an index gives the order instead
 * of a join of every visible row. The shown value is still the joined one.
 */
const IMAGE_SORT_COLUMNS = {
  sponsor: 'images.sort_sponsor',
  studyName: 'images.sort_study_name',
  organizationName: 'images.sort_organization',
  siteId: 'images.sort_site_id',
  subjectId: 'images.sort_subject_id',
  visitId: 'images.sort_visit_id',
  histoProcedureId: 'images.sort_histo_procedure_id',
  endoProcedureId: 'images.sort_proc_id',
  specimenCollectionDate: 'images.sort_collection_date',
} as const satisfies Partial<Record<ImImageSortKey, `images.${keyof DB['images']}`>>;

/**
 * A column's value as the image row holds it: its sort column when the value lives on another
 * table (the same value), else the column's SQL. What the list sorts by and searches in, so that
 * neither needs the joins.
 */
const imageRowSql = (key: ImImageColumnKey, eb: ImageEb): Expression<unknown> =>
  key in IMAGE_SORT_COLUMNS ? eb.ref(IMAGE_SORT_COLUMNS[key as keyof typeof IMAGE_SORT_COLUMNS]) : IMAGE_SQL[key](eb);

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

/**
 * The studies a list is restricted to, by id: those the user may see, narrowed by the study filter;
 * null when the list has no such restriction (who sees every study, without a study filter: every
 * image, those without a study too).
 */
export async function listStudyIds(db: Q, principal: Principal, studyIds: readonly number[]): Promise<number[] | null> {
  if (principal.actions.has(VIEW_ALL_STUDIES)) return studyIds.length > 0 ? [...new Set(studyIds)] : null;
  let query = db.selectFrom('studies').select('studies.id').where(visibleStudies(principal));
  if (studyIds.length > 0) query = query.where('studies.id', 'in', [...studyIds]);
  return (await query.orderBy('studies.id').execute()).map((r) => r.id);
}

/**
 * The images a user may list, without the joins of the shown columns: what a list filters and
 * orders by is all on the image row (its sort columns included), so that the page's ids and the
 * total are read from the image table alone — with a join, even one the planner removes (a case
 * never referenced), PostgreSQL 15 no longer reads the ids from an index alone.
 */
function imagesFrom(db: Q, principal: Principal, studies?: readonly number[] | null) {
  const from = db.selectFrom('images');
  // Who sees every study sees every image, those without a study too (sample data not yet
  // matched): no condition at all (a study_id always names a study), so that at 10^6 images the
  // planner walks a sort index instead of testing each row (issue 12, Scale). Others: their
  // studies — by value when the list fetched them (listStudyIds): the planner then reads the
  // images of those studies at once instead of one study at a time.
  const scoped = principal.actions.has(VIEW_ALL_STUDIES)
    ? from
    : studies
      ? from.where(sql<SqlBool>`images.study_id = any(${[...studies]}::int[])`)
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

/**
 * The searched text of an image row (migration 0015): every searched column as the row holds it,
 * the case's IDs and the study's and organization's names included (the sort columns), so that
 * one trigram index gives a search's candidates. The expression of that index.
 */
const imageSearchText = sql<string>`image_row_search_text(images.name, images.accession_number, images.protocol_id, images.sort_site_id, images.sort_subject_id, images.sort_visit_id, images.lab_visit_id, images.biopsy_location, images.sort_histo_procedure_id, images.sort_proc_id, images.sort_study_name, images.sort_organization)`;
/** The searched text of a case row: the expression of its trigram index (0012). */
const caseSearchText = sql<string>`case_search_text(cases.proc_id, cases.histo_procedure_id, cases.site_id, cases.subject_id, cases.visit_id)`;

const searchedImageColumns = (options: ImListFilters & { columns: readonly string[] }) => {
  const visible = new Set<string>(options.searchIn ?? options.columns);
  return IMAGE_SEARCHED.filter((key) => visible.has(key));
};

function filteredImages(
  db: Q,
  principal: Principal,
  options: Omit<ImageListOptions, 'sort' | 'descending'>,
  studies?: readonly number[] | null,
) {
  let query = imagesFrom(db, principal, studies);
  if (options.searchText) {
    // The row's searched text (a trigram index, all columns) gives the candidates; the exact,
    // permission-aware condition on each viewable column decides. That text joins every searched
    // column with a space, so a text without one matches it exactly when it matches one of them:
    // for a user who may view them all, the index's own condition is the exact one, and testing
    // each column again (the most time of a 6 000-row search) is left out.
    const like = likeContains(options.searchText);
    const searched = searchedImageColumns(options);
    query = query.where(imageSearchText, 'ilike', like);
    if (searched.length < IMAGE_SEARCHED.length || options.searchText.includes(' '))
      query = query.where((eb) =>
        eb.or(searched.map((key) => eb(sql`${imageRowSql(key, eb as ImageEb)}::text`, 'ilike', like))),
      );
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

/** The list's order by its sort key, before the id (nulls last, unless the key is never null). */
const imageOrder = (options: Pick<ImageListOptions, 'sort' | 'descending'>) => (eb: unknown) =>
  sql`(${imageRowSql(options.sort, eb as ImageEb)}) ${sql.raw(options.descending ? 'desc' : 'asc')}${nullsLast(IMAGE_NEVER_NULL, options.sort)}`;

/** The tables of the shown columns that are not the image's own. */
function withJoins(query: ReturnType<typeof imagesFrom>) {
  return query
    .leftJoin('studies as s', 's.id', 'images.study_id')
    .leftJoin('cases as c', 'c.id', 'images.case_id')
    .leftJoin('organizations as o', 'o.id', 'images.organization_id');
}

/** The shown columns of a query's images, in the list's order. */
function imageColumns(query: ReturnType<typeof imagesFrom>, options: ImageListOptions) {
  return withJoins(query)
    .select((eb) => [
      'images.id',
      'images.study_id',
      'images.case_id',
      // What the edit rule needs (imImageEditRefusals), viewed or not; the presenter sends none of it.
      'images.status as edit_status',
      ...options.columns.map((key) => aliased(IMAGE_SQL[key](eb as ImageEb), key)),
    ])
    .orderBy(imageOrder(options))
    .orderBy('images.id', options.descending ? 'desc' : 'asc')
    .$castTo<ImageRecordRow>();
}

/** The filtered image list in its order (nulls last, then by id), every row: the export. */
export function imagesQuery(db: Q, principal: Principal, options: ImageListOptions) {
  return imageColumns(filteredImages(db, principal, options), options);
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

/**
 * Sort keys a list of a few studies takes study by study, from per-study indexes (migration 0015),
 * merging the studies' pages: the images of one study come late in the whole table's order by
 * these (a study's protocol, its segments, its name and sponsor), so a walk of a global index
 * would pass every other study's images first; and a deep page by upload date reads only the
 * rows it skips. 'key': a study's images in the key's order (an index (study_id, key, id));
 * 'id': the value is the study's own, the same for all its images, which are then in id order.
 */
const PER_STUDY_ORDER: Partial<Record<ImImageSortKey, 'key' | 'id'>> = {
  uploadedAt: 'key',
  protocolId: 'key',
  anatomicalSegment: 'key',
  sponsor: 'id',
  studyName: 'id',
};

/** Most studies whose pages are merged (each is a branch the planner plans). */
const MAX_MERGED_STUDIES = 50;

/**
 * The ids of one page in the list's order. A list of a few studies sorted by a per-study key is
 * a merge of each study's first rows (UNION ALL of per-study index scans, each limited to the
 * rows the page needs, merged in order: PostgreSQL's Merge Append); any other list walks its
 * order over the whole table, filtered.
 */
function pageIds(
  db: Q,
  principal: Principal,
  options: ImageListOptions,
  studies: readonly number[] | null,
): Expression<number> {
  const perStudy = PER_STUDY_ORDER[options.sort];
  const limit = options.limit;
  if (
    perStudy &&
    limit !== undefined &&
    !options.searchText &&
    studies !== null &&
    studies.length > 0 &&
    studies.length <= MAX_MERGED_STUDIES
  ) {
    const direction = sql.raw(options.descending ? 'desc' : 'asc');
    const nulls = nullsLast(IMAGE_NEVER_NULL, options.sort);
    const needed = (options.offset ?? 0) + limit;
    const branches = studies.map((studyId) =>
      filteredImages(db, principal, options, studies)
        .where('images.study_id', '=', studyId)
        .select((eb) => ['images.id', aliased(imageRowSql(options.sort, eb as ImageEb), 'k')])
        .$if(perStudy === 'key', (q) => q.orderBy(imageOrder(options)))
        .orderBy(sql`images.id ${direction}`)
        .limit(needed),
    );
    const merged = db
      .selectFrom(sql<{ id: number; k: unknown }>`(${sql.join(branches, sql` union all `)})`.as('merged'))
      .select('merged.id')
      .orderBy(sql`merged.k ${direction}${nulls}`)
      .orderBy(sql`merged.id ${direction}`)
      .limit(limit)
      .offset(options.offset ?? 0);
    return merged.$asScalar();
  }
  const direction = options.descending ? 'desc' : 'asc';
  let ids = filteredImages(db, principal, options, studies)
    .select('images.id')
    .orderBy(imageOrder(options))
    .orderBy('images.id', direction);
  if (limit !== undefined) ids = ids.limit(limit);
  if (options.offset) ids = ids.offset(options.offset);
  return ids.$asScalar();
}

/** One page of the image list, with the total of the filtered list. */
export async function listImages(db: Q, principal: Principal, options: ImageListOptions) {
  const studies = await listStudyIds(db, principal, options.studyIds);
  const base = filteredImages(db, principal, options, studies);
  const count = async () => (await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
  // The page's ids first (only the sort key is computed for the rows an offset skips), then the
  // columns — subqueries included — of those rows alone (in the user's scope; the ids met every
  // filter already).
  const rowsOf = (ids: Expression<SqlBool>) => imageColumns(imagesFrom(db, principal).where(ids), options).execute();
  if (options.searchText) {
    // A search's rows are few (its trigram candidates): they are gathered once (a materialized
    // CTE, read through the trigram index), then counted and the page taken from them — instead of
    // a page query and a count that each test them all. Not `count(*) over ()` beside a LIMIT:
    // the planner costs that as if the first rows came early, and walked the whole upload-date
    // index testing each row (10^6 rows, 3–4 s) where the index gives 9 000 candidates.
    const direction = sql.raw(options.descending ? 'desc' : 'asc');
    const nulls = nullsLast(IMAGE_NEVER_NULL, options.sort);
    let ids = db
      .with(
        (w) => w('matches').materialized(),
        () => base.select((eb) => ['images.id', aliased(imageRowSql(options.sort, eb as ImageEb), 'k')]),
      )
      .selectFrom('matches')
      .select(['matches.id', sql<number>`(select count(*)::int from matches)`.as('total')])
      .orderBy(sql`matches.k ${direction}${nulls}`)
      .orderBy(sql`matches.id ${direction}`);
    if (options.limit !== undefined) ids = ids.limit(options.limit);
    if (options.offset) ids = ids.offset(options.offset);
    const page = await ids.execute();
    const total = page[0] ? page[0].total : await count();
    return {
      rows:
        page.length > 0
          ? await rowsOf(
              idIn(
                'images.id',
                page.map((r) => r.id),
              ),
            )
          : [],
      total,
    };
  }
  const ids = pageIds(db, principal, options, studies);
  const [rows, total] = await Promise.all([
    rowsOf(sql<SqlBool>`images.id in (${ids})`),
    countedImageTotal(db, principal, options).then(async (n) => n ?? (await count())),
  ]);
  return { rows, total };
}

/** One image's row (the one-row refresh), or undefined when it is not visible. */
export async function imageRecord(db: Q, principal: Principal, imageId: number, columns: readonly ImImageColumnKey[]) {
  const row = await withJoins(imagesFrom(db, principal))
    .select((eb) => [
      'images.id',
      'images.study_id',
      'images.case_id',
      'images.status as edit_status',
      ...columns.map((key) => aliased(IMAGE_SQL[key](eb as ImageEb), key)),
    ])
    .where('images.id', '=', imageId)
    .executeTakeFirst();
  return row as unknown as ImageRecordRow | undefined;
}

export type ImageRecordRow = {
  id: number;
  study_id: number | null;
  case_id: number | null;
  /** The image's status for the edit rule, whether or not the user may view the Status column. */
  edit_status: string;
} & Partial<Record<ImImageColumnKey, unknown>>;

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
          : query.where(idIn('cases.id', ids))
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
