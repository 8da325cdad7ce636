import { randomBytes } from 'node:crypto';
import { roleByName, type RoleName } from '@lamina/domain';
import type { Db } from '../src/platform/db/database.js';
import { hashPassword } from '../src/platform/auth/passwords.js';

export const PASSWORD = 'correct horse battery staple';
let passwordHash: Promise<string> | undefined;

const unique = () => randomBytes(4).toString('hex');

export interface UserSpec {
  username?: string;
  registered?: boolean;
  systemAdmin?: boolean;
  active?: boolean;
  globalRoles?: RoleName[];
  /** Study access: study id → roles. */
  studyRoles?: { studyId: number; role: RoleName }[];
}

export async function createUser(db: Db, spec: UserSpec = {}): Promise<{ id: number; username: string }> {
  passwordHash ??= hashPassword(PASSWORD);
  const username = spec.username ?? `user-${unique()}@example.org`;
  const user = await db
    .insertInto('users')
    .values({
      username,
      first_name: 'Test',
      last_name: username,
      registered: spec.registered ?? true,
      is_system_admin: spec.systemAdmin ?? false,
      active: spec.active ?? true,
      password_hash: await passwordHash,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const role of spec.globalRoles ?? []) {
    await db.insertInto('user_roles').values({ user_id: user.id, role_id: roleByName(role).id }).execute();
  }
  for (const { studyId, role } of spec.studyRoles ?? []) {
    await db.insertInto('study_access').values({ user_id: user.id, study_id: studyId, role_id: roleByName(role).id }).execute();
  }
  return { id: user.id, username };
}

export async function createStudy(db: Db, name = `Study ${unique()}`): Promise<{ id: number; name: string }> {
  const study = await db.insertInto('studies').values({ name, sponsor: 'Test Sponsor' }).returning('id').executeTakeFirstOrThrow();
  return { id: study.id, name };
}
