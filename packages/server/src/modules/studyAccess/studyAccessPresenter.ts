import type { StudyAccessRow, StudyUserRef } from '@lamina/domain';
import type { StudyAccessQueryRow, StudyUserRow } from './studyAccessQueries.js';

/** A user holding access to a study, as the study page and the study's access screen show them. */
export function presentStudyUser(row: StudyUserRow): StudyUserRef {
  return {
    id: row.id,
    username: row.username,
    firstName: row.first_name,
    lastName: row.last_name,
    roleId: row.role_id,
    roleName: row.role_name,
    organizationName: row.organization_name,
  };
}

/** One study access of a user (their Study Access tab). */
export function presentStudyAccess(row: StudyAccessQueryRow): StudyAccessRow {
  return { studyId: row.study_id, studyName: row.study_name, roleId: row.role_id, roleName: row.role_name };
}
