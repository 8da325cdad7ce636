import { randomBytes } from 'node:crypto';
import path from 'node:path';

export type ServerRole = 'api' | 'tiles' | 'worker';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Unset: embedded PGlite in dataDir/db. */
  databaseUrl: string | undefined;
  roles: ReadonlySet<ServerRole>;
  demo: boolean;
  /** Password of every demo account; generated (and printed) when DEMO_PASSWORD is unset. */
  demoPassword: string;
  demoPasswordGenerated: boolean;
  sessionSecret: string;
  ssoLoginUrl: string | null;
  ssoLogoutUrl: string | null;
  /** Single sign-on with OpenID Connect (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET); null → off. */
  oidc: OidcConfig | null;
  /** LOCAL_LOGIN: username and password login (off only with OpenID Connect configured). */
  localLogin: boolean;
  tileServerLocation: string;
  /** Origins allowed to embed the app (CSP frame-ancestors); empty → 'none'. */
  frameAncestors: string[];
  /** Cookie mode for the NOTO embedded deployment: SameSite=None; Secure; Partitioned. */
  embeddedCookies: boolean;
  /** Serve the built web app from this folder when it exists. */
  webDist: string;
  logLevel: string;
  /** Trust X-Forwarded-* from a reverse proxy (for the client IP and https detection). */
  trustProxy: boolean;
  /** Object storage (slide pipeline): the local folder DATA_DIR/storage, or S3. */
  storage: StorageConfig;
  /** SMTP server for notifications (smtp://user:pass@host:port, smtps://…); unset → outbox only. */
  smtpUrl: string | null;
  mailFrom: string;
  /**
   * The address of the product in e-mails (links to a query): PUBLIC_URL, default http://localhost:{PORT}.
   */
  publicUrl: string;
  /**
   * When worker processes look for queries whose follow-up date came and send their reminders: a
   * cron expression in UTC (QUERY_REMINDER_CRON, default every 15 minutes); 'off' → never.
   */
  queryReminderCron: string | null;
  /** Lifetime of signed upload and download URLs, seconds. */
  uploadUrlTtlSeconds: number;
  /** Where the audit chain's head is copied (JSON lines), outside the database. */
  auditAnchorFile: string;
  /** Seconds between anchors of the audit chain's head (written only when it moved). */
  auditAnchorIntervalSeconds: number;
  /**
   * SHUTDOWN_GRACE: seconds that in-flight requests and running jobs get after SIGTERM/SIGINT;
   * then jobs still running go back to their queue and open connections are closed
   * (docs/DEPLOYMENT.md).
   */
  shutdownGraceSeconds: number;
  /** Prometheus metrics (docs/DEPLOYMENT.md): served on their own port, off when METRICS_PORT is unset. */
  metrics: MetricsConfig;
  /** The processing worker's limits and job supervision (docs/WORKFLOW.md). */
  processing: ProcessingConfig;
  /** How the tile server answers (docs/ARCHITECTURE.md, docs/BENCHMARKS.md). */
  tiles: TilesConfig;
  /**
   * HEADERS_TIMEOUT (formerly TILE_HEADERS_TIMEOUT): seconds from the first byte of a request head
   * to its 408 when it has not all arrived, on every path of the public port — API, tiles, web app —
   * whether a tile connection or Node's HTTP server holds it (tileServer.ts headTimeouts). Default 60.
   */
  headersTimeoutSeconds: number;
}

export interface OidcConfig {
  /** OIDC_ISSUER: the provider's issuer identifier (its discovery document is at /.well-known/openid-configuration). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** OIDC_NAME: the login button's 'Log in with {name}' (default 'single sign-on'). */
  name: string;
  /** PUBLIC_URL/api/auth/oidc/callback: the redirect URI registered at the provider. */
  redirectUri: string;
  /** PUBLIC_URL/login: where the provider sends the browser back after its logout. */
  postLogoutRedirectUri: string;
}

export interface MetricsConfig {
  /** METRICS_PORT: where GET /metrics is served (never the public PORT); null → no metrics server. */
  port: number | null;
  /** METRICS_HOST: its interface, default HOST. */
  host: string;
}

export interface TilesConfig {
  /** TILE_HTTP: answer plain tile requests on the connection, or through Node's HTTP server. */
  http: 'connections' | 'http';
  /**
   * TILE_READS: blocking `pread` of local pyramids (fastest from the page cache, but it blocks the
   * event loop) or libuv's thread pool. Default `sync` only in a process that serves tiles alone
   * (ROLES=tiles): a process that also serves the API must not stall it on disk reads.
   */
  reads: 'sync' | 'async';
  /** TILE_SEND: sendfile(2) from the pyramid file (the native module), or write through the stream. */
  send: 'sendfile' | 'write';
  /** TILE_SOCKET_READS: read requests below the socket's stream, or through 'data' events. */
  socketReads: 'direct' | 'stream';
  /** TILE_ACCESS_REFRESH: seconds between reads of the live sessions (the bound on token revocation). */
  accessRefreshSeconds: number;
  /** HEADERS_TIMEOUT (Config.headersTimeoutSeconds): seconds a tile connection may take to send a request head. */
  headersTimeoutSeconds: number;
  /** TILE_CACHE_MB in bytes: the memory of tiles read from object storage kept per process (0: off). */
  cacheBytes: number;
  /**
   * TILE_PROCESS: in a process with the tiles role and another (`npm start`: all three), whether
   * tiles are answered by a tile process of its own (`separate`: a child process on the same port,
   * reading pyramids with blocking reads as a dedicated tile host does, so the API never waits on
   * them; modules/tiles/tileProcess.ts) or in this process (`inline`). Default `separate`; used
   * only with the tile fast path on (TILE_HTTP=connections, its self-test passed).
   */
  process: 'separate' | 'inline';
}

export interface ProcessingConfig {
  /** Largest full-resolution slide accepted, in pixels (MAX_SLIDE_PIXELS). */
  maxSlidePixels: number;
  /** Seconds one processing job may take (PROCESSING_TIME_LIMIT). */
  timeLimitSeconds: number;
  /** Uploads of at least this many bytes go to the large-slide queue (LARGE_SLIDE_BYTES). */
  largeSlideBytes: number;
  /** Seconds between a running job's heartbeats (WORKER_HEARTBEAT_INTERVAL). */
  heartbeatSeconds: number;
  /** A job whose heartbeat is this old is taken from its dead worker and retried (WORKER_STALE_AFTER). */
  staleAfterSeconds: number;
}

export interface StorageConfig {
  kind: 'local' | 's3';
  /** Local: the folder of the objects. */
  localRoot: string;
  s3: {
    endpoint: string | undefined;
    bucket: string;
    region: string;
    accessKeyId: string | undefined;
    secretAccessKey: string | undefined;
    forcePathStyle: boolean;
  };
}

const ALL_ROLES: ServerRole[] = ['api', 'tiles', 'worker'];

export class ConfigError extends Error {}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(`Expected a boolean, got '${value}'`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be a port number, got '${env.PORT ?? ''}'`);
  const roles = (env.ROLES ?? ALL_ROLES.join(','))
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roles) {
    if (!ALL_ROLES.includes(r as ServerRole))
      throw new ConfigError(`ROLES may contain ${ALL_ROLES.join(', ')}; got '${r}'`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  const demoPassword = env.DEMO_PASSWORD || randomBytes(9).toString('base64url');
  const dataDir = path.resolve(cwd, env.DATA_DIR || 'data');
  const headersTimeoutSeconds = headersTimeout(env);
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${env.PORT || '8080'}`).replace(/\/+$/, '');
  const oidc = oidcConfig(env, publicUrl);
  const localLogin = bool(env.LOCAL_LOGIN, true);
  if (!localLogin && oidc === null)
    throw new ConfigError(
      'LOCAL_LOGIN=off needs single sign-on: set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (else nobody could log in)',
    );
  return {
    port,
    host: env.HOST || '127.0.0.1',
    dataDir,
    databaseUrl,
    roles: new Set(roles as ServerRole[]),
    demo: bool(env.DEMO, databaseUrl === undefined),
    demoPassword,
    demoPasswordGenerated: !env.DEMO_PASSWORD,
    sessionSecret: env.SESSION_SECRET || randomBytes(32).toString('hex'),
    ssoLoginUrl: env.SSO_LOGIN_URL || null,
    ssoLogoutUrl: env.SSO_LOGOUT_URL || null,
    oidc,
    localLogin,
    tileServerLocation: env.TILE_SERVER_LOCATION || '',
    frameAncestors: (env.FRAME_ANCESTORS ?? '')
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean),
    embeddedCookies: bool(env.EMBEDDED_COOKIES, (env.FRAME_ANCESTORS ?? '').trim() !== ''),
    webDist: path.resolve(cwd, env.WEB_DIST || 'packages/web/dist'),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: bool(env.TRUST_PROXY, false),
    storage: storageConfig(env, dataDir),
    smtpUrl: env.SMTP_URL || null,
    mailFrom: env.MAIL_FROM || 'Lamina <no-reply@lamina.local>',
    publicUrl,
    queryReminderCron: reminderCron(env.QUERY_REMINDER_CRON),
    uploadUrlTtlSeconds: positive(env.UPLOAD_URL_TTL, 'UPLOAD_URL_TTL', 3600),
    auditAnchorFile: env.AUDIT_ANCHOR_FILE
      ? path.resolve(cwd, env.AUDIT_ANCHOR_FILE)
      : path.join(dataDir, 'audit-anchors.jsonl'),
    auditAnchorIntervalSeconds: positive(env.AUDIT_ANCHOR_INTERVAL, 'AUDIT_ANCHOR_INTERVAL', 300),
    shutdownGraceSeconds: positive(env.SHUTDOWN_GRACE, 'SHUTDOWN_GRACE', 25),
    metrics: metricsConfig(env, port),
    processing: processingConfig(env),
    tiles: tilesConfig(env, new Set(roles as ServerRole[]), headersTimeoutSeconds),
    headersTimeoutSeconds,
  };
}

/** Loopback hosts: an issuer there may be plain http (a provider on this machine, the tests'). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** OIDC_*: all three of issuer, client id and secret, or none. */
function oidcConfig(env: NodeJS.ProcessEnv, publicUrl: string): OidcConfig | null {
  const issuer = env.OIDC_ISSUER?.trim() || '';
  const clientId = env.OIDC_CLIENT_ID?.trim() || '';
  const clientSecret = env.OIDC_CLIENT_SECRET || '';
  if (issuer === '' && clientId === '' && clientSecret === '') return null;
  const missing = [
    ['OIDC_ISSUER', issuer],
    ['OIDC_CLIENT_ID', clientId],
    ['OIDC_CLIENT_SECRET', clientSecret],
  ]
    .filter(([, value]) => value === '')
    .map(([name]) => name);
  if (missing.length > 0) throw new ConfigError(`Single sign-on needs ${missing.join(' and ')} as well`);
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError(`OIDC_ISSUER must be a URL, got '${issuer}'`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new ConfigError('OIDC_ISSUER must be an https URL (plain http only on this machine: localhost, 127.0.0.1)');
  return {
    issuer,
    clientId,
    clientSecret,
    name: env.OIDC_NAME?.trim() || 'single sign-on',
    redirectUri: `${publicUrl}/api/auth/oidc/callback`,
    postLogoutRedirectUri: `${publicUrl}/login`,
  };
}

function metricsConfig(env: NodeJS.ProcessEnv, port: number): MetricsConfig {
  const host = env.METRICS_HOST || env.HOST || '127.0.0.1';
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return { port: null, host };
  const metricsPort = Number(env.METRICS_PORT);
  if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)
    throw new ConfigError(`METRICS_PORT must be a port number, got '${env.METRICS_PORT}'`);
  if (metricsPort !== 0 && metricsPort === port)
    throw new ConfigError('METRICS_PORT must differ from PORT: the metrics are not for the public port');
  return { port: metricsPort, host };
}

function oneOf<T extends string>(value: string | undefined, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new ConfigError(`${name} must be ${allowed.join(' or ')}, got '${value}'`);
  return value as T;
}

/** HEADERS_TIMEOUT, or its former name TILE_HEADERS_TIMEOUT (then tile connections only; now every head). */
function headersTimeout(env: NodeJS.ProcessEnv): number {
  if (env.HEADERS_TIMEOUT) return positive(env.HEADERS_TIMEOUT, 'HEADERS_TIMEOUT', 60);
  return positive(env.TILE_HEADERS_TIMEOUT, 'TILE_HEADERS_TIMEOUT', 60);
}

function tilesConfig(
  env: NodeJS.ProcessEnv,
  roles: ReadonlySet<ServerRole>,
  headersTimeoutSeconds: number,
): TilesConfig {
  const tilesAlone = roles.size === 1 && roles.has('tiles');
  return {
    http: oneOf(env.TILE_HTTP, 'TILE_HTTP', ['connections', 'http'], 'connections'),
    reads: oneOf(env.TILE_READS, 'TILE_READS', ['sync', 'async'], tilesAlone ? 'sync' : 'async'),
    send: oneOf(env.TILE_SEND, 'TILE_SEND', ['sendfile', 'write'], 'sendfile'),
    socketReads: oneOf(env.TILE_SOCKET_READS, 'TILE_SOCKET_READS', ['direct', 'stream'], 'direct'),
    accessRefreshSeconds: positive(env.TILE_ACCESS_REFRESH, 'TILE_ACCESS_REFRESH', 15),
    headersTimeoutSeconds,
    cacheBytes: tileCacheMegabytes(env.TILE_CACHE_MB) * 1024 * 1024,
    process: oneOf(env.TILE_PROCESS, 'TILE_PROCESS', ['separate', 'inline'], 'separate'),
  };
}

/** TILE_CACHE_MB: whole megabytes (MiB) of tiles from object storage kept in memory; 0 turns it off. */
function tileCacheMegabytes(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 256;
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > 1024 * 1024)
    throw new ConfigError(
      `TILE_CACHE_MB must be a whole number of megabytes from 0 (no cache) to 1048576, got '${value}'`,
    );
  return n;
}

function processingConfig(env: NodeJS.ProcessEnv): ProcessingConfig {
  const heartbeatSeconds = positive(env.WORKER_HEARTBEAT_INTERVAL, 'WORKER_HEARTBEAT_INTERVAL', 10);
  const staleAfterSeconds = positive(env.WORKER_STALE_AFTER, 'WORKER_STALE_AFTER', 30);
  if (staleAfterSeconds < 2 * heartbeatSeconds)
    throw new ConfigError('WORKER_STALE_AFTER must be at least twice WORKER_HEARTBEAT_INTERVAL');
  return {
    maxSlidePixels: positive(env.MAX_SLIDE_PIXELS, 'MAX_SLIDE_PIXELS', 40_000_000_000),
    timeLimitSeconds: positive(env.PROCESSING_TIME_LIMIT, 'PROCESSING_TIME_LIMIT', 3600),
    largeSlideBytes: positive(env.LARGE_SLIDE_BYTES, 'LARGE_SLIDE_BYTES', 1024 ** 3),
    heartbeatSeconds,
    staleAfterSeconds,
  };
}

function positive(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive whole number, got '${value}'`);
  return n;
}

function storageConfig(env: NodeJS.ProcessEnv, dataDir: string): StorageConfig {
  const kind = (env.STORAGE || 'local').toLowerCase();
  if (kind !== 'local' && kind !== 's3')
    throw new ConfigError(`STORAGE must be local or s3, got '${env.STORAGE ?? ''}'`);
  if (kind === 's3' && !env.S3_BUCKET) throw new ConfigError('STORAGE=s3 needs S3_BUCKET');
  return {
    kind,
    localRoot: path.join(dataDir, 'storage'),
    s3: {
      endpoint: env.S3_ENDPOINT || undefined,
      bucket: env.S3_BUCKET || '',
      region: env.S3_REGION || 'us-east-1',
      accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
      forcePathStyle: bool(env.S3_FORCE_PATH_STYLE, Boolean(env.S3_ENDPOINT)),
    },
  };
}

/** QUERY_REMINDER_CRON: five cron fields, or 'off'. */
function reminderCron(value: string | undefined): string | null {
  const cron = (value ?? '').trim();
  if (cron === '') return '*/15 * * * *';
  if (cron.toLowerCase() === 'off') return null;
  if (!/^(\S+\s+){4}\S+$/.test(cron)) throw new ConfigError('QUERY_REMINDER_CRON must be five cron fields or off');
  return cron;
}
