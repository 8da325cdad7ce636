import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CSRF_HEADER,
  MESSAGES,
  SESSION_COOKIE,
  VIEW_ALL_STUDIES,
  hasAny,
  isWorkingAsSystemAdmin,
} from '@lamina/domain';
import type { Db } from '../db/database.js';
import { loadPrincipal, type Principal } from '../auth/principal.js';
import { csrfMatches, loadSession, type SessionKeys } from '../auth/session.js';
import { AppError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { Policy, Scope } from '../rbac/policy.js';
import { assertStudyVisible, canSeeStudy } from '../rbac/studyScope.js';
import './types.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class MissingPolicyError extends AppError {
  constructor(route: string) {
    super(500, `Route ${route} declares no access policy`, 'MISSING_POLICY');
  }
}

const PUBLIC: Policy = { kind: 'public' };
const WEB_APP: Policy = { kind: 'webApp' };

/** Requests that may skip the CSRF token: the login itself (it has no session yet). */
const CSRF_EXEMPT = new Set(['POST /api/auth/login']);

function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true; // not a browser cross-origin request (curl, server-to-server)
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}

/**
 * The one guard. onRequest: session, CSRF and Origin for mutations, login, a pending password
 * change, registration and permission per the route's declared policy. preHandler (after the body
 * is parsed and validated): the study the request touches must be visible to the user.
 */
export function registerGuard(app: FastifyInstance, db: Db, keys: SessionKeys): void {
  app.decorateRequest('session', null);
  app.decorateRequest('principal', null);
  app.decorateRequest('studyId', null);

  app.addHook('onRequest', async (request) => {
    // Unmatched URLs reach the not-found handler, which answers 404 or the web app's page: a read
    // of one is the web app's (no session), anything else public.
    const policy = request.is404
      ? SAFE_METHODS.has(request.method)
        ? WEB_APP
        : PUBLIC
      : request.routeOptions.config.policy;
    if (!policy) {
      throw new MissingPolicyError(`${request.method} ${request.routeOptions.url ?? request.url}`);
    }
    // Signed-URL routes (tiles, local storage) verify their own token: no session, no CSRF (the
    // signature is the authorisation and these requests carry no cookie-borne authority).
    if (policy.kind === 'signedUrl' || policy.kind === 'webApp') return;
    const token = request.cookies[SESSION_COOKIE];
    if (token) {
      request.session = await loadSession(db, keys, token);
      if (request.session) request.principal = await loadPrincipal(db, request.session.userId);
      // The identity provider authenticated a single sign-on session: the account's one-time local
      // password (must-change) does not hold it (docs/DEPLOYMENT.md, "Single sign-on").
      if (request.session?.authMethod === 'oidc' && request.principal?.mustChangePassword)
        request.principal = { ...request.principal, mustChangePassword: false };
    }
    const mutating = !SAFE_METHODS.has(request.method);
    if (mutating && !sameOrigin(request)) throw new ForbiddenError(MESSAGES.crossSiteOrigin);
    if (policy.kind === 'public') {
      if (mutating && request.session && !CSRF_EXEMPT.has(`${request.method} ${request.routeOptions.url ?? ''}`)) {
        checkCsrf(request);
      }
      return;
    }
    const principal = request.principal;
    if (!principal || !request.session) throw new UnauthorizedError();
    if (mutating) checkCsrf(request);
    // A one-time password must be changed before anything else (not even registration counts first).
    if (principal.mustChangePassword && !(policy.kind === 'authenticated' && policy.duringPasswordChange)) {
      throw new ForbiddenError(MESSAGES.passwordChangeRequired);
    }
    switch (policy.kind) {
      case 'authenticated':
        return;
      case 'systemAdmin':
        if (!isWorkingAsSystemAdmin(principal)) throw new ForbiddenError();
        return;
      case 'permission':
        if (!principal.registered) throw new ForbiddenError(MESSAGES.welcome);
        if (!hasAny([...principal.actions], policy.anyOf)) throw new ForbiddenError();
        return;
    }
  });

  // Study scope, after the body is parsed and validated: the one place that decides it.
  app.addHook('preHandler', async (request) => {
    const policy = request.routeOptions.config.policy;
    if (policy?.kind !== 'permission' || !request.principal) return;
    request.studyId = await studyInScope(db, request.principal, policy.scope, request);
  });
}

/**
 * The study a permission route touches, checked visible to the principal: 404 when it is missing
 * or not visible (the resource's own message for resources), null for global routes and for an
 * optional study that is absent. Stored on the request (`request.studyId`) for the handler.
 */
async function studyInScope(
  db: Db,
  principal: Principal,
  scope: Scope,
  request: FastifyRequest,
): Promise<number | null> {
  switch (scope.kind) {
    case 'global':
      return null;
    case 'study': {
      const studyId = await scope.resolve(request);
      if (studyId === null || studyId === undefined) return null; // the route's study is optional and absent
      await assertStudyVisible(db, principal, studyId);
      return studyId;
    }
    case 'resource': {
      const found = await scope.studyOf(db, request, principal);
      const visible =
        found.found &&
        (found.studyId === null
          ? principal.actions.has(VIEW_ALL_STUDIES)
          : await canSeeStudy(db, principal, found.studyId));
      if (!found.found || !visible)
        throw new NotFoundError(typeof scope.notFound === 'function' ? scope.notFound(request) : scope.notFound);
      return found.studyId;
    }
  }
}

function checkCsrf(request: FastifyRequest): void {
  const header = request.headers[CSRF_HEADER];
  const given = Array.isArray(header) ? header[0] : header;
  if (!request.session || !csrfMatches(request.session.csrfToken, given))
    throw new ForbiddenError(MESSAGES.invalidCsrf);
}
