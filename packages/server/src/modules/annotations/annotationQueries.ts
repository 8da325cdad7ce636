import { sql, type Kysely } from 'kysely';
import { userDisplayName, type AnnotationAuthor } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { onlyAnnotationsOf, seesAnnotation } from './annotationService.js';

type Q = Kysely<DB>;

/**
 * The live annotations of an image the principal may see, each as one compact JSON text written by
 * the database (null fields left out; `source` only when not CR), in id (drawing) order. The colour
 * is the class's current colour, else the one stored at creation.
 */
export function visibleAnnotationsJson(db: Q, principal: Principal, imageId: number) {
  const owner = onlyAnnotationsOf(principal);
  return db
    .selectFrom('annotations as a')
    .leftJoin('annotation_classes as c', 'c.id', 'a.annotation_class_id')
    .select(
      sql<string>`json_strip_nulls(json_build_object(
        'id', a.id, 'imageId', a.image_id, 'annotationType', a.annotation_type,
        'source', nullif(a.source, 'CR'), 'userId', a.user_id, 'geometry', a.geometry,
        'annotationClassId', a.annotation_class_id, 'color', coalesce(c.color, a.color),
        'parentId', a.parent_id, 'radius', a.radius, 'radiusX', a.radius_x, 'radiusY', a.radius_y,
        'tilt', a.tilt, 'weight', a.weight, 'length', a.length,
        'multilineCategory', a.multiline_category, 'text', a.text,
        'createdAt', to_char(a.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      ))::text`.as('j'),
    )
    .where('a.image_id', '=', imageId)
    .where('a.deleted_at', 'is', null)
    .$if(owner !== null, (q) => q.where('a.user_id', '=', owner))
    .orderBy('a.id');
}

/** The authors of the visible annotations of an image (for the per-reader filter). */
export async function annotationAuthors(db: Q, principal: Principal, imageId: number): Promise<AnnotationAuthor[]> {
  const rows = await db
    .selectFrom('users')
    .select(['users.id', 'users.username', 'users.first_name', 'users.last_name'])
    .where('users.id', 'in', (eb) =>
      eb
        .selectFrom('annotations')
        .select('annotations.user_id')
        .where('annotations.image_id', '=', imageId)
        .where('annotations.deleted_at', 'is', null)
        .where('annotations.user_id', 'is not', null)
        .where(seesAnnotation(principal))
        .$narrowType<{ user_id: number }>(),
    )
    .orderBy('users.username')
    .execute();
  return rows.map((u) => ({
    id: u.id,
    displayName: userDisplayName({ username: u.username, firstName: u.first_name, lastName: u.last_name }),
  }));
}
