import { grantableRoleNames, type ActingUser, type RoleName, type RoleView } from '@lamina/domain';

/**
 * The roles `grantor` may grant as study access, in the domain's order: the assignable roles of
 * doc 1 §6, and Site, NOTO and LIS for a system admin working as SystemAdmin (the domain's
 * grantableRoleNames, the rule the server applies).
 */
export function assignableRoles(roles: readonly RoleView[], grantor: ActingUser): RoleView[] {
  const grantable = grantableRoleNames(grantor);
  const order = (name: string) => grantable.indexOf(name as RoleName);
  return roles.filter((r) => order(r.name) >= 0).sort((a, b) => order(a.name) - order(b.name));
}
