import { OIDC_LOGIN_PATH } from './auth.js';

/**
 * The confirmation's electronic signature block (issue 30; the web's SignatureFields): shown where
 * the study signs Mark as Scored, Pass Lab QC or Pass ISC QC, with the meaning (SIGNATURE_MEANINGS).
 */
export const SIGNATURE_TEXT = {
  heading: 'Electronic signature',
  /** §11.100(c): the signer is told that the electronic signature binds as a handwritten one does. */
  statement:
    'Signing applies your electronic signature to this record (21 CFR Part 11); it is the legally binding equivalent of your handwritten signature.',
  signer: 'Signer',
  password: 'Password',
  /** A single sign-on account (signsWith 'provider'): the button to the identity provider. */
  reauthButton: 'Sign in again to sign',
  reauthNeeded:
    'Your account signs by signing in again at your identity provider: sign in there, then come back and confirm within 5 minutes.',
  reauthDone: 'You have signed in again at your identity provider: confirm to sign.',
} as const;

/**
 * Where a single sign-on user goes to sign: the OIDC login forcing a fresh sign-in at the provider,
 * then back to `redirect` (an app path); the signed action sent within SIGNATURE_REAUTH_SECONDS of
 * the return is accepted once without a password.
 */
export function signatureReauthUrl(redirect: string): string {
  return `${OIDC_LOGIN_PATH}?reauth=1&redirect=${encodeURIComponent(redirect)}`;
}
