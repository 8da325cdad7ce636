import { CASE_MESSAGES } from '@lamina/domain';
import { idParam, scope } from '../../platform/rbac/policy.js';
import { readerSeesCase } from './readerVisibility.js';

/**
 * The study scope of routes that address a case by its id (`:id`, or `:caseId`): 404 'Case not
 * found' for a missing case, one in a study the user cannot see, or (blinded readers) one they are
 * not assigned to.
 */
export const caseScope = (param = 'id') =>
  scope.resource('case', CASE_MESSAGES.caseNotFound, async (db, request, principal) => {
    const id = idParam(request, param);
    if (id === null) return { found: false };
    const row = await db
      .selectFrom('cases')
      .select('study_id')
      .where('id', '=', id)
      .where(readerSeesCase(principal))
      .executeTakeFirst();
    return row ? { found: true, studyId: row.study_id } : { found: false };
  });
