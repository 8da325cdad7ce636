import { sql, type Kysely } from 'kysely';
import type { UserSortKey } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { likeContains } from '../../platform/db/paging.js';

/** Queries of the users module: SQL only. */
type Q = Kysely<DB>;

const SYSTEM_ADMIN_ROLE_ID = 1;

/** The columns of a users-list row, including the number of studies the user has access to. */
function userRows(db: Q) {
  return db
    .selectFrom('users')
    .leftJoin('organizations', 'organizations.id', 'users.organization_id')
    .select((eb) => [
      'users.id',
      'users.username',
      'users.first_name',
      'users.last_name',
      'users.last_login_at',
      'users.organization_id',
      'organizations.name as organization_name',
      'users.registered',
      'users.active',
      'users.is_system_admin',
      eb
        .selectFrom('study_access')
        .select(sql<number>`count(distinct study_access.study_id)::int`.as('n'))
        .whereRef('study_access.user_id', '=', 'users.id')
        .as('study_count'),
    ]);
}

export type UserRow = Awaited<ReturnType<ReturnType<typeof userRows>['executeTakeFirstOrThrow']>>;

export interface UserListFilter {
  /** Users holding this role: globally, as study access, or (SystemAdmin) through the flag. */
  roleId?: number | undefined;
  /** Matches first name, last name, 'first last' or username, case-insensitively. */
  name?: string | undefined;
  registered?: boolean | undefined;
  exclude?: readonly number[] | undefined;
  /** Only users with access to this study. */
  studyId?: number | undefined;
  sort: UserSortKey;
  descending: boolean;
  limit?: number | undefined;
  offset?: number | undefined;
}

const SORT_COLUMNS: Record<UserSortKey, string> = {
  username: 'sort_username',
  firstName: 'sort_first_name',
  lastName: 'sort_last_name',
  lastLoginDt: 'last_login_at',
  organizationName: 'sort_organization_name',
  studyCount: 'study_count',
  registered: 'registered',
};

/** One page of users, filtered and sorted in SQL; `total` counts every match. */
export async function listUsers(db: Q, filter: UserListFilter) {
  const direction = filter.descending ? sql`desc nulls last` : sql`asc nulls last`;
  let query = userRows(db).select([
    sql<string>`lower(users.username)`.as('sort_username'),
    sql<string | null>`lower(users.first_name)`.as('sort_first_name'),
    sql<string | null>`lower(users.last_name)`.as('sort_last_name'),
    sql<string | null>`lower(organizations.name)`.as('sort_organization_name'),
    sql<number>`count(*) over ()`.as('total'),
  ]);
  const { roleId, name, registered, exclude, studyId } = filter;
  if (roleId !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('user_roles')
            .select('user_roles.user_id')
            .whereRef('user_roles.user_id', '=', 'users.id')
            .where('user_roles.role_id', '=', roleId),
        ),
        eb.exists(
          eb
            .selectFrom('study_access')
            .select('study_access.user_id')
            .whereRef('study_access.user_id', '=', 'users.id')
            .where('study_access.role_id', '=', roleId),
        ),
        ...(roleId === SYSTEM_ADMIN_ROLE_ID ? [eb('users.is_system_admin', '=', true)] : []),
      ]),
    );
  }
  if (name) {
    const pattern = likeContains(name);
    query = query.where((eb) =>
      eb.or([
        eb('users.username', 'ilike', pattern),
        eb('users.first_name', 'ilike', pattern),
        eb('users.last_name', 'ilike', pattern),
        eb(sql<string>`coalesce(users.first_name, '') || ' ' || coalesce(users.last_name, '')`, 'ilike', pattern),
      ]),
    );
  }
  if (registered !== undefined) query = query.where('users.registered', '=', registered);
  if (exclude && exclude.length > 0) query = query.where('users.id', 'not in', [...exclude]);
  if (studyId !== undefined) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('study_access')
          .select('study_access.user_id')
          .whereRef('study_access.user_id', '=', 'users.id')
          .where('study_access.study_id', '=', studyId),
      ),
    );
  }
  let ordered = query
    .orderBy(sql`${sql.ref(SORT_COLUMNS[filter.sort])} ${direction}`)
    .orderBy('users.id', filter.descending ? 'desc' : 'asc');
  if (filter.limit !== undefined) ordered = ordered.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await ordered.execute();
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && (filter.offset ?? 0) > 0) {
    // Past the last page: count the matches without the window.
    total = (await listUsers(db, { ...filter, limit: undefined, offset: undefined })).total;
  }
  return { rows, total };
}

export async function findUser(db: Q, userId: number): Promise<UserRow | undefined> {
  return userRows(db).where('users.id', '=', userId).executeTakeFirst();
}

export async function listOrganizations(db: Q) {
  return db
    .selectFrom('organizations')
    .select(['id', 'name', 'group_email'])
    .orderBy(sql`lower(name)`)
    .orderBy('id')
    .execute();
}

export async function organizationExists(db: Q, id: number): Promise<boolean> {
  return (await db.selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function listRoles(db: Q) {
  return db
    .selectFrom('roles')
    .select(['id', 'name', 'display_name', 'description', 'role_type', 'created_at', 'updated_at'])
    .orderBy('id')
    .execute();
}
