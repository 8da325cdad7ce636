import { ASSIGNABLE_ROLE_NAMES, type RoleName, type RoleView } from '@lamina/domain';

/** The roles that may be granted as study access (doc 1 §6), in the domain's order. */
export function assignableRoles(roles: readonly RoleView[]): RoleView[] {
  const order = (name: string) => ASSIGNABLE_ROLE_NAMES.indexOf(name as RoleName);
  return roles.filter((r) => order(r.name) >= 0).sort((a, b) => order(a.name) - order(b.name));
}
