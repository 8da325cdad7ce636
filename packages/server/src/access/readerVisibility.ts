import type { ExpressionBuilder, Kysely } from 'kysely';
import { readsAssignedCasesOnly } from '@lamina/domain';
import type { DB } from '../platform/db/schema.js';
import type { Principal } from '../platform/auth/principal.js';
import { revokeTileAccess } from '../platform/tiles/tileAccess.js';

/**
 * Blinded reading (issue 11): a user working as a central reader (readsAssignedCasesOnly) sees only
 * the cases they are assigned to, and only the live images of those cases that are not hidden from
 * readers. These two expressions are the one statement of that rule; every case and image query a
 * reader can reach applies them (the resource scopes, the study's case list, the case's images).
 */
export function readerSeesCase(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'cases'>) =>
    readsAssignedCasesOnly(principal.workAsRole)
      ? eb.exists(
          eb
            .selectFrom('case_readers')
            .select('case_readers.case_id')
            .whereRef('case_readers.case_id', '=', 'cases.id')
            .where('case_readers.user_id', '=', principal.id),
        )
      : eb.lit(true);
}

export function readerSeesImage(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'images'>) =>
    readsAssignedCasesOnly(principal.workAsRole)
      ? eb.and([
          eb('images.ignored', '=', false),
          eb('images.status', '!=', 'ARCHIVED'),
          eb.exists(
            eb
              .selectFrom('case_readers')
              .select('case_readers.case_id')
              .whereRef('case_readers.case_id', '=', 'images.case_id')
              .where('case_readers.user_id', '=', principal.id),
          ),
        ])
      : eb.lit(true);
}

/**
 * When a case's readers lose sight of something (a reader removed, an image leaving the case or
 * archived, the case archived), their tile tokens stop (the access generation is bumped, in the
 * caller's transaction): a token issued while the image was theirs to read does not outlive that.
 */
export async function revokeCaseReaders(
  tx: Kysely<DB>,
  caseId: number | null,
  only?: readonly number[],
): Promise<void> {
  if (caseId === null) return;
  const readers = (await tx.selectFrom('case_readers').select('user_id').where('case_id', '=', caseId).execute()).map(
    (r) => r.user_id,
  );
  for (const userId of only ?? readers) await revokeTileAccess(tx, userId);
}
