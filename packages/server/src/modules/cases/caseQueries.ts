import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import {
  READER_ROLES,
  readsAssignedCasesOnly,
  roleByName,
  type CaseStatus,
  type StudyCaseSortKey,
} from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { likeContains } from '../../platform/db/paging.js';
import type { Principal } from '../../platform/auth/principal.js';
import { historyAsSeen, readerSeesCase, readerSeesImage, statusAsSeen } from '../../access/readerVisibility.js';
import { inQueryChain } from '../images/queryChain.js';
import { casePosition } from '../../access/imageLabel.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';

/** Queries of the cases module: SQL only (the rules live in caseService.ts and the domain package). */
type Q = Kysely<DB>;

const count = (name: string) => sql<number>`count(*)::int`.as(name);

/**
 * One case with its study name and QC users; the caller's scope has already checked visibility. Its
 * status and history as the principal sees them (statusAsSeen).
 */
export function selectCase(db: Q, caseId: number, principal: Principal) {
  return db
    .selectFrom('cases')
    .innerJoin('studies', 'studies.id', 'cases.study_id')
    .leftJoin('users as qc1', 'qc1.id', 'cases.qc1_by')
    .leftJoin('users as qc2', 'qc2.id', 'cases.qc2_by')
    .leftJoin('users as reader', 'reader.id', 'cases.read_by')
    .select([
      'cases.id',
      'cases.study_id',
      'studies.name as study_name',
      'cases.proc_id',
      'cases.histo_procedure_id',
      'cases.subject_id',
      'cases.site_id',
      'cases.visit_id',
      (eb) => statusAsSeen(principal)(eb).as('status'),
      'cases.on_hold_from',
      (eb) => historyAsSeen(principal)(eb).as('prev_workflow_statuses'),
      'cases.case_status_reverted',
      'cases.created_at',
      'cases.qc_completed_at',
      'cases.read_completed_at',
      'cases.qc1_by',
      'qc1.username as qc1_username',
      'qc1.first_name as qc1_first_name',
      'qc1.last_name as qc1_last_name',
      'cases.qc2_by',
      'qc2.username as qc2_username',
      'qc2.first_name as qc2_first_name',
      'qc2.last_name as qc2_last_name',
      'cases.read_by',
      'reader.username as read_by_username',
      'reader.first_name as read_by_first_name',
      'reader.last_name as read_by_last_name',
      'cases.open_queries',
    ])
    .where('cases.id', '=', caseId)
    .executeTakeFirst();
}
export type CaseRow = NonNullable<Awaited<ReturnType<typeof selectCase>>>;

/**
 * The latest comment of a case `principal` may see, with its author: a blinded reader sees their own
 * comments and those of users who are not blinded, never another reader's (issue 26).
 */
export async function latestCaseComment(db: Q, caseId: number, principal: Pick<Principal, 'id' | 'workAsRole'>) {
  return (
    (await db
      .selectFrom('case_comments')
      .leftJoin('users', 'users.id', 'case_comments.user_id')
      .select([
        'case_comments.comment',
        'case_comments.image_id',
        'case_comments.created_at',
        'users.username',
        'users.first_name',
        'users.last_name',
      ])
      .where('case_comments.case_id', '=', caseId)
      .where((eb) =>
        readsAssignedCasesOnly(principal.workAsRole)
          ? eb.or([eb('case_comments.by_reader', '=', false), eb('case_comments.user_id', '=', principal.id)])
          : eb.lit(true),
      )
      .orderBy('case_comments.id', 'desc')
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}
export type CaseCommentRow = NonNullable<Awaited<ReturnType<typeof latestCaseComment>>>;

/** A reader's (`users.id`) case assignments in a study, counted; callers narrow them. */
function assignmentsIn(eb: ExpressionBuilder<DB, 'users'>, studyId: number) {
  return eb
    .selectFrom('case_readers')
    .innerJoin('cases', 'cases.id', 'case_readers.case_id')
    .select(count('n'))
    .whereRef('case_readers.user_id', '=', 'users.id')
    .where('cases.study_id', '=', studyId);
}

/**
 * Readers with their study-wide counts: cases assigned in the study (not archived) and those they
 * have read. `where` narrows the users (a case's readers, a study's readers, a name search).
 */
function readersWithCounts(db: Q, studyId: number) {
  return db
    .selectFrom('users')
    .select((eb) => [
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      assignmentsIn(eb, studyId).where('cases.status', '!=', 'ARCHIVED').as('num_total_cases'),
      assignmentsIn(eb, studyId)
        .where('cases.status', '!=', 'ARCHIVED')
        .where('case_readers.read_at', 'is not', null)
        .as('num_read_cases'),
    ]);
}
export type ReaderRow = {
  id: number;
  username: string;
  first_name: string | null;
  last_name: string | null;
  num_total_cases: number | null;
  num_read_cases: number | null;
  read_at?: Date | null;
};

/** The readers assigned to a case, in assignment order, its adjudicator (issue 30) last. */
export async function caseReaders(db: Q, caseId: number, studyId: number) {
  return readersWithCounts(db, studyId)
    .innerJoin('case_readers as cr', 'cr.user_id', 'users.id')
    .select(['cr.read_at', 'cr.assigned_at', 'cr.role'])
    .where('cr.case_id', '=', caseId)
    .orderBy(sql`cr.role = 'ADJUDICATOR'`)
    .orderBy('cr.assigned_at')
    .orderBy('users.id')
    .execute();
}

/** Users holding a reader role in the study (active, registered), optionally by name. */
function studyReaderFilter(eb: ExpressionBuilder<DB, 'users'>, studyId: number) {
  return eb.and([
    eb('users.active', '=', true),
    eb('users.registered', '=', true),
    eb.exists(
      eb
        .selectFrom('study_access')
        .select('study_access.user_id')
        .whereRef('study_access.user_id', '=', 'users.id')
        .where('study_access.study_id', '=', studyId)
        .where(
          'study_access.role_id',
          'in',
          READER_ROLES.map((role) => roleByName(role).id),
        ),
    ),
  ]);
}

/** GET /api/studies/{studyId}/users?name: the study's readers whose name or username contains the text. */
export async function searchStudyReaders(db: Q, studyId: number, name: string | undefined): Promise<ReaderRow[]> {
  let query = readersWithCounts(db, studyId).where((eb) => studyReaderFilter(eb, studyId));
  if (name) {
    const like = likeContains(name);
    query = query.where((eb) =>
      eb.or([
        eb('users.username', 'ilike', like),
        eb('users.first_name', 'ilike', like),
        eb('users.last_name', 'ilike', like),
        eb(sql`coalesce(users.first_name, '') || ' ' || coalesce(users.last_name, '')`, 'ilike', like),
      ]),
    );
  }
  return query.orderBy('users.last_name').orderBy('users.first_name').orderBy('users.id').limit(50).execute();
}

/** Which of `ids` are readers of the study (the server's check of a case's reader list). */
export async function readersInStudy(db: Q, studyId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('users')
    .select('users.id')
    .where('users.id', 'in', [...ids])
    .where((eb) => studyReaderFilter(eb, studyId))
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * GET /api/users/suggest-readers: the study's readers, first those who already read (or are
 * assigned) this subject's other cases — the same reader across a subject's visits — then by fewest
 * open assignments in the study, then by name.
 */
export async function suggestReaders(db: Q, studyId: number, subjectId: string | undefined): Promise<ReaderRow[]> {
  return readersWithCounts(db, studyId)
    .select((eb) => [
      assignmentsIn(eb, studyId)
        .where('cases.status', '!=', 'ARCHIVED')
        .where('cases.subject_id', '=', subjectId ?? '')
        .as('subject_cases'),
      assignmentsIn(eb, studyId)
        .where('cases.status', 'not in', ['ARCHIVED', 'COMPLETED', 'INVALID'])
        .where('case_readers.read_at', 'is', null)
        .as('open_assignments'),
    ])
    .where((eb) => studyReaderFilter(eb, studyId))
    .orderBy('subject_cases', 'desc')
    .orderBy('open_assignments')
    .orderBy('users.last_name')
    .orderBy('users.id')
    .limit(20)
    .execute();
}

/** The columns of a CaseImage (casePresenter.presentCaseImage), with inQueryChain's `in_query_chain`. */
const CASE_IMAGE_COLUMNS = [
  'images.id',
  'images.name',
  'images.status',
  'images.accession_number',
  'images.biopsy_location',
  'images.uploaded_at',
  'images.cog_key',
  'images.ignored',
] as const;

/** The live images of a case a principal may see (blinded readers: not those hidden from readers). */
export async function caseImages(db: Q, caseId: number, principal: Principal) {
  return db
    .selectFrom('images')
    .select((eb) => [
      ...CASE_IMAGE_COLUMNS,
      inQueryChain(eb).as('in_query_chain'),
      // The image's place among the case's live images (the neutral label), as the viewer counts it.
      casePosition('images').as('case_position'),
    ])
    .where('images.case_id', '=', caseId)
    .where('images.status', '!=', 'ARCHIVED')
    .where(readerSeesImage(principal))
    .orderBy('images.id')
    .execute();
}
export type CaseImageRow = Awaited<ReturnType<typeof caseImages>>[number];

/**
 * GET /api/studies/{studyId}/cases/images: images of the study that may join a case (waiting for
 * one), by id or file name, without the excluded ids (those already chosen in the dialog).
 */
export async function assignableImages(
  db: Q,
  studyId: number,
  filter: { id?: number | undefined; name?: string | undefined; exclude: number[]; searchNames: boolean },
) {
  let query = db
    .selectFrom('images')
    .select((eb) => [...CASE_IMAGE_COLUMNS, inQueryChain(eb).as('in_query_chain')])
    .where('images.study_id', '=', studyId)
    .where('images.case_id', 'is', null)
    .where('images.status', '=', 'CASE_ASSIGNMENT_PENDING');
  if (filter.id !== undefined) query = query.where('images.id', '=', filter.id);
  if (filter.name && filter.searchNames) query = query.where('images.name', 'ilike', likeContains(filter.name));
  if (filter.exclude.length > 0) query = query.where('images.id', 'not in', filter.exclude);
  return query.orderBy('images.uploaded_at', 'desc').orderBy('images.id', 'desc').limit(100).execute();
}

/** GET /api/cases?studyId&searchText: cases of a study by procedure, subject, site or visit ID. */
export async function searchCases(
  db: Q,
  principal: Principal,
  filter: { studyId: number; text?: string | undefined; statuses?: readonly CaseStatus[]; blindedFields: boolean },
) {
  let query = db
    .selectFrom('cases')
    .select([
      'cases.id',
      'cases.proc_id',
      'cases.subject_id',
      'cases.site_id',
      'cases.visit_id',
      'cases.status',
      'cases.created_at',
    ])
    .where('cases.study_id', '=', filter.studyId)
    .where('cases.status', '!=', 'ARCHIVED')
    .where(readerSeesCase(principal));
  if (filter.statuses) query = query.where('cases.status', 'in', [...filter.statuses]);
  if (filter.text) {
    const like = likeContains(filter.text);
    query = query.where((eb) =>
      eb.or([
        eb('cases.proc_id', 'ilike', like),
        eb('cases.histo_procedure_id', 'ilike', like),
        // Blinded fields are never searched for a user who may not see them: a match would reveal them.
        ...(filter.blindedFields
          ? [
              eb('cases.subject_id', 'ilike', like),
              eb('cases.site_id', 'ilike', like),
              eb('cases.visit_id', 'ilike', like),
            ]
          : []),
      ]),
    );
  }
  return query.orderBy('cases.created_at', 'desc').orderBy('cases.id', 'desc').limit(50).execute();
}
export type CaseSearchRow = Awaited<ReturnType<typeof searchCases>>[number];

/** The cases assigned to a user, live, in the studies they can see (the NOTO landing), newest first. */
export async function assignedCases(db: Q, principal: Principal) {
  return db
    .selectFrom('case_readers')
    .innerJoin('cases', 'cases.id', 'case_readers.case_id')
    .innerJoin('studies', 'studies.id', 'cases.study_id')
    .where('case_readers.user_id', '=', principal.id)
    .where('cases.status', 'not in', ['ARCHIVED', 'INVALID'])
    .where('cases.study_id', 'in', db.selectFrom('studies').select('studies.id').where(visibleStudies(principal)))
    .select((eb) => [
      'cases.id',
      'cases.study_id',
      'studies.name as study_name',
      'cases.proc_id',
      'cases.histo_procedure_id',
      statusAsSeen(principal)(eb).as('status'),
      'case_readers.assigned_at',
      'case_readers.read_at',
      eb
        .selectFrom('images')
        .select(count('n'))
        .whereRef('images.case_id', '=', 'cases.id')
        .where('images.status', '!=', 'ARCHIVED')
        .where('images.ignored', '=', false)
        .as('number_of_images'),
    ])
    .orderBy('case_readers.assigned_at', 'desc')
    .orderBy('cases.id', 'desc')
    .limit(500)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Study page, Cases tab
// ---------------------------------------------------------------------------------------------

export interface StudyCaseFilter {
  studyId: number;
  procId?: string | undefined;
  status?: CaseStatus | undefined;
  /** 'any', 'unassigned', or a reader's user id. */
  assignee?: 'any' | 'unassigned' | number | undefined;
  sort: StudyCaseSortKey;
  descending: boolean;
  limit?: number | undefined;
  offset?: number | undefined;
}

const CASE_SORT_COLUMNS: Record<StudyCaseSortKey, string> = {
  createdAt: 'cases.created_at',
  procId: 'lower_proc_id',
  histoProcedureId: 'cases.histo_procedure_id',
  subjectId: 'cases.subject_id',
  visitId: 'cases.visit_id',
  // The status as the user sees it (the select's, statusAsSeen): a reader's order must not tell either.
  status: 'status',
};

function caseMatches(
  eb: ExpressionBuilder<DB, 'cases'>,
  filter: StudyCaseFilter,
  principal: Principal,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [
    eb('cases.study_id', '=', filter.studyId),
    eb('cases.status', '!=', 'ARCHIVED'),
    readerSeesCase(principal)(eb),
  ];
  if (filter.procId) {
    const like = likeContains(filter.procId);
    conditions.push(eb.or([eb('cases.proc_id', 'ilike', like), eb('cases.histo_procedure_id', 'ilike', like)]));
  }
  if (filter.status) conditions.push(eb(statusAsSeen(principal)(eb), '=', filter.status));
  const readers = eb
    .selectFrom('case_readers')
    .select('case_readers.user_id')
    .whereRef('case_readers.case_id', '=', 'cases.id');
  // A blinded reader's list is their own cases: the assignee filter is ignored for them, since
  // filtering by another reader would list exactly the cases shared with that reader (issue 26).
  const assignee = readsAssignedCasesOnly(principal.workAsRole) ? undefined : filter.assignee;
  if (assignee === 'unassigned') conditions.push(eb.not(eb.exists(readers)));
  else if (typeof assignee === 'number')
    conditions.push(eb.exists(readers.where('case_readers.user_id', '=', assignee)));
  return eb.and(conditions);
}

/** One page of the study's Cases tab (doc 2 §2.4), filtered, sorted and paged in one statement. */
export async function listStudyCases(db: Q, principal: Principal, filter: StudyCaseFilter) {
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  let query = db
    .selectFrom('cases')
    .leftJoin('users as qc1', 'qc1.id', 'cases.qc1_by')
    .where((eb) => caseMatches(eb, filter, principal))
    .select((eb) => [
      'cases.id',
      'cases.study_id',
      'cases.proc_id',
      'cases.histo_procedure_id',
      'cases.created_at',
      'cases.subject_id',
      'cases.visit_id',
      'cases.site_id',
      statusAsSeen(principal)(eb).as('status'),
      historyAsSeen(principal)(eb).as('prev_workflow_statuses'),
      'qc1.username as qc1_username',
      'qc1.first_name as qc1_first_name',
      'qc1.last_name as qc1_last_name',
      'cases.open_queries',
      eb
        .selectFrom('images')
        .select(count('n'))
        .whereRef('images.case_id', '=', 'cases.id')
        .where('images.status', '!=', 'ARCHIVED')
        .where(readerSeesImage(principal))
        .as('number_of_images'),
      // The caller's own read time (issue 29, myReadAt): only the caller's row, never another reader's.
      eb
        .selectFrom('case_readers as mine')
        .select('mine.read_at')
        .whereRef('mine.case_id', '=', 'cases.id')
        .where('mine.user_id', '=', principal.id)
        .as('my_read_at'),
      sql<string[]>`array(
        select coalesce(nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), ''), u.username)
        from case_readers r join users u on u.id = r.user_id
        where r.case_id = cases.id and r.role = 'PRIMARY' order by r.assigned_at, u.id)`.as('reader_names'),
      sql<string>`lower(cases.proc_id)`.as('lower_proc_id'),
      sql<number>`count(*) over ()`.as('total'),
    ])
    .orderBy(sql`${sql.ref(CASE_SORT_COLUMNS[filter.sort])} ${direction}`)
    .orderBy('cases.id', filter.descending ? 'desc' : 'asc');
  if (filter.limit !== undefined) query = query.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await query.execute();
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && (filter.offset ?? 0) > 0) {
    const counted = await db
      .selectFrom('cases')
      .select(count('n'))
      .where((eb) => caseMatches(eb, filter, principal))
      .executeTakeFirst();
    total = counted?.n ?? 0;
  }
  return { rows, total };
}
export type StudyCaseListRow = Awaited<ReturnType<typeof listStudyCases>>['rows'][number];
