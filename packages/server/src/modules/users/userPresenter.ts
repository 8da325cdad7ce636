import type { OrganizationView, RoleView, UserListRow } from '@lamina/domain';
import type { UserRow } from './userQueries.js';

/** Rows of the users module → the domain's response types; no row leaves the server as it is. */

export function presentUserRow(row: UserRow): UserListRow {
  return {
    id: row.id,
    username: row.username,
    firstName: row.first_name,
    lastName: row.last_name,
    lastLoginDt: row.last_login_at?.toISOString() ?? null,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    studyCount: row.study_count ?? 0,
    registered: row.registered,
    active: row.active,
    isSystemAdmin: row.is_system_admin,
  };
}

export function presentOrganization(row: { id: number; name: string; group_email: string | null }): OrganizationView {
  return { id: row.id, name: row.name, groupEmail: row.group_email };
}

export function presentRole(row: {
  id: number;
  name: string;
  display_name: string;
  description: string;
  role_type: string;
  created_at: Date;
  updated_at: Date;
}): RoleView {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    description: row.description,
    roleType: row.role_type,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
