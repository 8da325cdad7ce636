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
  /** Lifetime of signed upload and download URLs, seconds. */
  uploadUrlTtlSeconds: number;
  /** Where the audit chain's head is copied (JSON lines), outside the database. */
  auditAnchorFile: string;
  /** Seconds between anchors of the audit chain's head (written only when it moved). */
  auditAnchorIntervalSeconds: number;
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
    uploadUrlTtlSeconds: positive(env.UPLOAD_URL_TTL, 'UPLOAD_URL_TTL', 3600),
    auditAnchorFile: env.AUDIT_ANCHOR_FILE
      ? path.resolve(cwd, env.AUDIT_ANCHOR_FILE)
      : path.join(dataDir, 'audit-anchors.jsonl'),
    auditAnchorIntervalSeconds: positive(env.AUDIT_ANCHOR_INTERVAL, 'AUDIT_ANCHOR_INTERVAL', 300),
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
