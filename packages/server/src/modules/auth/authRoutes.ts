import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  actionResponseSchema,
  changePasswordRequestSchema,
  loginRequestSchema,
  MESSAGES,
  loginResponseSchema,
  logoutResponseSchema,
  csrfResponseSchema,
  sessionStateSchema,
} from '@lamina/domain';
import { policy } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { clearSessionCookie, setSessionCookie } from '../../platform/http/cookies.js';
import { UnauthorizedError } from '../../platform/errors.js';
import { presentUserInfo } from '../users/userInfoPresenter.js';
import type { OidcClient } from '../../platform/auth/oidcClient.js';
import type { AuthService } from './authService.js';

/** `oidc`: the OpenID Connect client when single sign-on is configured (its logout follows ours). */
export function authRoutes(auth: AuthService, embeddedCookies: boolean, oidc: OidcClient | null = null) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/auth/login',
      {
        config: { policy: policy.public() },
        schema: { body: loginRequestSchema, response: { 200: loginResponseSchema } },
      },
      async (request, reply) => {
        const { tokens, principal } = await auth.login(request.body.username, request.body.password, {
          requestId: request.id,
          clientIp: request.ip,
        });
        setSessionCookie(reply, request, tokens.token, embeddedCookies);
        return {
          success: true as const,
          message: 'Logged in',
          csrfToken: tokens.csrfToken,
          user: presentUserInfo(principal),
        };
      },
    );

    r.post(
      '/api/auth/logout',
      {
        config: { policy: policy.authenticated({ duringPasswordChange: true }) },
        schema: { response: { 200: logoutResponseSchema } },
      },
      async (request, reply) => {
        if (!request.session) throw new UnauthorizedError();
        const ended = await auth.logout(request.session.sessionId, actorOf(request));
        clearSessionCookie(reply, request, embeddedCookies);
        // A single sign-on session also ends at the provider, when it offers an end_session_endpoint.
        const redirectUrl = ended.method === 'oidc' && oidc !== null ? await oidc.endSessionUrl(ended.idToken) : null;
        return { success: true, message: 'Logged out', redirectUrl };
      },
    );

    r.get(
      '/api/auth/session',
      { config: { policy: policy.public() }, schema: { response: { 200: sessionStateSchema } } },
      // The guard has loaded the session of a public request's cookie, when there is a live one.
      async (request) => ({ authenticated: request.session !== null && request.principal !== null }),
    );

    r.get(
      '/api/auth/csrf',
      {
        config: { policy: policy.authenticated({ duringPasswordChange: true }) },
        schema: { response: { 200: csrfResponseSchema } },
      },
      async (request) => {
        if (!request.session) throw new UnauthorizedError();
        return { csrfToken: request.session.csrfToken };
      },
    );

    r.post(
      '/api/auth/password',
      {
        config: { policy: policy.authenticated({ duringPasswordChange: true }) },
        schema: { body: changePasswordRequestSchema, response: { 200: actionResponseSchema } },
      },
      async (request) => {
        if (!request.session) throw new UnauthorizedError();
        await auth.changePassword(principalOf(request), request.session.sessionId, request.body, actorOf(request));
        return { success: true, message: MESSAGES.passwordChanged };
      },
    );
  };
}
