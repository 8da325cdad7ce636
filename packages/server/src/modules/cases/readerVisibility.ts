import type { ExpressionBuilder } from 'kysely';
import { readsAssignedCasesOnly } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';

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
