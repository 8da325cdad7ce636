import { sql, type Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';

/** Queries of study access: SQL only. */
type Q = Kysely<DB>;

/** Active users holding study access, one row per (user, role); optionally only some roles. */
export async function listStudyUsers(db: Q, studyId: number, roleIds?: readonly number[]) {
  let query = db
    .selectFrom('study_access')
    .innerJoin('users', 'users.id', 'study_access.user_id')
    .innerJoin('roles', 'roles.id', 'study_access.role_id')
    .leftJoin('organizations', 'organizations.id', 'users.organization_id')
    .select([
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      'roles.id as role_id',
      'roles.name as role_name',
      'organizations.name as organization_name',
    ])
    .where('study_access.study_id', '=', studyId)
    .where('users.active', '=', true);
  if (roleIds) query = query.where('study_access.role_id', 'in', roleIds.length > 0 ? [...roleIds] : [-1]);
  return query
    .orderBy('roles.id')
    .orderBy(sql`lower(users.username)`)
    .execute();
}

export type StudyUserRow = Awaited<ReturnType<typeof listStudyUsers>>[number];

/** A user's study access, limited to the studies the requesting user may see. */
export async function studyAccessOf(db: Q, userId: number, principal: Principal) {
  return db
    .selectFrom('study_access')
    .innerJoin('studies', 'studies.id', 'study_access.study_id')
    .innerJoin('roles', 'roles.id', 'study_access.role_id')
    .select(['studies.id as study_id', 'studies.name as study_name', 'roles.id as role_id', 'roles.name as role_name'])
    .where('study_access.user_id', '=', userId)
    .where(
      'study_access.study_id',
      'in',
      db.selectFrom('studies').select('studies.id').where(visibleStudies(principal)),
    )
    .orderBy(sql`lower(studies.name)`)
    .orderBy('roles.id')
    .execute();
}

export type StudyAccessQueryRow = Awaited<ReturnType<typeof studyAccessOf>>[number];
