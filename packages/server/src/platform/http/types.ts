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
    /** The study the request touches, checked visible by the guard (null: global route, or none). */
    studyId: number | null;
  }
}

export type { Actor };
