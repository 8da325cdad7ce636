import type { UserInfo } from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';

/** The spec's User (doc 1 §3) from a principal; no database row leaves the server as it is. */
export function presentUserInfo(principal: Principal): UserInfo {
  return {
    id: principal.id,
    username: principal.username,
    firstName: principal.firstName,
    lastName: principal.lastName,
    organizationId: principal.organizationId,
    organizationName: principal.organizationName,
    registered: principal.registered,
    lastLoginDt: principal.lastLoginAt?.toISOString() ?? null,
    workAsRole: principal.workAsRole,
    roles: principal.roles,
    actions: [...principal.actions].sort(),
    isSystemAdmin: principal.isSystemAdmin,
    studyCount: principal.studyCount,
    mustChangePassword: principal.mustChangePassword,
    signsWith: principal.signsWith,
  };
}
