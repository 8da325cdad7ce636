import type { Transaction } from 'kysely';
import { revokeTileAccess } from '../../platform/tiles/tileAccess.js';
import type { DB } from '../../platform/db/schema.js';
import { USER_MESSAGES, mayChangeAccount, roleById, type ActingUser, type StudyAccessChange } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { mayGrantRole } from './studyAccessPolicy.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/errors.js';

/**
 * Who changes the study access, as the audit actor states it: the actor's work-as role is the
 * principal's, and SystemAdmin is held only through the system-admin flag (principal.ts, heldRoles),
 * so working as SystemAdmin here is the flag and the role. An actor without a role (a job) is no
 * system admin.
 */
function changerOf(actor: Actor): ActingUser {
  const working = actor.workAsRole;
  return { isSystemAdmin: working === 'SystemAdmin', workAsRole: working === null ? null : { name: working } };
}

/**
 * The user whose study access changes, read under a share lock (a concurrent deactivation waits):
 * 404 when missing; 403 when it is a system admin's and the changer is not one working as
 * SystemAdmin (issue 26: only a system admin changes a system admin).
 */
async function accountToChange(tx: Transaction<DB>, userId: number, changer: ActingUser) {
  const user = await tx
    .selectFrom('users')
    .select(['id', 'active', 'is_system_admin'])
    .where('id', '=', userId)
    .forShare()
    .executeTakeFirst();
  if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
  if (!mayChangeAccount({ isSystemAdmin: user.is_system_admin }, changer))
    throw new ForbiddenError(USER_MESSAGES.systemAdminAccount);
  return user;
}

/**
 * Adds one study access row and its audit event inside the caller's transaction: the user must
 * exist and be active, and a system admin's access is changed only by a system admin; a row that
 * exists already is a conflict. The caller has checked the role.
 */
export async function grantStudyAccessInTransaction(
  tx: Transaction<DB>,
  change: StudyAccessChange,
  roleName: string,
  actor: Actor,
): Promise<void> {
  const user = await accountToChange(tx, change.userId, changerOf(actor));
  if (!user.active) throw new ConflictError(USER_MESSAGES.accountDeactivated);
  const inserted = await tx
    .insertInto('study_access')
    .values({ user_id: change.userId, study_id: change.studyId, role_id: change.roleId })
    .onConflict((oc) => oc.doNothing())
    .returning('user_id')
    .executeTakeFirst();
  if (!inserted) throw new ConflictError(USER_MESSAGES.studyAccessExists);
  await recordAudit(tx, actor, [
    {
      action: 'STUDY_ACCESS_GRANTED',
      entityType: 'user',
      entityId: change.userId,
      studyId: change.studyId,
      field: 'studyAccess',
      newValue: roleName,
    },
  ]);
}

/**
 * Study access (spec doc 1 §2.8): add and remove a user's role in a study, audited. The route's
 * policy has checked that the study is visible to the principal. Nobody changes their own access;
 * the roles are those the principal may grant (the same both ways).
 */
export class StudyAccessService {
  constructor(private readonly db: Db) {}

  async grant(change: StudyAccessChange, principal: Principal, actor: Actor): Promise<void> {
    const role = this.checkChange(change, principal, mayGrantRole(principal, change.roleId));
    await this.db.transaction().execute((tx) => grantStudyAccessInTransaction(tx, change, role, actor));
  }

  async revoke(change: StudyAccessChange, principal: Principal, actor: Actor): Promise<void> {
    const role = this.checkChange(change, principal, mayGrantRole(principal, change.roleId));
    await this.db.transaction().execute(async (tx) => {
      await accountToChange(tx, change.userId, principal);
      const removed = await tx
        .deleteFrom('study_access')
        .where('user_id', '=', change.userId)
        .where('study_id', '=', change.studyId)
        .where('role_id', '=', change.roleId)
        .returning('user_id')
        .executeTakeFirst();
      if (!removed) throw new NotFoundError(USER_MESSAGES.studyAccessNotFound);
      await revokeTileAccess(tx, change.userId); // their tile tokens stop within TILE_ACCESS_REFRESH
      await recordAudit(tx, actor, [
        {
          action: 'STUDY_ACCESS_REVOKED',
          entityType: 'user',
          entityId: change.userId,
          studyId: change.studyId,
          field: 'studyAccess',
          oldValue: role,
        },
      ]);
    });
  }

  /** The role's name, after the checks every change passes. */
  private checkChange(change: StudyAccessChange, principal: Principal, allowed: boolean): string {
    if (change.userId === principal.id) throw new ForbiddenError(USER_MESSAGES.ownStudyAccess);
    const role = roleById(change.roleId);
    if (!role || !allowed) throw new BadRequestError(USER_MESSAGES.roleNotAssignable);
    return role.name;
  }
}
