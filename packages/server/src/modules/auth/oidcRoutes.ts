import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MESSAGES, OIDC_CALLBACK_PATH, OIDC_LOGIN_PATH, type SsoFailure } from '@lamina/domain';
import { policy } from '../../platform/rbac/policy.js';
import { setSessionCookie } from '../../platform/http/cookies.js';
import { NotFoundError } from '../../platform/errors.js';
import { OidcError, type OidcClient } from '../../platform/auth/oidcClient.js';
import {
  OIDC_TRANSACTION_COOKIE,
  OIDC_TRANSACTION_TTL_SECONDS,
  safeAppPath,
  type OidcTransactionCodec,
} from '../../platform/auth/oidcTransaction.js';
import { SsoRefusedError, type AuthService } from './authService.js';

export interface OidcRouteDeps {
  auth: AuthService;
  /** null: single sign-on is not configured (both routes answer 404). */
  oidc: OidcClient | null;
  codec: OidcTransactionCodec;
  embeddedCookies: boolean;
}

/** The transaction cookie goes only to the two OpenID Connect routes, for the length of one login. */
function transactionCookieOptions(request: FastifyRequest) {
  return {
    path: '/api/auth/oidc/',
    httpOnly: true,
    // Lax: sent on the provider's top-level GET redirect back to the callback.
    sameSite: 'lax' as const,
    secure: request.protocol === 'https',
  };
}

/** Where a single sign-on that logged nobody in sends the browser: /welcome with its message. */
function failurePage(reply: FastifyReply, failure: SsoFailure): FastifyReply {
  return reply.redirect(`/welcome?sso=${failure}`, 302);
}

/** The provider's `error` parameter when it is a plain OAuth error code (the audit row's words). */
function providerError(request: FastifyRequest): string | null {
  const error = (request.query as Record<string, unknown> | undefined)?.error;
  return typeof error === 'string' && /^[a-z_]{1,64}$/.test(error) ? error : null;
}

/**
 * Single sign-on with OpenID Connect (docs/DEPLOYMENT.md): the login starts with a page load of
 * GET /api/auth/oidc/login and comes back from the provider to GET /api/auth/oidc/callback. Both are
 * public and never answer 500: whatever goes wrong sends the browser to /welcome?sso=… (no session).
 */
export function oidcRoutes({ auth, oidc, codec, embeddedCookies }: OidcRouteDeps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get(
      OIDC_LOGIN_PATH,
      {
        config: { policy: policy.public() },
        schema: {
          querystring: z.object({
            redirect: z.string().max(2000).optional(),
            // A signed-in user signing in again to sign (issue 30): the provider must ask afresh.
            reauth: z.literal('1').optional(),
          }),
        },
      },
      async (request, reply) => {
        if (oidc === null) throw new NotFoundError(MESSAGES.ssoNotConfigured);
        let started: Awaited<ReturnType<OidcClient['start']>>;
        try {
          started = await oidc.start(safeAppPath(request.query.redirect), Date.now(), {
            reauth: request.query.reauth === '1',
          });
        } catch (error) {
          if (!(error instanceof OidcError)) throw error;
          request.log.warn({ err: error }, 'single sign-on could not start');
          const why =
            error.kind === 'unavailable' ? 'the provider could not be reached' : 'the login could not be started';
          await auth.recordSsoFailure(why, { requestId: request.id, clientIp: request.ip });
          return failurePage(reply, error.kind === 'unavailable' ? 'unavailable' : 'failed');
        }
        reply.setCookie(OIDC_TRANSACTION_COOKIE, codec.encode(started.transaction), {
          ...transactionCookieOptions(request),
          maxAge: OIDC_TRANSACTION_TTL_SECONDS,
        });
        return reply.header('Cache-Control', 'no-store').redirect(started.url, 302);
      },
    );

    r.get(OIDC_CALLBACK_PATH, { config: { policy: policy.public() } }, async (request, reply) => {
      if (oidc === null) throw new NotFoundError(MESSAGES.ssoNotConfigured);
      const requestInfo = { requestId: request.id, clientIp: request.ip };
      // One use: the transaction cookie is cleared whatever the outcome.
      const transaction = codec.decode(request.cookies[OIDC_TRANSACTION_COOKIE]);
      reply.clearCookie(OIDC_TRANSACTION_COOKIE, transactionCookieOptions(request));
      reply.header('Cache-Control', 'no-store');
      if (transaction === null) {
        await auth.recordSsoFailure(
          'no login under way in this browser (the transaction cookie is missing, altered or expired)',
          requestInfo,
        );
        return failurePage(reply, 'failed');
      }
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      let identity;
      try {
        identity = await oidc.finish(query, transaction);
      } catch (error) {
        if (!(error instanceof OidcError)) throw error;
        request.log.warn({ err: error }, 'single sign-on failed');
        const code = providerError(request);
        const why =
          error.kind === 'unavailable'
            ? 'the provider could not be reached'
            : code !== null
              ? `the provider answered ${code}`
              : "the provider's answer did not validate";
        await auth.recordSsoFailure(why, requestInfo);
        return failurePage(reply, error.kind === 'unavailable' ? 'unavailable' : 'failed');
      }
      if (transaction.reauth) {
        // Signing in again to sign (issue 30): the session stays; it is stamped when the provider
        // authenticated its own user just now. Either way the browser goes back to the page.
        await auth.reauthenticateForSignature(request.session, identity, requestInfo);
        return reply.redirect(safeAppPath(transaction.redirect), 302);
      }
      try {
        const { tokens } = await auth.loginWithSso(identity, requestInfo);
        setSessionCookie(reply, request, tokens.token, embeddedCookies);
      } catch (error) {
        if (error instanceof SsoRefusedError) return failurePage(reply, 'unknown');
        throw error;
      }
      return reply.redirect(safeAppPath(transaction.redirect), 302);
    });
  };
}
