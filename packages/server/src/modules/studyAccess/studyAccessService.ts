import type { Transaction } from 'kysely';
import { revokeTileAccess } from '../../platform/tiles/tileAccess.js';
import type { DB } from '../../platform/db/schema.js';
import { USER_MESSAGES, roleById, type StudyAccessChange } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { mayGrantRole, mayRevokeRole } from './studyAccessPolicy.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/errors.js';

/**
 * Adds one study access row and its audit event inside the caller's transaction: the user must
 * exist and be active; a row that exists already is a conflict. The caller has checked the role.
 */
export async function grantStudyAccessInTransaction(
  tx: Transaction<DB>,
  change: StudyAccessChange,
  roleName: string,
  actor: Actor,
): Promise<void> {
  const user = await tx.selectFrom('users').select(['id', 'active']).where('id', '=', change.userId).executeTakeFirst();
  if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
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
 * policy has checked that the study is visible to the principal. Nobody changes their own access.
 */
export class StudyAccessService {
  constructor(private readonly db: Db) {}

  async grant(change: StudyAccessChange, principal: Principal, actor: Actor): Promise<void> {
    const role = this.checkChange(change, principal, mayGrantRole(change.roleId));
    await this.db.transaction().execute((tx) => grantStudyAccessInTransaction(tx, change, role, actor));
  }

  async revoke(change: StudyAccessChange, principal: Principal, actor: Actor): Promise<void> {
    const role = this.checkChange(change, principal, mayRevokeRole(principal, change.roleId));
    await this.db.transaction().execute(async (tx) => {
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
