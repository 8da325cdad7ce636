import type { FastifyRequest } from 'fastify';
import type { Permission } from '@lamina/domain';

/** Finds the study a request touches, so the guard can check the user may see it. */
export type StudyResolver = (request: FastifyRequest) => number | null | undefined | Promise<number | null | undefined>;

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
  /** A registered user holding any one of the permissions; optionally scoped to a study. */
  | { readonly kind: 'permission'; readonly anyOf: readonly Permission[]; readonly study?: StudyResolver }
  /** A system admin working as SystemAdmin. */
  | { readonly kind: 'systemAdmin' }
  /**
   * Authorised by a signed token in the URL that the handler verifies (tiles, local storage URLs):
   * no session is loaded, so the hot path makes no database round trip.
   */
  | { readonly kind: 'signedUrl' };

export const policy = {
  public: (): Policy => ({ kind: 'public' }),
  authenticated: (options: { duringPasswordChange?: boolean } = {}): Policy => ({
    kind: 'authenticated',
    duringPasswordChange: options.duringPasswordChange ?? false,
  }),
  anyOf: (anyOf: readonly Permission[], options: { study?: StudyResolver } = {}): Policy => ({
    kind: 'permission',
    anyOf,
    ...options,
  }),
  systemAdmin: (): Policy => ({ kind: 'systemAdmin' }),
  signedUrl: (): Policy => ({ kind: 'signedUrl' }),
};

function positiveInt(value: unknown): number | null {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** Study id from a path parameter (e.g. /api/studies/:id). */
export const studyFromParam =
  (name: string): StudyResolver =>
  (request) =>
    positiveInt((request.params as Record<string, unknown> | undefined)?.[name]) ?? -1;

/** Study id from a JSON body field (e.g. { studyId }). */
export const studyFromBody =
  (name = 'studyId'): StudyResolver =>
  (request) =>
    positiveInt((request.body as Record<string, unknown> | undefined)?.[name]) ?? -1;

/** Study id from a query-string field. */
export const studyFromQuery =
  (name = 'studyId'): StudyResolver =>
  (request) =>
    positiveInt((request.query as Record<string, unknown> | undefined)?.[name]) ?? -1;
