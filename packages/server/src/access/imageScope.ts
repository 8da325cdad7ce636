import { IMAGE_MESSAGES } from '@lamina/domain';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../platform/auth/principal.js';
import type { Db } from '../platform/db/database.js';
import { idParam, scope, type ResourceStudy, type Scope } from '../platform/rbac/policy.js';
import { readerSeesImage } from './readerVisibility.js';

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

/** The same scope, for routes that name the image in another path parameter (e.g. `:imageId`). */
export const imageScopeOf = (param: string) =>
  scope.resource('image', IMAGE_MESSAGES.imageNotFound, (db, request, principal) =>
    imageStudyOf(db, request, principal, param),
  );

/** An image the principal may see (a blinded reader: of their assigned cases, not hidden). */
async function visibleImageStudy(db: Db, principal: Principal, imageId: number | null): Promise<ResourceStudy> {
  if (imageId === null) return { found: false };
  const row = await db
    .selectFrom('images')
    .select('study_id')
    .where('id', '=', imageId)
    .where(readerSeesImage(principal))
    .executeTakeFirst();
  return row ? { found: true, studyId: row.study_id } : { found: false };
}

/** POST /api/annotations names its image in the body (`imageId`). */
export const imageFromBody = scope.resource('image', IMAGE_MESSAGES.imageNotFound, (db, request, principal) => {
  const id = (request.body as { imageId?: unknown } | undefined)?.imageId;
  return visibleImageStudy(db, principal, typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : null);
});

/**
 * POST /api/mld names its image in the body when the dialog picked one: that image's study must be
 * visible (404 otherwise). Without one the import links by name, among the uploader's images.
 */
export const optionalImageStudyFromBody = (db: Db): Scope =>
  scope.study(async (request) => {
    const imageId = (request.body as { imageId?: unknown } | undefined)?.imageId;
    if (imageId === undefined || imageId === null) return null;
    if (typeof imageId !== 'number') return -1;
    const row = await db.selectFrom('images').select('study_id').where('id', '=', imageId).executeTakeFirst();
    return row?.study_id ?? -1;
  });

/** /api/mld/{id}/heatmap: a completed import whose image the principal may see (404 'Image not found' otherwise). */
export const mldImageScope = scope.resource('image', IMAGE_MESSAGES.imageNotFound, async (db, request, principal) => {
  const id = idParam(request);
  if (id === null) return { found: false };
  const row = await db
    .selectFrom('mld_files')
    .innerJoin('images', 'images.id', 'mld_files.image_id')
    .select('images.study_id')
    .where('mld_files.id', '=', id)
    .where('mld_files.status', '=', 'COMPLETE')
    .where(readerSeesImage(principal))
    .executeTakeFirst();
  return row ? { found: true, studyId: row.study_id } : { found: false };
});
