import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool, type Transaction } from 'kysely';
import { IMAGE_MESSAGES, type StudyImageSortKey } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { NotFoundError } from '../../platform/errors.js';
import { likeContains } from '../../platform/db/paging.js';
import { casePosition } from '../../access/imageLabel.js';
import { IMAGE_VIEW_COLUMNS } from './imagePresenter.js';

/** Queries of the images module: SQL only. */
type Q = Kysely<DB>;

/** The image row, locked for the caller's transaction (404 'Image not found' when there is none). */
export async function lockImage(tx: Transaction<DB>, imageId: number) {
  const row = await tx.selectFrom('images').selectAll().where('id', '=', imageId).forUpdate().executeTakeFirst();
  if (!row) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
  return row;
}
export type LockedImage = Awaited<ReturnType<typeof lockImage>>;

/** The viewer's Image row (IMAGE_VIEW_COLUMNS) with its case's procedure ID and its place in the case. */
export function selectImageView(db: Q) {
  return db
    .selectFrom('images')
    .leftJoin('cases', 'cases.id', 'images.case_id')
    .select(IMAGE_VIEW_COLUMNS)
    .select([
      'cases.proc_id as case_proc_id',
      casePosition('images').as('case_position'),
      // The image's latest completed .mld import (issue 17), for the viewer's AI controls.
      sql<{ id: number; name: string; appSequenceId: string | null } | null>`(select json_build_object(
          'id', m.id, 'name', m.name, 'appSequenceId', m.app_sequence_id) from mld_files m
        where m.image_id = images.id and m.status = 'COMPLETE' order by m.id desc limit 1)`.as('mld_file'),
    ]);
}

export interface StudyImageFilter {
  studyId: number;
  /** File name contains (case-insensitive). */
  name?: string | undefined;
  /** Only images that have a query. */
  hasQueries?: boolean | undefined;
  /** Only images without a case. */
  isUnassigned?: boolean | undefined;
  sort: StudyImageSortKey;
  descending: boolean;
  limit?: number | undefined;
  offset?: number | undefined;
}

const SORT_COLUMNS: Record<StudyImageSortKey, string> = {
  name: 'lower_name',
  uploadedAt: 'images.uploaded_at',
  accessionNumber: 'images.accession_number',
  biopsyLocation: 'images.biopsy_location',
};

/** The images of the filter: live (not archived) images of the study, by name, case and queries. */
function matches(eb: ExpressionBuilder<DB, 'images'>, filter: StudyImageFilter): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [
    eb('images.study_id', '=', filter.studyId),
    eb('images.status', '!=', 'ARCHIVED'),
  ];
  if (filter.name) conditions.push(eb('images.name', 'ilike', likeContains(filter.name)));
  if (filter.isUnassigned) conditions.push(eb('images.case_id', 'is', null));
  if (filter.hasQueries) {
    conditions.push(
      eb.exists(
        eb
          .selectFrom('queries')
          .select('queries.id')
          .where('queries.object_type', '=', 'IMAGE')
          .whereRef('queries.object_id', '=', 'images.id'),
      ),
    );
  }
  return eb.and(conditions);
}

/**
 * One page of the study page's Images tab (doc 2 §2.5): the live (not archived) images of a study
 * with their case and latest image query, filtered, sorted and paged in one statement.
 */
export async function listStudyImages(db: Q, filter: StudyImageFilter) {
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  let query = db
    .selectFrom('images')
    .where((eb) => matches(eb, filter))
    .leftJoin('cases', 'cases.id', 'images.case_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('queries')
          .select(['queries.query_status', 'queries.resolution'])
          .where('queries.object_type', '=', 'IMAGE')
          .whereRef('queries.object_id', '=', 'images.id')
          .orderBy('queries.id', 'desc')
          .limit(1)
          .as('last_query'),
      (join) => join.onTrue(),
    )
    .select([
      'images.id',
      'images.study_id',
      'images.case_id',
      'images.name',
      'images.uploaded_at',
      'images.accession_number',
      'images.biopsy_location',
      'images.processing_status',
      'images.processing_progress',
      'images.cog_key',
      'images.status',
      'images.status_message',
      'cases.proc_id as case_proc_id',
      casePosition('images').as('case_position'),
      'last_query.query_status',
      'last_query.resolution',
      // The open queries' parties: who may replace the image (imageReplacement.ts).
      sql<OpenQueryParties[]>`coalesce((
        select json_agg(json_build_object(
          'resolution', q.resolution, 'openedBy', q.opened_by, 'openedByRoleId', q.opened_by_role_id,
          'withRoleId', q.with_role_id, 'withUserId', q.with_user_id) order by q.id)
        from queries q
        where q.object_type = 'IMAGE' and q.object_id = images.id and q.query_status = 'OPEN'), '[]'::json)`.as(
        'open_queries',
      ),
      sql<string>`lower(images.name)`.as('lower_name'),
      sql<number>`count(*) over ()`.as('total'),
    ])
    .orderBy(sql`${sql.ref(SORT_COLUMNS[filter.sort])} ${direction}`)
    .orderBy('images.id', filter.descending ? 'desc' : 'asc');
  if (filter.limit !== undefined) query = query.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await query.execute();
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && (filter.offset ?? 0) > 0) {
    // A page past the end: count the matches without it.
    const counted = await db
      .selectFrom('images')
      .select(sql<number>`count(*)::int`.as('n'))
      .where((eb) => matches(eb, filter))
      .executeTakeFirst();
    total = counted?.n ?? 0;
  }
  return { rows, total };
}

export type StudyImageListRow = Awaited<ReturnType<typeof listStudyImages>>['rows'][number];

/** An open image query's facts as the list reads them. */
export interface OpenQueryParties {
  resolution: 'RESOLVED' | 'UNRESOLVABLE' | null;
  openedBy: number | null;
  openedByRoleId: number | null;
  withRoleId: number | null;
  withUserId: number | null;
}
