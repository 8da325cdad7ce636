import type { ExpressionBuilder } from 'kysely';
import { ANNOTATION_MESSAGES, readsAssignedCasesOnly } from '@lamina/domain';
import type { DB } from '../platform/db/schema.js';
import type { Principal } from '../platform/auth/principal.js';
import { idParam, scope } from '../platform/rbac/policy.js';
import { readerSeesImage } from './readerVisibility.js';

/**
 * Independent reads (issue 14): a user working as a blinded reader sees only their own annotations;
 * everyone else who may see the image sees every annotation on it. The one statement of that rule:
 * the user whose annotations alone the principal sees, or null for all. The list, the export, the
 * per-annotation scope and the delete all apply it (`seesAnnotation` as an expression).
 */
export function onlyAnnotationsOf(principal: Principal): number | null {
  return readsAssignedCasesOnly(principal.workAsRole) ? principal.id : null;
}

export function seesAnnotation(principal: Principal) {
  const owner = onlyAnnotationsOf(principal);
  return (eb: ExpressionBuilder<DB, 'annotations'>) =>
    owner === null ? eb.lit(true) : eb('annotations.user_id', '=', owner);
}

/** An annotation the principal may see (live, or also deleted), on an image they may see. */
const annotationScopeOf = (state: 'live' | 'liveOrDeleted') =>
  scope.resource('annotation', ANNOTATION_MESSAGES.notFound, async (db, request, principal) => {
    const id = idParam(request);
    if (id === null) return { found: false };
    const row = await db
      .selectFrom('annotations')
      .innerJoin('images', 'images.id', 'annotations.image_id')
      .select('images.study_id')
      .where('annotations.id', '=', id)
      .$if(state === 'live', (q) => q.where('annotations.deleted_at', 'is', null))
      .where(seesAnnotation(principal))
      .where(readerSeesImage(principal))
      .executeTakeFirst();
    return row ? { found: true, studyId: row.study_id } : { found: false };
  });

/**
 * /api/annotations/{id}: a live annotation the principal may see, on an image they may see: a
 * blinded reader finds only their own (another reader's answers 404, as a missing one does).
 */
export const annotationScope = annotationScopeOf('live');

/**
 * /api/annotations/{id}/restore (undo, issue 29): the same, deleted or not (the service answers 409
 * for a live one).
 */
export const restorableAnnotationScope = annotationScopeOf('liveOrDeleted');
