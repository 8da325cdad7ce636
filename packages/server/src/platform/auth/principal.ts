import { sql } from 'kysely';
import { isPermission, type Permission } from '@lamina/domain';
import type { Db } from '../db/database.js';

export interface RoleRefRow {
  id: number;
  name: string;
  displayName: string;
}

/** The authenticated user as the server reasons about them on every request. */
export interface Principal {
  id: number;
  username: string;
  firstName: string | null;
  lastName: string | null;
  organizationId: number | null;
  organizationName: string | null;
  registered: boolean;
  isSystemAdmin: boolean;
  lastLoginAt: Date | null;
  /** Every role the user holds: SystemAdmin through the flag, global roles, study-access roles. */
  roles: RoleRefRow[];
  workAsRole: RoleRefRow | null;
  /** The permissions of the work-as role (a misspelt permission does not compile). */
  actions: ReadonlySet<Permission>;
  studyCount: number;
  /** The account still has its one-time password: the guard refuses most routes until it is changed. */
  mustChangePassword: boolean;
  /** users.access_generation: tile tokens carry it, and stop when it is bumped. */
  accessGeneration: number;
  /**
   * How the user signs electronically (issue 30): with their password, or — an account without one,
   * single sign-on only — by signing in again at the identity provider.
   */
  signsWith: 'password' | 'provider';
}

const SYSTEM_ADMIN_ROLE_ID = 1;

/** Roles held by a user, in role id order. */
export async function heldRoles(db: Db, userId: number, isSystemAdmin: boolean): Promise<RoleRefRow[]> {
  const rows = await db
    .selectFrom('roles')
    .select(['id', 'name', 'display_name as displayName'])
    .where((eb) =>
      eb.or([
        eb('id', 'in', eb.selectFrom('user_roles').select('role_id').where('user_id', '=', userId)),
        eb('id', 'in', eb.selectFrom('study_access').select('role_id').where('user_id', '=', userId)),
        ...(isSystemAdmin ? [eb('id', '=', SYSTEM_ADMIN_ROLE_ID)] : []),
      ]),
    )
    .orderBy('id')
    .execute();
  return rows;
}

/** Loads the principal of an active user, or null when the user is missing or deactivated. */
export async function loadPrincipal(db: Db, userId: number): Promise<Principal | null> {
  const user = await db
    .selectFrom('users')
    .leftJoin('organizations', 'organizations.id', 'users.organization_id')
    .select([
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      'users.organization_id',
      'organizations.name as organization_name',
      'users.registered',
      'users.is_system_admin',
      'users.work_as_role_id',
      'users.last_login_at',
      'users.must_change_password',
      'users.access_generation',
      sql<boolean>`users.password_hash is not null`.as('has_password'),
      (eb) =>
        eb
          .selectFrom('study_access')
          .select(sql<number>`count(distinct study_id)::int`.as('n'))
          .whereRef('study_access.user_id', '=', 'users.id')
          .as('study_count'),
    ])
    .where('users.id', '=', userId)
    .where('users.active', '=', true)
    .executeTakeFirst();
  if (!user) return null;
  const roles = await heldRoles(db, user.id, user.is_system_admin);
  // The stored work-as role counts only while it is still held; else the first role held.
  const workAsRole = roles.find((r) => r.id === user.work_as_role_id) ?? roles[0] ?? null;
  const actions = workAsRole
    ? (await db.selectFrom('role_permissions').select('permission').where('role_id', '=', workAsRole.id).execute())
        .map((r) => r.permission)
        .filter(isPermission)
    : [];
  return {
    id: user.id,
    username: user.username,
    firstName: user.first_name,
    lastName: user.last_name,
    organizationId: user.organization_id,
    organizationName: user.organization_name,
    registered: user.registered,
    isSystemAdmin: user.is_system_admin,
    lastLoginAt: user.last_login_at,
    roles,
    workAsRole,
    actions: new Set(actions),
    studyCount: user.study_count ?? 0,
    mustChangePassword: user.must_change_password,
    accessGeneration: user.access_generation,
    signsWith: user.has_password ? 'password' : 'provider',
  };
}
