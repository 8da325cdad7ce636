import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { readsAssignedCasesOnly, type CaseStatus } from '@lamina/domain';
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
 * The case's status as `principal` sees it (issue 30). A blinded reader who is not the case's
 * adjudicator sees Pending Adjudication as Processed, and never finds it in the case's history: that
 * the case went to adjudication would tell a primary reader that the other reads disagreed with
 * theirs. To them a case waiting for its adjudicator looks like one waiting for another reader.
 * Everything a reader can select, filter or sort by status goes through these two expressions.
 */
export function statusAsSeen(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'cases'>) =>
    readsAssignedCasesOnly(principal.workAsRole)
      ? sql<CaseStatus>`case when ${adjudicationHidden(eb, principal.id)} then 'PROCESSED' else ${eb.ref('cases.status')} end`
      : sql<CaseStatus>`${eb.ref('cases.status')}`;
}

/**
 * The history as the same reader sees it: without Pending Adjudication, and while the case waits
 * for its adjudicator without the Processed it left (it is Processed to them), so that it reads as
 * the history of a case whose reads agreed.
 */
export function historyAsSeen(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'cases'>) => {
    if (!readsAssignedCasesOnly(principal.workAsRole)) return sql<string[]>`${eb.ref('cases.prev_workflow_statuses')}`;
    const history = sql<string[]>`array_remove(${eb.ref('cases.prev_workflow_statuses')}, 'PENDING_ADJUDICATION')`;
    return sql<
      string[]
    >`case when ${adjudicationHidden(eb, principal.id)} then trim_array(${history}, 1) else ${history} end`;
  };
}

/** The case is Pending Adjudication and the user is not its adjudicator. */
function adjudicationHidden(eb: ExpressionBuilder<DB, 'cases'>, userId: number) {
  return sql<boolean>`(${eb.ref('cases.status')} = 'PENDING_ADJUDICATION' and not ${eb.exists(adjudicatorRow(eb, userId))})`;
}

function adjudicatorRow(eb: ExpressionBuilder<DB, 'cases'>, userId: number) {
  return eb
    .selectFrom('case_readers as adj')
    .select('adj.case_id')
    .whereRef('adj.case_id', '=', 'cases.id')
    .where('adj.user_id', '=', userId)
    .where('adj.role', '=', 'ADJUDICATOR');
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
