import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { Actor } from '../audit/audit.js';
import { UnauthorizedError } from '../errors.js';

/** The audit actor of a request: the logged-in user (if any), their work-as role, request id and IP. */
export function actorOf(request: FastifyRequest, principal: Principal | null = request.principal): Actor {
  return {
    userId: principal?.id ?? null,
    username: principal?.username ?? null,
    workAsRole: principal?.workAsRole?.name ?? null,
    requestId: request.id,
    clientIp: request.ip,
  };
}

/** The principal of a route whose policy requires a login (the guard has already checked it). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}
