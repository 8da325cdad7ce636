import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { VIEW_ALL_STUDIES, type MldStatus } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { casePosition } from '../../access/imageLabel.js';
import type { Principal } from '../../platform/auth/principal.js';
import { likeContains } from '../../platform/db/paging.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';

/** Read models of .mld imports: SQL only. */
type Q = Kysely<DB>;

/** The imports with their image, case and uploader (the Annotations tab's record). */
export function selectMldRecords(db: Q) {
  return db
    .selectFrom('mld_files')
    .leftJoin('images as i', 'i.id', 'mld_files.image_id')
    .leftJoin('cases as c', 'c.id', 'i.case_id')
    .leftJoin('users as u', 'u.id', 'mld_files.uploader_id')
    .select([
      'mld_files.id',
      'mld_files.name',
      'mld_files.size_bytes',
      'mld_files.status',
      'mld_files.error_message',
      'mld_files.app_sequence_id',
      'mld_files.num_layers',
      'mld_files.image_id',
      'mld_files.study_id',
      'mld_files.counts',
      'mld_files.uploaded_at',
      'i.name as image_name',
      'i.case_id',
      'c.proc_id',
      'c.histo_procedure_id',
      'u.username as uploaded_by',
      casePosition('i').as('case_position'),
    ]);
}
export type MldRecordRow = Awaited<ReturnType<ReturnType<typeof selectMldRecords>['executeTakeFirstOrThrow']>>;

/**
 * Which imports a user sees: those of images in studies they see; those not linked to an image yet
 * (queued, or in error before linking) only their own — or every one with the view-all permission.
 */
export function seesMld(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'mld_files'>): Expression<SqlBool> => {
    if (principal.actions.has(VIEW_ALL_STUDIES)) return eb.lit(true);
    return eb.or([
      eb.and([
        eb('mld_files.study_id', 'is not', null),
        eb('mld_files.study_id', 'in', eb.selectFrom('studies').select('studies.id').where(visibleStudies(principal))),
      ]),
      eb.and([eb('mld_files.study_id', 'is', null), eb('mld_files.uploader_id', '=', principal.id)]),
    ]);
  };
}

export interface MldListFilter {
  searchText?: string | undefined;
  searchImageNames: boolean;
  statuses?: readonly MldStatus[] | undefined;
  studyIds?: readonly number[] | undefined;
  sort: 'uploadedAt' | 'mldName' | 'status' | 'appSequenceId' | 'imageName';
  descending: boolean;
  limit?: number | undefined;
  offset?: number | undefined;
}

const SORT = {
  uploadedAt: sql`mld_files.uploaded_at`,
  mldName: sql`lower(mld_files.name)`,
  status: sql`mld_files.status`,
  appSequenceId: sql`mld_files.app_sequence_id`,
  imageName: sql`lower(i.name)`,
} as const;

/** The Annotations tab: filtered, sorted, one page (or every row, for the CSV). */
export function mldList(db: Q, principal: Principal, filter: MldListFilter) {
  let query = selectMldRecords(db).where(seesMld(principal));
  const text = filter.searchText?.trim();
  if (text) {
    const like = likeContains(text);
    query = query.where((eb) =>
      eb.or([
        eb('mld_files.name', 'ilike', like),
        eb('mld_files.app_sequence_id', 'ilike', like),
        eb('c.proc_id', 'ilike', like),
        eb('c.histo_procedure_id', 'ilike', like),
        ...(filter.searchImageNames ? [eb('i.name', 'ilike', like)] : []),
      ]),
    );
  }
  if (filter.statuses && filter.statuses.length > 0)
    query = query.where('mld_files.status', 'in', [...filter.statuses]);
  if (filter.studyIds && filter.studyIds.length > 0)
    query = query.where('mld_files.study_id', 'in', [...filter.studyIds]);
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  query = query
    .orderBy(sql`${SORT[filter.sort]} ${direction}`)
    .orderBy('mld_files.id', filter.descending ? 'desc' : 'asc');
  if (filter.limit !== undefined) query = query.limit(filter.limit).offset(filter.offset ?? 0);
  return query;
}

/** How many imports the list's filter matches. */
export async function mldCount(db: Q, principal: Principal, filter: MldListFilter): Promise<number> {
  const all = { ...filter, sort: 'uploadedAt' as const, limit: undefined, offset: undefined };
  const row = await db
    .selectFrom(mldList(db, principal, all).clearOrderBy().as('x'))
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * An image's AI acceptance (undefined: no such image), its completed imports and its AI classes with
 * their live object counts (the viewer's AI tree).
 */
export async function aiLayers(db: Q, imageId: number) {
  const image = await db
    .selectFrom('images')
    .select('accept_ai_annotations')
    .where('id', '=', imageId)
    .executeTakeFirst();
  const imports = await db
    .selectFrom('mld_files')
    .select(['id', 'name', 'app_sequence_id', 'num_layers', 'counts', 'heatmap_key', 'heatmap_name', 'completed_at'])
    .where('image_id', '=', imageId)
    .where('status', '=', 'COMPLETE')
    .orderBy('id')
    .execute();
  const classes = await db
    .selectFrom('annotations as a')
    .innerJoin('ai_classes as k', 'k.id', 'a.ai_class_id')
    .select(['k.id', 'k.name', 'k.color', sql<number>`count(*)::int`.as('count')])
    .where('a.image_id', '=', imageId)
    .where('a.deleted_at', 'is', null)
    .where('a.mld_file_id', 'is not', null)
    .groupBy(['k.id', 'k.name', 'k.color'])
    .orderBy('k.name')
    .execute();
  return { image, imports, classes };
}

/** The stored heatmap of an import, or null. */
export async function heatmapKeyOf(db: Q, mldId: number): Promise<string | null> {
  const row = await db.selectFrom('mld_files').select('heatmap_key').where('id', '=', mldId).executeTakeFirst();
  return row?.heatmap_key ?? null;
}
