import { sql } from 'kysely';
import { PERMISSIONS, ROLES, ROLE_PERMISSIONS } from '@lamina/domain';
import type { Db } from '../db/database.js';
import { recordAudit, SYSTEM_ACTOR, type AuditEvent } from '../audit/audit.js';

/**
 * Brings the roles, permissions and role → permission map of the database to what the domain
 * package defines, at every start. Each grant or revocation is an audit event, so a change of the
 * permission model is as traceable as any other change.
 */
export async function syncReferenceData(db: Db): Promise<{ granted: number; revoked: number }> {
  return db.transaction().execute(async (tx) => {
    for (const role of ROLES) {
      await tx
        .insertInto('roles')
        .values({
          id: role.id,
          name: role.name,
          display_name: role.displayName,
          description: role.description,
          role_type: role.roleType,
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            name: role.name,
            display_name: role.displayName,
            description: role.description,
            role_type: role.roleType,
            updated_at: sql<Date>`now()`,
          }),
        )
        .execute();
    }
    await tx
      .insertInto('permissions')
      .values(PERMISSIONS.map((p) => ({ name: p.name, area: p.area, description: p.description })))
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet((eb) => ({ area: eb.ref('excluded.area'), description: eb.ref('excluded.description') })),
      )
      .execute();

    const current = await tx.selectFrom('role_permissions').select(['role_id', 'permission']).execute();
    const have = new Set(current.map((r) => `${r.role_id}:${r.permission}`));
    const want = new Set<string>();
    for (const role of ROLES) for (const p of ROLE_PERMISSIONS[role.name]) want.add(`${role.id}:${p}`);

    const events: AuditEvent[] = [];
    const grants = [...want].filter((k) => !have.has(k));
    const revokes = [...have].filter((k) => !want.has(k));
    const split = (k: string) => {
      const i = k.indexOf(':');
      return { role_id: Number(k.slice(0, i)), permission: k.slice(i + 1) };
    };
    if (grants.length > 0) await tx.insertInto('role_permissions').values(grants.map(split)).execute();
    for (const k of revokes) {
      const { role_id, permission } = split(k);
      await tx
        .deleteFrom('role_permissions')
        .where('role_id', '=', role_id)
        .where('permission', '=', permission)
        .execute();
    }
    for (const [keys, action] of [
      [grants, 'PERMISSION_GRANTED'],
      [revokes, 'PERMISSION_REVOKED'],
    ] as const) {
      for (const k of keys) {
        const { role_id, permission } = split(k);
        events.push({ action, entityType: 'role', entityId: role_id, field: 'permission', newValue: permission });
      }
    }
    await recordAudit(tx, SYSTEM_ACTOR, events);
    return { granted: grants.length, revoked: revokes.length };
  });
}
