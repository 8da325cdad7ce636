import { IMAGE_MESSAGES } from '@lamina/domain';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/db/database.js';
import { idParam, scope, type ResourceStudy } from '../../platform/rbac/policy.js';
import { readerSeesImage } from '../cases/readerVisibility.js';

/**
 * The study scope of routes that address an image by its id (`:id`): one query for the image's
 * study; the guard answers 404 'Image not found' for a missing image, one the user cannot see, and
 * for a blinded reader one outside their assigned cases or hidden from readers.
 */
export const imageStudyOf = async (
  db: Db,
  request: FastifyRequest,
  principal: Principal,
  param = 'id',
): Promise<ResourceStudy> => {
  const id = idParam(request, param);
  if (id === null) return { found: false };
  const row = await db
    .selectFrom('images')
    .select('study_id')
    .where('id', '=', id)
    .where(readerSeesImage(principal))
    .executeTakeFirst();
  return row ? { found: true, studyId: row.study_id } : { found: false };
};

export const imageScope = scope.resource('image', IMAGE_MESSAGES.imageNotFound, (db, request, principal) =>
  imageStudyOf(db, request, principal),
);
