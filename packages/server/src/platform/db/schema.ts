import type { ColumnType, Generated } from 'kysely';

/** Table types of the database, kept beside the SQL migrations in ../../../migrations. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface OrganizationsTable {
  id: Generated<number>;
  name: string;
  group_email: string | null;
  created_at: Timestamp;
}

export interface RolesTable {
  id: number;
  name: string;
  display_name: string;
  description: string;
  role_type: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PermissionsTable {
  name: string;
  area: string;
  description: string;
}

export interface RolePermissionsTable {
  role_id: number;
  permission: string;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  first_name: string | null;
  last_name: string | null;
  organization_id: number | null;
  registered: Generated<boolean>;
  is_system_admin: Generated<boolean>;
  active: Generated<boolean>;
  password_hash: string | null;
  work_as_role_id: number | null;
  last_login_at: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserRolesTable {
  user_id: number;
  role_id: number;
}

export interface StudiesTable {
  id: Generated<number>;
  name: string;
  sponsor: string | null;
  on_hold: Generated<boolean>;
  on_hold_reason: string | null;
  is_noto: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface StudyAccessTable {
  user_id: number;
  study_id: number;
  role_id: number;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Date;
  ended_at: Date | null;
}

export interface LoginFailuresTable {
  id: Generated<number>;
  username: string;
  ip: string;
  occurred_at: Timestamp;
}

export interface AuditEventsTable {
  id: number;
  occurred_at: Date;
  user_id: number | null;
  username: string | null;
  work_as_role: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  study_id: number | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  reason: string | null;
  request_id: string | null;
  client_ip: string | null;
  prev_hash: string;
  hash: string;
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Timestamp;
}

export interface DB {
  organizations: OrganizationsTable;
  roles: RolesTable;
  permissions: PermissionsTable;
  role_permissions: RolePermissionsTable;
  users: UsersTable;
  user_roles: UserRolesTable;
  studies: StudiesTable;
  study_access: StudyAccessTable;
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
  audit_events: AuditEventsTable;
  schema_migrations: SchemaMigrationsTable;
}
