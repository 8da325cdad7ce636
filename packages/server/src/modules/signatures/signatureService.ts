import { createHash } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import {
  SIGNATURE_MEANINGS,
  SIGNATURE_MESSAGES,
  SIGNATURE_REAUTH_SECONDS,
  userDisplayName,
  type SignatureKind,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { verifyPassword } from '../../platform/auth/passwords.js';
import { clearLoginFailures, reservePasswordAttempt } from '../../platform/auth/loginThrottle.js';
import { BadRequestError, UnauthorizedError } from '../../platform/errors.js';

type Tx = Transaction<DB>;

/**
 * Electronic signatures (issue 30, 21 CFR Part 11; docs/COMPLIANCE.md). Signing is two steps:
 * `authenticateSigner` checks the signer's password before the action's transaction (a wrong one
 * is a failed login of the account, recorded whatever the action does), and `recordSignature`
 * writes the signature in the action's transaction, linked to what it signs.
 */

/** Someone whose password was checked for this one action: the proof `recordSignature` needs. */
export interface Signer {
  readonly userId: number;
  readonly username: string;
  readonly printedName: string;
  readonly method: 'password' | 'oidc';
}

/** Whether the study's Mark as Scored and QC passes are electronic signatures. */
export async function studySigns(db: Db | Tx, studyId: number): Promise<boolean> {
  const row = await db.selectFrom('studies').select('signatures').where('id', '=', studyId).executeTakeFirst();
  return row?.signatures === true;
}

/**
 * The signer of one action, authenticated afresh (§11.200(a)(1): at each signing, since a signature
 * is one action, not a session).
 * - With a Lamina password: no password, 400 'Signature required'. A wrong one is a failed login of
 *   the account from this IP (the login throttle: after too many, 429 for logins and signatures
 *   alike), audited SIGNATURE_FAILED, and answered 401.
 * - An account without one (single sign-on only) signs by signing in again at its provider
 *   (GET /api/auth/oidc/login?reauth=1): the session's stamp, if set within
 *   SIGNATURE_REAUTH_SECONDS, is used up by this signature; else 401, sign in again.
 */
export async function authenticateSigner(
  db: Db,
  principal: Principal,
  credentials: { password: string | undefined; sessionId: string | null },
  actor: Actor,
): Promise<Signer> {
  const { password } = credentials;
  const account = await db
    .selectFrom('users')
    .select(['username', 'first_name', 'last_name', 'password_hash'])
    .where('id', '=', principal.id)
    .executeTakeFirstOrThrow();
  const printedName = userDisplayName({
    username: account.username,
    firstName: account.first_name,
    lastName: account.last_name,
  });
  if (account.password_hash === null) {
    const used =
      credentials.sessionId === null
        ? undefined
        : await db
            .updateTable('sessions')
            .set({ signature_auth_at: null })
            .where('id', '=', credentials.sessionId)
            .where('user_id', '=', principal.id)
            .where('signature_auth_at', '>', sql<Date>`now() - make_interval(secs => ${SIGNATURE_REAUTH_SECONDS})`)
            .returning('id')
            .executeTakeFirst();
    if (!used) throw new UnauthorizedError(SIGNATURE_MESSAGES.reauthenticate);
    return { userId: principal.id, username: account.username, printedName, method: 'oidc' };
  }
  if (password === undefined || password === '') throw new BadRequestError(SIGNATURE_MESSAGES.required);
  const ip = actor.clientIp ?? 'unknown';
  const entity = { entityType: 'user', entityId: principal.id } as const;
  await reservePasswordAttempt(db, {
    username: account.username,
    ip,
    actor,
    throttled: { action: 'SIGNATURE_THROTTLED', ...entity },
  });
  if (!(await verifyPassword(account.password_hash, password))) {
    // The failure itself was recorded when the attempt was reserved: it counts toward the lockout.
    await db
      .transaction()
      .execute((tx) =>
        recordAudit(tx, actor, [{ action: 'SIGNATURE_FAILED', ...entity, newValue: 'signature password incorrect' }]),
      );
    throw new UnauthorizedError(SIGNATURE_MESSAGES.passwordIncorrect);
  }
  await db.transaction().execute((tx) => clearLoginFailures(tx, account.username, ip));
  return { userId: principal.id, username: account.username, printedName, method: 'password' };
}

/** JSON with every object's keys sorted: the same content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const contentHash = (content: unknown): string =>
  createHash('sha256').update(canonicalJson(content), 'utf8').digest('hex');

/**
 * Writes a signature in the signed action's transaction (§11.50, §11.70): signer, printed name,
 * time, meaning, the case (and image) it belongs to, the content signed and its SHA-256, and the
 * SIGNATURE_APPLIED audit event that shows it in the audit trail. `content` must name the record
 * (its ids) so that the hash cannot stand for another one.
 */
export async function recordSignature(
  tx: Tx,
  signer: Signer,
  signed: {
    kind: SignatureKind;
    studyId: number;
    caseId: number;
    imageId?: number | null;
    signedAt: Date;
    content: Record<string, unknown>;
  },
): Promise<AuditEvent[]> {
  const meaning = SIGNATURE_MEANINGS[signed.kind];
  const json = canonicalJson(signed.content);
  const hash = contentHash(signed.content);
  const row = await tx
    .insertInto('signatures')
    .values({
      user_id: signer.userId,
      printed_name: signer.printedName,
      signed_at: signed.signedAt,
      kind: signed.kind,
      meaning,
      method: signer.method,
      study_id: signed.studyId,
      case_id: signed.caseId,
      image_id: signed.imageId ?? null,
      content: json,
      content_hash: hash,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return [
    {
      action: 'SIGNATURE_APPLIED',
      entityType: signed.imageId ? 'image' : 'case',
      entityId: signed.imageId ?? signed.caseId,
      studyId: signed.studyId,
      field: 'signature',
      newValue: {
        signature: row.id,
        printedName: signer.printedName,
        signedAt: signed.signedAt.toISOString(),
        meaning,
        method: signer.method,
        contentHash: hash,
      },
    },
  ];
}
