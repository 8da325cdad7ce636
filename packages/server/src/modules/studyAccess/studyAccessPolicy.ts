import {
  MESSAGES,
  USER_MESSAGES,
  mayGrantStudyRole,
  roleById,
  roleByName,
  roleNotForUserList,
  STUDY_USER_LIST_ROLES,
  type StudyUserAssignment,
  type StudyUserGroup,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import { BadRequestError, ForbiddenError } from '../../platform/errors.js';

/*
 * The rules of study access, in one place for the routes and services that grant or revoke it
 * (the users' Study Access tab, the study's access screen, a new study's user lists).
 */

/** One study access to grant. */
export interface StudyAccessGrant {
  userId: number;
  roleId: number;
  roleName: string;
}

/**
 * Whether the principal may grant or revoke this role as study access: the assignable roles of spec
 * doc 1 §6, and Site, NOTO and LIS for a system admin working as SystemAdmin (the domain's
 * grantableRoleNames, which the study-access forms offer). The same set both ways, so that any
 * access granted can be cut off by whoever granted it.
 */
export function mayGrantRole(principal: Principal, roleId: number): boolean {
  return mayGrantStudyRole(principal, roleId);
}

/**
 * The study access a create payload asks for (spec doc 1 §7 `uploaders`, `readers`, `readonlyUsers`):
 * each entry a user id (the list's default role) or `{ id, roleId }` with one of the list's roles
 * ({@link STUDY_USER_LIST_ROLES}); another role is 400. Repeats are dropped.
 */
export function studyAccessOfPayload(
  lists: Record<StudyUserGroup, readonly StudyUserAssignment[]>,
): StudyAccessGrant[] {
  const grants = new Map<string, StudyAccessGrant>();
  for (const list of Object.keys(STUDY_USER_LIST_ROLES) as StudyUserGroup[]) {
    const allowed = STUDY_USER_LIST_ROLES[list];
    for (const entry of lists[list]) {
      const userId = typeof entry === 'number' ? entry : entry.id;
      const role =
        typeof entry === 'number' || entry.roleId === undefined ? roleByName(allowed[0]) : roleById(entry.roleId);
      if (!role) throw new BadRequestError(USER_MESSAGES.roleNotAssignable);
      if (!allowed.includes(role.name)) throw new BadRequestError(roleNotForUserList(list, role.displayName));
      grants.set(`${userId}:${role.id}`, { userId, roleId: role.id, roleName: role.name });
    }
  }
  return [...grants.values()];
}

/**
 * Who may grant the access a new study's payload asks for: the grant permission, and never to
 * oneself (as for PATCH /api/users/studies/add).
 */
export function assertMayGrantOnCreate(principal: Principal, grants: readonly StudyAccessGrant[]): void {
  if (grants.length > 0 && !principal.actions.has('UM_GrantStudyAccess'))
    throw new ForbiddenError(MESSAGES.accessDenied);
  if (grants.some((g) => g.userId === principal.id)) throw new ForbiddenError(USER_MESSAGES.ownStudyAccess);
}
