import type { Transaction } from 'kysely';
import {
  IMAGE_MESSAGES,
  mayReplaceImage,
  QUERY_ACTION_PERMISSIONS,
  queryActionsFor,
  querySituation,
  REPLACE_IMAGE_ROLES,
  type QueryActor,
  type QueryParties,
} from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { ConflictError, ForbiddenError } from '../../platform/errors.js';

/*
 * Who may replace an image (issue 26, item 7): the replacer must hold the query action
 * 'replaceImage' on an open image query of that image — doc 3 §6's table computed by the domain's
 * queryActionsFor with the query's facts: the target of an unanswered query (the role it was sent
 * to, and the person when it was sent to one), working as StudyAdmin, ISC, LabTech or Uploader,
 * holding S_ImageListTab_UploadImage.
 * Beyond the spec (docs/QUERIES.md), a slide whose processing failed may be uploaded again by those
 * roles without a query. Everyone else is refused, whatever the upload permission of their role.
 */

/** The facts of an open image query that decide its actions (queries.ts, queryActionsFor). */
export interface OpenImageQueryFacts extends QueryParties {
  queryStatus: 'OPEN' | 'CLOSED';
  resolution: 'RESOLVED' | 'UNRESOLVABLE' | null;
}

export type ReplacementDecision = 'allowed' | 'notReplaceable' | 'notThroughQuery';

/** Whether the actor works as one of the roles that replace images, with the permission to. */
function isReplacer(actor: QueryActor): boolean {
  return (
    actor.workAsRole !== null &&
    (REPLACE_IMAGE_ROLES as readonly string[]).includes(actor.workAsRole.name) &&
    QUERY_ACTION_PERMISSIONS.replaceImage.some((p) => actor.actions.has(p))
  );
}

/**
 * The decision, from the image's processing status, its open image queries and the actor:
 * - `allowed`: a query gives the actor 'replaceImage', or processing failed and the actor replaces images;
 * - `notReplaceable` (409): nothing to replace through — no unanswered query, processing did not fail;
 * - `notThroughQuery` (403): there is, but not for the actor.
 */
export function replacementDecision(
  image: { processingStatus: string },
  openQueries: readonly OpenImageQueryFacts[],
  actor: QueryActor,
): ReplacementDecision {
  const facts = openQueries.map((q) => ({ objectType: 'IMAGE' as const, ...q }));
  if (facts.some((q) => queryActionsFor(q, actor).includes('replaceImage'))) return 'allowed';
  if (image.processingStatus === 'FAIL' && isReplacer(actor)) return 'allowed';
  const hasOpenQuery = facts.some((q) => querySituation(q) === 'unanswered');
  if (!mayReplaceImage({ hasOpenQuery, processingStatus: image.processingStatus })) return 'notReplaceable';
  return 'notThroughQuery';
}

/**
 * Refuses a replacement the actor may not make, inside the registering transaction: the image's
 * open queries are read locked (FOR UPDATE), so none is answered, closed or moved meanwhile; the
 * image row is already locked by the caller. Throws 409 or 403; nothing has been written yet.
 */
export async function assertMayReplace(
  tx: Transaction<DB>,
  image: { id: number; processing_status: string },
  actor: QueryActor,
): Promise<void> {
  const rows = await tx
    .selectFrom('queries')
    .select(['query_status', 'resolution', 'opened_by', 'opened_by_role_id', 'with_role_id', 'with_user_id'])
    .where('object_type', '=', 'IMAGE')
    .where('object_id', '=', image.id)
    .where('query_status', '=', 'OPEN')
    .orderBy('id')
    .forUpdate()
    .execute();
  const decision = replacementDecision(
    { processingStatus: image.processing_status },
    rows.map((r) => ({
      queryStatus: r.query_status,
      resolution: r.resolution,
      openedBy: r.opened_by,
      openedByRoleId: r.opened_by_role_id,
      withRoleId: r.with_role_id,
      withUserId: r.with_user_id,
    })),
    actor,
  );
  if (decision === 'notReplaceable') throw new ConflictError(IMAGE_MESSAGES.imageToReplaceNotReplaceable);
  if (decision === 'notThroughQuery') throw new ForbiddenError(IMAGE_MESSAGES.imageToReplaceNotThroughQuery);
}
