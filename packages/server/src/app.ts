import Fastify, { type FastifyInstance, type FastifyPluginAsync, type RouteOptions } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { installZodMessages } from '@lamina/domain';
import type { Config } from './platform/config.js';
import type { Database } from './platform/db/database.js';
import { SessionKeys } from './platform/auth/session.js';
import { registerGuard } from './platform/http/guard.js';
import { registerErrorHandler } from './platform/http/errorHandler.js';
import { registerInputTextRule } from './platform/http/inputText.js';
import { IMAGE_SECURITY_HEADERS, registerSecurityHeaders } from './platform/http/securityHeaders.js';
import type { Policy } from './platform/rbac/policy.js';
import { OidcClient } from './platform/auth/oidcClient.js';
import { OidcTransactionCodec } from './platform/auth/oidcTransaction.js';
import { validatorCompiler } from './platform/http/params.js';
import { Readiness } from './platform/health/readiness.js';
import { registerRequestIdHeader, requestIdFrom } from './platform/http/requestId.js';
import { registerWebApp } from './platform/http/webApp.js';
import { Metrics } from './platform/metrics/metrics.js';
import { registerHttpMetrics } from './platform/metrics/httpMetrics.js';
import { createSlidePipeline, type SlidePipeline, type SlidePipelineOverrides } from './platform/slidePipeline.js';
import { UploadKeys } from './platform/storage/keys.js';
import { LocalStorage } from './platform/storage/localStorage.js';
import { AuthService } from './modules/auth/authService.js';
import { authRoutes } from './modules/auth/authRoutes.js';
import { oidcRoutes } from './modules/auth/oidcRoutes.js';
import { currentUserRoutes } from './modules/users/currentUserRoutes.js';
import { userRoutes } from './modules/users/userRoutes.js';
import { userAdminRoutes } from './modules/users/userAdminRoutes.js';
import { organizationRoutes } from './modules/users/organizationRoutes.js';
import { roleRoutes } from './modules/users/roleRoutes.js';
import { studyAccessRoutes } from './modules/studyAccess/studyAccessRoutes.js';
import { configRoutes } from './modules/config/configRoutes.js';
import { studyRoutes } from './modules/studies/studyRoutes.js';
import { storageRoutes } from './modules/uploads/storageRoutes.js';
import { uploadRoutes } from './modules/uploads/uploadRoutes.js';
import { ImageService } from './modules/images/imageService.js';
import { imageRoutes } from './modules/images/imageRoutes.js';
import { mldRoutes } from './modules/mld/mldRoutes.js';
import { annotationRoutes } from './modules/annotations/annotationRoutes.js';
import { caseRoutes } from './modules/cases/caseRoutes.js';
import { outcomeRoutes } from './modules/outcomes/outcomeRoutes.js';
import { queryRoutes } from './modules/queries/queryRoutes.js';
import { reportRoutes } from './modules/reports/reportRoutes.js';
import { imageManagementRoutes } from './modules/imageManagement/imRoutes.js';
import { healthRoutes } from './modules/health/healthRoutes.js';
import { registerTileRoutes } from './modules/tiles/tileRoutes.js';
import { createAppServer, TileFastPath } from './modules/tiles/tileServer.js';
import { usesTileProcess } from './modules/tiles/tileProcess.js';
import { registerImageRoutes } from './commands/registerImageRoutes.js';
import { moveImageRoutes } from './commands/moveImageRoutes.js';
import { imEditRoutes } from './commands/imEditRoutes.js';
import { sampleRoutes } from './commands/sampleRoutes.js';

export interface AppDeps {
  config: Config;
  database: Database;
  /** Log to stdout (the server) or not at all (tests). */
  logger?: boolean;
  /** Slide pipeline services to use instead of the configured ones (tests). */
  slides?: SlidePipelineOverrides;
}

export interface RegisteredRoute {
  method: string;
  url: string;
  hasPolicy: boolean;
  /** The route's declared access policy (the route-walking test derives its checks from it). */
  policy: Policy | undefined;
  /** The route's declared input schemas (zod), for the policy, route-walking and fuzz tests. */
  schema: { body?: unknown; querystring?: unknown; params?: unknown; response?: Record<string, unknown> };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, for the policy-coverage test. */
    registeredRoutes: RegisteredRoute[];
    /** The process's Prometheus metrics (served on METRICS_PORT by main.ts). */
    metrics: Metrics;
  }
}

export async function buildApp({
  config,
  database,
  logger = false,
  slides: slideOverrides,
}: AppDeps): Promise<FastifyInstance> {
  installZodMessages();
  // Tile requests skip Fastify: the HTTP server answers them first (modules/tiles/tileServer.ts),
  // on the connections only once a self-test found the Node internals that needs (fastPathSelfTest.ts).
  // With a tile process (TILE_PROCESS=separate, main.ts) the connections also move between processes.
  const tileFastPath = await TileFastPath.start(
    { ...config.tiles, passesConnections: usesTileProcess(config) },
    config.roles.has('tiles'),
  );
  const app = Fastify({
    logger: logger ? { level: config.logLevel } : false,
    trustProxy: config.trustProxy,
    // The request id of log lines, audit rows and the X-Request-Id response header: the incoming
    // X-Request-Id when it is a short safe token (a load balancer's), else a new UUID.
    genReqId: (request) => requestIdFrom(request.headers['x-request-id']),
    bodyLimit: 1024 * 1024,
    serverFactory: (handler) => createAppServer(handler, tileFastPath),
  });
  // Node's server closes idle keep-alive connections only when its close begins: one busy then (an
  // upload) would stay open after its answer until its keep-alive timeout or the shutdown's grace.
  // While the app closes, every connection that has become idle is closed within 100 ms.
  let closingIdle: NodeJS.Timeout | null = null;
  app.addHook('preClose', async () => {
    closingIdle = setInterval(() => app.server.closeIdleConnections(), 100);
    closingIdle.unref();
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods)
      routes.push({
        method,
        url: route.url,
        hasPolicy: route.config?.policy !== undefined,
        policy: route.config?.policy,
        schema: {
          body: route.schema?.body,
          querystring: route.schema?.querystring,
          params: route.schema?.params,
          response: route.schema?.response as Record<string, unknown> | undefined,
        },
      });
  });

  const metrics = new Metrics(config.metrics.port !== null);
  app.decorate('metrics', metrics);
  registerRequestIdHeader(app);
  if (metrics.enabled) registerHttpMetrics(app, metrics);

  await app.register(fastifyCookie);
  registerErrorHandler(app);
  registerSecurityHeaders(app, config);
  const keys = new SessionKeys(config.sessionSecret);
  registerGuard(app, database.db, keys);
  registerInputTextRule(app);
  // Slide pipeline (storage, job queue, mail, tile tokens): app.slides, used by api, tiles and worker.
  const slides = createSlidePipeline(config, database, slideOverrides);
  app.decorate('slides', slides);
  slides.jobs.observeJobs((queue, seconds, outcome) => metrics.observeJob(queue, seconds, outcome));
  if (metrics.enabled && config.roles.has('worker')) metrics.reportQueueDepth(() => slides.jobs.depth());
  app.addHook('onClose', () => slides.close());
  // Liveness and readiness in every process, whatever its roles.
  await app.register(
    healthRoutes(new Readiness({ database, storage: slides.storage, roles: config.roles, log: app.log })),
  );

  if (config.roles.has('api')) {
    for (const routes of apiRoutes(config, database, slides, metrics, keys)) await app.register(routes);
  }

  if (config.roles.has('tiles')) {
    const tiles = await registerTileRoutes(app, {
      db: database.db,
      storage: slides.storage,
      tileTokens: slides.tileTokens,
      securityHeaders: IMAGE_SECURITY_HEADERS,
      localReads: config.tiles.reads,
      accessRefreshSeconds: config.tiles.accessRefreshSeconds,
      rangeCacheBytes: config.tiles.cacheBytes,
      metrics: metrics.enabled ? metrics.tiles : undefined,
    });
    // From now on the server answers tiles before Fastify; while closing, Fastify answers (503).
    tileFastPath.install(tiles.handler, tiles.respond, tiles.templates);
    tileFastPath.report(app.log, metrics.tiles);
    app.decorate('tileFastPath', tileFastPath);
    app.addHook('preClose', async () => {
      tileFastPath.stop();
    });
  }
  app.addHook('onClose', async () => {
    // Connections the tile process gave back (modules/tiles/tileProcess.ts): Node's server does not
    // count them, so the close waits for them here, before the services they use are closed.
    await tileFastPath.drained();
    if (closingIdle) clearInterval(closingIdle);
  });

  await registerWebApp(app, config.webDist);
  return app;
}

/**
 * The route table: every API route, module by module and then the commands, in one list
 * (docs/ARCHITECTURE.md "Layers"). Each entry is a module's (or a command's) routes with the
 * services they need; each route declares its policy beside it, and the guard enforces it.
 */
function apiRoutes(
  config: Config,
  database: Database,
  slides: SlidePipeline,
  metrics: Metrics,
  sessionKeys: SessionKeys,
): FastifyPluginAsync[] {
  const { db } = database;
  const { storage, jobs, mailer, tileTokens } = slides;
  const ttlSeconds = config.uploadUrlTtlSeconds;
  const uploadKeys = new UploadKeys(config.sessionSecret);
  const auth = new AuthService(db, sessionKeys, metrics, config.localLogin);
  const oidc = config.oidc === null ? null : new OidcClient(config.oidc);
  const images = new ImageService({ db, storage, mailer });
  const largeSlideBytes = config.processing.largeSlideBytes;
  return [
    configRoutes(config),
    // Log in and out (password, single sign-on), the current user.
    authRoutes(auth, config.embeddedCookies, oidc),
    oidcRoutes({
      auth,
      oidc,
      codec: new OidcTransactionCodec(config.sessionSecret),
      embeddedCookies: config.embeddedCookies,
    }),
    currentUserRoutes(db),
    studyRoutes(db),
    // Slides: the local storage's signed URLs, uploads, .mld imports, images.
    ...(storage instanceof LocalStorage ? [storageRoutes(storage)] : []),
    uploadRoutes(storage, ttlSeconds, uploadKeys),
    mldRoutes({ db, storage, keys: uploadKeys, jobs, ttlSeconds }),
    imageRoutes({ db, config, tileTokens, images }),
    caseRoutes(db),
    outcomeRoutes(db),
    annotationRoutes(db),
    queryRoutes(db),
    reportRoutes(db),
    imageManagementRoutes(db),
    // User management: users, accounts, study access, organizations, roles.
    userRoutes(db),
    userAdminRoutes(db),
    studyAccessRoutes(db),
    organizationRoutes(db),
    roleRoutes(db),
    // Commands: the changes that span modules (src/commands/).
    registerImageRoutes({ db, storage, jobs, largeSlideBytes, metrics, config, tileTokens }),
    moveImageRoutes(db),
    imEditRoutes(db),
    sampleRoutes({ db, storage, keys: uploadKeys, ttlSeconds }),
  ];
}
