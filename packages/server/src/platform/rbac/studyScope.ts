import type { ExpressionBuilder } from 'kysely';
import { MESSAGES, VIEW_ALL_STUDIES } from '@lamina/domain';
import type { Db } from '../db/database.js';
import type { DB } from '../db/schema.js';
import type { Principal } from '../auth/principal.js';
import { NotFoundError } from '../errors.js';

/**
 * Study scope: a user sees every study with the view-all permission, else the studies where they
 * hold study access with the role they are working as.
 */
export function visibleStudies(principal: Principal) {
  return (eb: ExpressionBuilder<DB, 'studies'>) => {
    if (principal.actions.has(VIEW_ALL_STUDIES)) return eb.lit(true);
    const roleId = principal.workAsRole?.id ?? -1;
    return eb.exists(
      eb
        .selectFrom('study_access')
        .select('study_access.study_id')
        .whereRef('study_access.study_id', '=', 'studies.id')
        .where('study_access.user_id', '=', principal.id)
        .where('study_access.role_id', '=', roleId),
    );
  };
}

export async function canSeeStudy(db: Db, principal: Principal, studyId: number): Promise<boolean> {
  if (studyId <= 0) return false;
  const row = await db
    .selectFrom('studies')
    .select('studies.id')
    .where('studies.id', '=', studyId)
    .where(visibleStudies(principal))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * 404 'Study not found' when the study is missing or not visible: a user learns nothing about
 * studies they may not see (the choice is written down in docs/PERMISSIONS.md).
 */
export async function assertStudyVisible(db: Db, principal: Principal, studyId: number): Promise<void> {
  if (!(await canSeeStudy(db, principal, studyId))) throw new NotFoundError(MESSAGES.studyNotFound);
}
