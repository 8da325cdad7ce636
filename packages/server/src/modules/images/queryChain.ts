import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';
import type { DB } from '../../platform/db/schema.js';

/**
 * "In a query chain" (doc 3 §4, doc 2 §4): a live image that a query has been raised on (a query of
 * object type IMAGE naming it, open or closed). The one statement of the rule: Show to reader / Hide
 * from reader (PATCH /api/images/{id}/toggle-image-visibility) refuses every other image, and the
 * case view's `inQueryChain` (GET /api/cases/{id}) is this same expression, so the viewer offers the
 * toggle exactly where the server accepts it.
 */
export function inQueryChain(eb: ExpressionBuilder<DB, 'images'>): ExpressionWrapper<DB, 'images', SqlBool> {
  return eb.and([
    eb('images.status', '!=', 'ARCHIVED'),
    eb.exists(
      eb
        .selectFrom('queries')
        .select('queries.id')
        .where('queries.object_type', '=', 'IMAGE')
        .whereRef('queries.object_id', '=', 'images.id'),
    ),
  ]);
}
