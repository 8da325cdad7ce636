import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { loginRequestSchema } from '@lamina/domain';
import { policy } from '../../platform/rbac/policy.js';
import { actorOf } from '../../platform/http/requestContext.js';
import { clearSessionCookie, setSessionCookie } from '../../platform/http/cookies.js';
import { UnauthorizedError } from '../../platform/errors.js';
import { presentUserInfo } from '../users/userInfoPresenter.js';
import type { AuthService } from './authService.js';

export function authRoutes(auth: AuthService, embeddedCookies: boolean) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post('/api/auth/login', { config: { policy: policy.public() }, schema: { body: loginRequestSchema } }, async (request, reply) => {
      const { tokens, principal } = await auth.login(request.body.username, request.body.password, {
        requestId: request.id,
        clientIp: request.ip,
      });
      setSessionCookie(reply, request, tokens.token, embeddedCookies);
      return { success: true, message: 'Logged in', csrfToken: tokens.csrfToken, user: presentUserInfo(principal) };
    });

    r.post('/api/auth/logout', { config: { policy: policy.authenticated() } }, async (request, reply) => {
      if (!request.session) throw new UnauthorizedError();
      await auth.logout(request.session.sessionId, actorOf(request));
      clearSessionCookie(reply, request, embeddedCookies);
      return { success: true, message: 'Logged out' };
    });

    r.get('/api/auth/csrf', { config: { policy: policy.authenticated() } }, async (request) => {
      if (!request.session) throw new UnauthorizedError();
      return { csrfToken: request.session.csrfToken };
    });
  };
}
