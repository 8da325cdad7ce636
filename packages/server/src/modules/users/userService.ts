import { randomBytes } from 'node:crypto';
import { revokeTileAccess } from '../../platform/tiles/tileAccess.js';
import { sql } from 'kysely';
import { USER_MESSAGES, mayChangeAccount, valuesDiffer, type UserCreate, type UserUpdate } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { endUserSessions } from '../../platform/auth/session.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { changeEvents, type FieldChange } from '../../platform/audit/changes.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { organizationExists } from './userQueries.js';

/** 18 random bytes as base64url: 24 characters, about 144 bits. */
export function generateInitialPassword(): string {
  return randomBytes(18).toString('base64url');
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

/** Only a system admin changes a system admin (issue 26): 403, before anything is changed. */
function assertMayChange(user: { is_system_admin: boolean }, principal: Principal): void {
  if (!mayChangeAccount({ isSystemAdmin: user.is_system_admin }, principal))
    throw new ForbiddenError(USER_MESSAGES.systemAdminAccount);
}

/** User accounts: profile save (which registers the user), creation by a system admin, deactivation. */
export class UserService {
  constructor(private readonly db: Db) {}

  /**
   * Saves a profile (PUT /api/users/{id}, spec doc 1 §2.8): the fields sent replace the stored
   * ones; first and last name must end up non-empty; saving registers the user. Audited per field.
   * A system admin's profile is saved only by a system admin (403 otherwise, issue 26).
   */
  async updateProfile(userId: number, input: UserUpdate, principal: Principal, actor: Actor): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const user = await tx
        .selectFrom('users')
        .select(['id', 'first_name', 'last_name', 'organization_id', 'registered', 'is_system_admin'])
        .where('id', '=', userId)
        .forUpdate()
        .executeTakeFirst();
      if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
      assertMayChange(user, principal);
      const next = {
        firstName: input.firstName ?? user.first_name,
        lastName: input.lastName ?? user.last_name,
        organizationId: input.organizationId !== undefined ? input.organizationId : user.organization_id,
      };
      if (!next.firstName?.trim()) throw new BadRequestError(USER_MESSAGES.firstNameRequired);
      if (!next.lastName?.trim()) throw new BadRequestError(USER_MESSAGES.lastNameRequired);
      if (
        next.organizationId !== null &&
        next.organizationId !== user.organization_id &&
        !(await organizationExists(tx, next.organizationId))
      ) {
        throw new BadRequestError(USER_MESSAGES.organizationNotFound);
      }
      const changes: FieldChange[] = [
        { field: 'firstName', before: user.first_name, after: next.firstName },
        { field: 'lastName', before: user.last_name, after: next.lastName },
        { field: 'organizationId', before: user.organization_id, after: next.organizationId },
      ].filter((c) => valuesDiffer(c.before, c.after));
      if (changes.length === 0 && user.registered) return;
      await tx
        .updateTable('users')
        .set({
          first_name: next.firstName,
          last_name: next.lastName,
          organization_id: next.organizationId,
          registered: true,
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', userId)
        .execute();
      const events = changeEvents({ action: 'USER_UPDATED', entityType: 'user', entityId: userId }, changes);
      if (!user.registered) {
        events.push({
          action: 'USER_REGISTERED',
          entityType: 'user',
          entityId: userId,
          field: 'registered',
          oldValue: false,
          newValue: true,
        });
      }
      await recordAudit(tx, actor, events);
    });
  }

  /**
   * Creates an account (POST /api/users, system admins): the email address, lower-cased, is the
   * username; the account is registered (names are given) and gets a one-time initial password,
   * stored argon2id-hashed and marked to be changed. The password is returned to the caller once
   * and never written to the audit trail.
   */
  async create(input: UserCreate, actor: Actor): Promise<{ id: number; initialPassword: string }> {
    const username = input.username.toLowerCase();
    const initialPassword = generateInitialPassword();
    const passwordHash = await hashPassword(initialPassword);
    try {
      const id = await this.db.transaction().execute(async (tx) => {
        const taken = await tx
          .selectFrom('users')
          .select('id')
          .where(sql`lower(username)`, '=', username)
          .executeTakeFirst();
        if (taken) throw new ConflictError(USER_MESSAGES.usernameTaken);
        if (input.organizationId !== null && !(await organizationExists(tx, input.organizationId))) {
          throw new BadRequestError(USER_MESSAGES.organizationNotFound);
        }
        const user = await tx
          .insertInto('users')
          .values({
            username,
            first_name: input.firstName,
            last_name: input.lastName,
            organization_id: input.organizationId,
            registered: true,
            password_hash: passwordHash,
            must_change_password: true,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const base = { action: 'USER_CREATED', entityType: 'user', entityId: user.id } as const;
        const events: AuditEvent[] = [
          { ...base, newValue: username },
          { ...base, field: 'username', newValue: username },
          { ...base, field: 'firstName', newValue: input.firstName },
          { ...base, field: 'lastName', newValue: input.lastName },
          { ...base, field: 'organizationId', newValue: input.organizationId },
          { ...base, field: 'registered', newValue: true },
          { action: 'INITIAL_PASSWORD_ISSUED', entityType: 'user', entityId: user.id, field: 'password' },
        ];
        await recordAudit(tx, actor, events);
        return user.id;
      });
      return { id, initialPassword };
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(USER_MESSAGES.usernameTaken);
      throw error;
    }
  }

  /**
   * Activates or deactivates an account (accounts are never deleted). Deactivation ends the user's
   * sessions at once. A user cannot deactivate themselves. Audited with the reason, if given.
   */
  async setActive(
    userId: number,
    active: boolean,
    reason: string | undefined,
    principal: Principal,
    actor: Actor,
  ): Promise<void> {
    if (userId === principal.id) throw new ForbiddenError(USER_MESSAGES.ownAccountStatus);
    await this.db.transaction().execute(async (tx) => {
      const user = await tx
        .selectFrom('users')
        .select(['id', 'active', 'is_system_admin'])
        .where('id', '=', userId)
        .forUpdate()
        .executeTakeFirst();
      if (!user) throw new NotFoundError(USER_MESSAGES.userNotFound);
      assertMayChange(user, principal);
      if (user.active === active)
        throw new ConflictError(active ? USER_MESSAGES.alreadyActive : USER_MESSAGES.alreadyDeactivated);
      await tx
        .updateTable('users')
        .set({ active, updated_at: sql<Date>`now()` })
        .where('id', '=', userId)
        .execute();
      if (!active) {
        await endUserSessions(tx, userId);
        await revokeTileAccess(tx, userId);
      }
      await recordAudit(tx, actor, [
        {
          action: active ? 'USER_ACTIVATED' : 'USER_DEACTIVATED',
          entityType: 'user',
          entityId: userId,
          field: 'active',
          oldValue: !active,
          newValue: active,
          reason: reason?.trim() ? reason.trim() : null,
        },
      ]);
    });
  }
}
