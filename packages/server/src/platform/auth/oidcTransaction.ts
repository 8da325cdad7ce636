import { createHmac, timingSafeEqual } from 'node:crypto';

/** Name of the cookie that carries one OpenID Connect login from its start to the callback. */
export const OIDC_TRANSACTION_COOKIE = 'lamina_oidc';
/** A login must come back from the provider within this many seconds. */
export const OIDC_TRANSACTION_TTL_SECONDS = 600;

/**
 * What the callback needs to check the provider's answer: the state and nonce sent, the PKCE code
 * verifier, where to go afterwards (a path of the app) and when the transaction expires.
 */
export interface OidcTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirect: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** A signed-in user signing in again to sign (issue 30), not a login. */
  reauth?: true;
}

/**
 * The login transaction travels in a short-lived, HttpOnly cookie HMAC-signed with a key of its own
 * (derived from SESSION_SECRET), so any api process of the deployment can finish a login another
 * one started, and nothing is stored before the user is known. A cookie altered, expired or signed
 * with another secret reads as absent.
 */
export class OidcTransactionCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('lamina:oidc-transaction:v1').digest();
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }

  encode(transaction: OidcTransaction): string {
    const body = Buffer.from(JSON.stringify(transaction)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(value: string | undefined, now = Date.now()): OidcTransaction | null {
    if (value === undefined || value.length > 4096) return null;
    const dot = value.indexOf('.');
    if (dot <= 0) return null;
    const body = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1));
    const expected = Buffer.from(this.sign(body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!isTransaction(parsed) || parsed.expiresAt <= now) return null;
    return parsed;
  }
}

function isTransaction(value: unknown): value is OidcTransaction {
  if (typeof value !== 'object' || value === null) return false;
  const t = value as Record<string, unknown>;
  return (
    typeof t.state === 'string' &&
    typeof t.nonce === 'string' &&
    typeof t.codeVerifier === 'string' &&
    typeof t.redirect === 'string' &&
    typeof t.expiresAt === 'number' &&
    (t.reauth === undefined || t.reauth === true)
  );
}

/**
 * Where to go after the login: a path of this app (one leading '/', no '//' or '/\\' that a
 * browser reads as another host, no control characters), else '/'.
 */
export function safeAppPath(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return '/';
  if (/[\p{Cc}\\]/u.test(value)) return '/';
  return value;
}
