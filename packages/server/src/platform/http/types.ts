import type { Principal } from '../auth/principal.js';
import type { LoadedSession } from '../auth/session.js';
import type { Actor } from '../audit/audit.js';
import type { Policy } from '../rbac/policy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: Policy;
  }
  interface FastifyRequest {
    session: LoadedSession | null;
    principal: Principal | null;
  }
}

export type { Actor };
