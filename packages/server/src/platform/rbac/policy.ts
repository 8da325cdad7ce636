import type { FastifyRequest } from 'fastify';
import type { Permission } from '@lamina/domain';
import type { Db } from '../db/database.js';
import type { Principal } from '../auth/principal.js';

/** Finds the study a request touches, so the guard can check the user may see it. */
export type StudyResolver = (request: FastifyRequest) => number | null | undefined | Promise<number | null | undefined>;

/** Where a resource addressed by id lives: absent, or in a study (null: not assigned to one yet). */
export type ResourceStudy = { found: false } | { found: true; studyId: number | null };

/**
 * The study scope of a permission route. Required: a route cannot forget it.
 * - `study`: the study comes from the request (a path parameter, the body, the query); a resolver
 *   that finds none (null/undefined) means the route's study is optional and absent.
 * - `resource`: the route addresses a resource by id (an image, later a case, annotation, query);
 *   one query finds its study. A missing resource, or one in a study the user cannot see, answers
 *   404 with the resource's message. A resource without a study is visible only with
 *   S_Main_ViewAllStudies (docs/PERMISSIONS.md).
 * - `global`: the route is truly cross-study (lists, user administration); its handler's queries
 *   filter by visibleStudies where they return study data. `why` says what makes it global.
 */
export type Scope =
  | { readonly kind: 'study'; readonly resolve: StudyResolver }
  | {
      readonly kind: 'resource';
      readonly resource: string;
      /** The 404 message; a function when the request says which kind of resource it addresses. */
      readonly notFound: string | ((request: FastifyRequest) => string);
      /** The principal lets a resolver hide what a blinded reader may not open (found: false). */
      readonly studyOf: (db: Db, request: FastifyRequest, principal: Principal) => Promise<ResourceStudy>;
    }
  | { readonly kind: 'global'; readonly why: string };

/**
 * Every route declares one of these in its `config.policy`; one guard enforces it
 * (platform/http/guard.ts). A route without a policy is refused, and a test fails.
 */
export type Policy =
  | { readonly kind: 'public' }
  /**
   * Any logged-in user, registered or not (users/info, logout, work-as …). While the user must
   * change their password, only routes with `duringPasswordChange` are open (users/info, csrf,
   * logout and the change itself); every other non-public route answers 403.
   */
  | { readonly kind: 'authenticated'; readonly duringPasswordChange?: boolean }
  /** A registered user holding any one of the permissions, within the route's study scope. */
  | { readonly kind: 'permission'; readonly anyOf: readonly Permission[]; readonly scope: Scope }
  /** A system admin working as SystemAdmin. */
  | { readonly kind: 'systemAdmin' }
  /**
   * Authorised by a signed token in the URL that the handler verifies (tiles, local storage URLs):
   * no session is loaded, so the hot path makes no database round trip.
   */
  | { readonly kind: 'signedUrl' }
  /**
   * The web app's own files and pages (GET and HEAD; the not-found handler's index.html too): the
   * same bytes for everyone, so no session is loaded — a first visit's half-dozen files do not each
   * wait on a database round trip before the page's own API calls (issue 28).
   */
  | { readonly kind: 'webApp' };

export const policy = {
  public: (): Policy => ({ kind: 'public' }),
  authenticated: (options: { duringPasswordChange?: boolean } = {}): Policy => ({
    kind: 'authenticated',
    duringPasswordChange: options.duringPasswordChange ?? false,
  }),
  anyOf: (anyOf: readonly Permission[], scope: Scope): Policy => ({ kind: 'permission', anyOf, scope }),
  systemAdmin: (): Policy => ({ kind: 'systemAdmin' }),
  signedUrl: (): Policy => ({ kind: 'signedUrl' }),
  webApp: (): Policy => ({ kind: 'webApp' }),
};

export const scope = {
  study: (resolve: StudyResolver): Scope => ({ kind: 'study', resolve }),
  resource: (
    resource: string,
    notFound: string | ((request: FastifyRequest) => string),
    studyOf: (db: Db, request: FastifyRequest, principal: Principal) => Promise<ResourceStudy>,
  ): Scope => ({ kind: 'resource', resource, notFound, studyOf }),
  global: (why: string): Scope => ({ kind: 'global', why }),
};

function positiveInt(value: unknown): number | null {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** Study id from a path parameter (e.g. /api/studies/:id). */
export const studyFromParam = (name: string): Scope =>
  scope.study((request) => positiveInt((request.params as Record<string, unknown> | undefined)?.[name]) ?? -1);

/** Study id from a JSON body field (e.g. { studyId }). */
export const studyFromBody = (name = 'studyId'): Scope =>
  scope.study((request) => positiveInt((request.body as Record<string, unknown> | undefined)?.[name]) ?? -1);

/** Study id from a query parameter (e.g. ?studyId=). */
export const studyFromQuery = (name = 'studyId'): Scope =>
  scope.study((request) => positiveInt((request.query as Record<string, unknown> | undefined)?.[name]) ?? -1);

/** A positive id from a path parameter, or null (the resource resolvers' first step). */
export function idParam(request: FastifyRequest, name = 'id'): number | null {
  return positiveInt((request.params as Record<string, unknown> | undefined)?.[name]);
}
