import * as client from 'openid-client';
import type { OidcConfig } from '../config.js';
import { OIDC_TRANSACTION_TTL_SECONDS, type OidcTransaction } from './oidcTransaction.js';

/** Who the identity provider says logged in (the ID token's claims, or its UserInfo's). */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  /** The e-mail address claimed, if any; only a verified one is matched to an account. */
  email: string | null;
  emailVerified: boolean;
  /** The raw ID token: kept with the session as the id_token_hint of the logout at the provider. */
  idToken: string;
  /** When the user authenticated at the provider (the ID token's auth_time, epoch seconds), if given. */
  authTime: number | null;
}

/**
 * Why a login at the provider did not give an identity: `unavailable` — its discovery document
 * could not be read (down, unreachable, not a provider); `failed` — its answer did not validate
 * (state, PKCE, nonce, issuer, audience, signature, expiry … as openid-client checks them) or it
 * answered with an error. `detail` is for the log, never for the browser.
 */
export class OidcError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'failed',
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`OpenID Connect ${kind}: ${detail}`, options);
  }
}

/** The scopes asked for: the ID token (openid) and the user's e-mail address. */
const SCOPES = 'openid email profile';
/** Seconds each request to the provider may take. */
const TIMEOUT_SECONDS = 10;

/**
 * Lamina's client of one OpenID Connect provider (openid-client 6): the provider's metadata is
 * discovered at the first use and kept (a failed discovery is retried at the next login), the
 * client authenticates with its secret (client_secret_basic, or client_secret_post when that is all
 * the provider supports), and every login uses the authorization code flow with PKCE (S256), state
 * and nonce. Plain http is allowed only for an issuer on this machine (config.ts refuses others).
 */
export class OidcClient {
  private configuration: Promise<client.Configuration> | null = null;

  constructor(private readonly config: OidcConfig) {}

  private discover(): Promise<client.Configuration> {
    this.configuration ??= this.discoverOnce().catch((error: unknown) => {
      this.configuration = null;
      throw new OidcError('unavailable', `discovery of ${this.config.issuer} failed: ${describe(error)}`, {
        cause: error,
      });
    });
    return this.configuration;
  }

  private async discoverOnce(): Promise<client.Configuration> {
    const issuer = new URL(this.config.issuer);
    // Plain http only for a provider on this machine (config.ts refuses any other http issuer).
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: loopback only
    const execute = issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [];
    const metadata = { client_secret: this.config.clientSecret };
    const discovered = await client.discovery(
      issuer,
      this.config.clientId,
      metadata,
      client.ClientSecretBasic(this.config.clientSecret),
      { execute, timeout: TIMEOUT_SECONDS },
    );
    const methods = discovered.serverMetadata().token_endpoint_auth_methods_supported;
    if (methods === undefined || methods.includes('client_secret_basic')) return discovered;
    // The provider takes the secret in the form only.
    const configuration = new client.Configuration(
      discovered.serverMetadata(),
      this.config.clientId,
      metadata,
      client.ClientSecretPost(this.config.clientSecret),
    );
    configuration.timeout = TIMEOUT_SECONDS;
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- allowInsecureRequests again, as above
    for (const run of execute) run(configuration);
    return configuration;
  }

  /**
   * A new transaction (random state, nonce and PKCE verifier) and the provider's URL that starts it.
   * `reauth` (a signature, issue 30): the provider must authenticate the user afresh (prompt=login,
   * max_age=0) whatever session it holds, and tell when (auth_time).
   */
  async start(
    redirect: string,
    now = Date.now(),
    options: { reauth?: boolean } = {},
  ): Promise<{ url: string; transaction: OidcTransaction }> {
    const configuration = await this.discover();
    const transaction: OidcTransaction = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      redirect,
      expiresAt: now + OIDC_TRANSACTION_TTL_SECONDS * 1000,
      ...(options.reauth === true && { reauth: true as const }),
    };
    try {
      const url = client.buildAuthorizationUrl(configuration, {
        redirect_uri: this.config.redirectUri,
        scope: SCOPES,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
        code_challenge_method: 'S256',
        state: transaction.state,
        nonce: transaction.nonce,
        ...(options.reauth === true && { prompt: 'login', max_age: '0' }),
      });
      return { url: url.href, transaction };
    } catch (error) {
      throw new OidcError('failed', describe(error), { cause: error });
    }
  }

  /**
   * Checks the provider's answer at the callback (`query`: the callback's query string) against the
   * transaction, redeems the code with the PKCE verifier, validates the ID token (signature, issuer,
   * audience, expiry, nonce) and reads the e-mail claims (from UserInfo when the ID token has none).
   */
  async finish(query: string, transaction: OidcTransaction): Promise<OidcIdentity> {
    const configuration = await this.discover();
    const currentUrl = new URL(this.config.redirectUri);
    currentUrl.search = query;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: transaction.codeVerifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims || tokens.id_token === undefined) throw new Error('no ID token');
      let email: unknown = claims.email;
      let verified: unknown = claims.email_verified;
      if (typeof email !== 'string') {
        const info = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
        email = info.email;
        verified = info.email_verified;
      }
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof email === 'string' && email.trim() !== '' ? email.trim() : null,
        // Some providers send the claim as a string.
        emailVerified: verified === true || verified === 'true',
        idToken: tokens.id_token,
        authTime: typeof claims.auth_time === 'number' ? claims.auth_time : null,
      };
    } catch (error) {
      throw new OidcError('failed', describe(error), { cause: error });
    }
  }

  /**
   * The provider's logout for a session opened with `idToken` (RP-initiated logout, with
   * id_token_hint and the post-logout redirect back to /login), or null when the provider has no
   * end_session_endpoint or cannot be reached now (the local session is ended anyway).
   */
  async endSessionUrl(idToken: string | null): Promise<string | null> {
    let configuration: client.Configuration;
    try {
      configuration = await this.discover();
    } catch {
      return null;
    }
    if (configuration.serverMetadata().end_session_endpoint === undefined) return null;
    const parameters: Record<string, string> = { post_logout_redirect_uri: this.config.postLogoutRedirectUri };
    if (idToken !== null) parameters.id_token_hint = idToken;
    try {
      return client.buildEndSessionUrl(configuration, parameters).href;
    } catch {
      return null;
    }
  }
}

/** An error's code and message, for the log. */
function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const reason = (error as { error?: unknown }).error;
    return [typeof code === 'string' ? code : null, typeof reason === 'string' ? reason : null, error.message]
      .filter(Boolean)
      .join(': ');
  }
  return String(error);
}
