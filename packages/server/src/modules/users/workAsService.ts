import { MESSAGES } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { loadPrincipal, type Principal } from '../../platform/auth/principal.js';
import { ForbiddenError, UnauthorizedError } from '../../platform/errors.js';
import { revokeTileAccess } from '../../platform/tiles/tileAccess.js';

/** Switches the role a user works as; the role must be one they hold. Audited. */
export async function switchWorkAsRole(db: Db, principal: Principal, roleId: number, actor: Actor): Promise<Principal> {
  const role = principal.roles.find((r) => r.id === roleId);
  if (!role) throw new ForbiddenError(MESSAGES.roleNotHeld);
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ work_as_role_id: roleId }).where('id', '=', principal.id).execute();
    // Tokens issued under the old role stop: the new role may not see the same studies.
    await revokeTileAccess(tx, principal.id);
    await recordAudit(tx, actor, [
      {
        action: 'WORK_AS_ROLE_CHANGED',
        entityType: 'user',
        entityId: principal.id,
        field: 'workAsRole',
        oldValue: principal.workAsRole?.name ?? null,
        newValue: role.name,
      },
    ]);
  });
  const updated = await loadPrincipal(db, principal.id);
  if (!updated) throw new UnauthorizedError();
  // The pending password change is the session's view (a single sign-on session has none).
  return { ...updated, mustChangePassword: principal.mustChangePassword };
}
