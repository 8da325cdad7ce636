import { randomInt } from 'node:crypto';
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_HEADER, SESSION_COOKIE } from '@lamina/domain';
import type { RegisteredRoute } from '../../src/app.js';
import { verifyAuditChain } from '../../src/platform/audit/verify.js';
import { UploadKeys, uploadKey } from '../../src/platform/storage/keys.js';
import { login, type Session } from '../testApp.js';
import {
  createImage,
  createSlideTestApp,
  createStudy,
  createUser,
  PASSWORD,
  type SlideTestContext,
} from '../factories.js';
import { databaseFingerprint, changedTables, type Fingerprint } from '../support/fingerprint.js';
import { arbitraryFor, toJsonSchema, type Hints } from './schemaArbitrary.js';
import { evilString, mutated, percentEncode, queryString, serialiseBody } from './mutations.js';

/**
 * The standing fuzz suite (issue 9): for every route, requests generated from its zod schemas and
 * mutated (wrong types, huge strings, Unicode edge cases, NUL, deep nesting, extra fields), sent by
 * an administrator, a reader, an anonymous client or without the CSRF token. Asserts that nothing
 * answers ≥ 500, that a rejected request changes nothing in the database, and that the audit
 * chain verifies at the end.
 *
 * The routes are split into groups (ROUTE_GROUPS), one test file each (test/fuzz.<group>.test.ts,
 * each with its own database), so the server tier's workers share the work. Each file runs its
 * routes with a fixed seed (FUZZ_RUNS per route, reproducible in CI), then with a random seed
 * that is printed, within a short time budget (FUZZ_RANDOM_SECONDS): the routes in an order drawn
 * from the seed, each up to half FUZZ_RUNS, until the budget is spent. Replay a random run with
 * FUZZ_SEED=<seed> npx vitest run test/fuzz.<group>.test.ts — given a seed, the whole pass runs,
 * without the budget.
 */
export const FIXED_SEED = 20261124;
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 45);
const RANDOM_RUNS_PER_ROUTE = Math.ceil(RUNS_PER_ROUTE / 2);
const RANDOM_BUDGET_MS = Number(process.env.FUZZ_RANDOM_SECONDS ?? 10) * 1000;

/**
 * Which file fuzzes a route, by the first path segments of its URL; `rest` takes every route no
 * other group names (a new module's routes are fuzzed there until a group names them).
 */
export const ROUTE_GROUPS = {
  accounts: [
    '/api/auth',
    '/api/users',
    '/api/organizations',
    '/api/permissions',
    '/api/config',
    '/api/health',
    '/api/ready',
  ],
  slides: ['/api/images', '/api/uploads', '/api/signed-urls', '/api/storage', '/api/mld', '/tiles'],
  studies: ['/api/studies', '/api/cases', '/api/samples', '/api/imageManagement', '/api/report', '/api/audit-trail'],
  rest: [],
} satisfies Record<string, string[]>;
export type RouteGroup = keyof typeof ROUTE_GROUPS;

export function groupOf(route: Pick<RegisteredRoute, 'url'>): RouteGroup {
  for (const [group, prefixes] of Object.entries(ROUTE_GROUPS) as [RouteGroup, string[]][]) {
    if (prefixes.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`))) return group;
  }
  return 'rest';
}

/** Rejections that record by design: failed logins and password changes are audited and throttled. */
const RECORDS_REJECTIONS = new Set(['POST /api/auth/login', 'POST /api/auth/password']);

interface FuzzRequest {
  actor: 'admin' | 'adminWithoutCsrf' | 'reader' | 'anonymous';
  params: unknown;
  query: unknown;
  body: unknown;
  rawBody: string | null;
  contentType: string;
}

/** The route's URL with its parameters filled in (`:name` and the `*` wildcard). */
function fillUrl(route: RegisteredRoute, params: unknown): string {
  const values = (params !== null && typeof params === 'object' ? params : {}) as Record<string, unknown>;
  const text = (value: unknown) =>
    value === undefined ? '' : typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return route.url
    .replace(/:([A-Za-z]+)/g, (_m, name: string) => percentEncode(text(values[name])))
    .replace('*', () => text(values['*']));
}

/** Registers the fuzz tests of one group of routes in the calling test file. */
export function fuzzRouteGroup(group: RouteGroup): void {
  let t: SlideTestContext;
  let sessions: { admin: Session; reader: Session; victim: Session | null };
  let victimName: string;
  let fingerprint: Fingerprint;
  let hints: Hints;

  beforeAll(async () => {
    t = await createSlideTestApp();
    const db = t.database.db;
    const study = await createStudy(db);
    const hidden = await createStudy(db);
    const admin = await createUser(db, { systemAdmin: true, globalRoles: ['SystemAdmin'] });
    const reader = await createUser(db, { studyRoles: [{ studyId: study.id, role: 'CR' }] });
    const victim = await createUser(db, { globalRoles: ['StudyAdmin'] });
    victimName = victim.username;
    const image = await createImage(db, { studyId: study.id });
    const key = uploadKey(study.id, 'fuzz.svs');
    await t.app.slides.storage.write(key, Buffer.from('not a slide'));
    // Issued to the admin, as POST /api/uploads/multipart would: the multipart calls check the owner.
    const multipartKey = new UploadKeys(t.config.sessionSecret).issue(study.id, admin.id, 'big.svs');
    const { uploadId } = await t.app.slides.storage.createMultipartUpload(multipartKey);
    sessions = {
      admin: await login(t.app, admin.username, PASSWORD),
      reader: await login(t.app, reader.username, PASSWORD),
      victim: await login(t.app, victim.username, PASSWORD),
    };

    const ids = [admin.id, reader.id, victim.id, study.id, hidden.id, image.id, 1, 2, 3];
    const id = fc.oneof(fc.constantFrom(...ids), fc.integer({ min: -5, max: 100_000 }));
    const byName: Record<string, fc.Arbitrary<unknown>> = {
      id,
      studyId: fc.oneof(fc.constantFrom(study.id, hidden.id), id),
      filterByStudyId: fc.oneof(fc.constantFrom(study.id, hidden.id), id),
      userId: fc.oneof(fc.constantFrom(admin.id, reader.id, victim.id), id),
      imageId: fc.oneof(fc.constant(image.id), id),
      imageToReplaceId: fc.oneof(fc.constant(image.id), id, fc.constant(null)),
      roleId: fc.integer({ min: -1, max: 14 }),
      organizationId: fc.oneof(fc.constant(null), id),
      key: fc.oneof(fc.constantFrom(key, multipartKey), evilString),
      s3Key: fc.oneof(fc.constantFrom(key, multipartKey), evilString),
      uploadId: fc.oneof(fc.constant(uploadId), evilString),
      username: fc.oneof(fc.constantFrom(admin.username, victim.username), fc.emailAddress(), evilString),
    };
    hints = (name) => byName[name];

    fingerprint = await databaseFingerprint(db);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  function requestArbitrary(route: RegisteredRoute): fc.Arbitrary<FuzzRequest> {
    const part = (schema: unknown, fallback: fc.Arbitrary<unknown>) => {
      const json = toJsonSchema(schema);
      return mutated(json ? arbitraryFor(json, hints) : fallback);
    };
    const paramNames = [...route.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string);
    const untypedParams = fc.record(
      Object.fromEntries([
        ...paramNames.map((name) => [name, hints(name) ?? fc.oneof(fc.nat({ max: 300 }).map(String), evilString)]),
        ...(route.url.includes('*')
          ? [
              [
                '*',
                fc.oneof(fc.constantFrom('uploads/1/x/a.svs', 'images/1/pyramid.tif', '..%2F..%2Fetc', ''), evilString),
              ],
            ]
          : []),
      ]),
    );
    return fc.record({
      actor: fc.constantFrom(
        'admin',
        'admin',
        'admin',
        'admin',
        'admin',
        'admin',
        'adminWithoutCsrf',
        'reader',
        'anonymous',
      ),
      params: route.schema.params ? part(route.schema.params, untypedParams) : mutated(untypedParams),
      query: route.schema.querystring
        ? part(route.schema.querystring, fc.constant({}))
        : fc.oneof(fc.constant(undefined), mutated(fc.constant({ t: 'token' }))),
      body: route.schema.body ? part(route.schema.body, fc.constant({})) : fc.constant(undefined),
      rawBody: fc.oneof(
        { weight: 12, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[1,]', '"\\ud800"', '1e999', '\u0000', 'null', '[]') },
      ),
      contentType: fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
          ),
        },
      ),
    });
  }

  async function send(route: RegisteredRoute, r: FuzzRequest) {
    const query = queryString(r.query);
    const url = fillUrl(route, r.params) + (query ? `?${query}` : '');
    // Logout and password changes end sessions: they run as a throwaway account.
    const own = RECORDS_REJECTIONS.has(`${route.method} ${route.url}`) || route.url === '/api/auth/logout';
    const session =
      r.actor === 'anonymous' ? null : own ? sessions.victim : r.actor === 'reader' ? sessions.reader : sessions.admin;
    const headers: Record<string, string> = {};
    if (session && r.actor !== 'adminWithoutCsrf') headers[CSRF_HEADER] = session.csrfToken;
    const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method) || r.rawBody !== null;
    const payload = r.rawBody ?? (r.body === undefined ? undefined : serialiseBody(r.body));
    if (hasBody && payload !== undefined) headers['content-type'] = r.contentType;
    const response = await t.app.inject({
      method: route.method as 'GET',
      url,
      headers,
      ...(session ? { cookies: { [SESSION_COOKIE]: session.cookie } } : {}),
      ...(hasBody && payload !== undefined ? { payload } : {}),
    });
    if (own && route.url === '/api/auth/logout' && response.statusCode === 200) {
      // The throwaway account's session ended: log in again (if its failed attempts allow it).
      sessions.victim = await login(t.app, victimName, PASSWORD).catch(() => null);
    }
    return { url, response };
  }

  /** This group's routes: everything registered that groupOf puts here, HEAD covered by its GET. */
  function routesUnderTest(): RegisteredRoute[] {
    return t.app.registeredRoutes.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && groupOf(r) === group);
  }

  /** Status codes seen per route: printed, so a run shows which routes were reached past validation. */
  const statuses = new Map<string, Map<number, number>>();

  async function fuzzRoutes(routes: RegisteredRoute[], seed: number, runsPerRoute: number, deadline = Infinity) {
    const failures: string[] = [];
    let requests = 0;
    let routesRun = 0;
    for (const route of routes) {
      if (Date.now() >= deadline) break;
      routesRun += 1;
      const name = `${route.method} ${route.url}`;
      const result = await fc.check(
        fc.asyncProperty(requestArbitrary(route), async (request) => {
          if (!sessions.victim) sessions.victim = await login(t.app, victimName, PASSWORD).catch(() => null);
          const before = await fingerprint();
          const { url, response } = await send(route, request);
          requests += 1;
          const seen = statuses.get(name) ?? new Map<number, number>();
          seen.set(response.statusCode, (seen.get(response.statusCode) ?? 0) + 1);
          statuses.set(name, seen);
          if (response.statusCode >= 500)
            throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
          if (response.statusCode >= 400 && !RECORDS_REJECTIONS.has(name)) {
            const after = await fingerprint();
            const changed = changedTables(before, after);
            if (changed.length > 0)
              throw new Error(
                `${url} was refused with ${response.statusCode} but changed ${changed.join(', ')}: ${response.body.slice(0, 200)}`,
              );
          }
        }),
        // A deadline ends the pass between routes, and between runs within the route it falls in.
        {
          seed,
          numRuns: runsPerRoute,
          endOnFailure: true,
          ...(deadline === Infinity ? {} : { interruptAfterTimeLimit: Math.max(1, deadline - Date.now()) }),
        },
      );
      if (result.failed) {
        const error =
          result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
        failures.push(`${name}: ${error}\n${fc.defaultReportMessage(result) ?? ''}`.slice(0, 3000));
      }
    }
    return { failures, requests, routesRun };
  }

  const file = `test/fuzz.${group}.test.ts`;
  describe(`fuzzing the ${group} routes`, () => {
    it('has routes, and each group of routes its test file', () => {
      expect(routesUnderTest().length).toBeGreaterThan(0);
      const files = readdirSync(new URL('..', import.meta.url)).filter((name) => /^fuzz\..+\.test\.ts$/.test(name));
      expect(files.sort()).toEqual(
        Object.keys(ROUTE_GROUPS)
          .map((g) => `fuzz.${g}.test.ts`)
          .sort(),
      );
    });

    it(`fixed seed ${FIXED_SEED}: no 5xx, rejected requests change nothing`, async () => {
      const routes = routesUnderTest();
      const { failures, requests } = await fuzzRoutes(routes, FIXED_SEED, RUNS_PER_ROUTE);
      console.log(`fuzz ${group}: ${requests} requests over ${routes.length} routes (seed ${FIXED_SEED})`);
      expect(failures).toEqual([]);
    }, 900_000);

    it('random seed (printed), within its time budget: no 5xx, rejected requests change nothing', async () => {
      const given = process.env.FUZZ_SEED;
      const seed = Number(given ?? randomInt(2 ** 31));
      console.log(`fuzz ${group}: random seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run ${file})`);
      // The routes in an order drawn from the seed, so that the budget cuts a different tail each run.
      const routes = fc.sample(fc.shuffledSubarray(routesUnderTest(), { minLength: routesUnderTest().length }), {
        seed,
        numRuns: 1,
      })[0] as RegisteredRoute[];
      const started = Date.now();
      const { failures, requests, routesRun } = await fuzzRoutes(
        routes,
        seed,
        RANDOM_RUNS_PER_ROUTE,
        given === undefined ? started + RANDOM_BUDGET_MS : Infinity,
      );
      console.log(
        `fuzz ${group}: ${requests} requests over ${routesRun} of ${routes.length} routes in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${seed}); database read in full ${fingerprint.stats.full} times, ${fingerprint.stats.reused} readings reused`,
      );
      expect(failures).toEqual([]);
    }, 900_000);

    it('the audit chain verifies after all of it', async () => {
      console.log(
        [...statuses]
          .map(
            ([route, seen]) =>
              `${route}  ${[...seen]
                .sort(([a], [b]) => a - b)
                .map(([code, n]) => `${code}×${n}`)
                .join(' ')}`,
          )
          .join('\n'),
      );
      const result = await verifyAuditChain(t.database.db);
      expect(result.brokenAt).toBeUndefined();
      expect(result.ok).toBe(true);
      expect(result.rowsChecked).toBeGreaterThan(0);
    });
  });
}
