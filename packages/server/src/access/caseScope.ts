import { CASE_MESSAGES, IMAGE_MESSAGES } from '@lamina/domain';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../platform/auth/principal.js';
import type { Db } from '../platform/db/database.js';
import { idParam, scope, type ResourceStudy } from '../platform/rbac/policy.js';
import { readerSeesCase } from './readerVisibility.js';
import { imageStudyOf } from './imageScope.js';

/**
 * The study scope of routes that address a case by its id (`:id`, or `:caseId`): 404 'Case not
 * found' for a missing case, one in a study the user cannot see, or (blinded readers) one they are
 * not assigned to.
 */
export const caseStudyOf = async (
  db: Db,
  request: FastifyRequest,
  principal: Principal,
  param = 'id',
): Promise<ResourceStudy> => {
  const id = idParam(request, param);
  if (id === null) return { found: false };
  const row = await db
    .selectFrom('cases')
    .select('study_id')
    .where('id', '=', id)
    .where(readerSeesCase(principal))
    .executeTakeFirst();
  return row ? { found: true, studyId: row.study_id } : { found: false };
};

export const caseScope = (param = 'id') =>
  scope.resource('case', CASE_MESSAGES.caseNotFound, (db, request, principal) =>
    caseStudyOf(db, request, principal, param),
  );

/** Whether the body addresses a case (tabName 'cases'); otherwise the id is an image's. */
const addressesCase = (request: FastifyRequest) =>
  (request.body as { tabName?: unknown } | undefined)?.tabName === 'cases';

/** Image Management's Edit Column: its `{id}` is an image or a case, as its body's tabName says. */
export const imageOrCaseScope = scope.resource(
  'image or case (by tabName)',
  (request) => (addressesCase(request) ? CASE_MESSAGES.caseNotFound : IMAGE_MESSAGES.imageNotFound),
  (db, request, principal) =>
    addressesCase(request) ? caseStudyOf(db, request, principal) : imageStudyOf(db, request, principal),
);
