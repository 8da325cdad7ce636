import { z } from 'zod';

/**
 * Electronic signatures (issue 30; 21 CFR Part 11 §11.50, §11.70, §11.100, §11.200; docs/COMPLIANCE.md).
 * In a study whose `signatures` setting is on, three actions are signatures: Mark as Scored, Pass Lab
 * QC and Pass ISC QC. The signer gives their password with the action; the server records who signed,
 * their printed name, when (UTC), the meaning and a hash of what was signed, linked to it.
 */
export const SIGNATURE_KINDS = ['READ', 'LAB_QC', 'ISC_QC'] as const;
export type SignatureKind = (typeof SIGNATURE_KINDS)[number];

/** The meaning of each signature (§11.50(a)(3)): shown in the confirmation, stored with it, reported. */
export const SIGNATURE_MEANINGS: Readonly<Record<SignatureKind, string>> = {
  READ: 'I completed this read',
  LAB_QC: 'Lab QC passed',
  ISC_QC: 'ISC QC passed',
};

/**
 * An account without a Lamina password signs by signing in again at its identity provider: the
 * provider must have authenticated it within this many seconds, and the next signature within as
 * many seconds of the return uses it, once.
 */
export const SIGNATURE_REAUTH_SECONDS = 300;

/** The longest password a signature request carries (the login's own limit). */
export const SIGNATURE_PASSWORD_MAX = 200;

/** The request's password field (PATCH …/status/forward, PATCH /api/images/{id}/pass-qc). */
export const signaturePasswordSchema = z.string().max(SIGNATURE_PASSWORD_MAX).optional();

export const SIGNATURE_MESSAGES = {
  /** 400: the study signs this action and the request carries no password. */
  required: 'Signature required',
  /** 401: the password is not the signer's (counted as a failed login of the account). */
  passwordIncorrect: 'The signature password is incorrect',
  /** 401: an account without a Lamina password signs by signing in again at its identity provider. */
  reauthenticate: 'Sign in again with your identity provider to sign',
} as const;

/** A signature as the audit trail and the read-outcomes report show it. */
export const signatureSchema = z.object({
  id: z.number().int(),
  signerId: z.number().int(),
  printedName: z.string(),
  signedAt: z.string(),
  meaning: z.string(),
  contentHash: z.string(),
});
export type Signature = z.infer<typeof signatureSchema>;
