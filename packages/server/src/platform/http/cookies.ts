import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';
import { SESSION_COOKIE, SESSION_TTL_HOURS } from '@lamina/domain';

/**
 * Session cookie: httpOnly, Secure over https, SameSite=Lax; in the NOTO embedded mode
 * SameSite=None; Secure; Partitioned (a third-party frame), where the CSRF token is what protects.
 */
export function sessionCookieOptions(request: FastifyRequest, embedded: boolean): CookieSerializeOptions {
  if (embedded) {
    return { path: '/', httpOnly: true, secure: true, sameSite: 'none', partitioned: true };
  }
  return { path: '/', httpOnly: true, secure: request.protocol === 'https', sameSite: 'lax' };
}

export function setSessionCookie(reply: FastifyReply, request: FastifyRequest, token: string, embedded: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    ...sessionCookieOptions(request, embedded),
    maxAge: SESSION_TTL_HOURS * 3600,
  });
}

export function clearSessionCookie(reply: FastifyReply, request: FastifyRequest, embedded: boolean): void {
  reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request, embedded));
}
