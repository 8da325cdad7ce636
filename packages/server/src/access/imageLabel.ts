import { sql, type RawBuilder } from 'kysely';
import { neutralImageLabel, VIEW_FILE_NAME_PERMISSION } from '@lamina/domain';

// What a user may see of an image's name (blinding): the file name with the file-name permission,
// else the domain's neutral label (the case's procedure ID and the image's place in the case). The
// presenters and queries that name an image (viewer, case, lists, queries, .mld imports) use these.

/**
 * An image's place among its case's live images (1, 2, …; null without a case): the neutral label
 * of users who may not see file names (neutralImageLabel). `alias` is the image row's table or alias.
 */
export function casePosition(alias: string): RawBuilder<number | null> {
  const image = (column: string) => sql.ref(`${alias}.${column}`);
  return sql<number | null>`case when ${image('case_id')} is null then null else (select count(*)::int
    from images sibling where sibling.case_id = ${image('case_id')} and sibling.id <= ${image('id')}
    and sibling.status <> 'ARCHIVED') end`;
}

/** The image's file name, or a neutral label for users without the file-name permission. */
export function imageName(
  row: { id: number; name: string; case_proc_id: string | null; case_position: number | null },
  viewer: { actions: ReadonlySet<string> },
): string {
  return viewer.actions.has(VIEW_FILE_NAME_PERMISSION)
    ? row.name
    : neutralImageLabel({ id: row.id, caseProcId: row.case_proc_id, positionInCase: row.case_position });
}
