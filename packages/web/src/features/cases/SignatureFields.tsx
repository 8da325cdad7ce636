import { AnchorButton, FormGroup, H5, InputGroup } from '@blueprintjs/core';
import {
  SIGNATURE_MEANINGS,
  SIGNATURE_MESSAGES,
  SIGNATURE_PASSWORD_MAX,
  SIGNATURE_REAUTH_SECONDS,
  SIGNATURE_TEXT,
  signatureReauthUrl,
  userDisplayName,
  type SignatureKind,
} from '@lamina/domain';
import { useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import { isApiError } from '../../api/ApiError';
import { useStudy } from '../../api/studies';
import { useUserInfo } from '../../api/users';
import { currentPath } from '../../lib/browser';
import { Signing } from './api';
import './signature.css';

/**
 * Electronic signatures in the confirmations (issue 30; 21 CFR Part 11 §11.50, §11.100, §11.200):
 * where the case's study signs, Mark as Scored, Pass Lab QC and Pass ISC QC (CaseActionDialog) and
 * an image's Pass QC (PassQcDialog) show the meaning, the signer and the Part 11 statement, and ask
 * for the password, sent once as `signaturePassword`. An account that signs in only through single
 * sign-on (users/info `signsWith: 'provider'`) signs by signing in again at its identity provider
 * and then confirming without a password.
 */

/** When this tab last left for the identity provider to sign (sessionStorage: the tab's return). */
const REAUTH_KEY = 'lamina.signatureReauthAt';

function reauthenticatedRecently(): boolean {
  try {
    const at = Number(window.sessionStorage.getItem(REAUTH_KEY));
    return at > 0 && Date.now() - at < SIGNATURE_REAUTH_SECONDS * 1000;
  } catch {
    return false;
  }
}

function noteReauth(): void {
  try {
    window.sessionStorage.setItem(REAUTH_KEY, String(Date.now()));
  } catch {
    // Without storage the dialog offers the sign-in again; the server still decides.
  }
}

function forgetReauth(): void {
  try {
    window.sessionStorage.removeItem(REAUTH_KEY);
  } catch {
    // As above.
  }
}

export interface SignatureState {
  /** What the action signs; null where it signs nothing (e.g. an image not waiting for QC). */
  kind: SignatureKind | null;
  /** The action is a signature: the study signs (or the server answered 'Signature required'). */
  signs: boolean;
  /** The user signs at the identity provider, not with a password. */
  provider: boolean;
  /** The user came back from signing in again at the provider within the window. */
  reauthenticated: boolean;
  password: string;
  setPassword: (password: string) => void;
  /** How many times the server refused a signed request (the password field takes the focus again). */
  refusals: number;
  /** Confirm may be pressed: no signature, a provider signature, or a password typed. */
  ready: boolean;
  /** The request's signature, taking the password out of the dialog's state; undefined where none. */
  sign: () => Signing | undefined;
  /** After a failed request: the signature's own answers change what the block shows. */
  handleError: (error: unknown) => void;
}

/** The signature of one confirmation of an action of the study `studyId` that signs `kind`. */
export function useSignature(studyId: number, kind: SignatureKind | null): SignatureState {
  const study = useStudy(kind === null ? null : studyId);
  const provider = useUserInfo().data?.signsWith === 'provider';
  const [password, setPassword] = useState('');
  const [required, setRequired] = useState(false);
  const [reauthenticated, setReauthenticated] = useState(reauthenticatedRecently);
  const [refusals, setRefusals] = useState(0);
  const signs = kind !== null && (study.data?.signatures === true || required);
  return {
    kind,
    signs,
    provider,
    reauthenticated,
    password,
    setPassword,
    refusals,
    ready: !signs || provider || password !== '',
    sign: () => {
      if (!signs) return undefined;
      const signing = new Signing(provider ? undefined : password);
      // Never kept after the request: typed again after a refusal, gone with the dialog.
      setPassword('');
      return signing;
    },
    handleError: (error) => {
      if (signs) setRefusals((n) => n + 1);
      // The study's setting changed since it was read: the server knows it signs.
      if (isApiError(error, 400) && error.message === SIGNATURE_MESSAGES.required) setRequired(true);
      if (isApiError(error, 401) && error.message === SIGNATURE_MESSAGES.reauthenticate) {
        forgetReauth();
        setReauthenticated(false);
      }
    },
  };
}

/** The provider's sign-in again was used (the server takes it once). */
export function signatureUsed(signature: SignatureState): void {
  if (signature.signs && signature.provider) forgetReauth();
}

/**
 * The signature block of a confirmation: nothing where the action is not a signature. The password
 * field submits the dialog on Enter (`onSubmit`, when ready).
 */
export function SignatureFields({ signature, onSubmit }: { signature: SignatureState; onSubmit: () => void }) {
  const user = useUserInfo().data;
  const passwordId = useId();
  const passwordRef = useRef<HTMLInputElement>(null);
  // After a refusal (wrong password, lockout) the emptied field is where the user goes on.
  useEffect(() => {
    if (signature.refusals > 0) passwordRef.current?.focus();
  }, [signature.refusals]);
  if (!signature.signs || signature.kind === null) return null;
  const handleSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (signature.ready) onSubmit();
  };
  return (
    <section className="lamina-signature" aria-label={SIGNATURE_TEXT.heading}>
      <H5>{SIGNATURE_TEXT.heading}</H5>
      <p className="lamina-signature-meaning">“{SIGNATURE_MEANINGS[signature.kind]}”</p>
      {user && (
        <p className="lamina-signature-signer">
          {SIGNATURE_TEXT.signer}: <strong>{userDisplayName(user)}</strong> ({user.username})
        </p>
      )}
      <p className="lamina-signature-statement">{SIGNATURE_TEXT.statement}</p>
      {signature.provider ? (
        signature.reauthenticated ? (
          <p>{SIGNATURE_TEXT.reauthDone}</p>
        ) : (
          <>
            <p>{SIGNATURE_TEXT.reauthNeeded}</p>
            <AnchorButton
              href={signatureReauthUrl(currentPath())}
              onClick={noteReauth}
              icon="log-in"
              text={SIGNATURE_TEXT.reauthButton}
            />
          </>
        )
      ) : (
        <form onSubmit={handleSubmit}>
          {/* The account the password is for, for password managers; not shown. */}
          <input type="text" name="username" autoComplete="username" value={user?.username ?? ''} readOnly hidden />
          <FormGroup label={SIGNATURE_TEXT.password} labelFor={passwordId} labelInfo="(required)">
            <InputGroup
              id={passwordId}
              inputRef={passwordRef}
              type="password"
              name="password"
              autoComplete="current-password"
              // The password is what this dialog waits for (Confirm stays off until it is typed).
              autoFocus
              required
              maxLength={SIGNATURE_PASSWORD_MAX}
              value={signature.password}
              onValueChange={signature.setPassword}
              // Enter signs (the form holds two text fields, so the browser would not submit it).
              onKeyDown={(event) => {
                if (event.key !== 'Enter') return;
                event.preventDefault();
                if (signature.ready) onSubmit();
              }}
            />
          </FormGroup>
        </form>
      )}
    </section>
  );
}
