// engine: postgres — readiness when the database is gone or slow: the pool's errors and timeouts
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadinessReport } from '@lamina/domain';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { Readiness } from '../src/platform/health/readiness.js';
import { S3Storage } from '../src/platform/storage/s3Storage.js';
import { createSlideTestApp, startS3Server, type SlideTestContext } from './factories.js';
import { createTestApp, openTestDatabase } from './testApp.js';

/**
 * Liveness and readiness (issue 19): GET /api/health answers while the process runs; GET /api/ready
 * is 200 only when the database answers, every migration file is applied and the storage answers,
 * else 503 naming the failing checks, in every role, and never with a secret in the body.
 */
let t: SlideTestContext;

beforeAll(async () => {
  t = await createSlideTestApp();
});

afterAll(async () => {
  await t.close();
});

const ready = async (app = t.app) => {
  const response = await app.inject({ method: 'GET', url: '/api/ready' });
  return { status: response.statusCode, body: response.json<ReadinessReport>(), text: response.body };
};

describe('GET /api/health', () => {
  it('answers 200 without a session', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, message: 'ok' });
    expect(response.headers['cache-control']).toBe('no-store');
  });
});

describe('GET /api/ready', () => {
  it('is 200 with every check passed when the database, the migrations and the storage are fine', async () => {
    const { status, body } = await ready();
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      message: 'ready',
      roles: ['api', 'tiles', 'worker'],
      checks: [
        { name: 'database', ok: true, message: 'ok' },
        { name: 'migrations', ok: true, message: 'ok' },
        { name: 'storage', ok: true, message: 'ok' },
      ],
    });
  });

  it('is 503 naming the migration file the database has not applied', async () => {
    const { raw } = t.database;
    const [last] = await raw.query<{ name: string }>('select max(name) as name from schema_migrations');
    const name = last?.name ?? '';
    expect(name).toMatch(/^\d{4}_.*\.sql$/);
    await raw.exec(`delete from schema_migrations where name = '${name}'`);
    try {
      const { status, body } = await ready();
      expect(status).toBe(503);
      expect(body.success).toBe(false);
      expect(body.message).toBe('not ready: migrations');
      expect(body.checks.find((c) => c.name === 'migrations')).toEqual({
        name: 'migrations',
        ok: false,
        message: `1 migration not applied: ${name}`,
      });
      expect(body.checks.filter((c) => c.ok).map((c) => c.name)).toEqual(['database', 'storage']);
    } finally {
      await raw.exec(`insert into schema_migrations (name) values ('${name}')`);
    }
    expect((await ready()).status).toBe(200);
  });

  it('is answered in a process of each single role', async () => {
    for (const roles of ['api', 'tiles', 'worker']) {
      const app = await createTestApp({ ROLES: roles });
      try {
        const health = await app.app.inject({ method: 'GET', url: '/api/health' });
        expect(health.statusCode, roles).toBe(200);
        const { status, body } = await ready(app.app);
        expect(status, roles).toBe(200);
        expect(body.roles).toEqual([roles]);
        expect(body.checks.map((c) => c.name)).toEqual(['database', 'migrations', 'storage']);
      } finally {
        await app.close();
      }
    }
  });

  it('is 503 when the database is gone, saying so without its address', async () => {
    const { database, drop } = await openTestDatabase();
    const config = loadConfig({
      DEMO: 'false',
      SESSION_SECRET: 'test-secret',
      WEB_DIST: '/nonexistent',
      QUERY_REMINDER_CRON: 'off',
      ROLES: 'api',
      DATA_DIR: t.dataDir,
    });
    const app = await buildApp({ config, database });
    await app.ready();
    await database.close();
    try {
      const { status, body, text } = await ready(app);
      expect(status).toBe(503);
      expect(body.message).toBe('not ready: database, migrations');
      expect(body.checks).toEqual([
        { name: 'database', ok: false, message: 'the database does not answer' },
        { name: 'migrations', ok: false, message: 'the applied migrations could not be read' },
        { name: 'storage', ok: true, message: 'ok' },
      ]);
      for (const secret of ['postgres', '127.0.0.1', '5432', 'lamina_test']) expect(text).not.toContain(secret);
    } finally {
      await app.close();
      await drop();
    }
  });

  it('on S3: 200 while the bucket answers; 503 without the bucket, its address or the keys when it does not', async () => {
    const s3 = await startS3Server('ready-bucket');
    let app: SlideTestContext | null = null;
    try {
      app = await createSlideTestApp(s3.env);
      expect((await ready(app.app)).status).toBe(200);
      await s3.close();
      const { status, body, text } = await ready(app.app);
      expect(status).toBe(503);
      expect(body.message).toBe('not ready: storage');
      expect(body.checks.find((c) => c.name === 'storage')).toEqual({
        name: 'storage',
        ok: false,
        message: 'the object storage does not answer',
      });
      for (const secret of ['ready-bucket', s3.endpoint, 'S3RVER']) expect(text).not.toContain(secret);
    } finally {
      await app?.close();
      await s3.close().catch(() => undefined);
    }
  });

  it('a bucket that does not exist is not ready', async () => {
    const s3 = await startS3Server('present-bucket');
    try {
      const storage = new S3Storage({ ...s3.options, bucket: 'absent-bucket' });
      const readiness = new Readiness({ database: t.database, storage, roles: new Set(['tiles']), log: silent });
      const report = await readiness.evaluate();
      expect(report.checks.find((c) => c.name === 'storage')?.ok).toBe(false);
      await new S3Storage(s3.options).ping();
    } finally {
      await s3.close();
    }
  });
});

const silent = { warn: () => undefined };

describe('Readiness', () => {
  it('fails a check that does not answer in time, and probes arriving together share one round', async () => {
    let pings = 0;
    const hanging = {
      ping: () => {
        pings += 1;
        return new Promise<void>(() => undefined);
      },
    };
    const readiness = new Readiness(
      { database: t.database, storage: hanging, roles: new Set(['worker']), log: silent },
      50,
    );
    const [a, b] = await Promise.all([readiness.evaluate(), readiness.evaluate()]);
    expect(a).toBe(b);
    expect(pings).toBe(1);
    expect(a.checks.find((c) => c.name === 'storage')).toEqual({ name: 'storage', ok: false, message: 'timed out' });
    await readiness.evaluate();
    expect(pings).toBe(2);
  });
});
