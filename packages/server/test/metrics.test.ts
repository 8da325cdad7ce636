import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageView, StudyListResponse } from '@lamina/domain';
import { loadConfig } from '../src/platform/config.js';
import { Metrics } from '../src/platform/metrics/metrics.js';
import { TILE_SECONDS_BUCKETS } from '../src/platform/metrics/tileMetrics.js';
import { createSlideTestApp, createUser, PASSWORD, WSI_DIR, type SlideTestContext } from './factories.js';
import { freePort, httpLogin, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { waitFor } from './support/wait.js';
import { createServerDatabase } from './testApp.js';

/**
 * Observability (issue 19): the request id of an incoming X-Request-Id (a short safe token, else a
 * new one) comes back in X-Request-Id and is the audit rows' request id; Prometheus metrics are
 * served on METRICS_PORT only, and their series exist and move: requests per route pattern and
 * status class, tiles (answered on the connection, ahead of Fastify), jobs, upload bytes, login
 * failures.
 */

/** The value of one sample of a scrape (`name{labels}`), or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

describe('request id', () => {
  let t: SlideTestContext;
  beforeAll(async () => {
    t = await createSlideTestApp({ METRICS_PORT: '0' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('an incoming X-Request-Id that is a short safe token comes back, and is the audit row’s request id', async () => {
    const id = `lb-${Date.now()}.a_b:c`;
    const health = await t.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': id } });
    expect(health.headers['x-request-id']).toBe(id);

    const user = await createUser(t.database.db, { globalRoles: ['LabTech'] });
    const loginId = `login-${Date.now()}`;
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'x-request-id': loginId },
      payload: { username: user.username, password: PASSWORD },
    });
    expect(login.statusCode).toBe(200);
    expect(login.headers['x-request-id']).toBe(loginId);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'request_id'])
      .where('request_id', '=', loginId)
      .execute();
    expect(audit).toEqual([{ action: 'LOGIN', request_id: loginId }]);
  });

  it('anything else gets a new id, sent back all the same (refusals and unknown routes too)', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const sent of ['', 'has space', 'x'.repeat(65), '<script>', 'id;drop', 'ünïcode', 'a/b', 'a\tb']) {
      const response = await t.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': sent } });
      expect(response.headers['x-request-id'], JSON.stringify(sent)).toMatch(uuid);
    }
    const none = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(none.headers['x-request-id']).toMatch(uuid);
    const a = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(a.headers['x-request-id']).not.toBe(none.headers['x-request-id']);
    // A refused request (401) and one no route matches (404) carry theirs too.
    const refused = await t.app.inject({ method: 'GET', url: '/api/users/info', headers: { 'x-request-id': 'r-401' } });
    expect([refused.statusCode, refused.headers['x-request-id']]).toEqual([401, 'r-401']);
    const missing = await t.app.inject({
      method: 'GET',
      url: '/api/nothing-here',
      headers: { 'x-request-id': 'r-404' },
    });
    expect([missing.statusCode, missing.headers['x-request-id']]).toEqual([404, 'r-404']);
  });

  it('HTTP metrics name the route pattern, never the raw URL; unmatched requests share one label', async () => {
    const before = (await t.app.metrics.scrape()).body;
    for (const id of [987_654_321, 987_654_322]) await t.app.inject({ method: 'GET', url: `/api/studies/${id}` });
    await t.app.inject({ method: 'GET', url: '/api/no-such-route-12345' });
    const after = (await t.app.metrics.scrape()).body;
    const series = 'lamina_http_requests_total{method="GET",route="/api/studies/:id",status_class="4xx"}';
    expect((sample(after, series) ?? 0) - (sample(before, series) ?? 0)).toBe(2);
    const unmatched = 'lamina_http_requests_total{method="GET",route="unmatched",status_class="4xx"}';
    expect((sample(after, unmatched) ?? 0) - (sample(before, unmatched) ?? 0)).toBe(1);
    for (const raw of ['987654321', 'no-such-route-12345']) expect(after).not.toContain(raw);
    expect(
      sample(
        after,
        'lamina_http_request_duration_seconds_count{method="GET",route="/api/studies/:id",status_class="4xx"}',
      ),
    ).toBeGreaterThanOrEqual(2);
  });
});

describe('TileMetrics', () => {
  it('counts by status class and buckets the latency cumulatively', async () => {
    const metrics = new Metrics(false);
    const tiles = metrics.tiles;
    tiles.record(200, 0.05); // 50 µs
    tiles.record(200, 0.3);
    tiles.record(304, 2);
    tiles.record(403, 0.01);
    tiles.record(500, 5000);
    expect([...tiles.byClass]).toEqual([2, 1, 1, 1]);
    expect(tiles.count).toBe(5);
    const text = (await metrics.scrape()).body;
    expect(sample(text, 'lamina_tile_requests_total{status_class="2xx"}')).toBe(2);
    expect(sample(text, 'lamina_tile_requests_total{status_class="5xx"}')).toBe(1);
    expect(sample(text, 'lamina_tile_duration_seconds_bucket{le="0.0001"}')).toBe(2);
    expect(sample(text, 'lamina_tile_duration_seconds_bucket{le="0.0005"}')).toBe(3);
    expect(sample(text, 'lamina_tile_duration_seconds_bucket{le="0.0025"}')).toBe(4);
    expect(sample(text, `lamina_tile_duration_seconds_bucket{le="${String(TILE_SECONDS_BUCKETS.at(-1))}"}`)).toBe(4);
    expect(sample(text, 'lamina_tile_duration_seconds_bucket{le="+Inf"}')).toBe(5);
    expect(sample(text, 'lamina_tile_duration_seconds_count')).toBe(5);
    expect(sample(text, 'lamina_tile_duration_seconds_sum')).toBeCloseTo(5.00236, 6);
  });

  it('METRICS_PORT: unset → off; must be a port, and not the public one', () => {
    expect(loadConfig({}).metrics).toEqual({ port: null, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '9464', HOST: '0.0.0.0' }).metrics).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metrics.host).toBe('10.0.0.5');
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ METRICS_PORT: '8080' })).toThrow(/differ from PORT/);
  });
});

describe('the real server with METRICS_PORT', () => {
  const PASS = 'metrics-test-password-1';
  let dir: string;
  let server: ServerProcess | null = null;
  let dropDatabase: (() => Promise<void>) | null = null;

  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves /metrics on its own port only, and the series move with requests, tiles, jobs, uploads and failed logins', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'lamina-metrics-'));
    const env: Record<string, string> = {
      DATA_DIR: path.join(dir, 'data'),
      DEMO: 'true',
      DEMO_PASSWORD: PASS,
      METRICS_PORT: String(await freePort()),
    };
    const url = process.env.TEST_DATABASE_URL;
    if (url) {
      const created = await createServerDatabase(url, 'lamina_metrics');
      env.DATABASE_URL = created.url;
      dropDatabase = created.drop;
    }
    server = await startServerProcess(await freePort(), env);
    const running = server;
    const metricsUrl = `http://127.0.0.1:${env.METRICS_PORT}/metrics`;
    const scrape = async () => {
      const response = await fetch(metricsUrl);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return response.text();
    };

    // Not on the public port; nothing but /metrics on the metrics port.
    expect((await fetch(`${running.baseUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${env.METRICS_PORT}/`)).status).toBe(404);

    // Over real HTTP, the request id round trip.
    const echoed = await fetch(`${running.baseUrl}/api/health`, { headers: { 'x-request-id': 'edge-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('edge-42');

    const before = await scrape();
    expect(before).toContain('process_cpu_user_seconds_total');
    expect(before).toContain('nodejs_eventloop_lag_seconds');

    // Requests, failed logins.
    for (let i = 0; i < 3; i += 1) await fetch(`${running.baseUrl}/api/ready`);
    for (let i = 0; i < 2; i += 1)
      await fetch(`${running.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'studyadmin', password: 'not the password' }),
      });

    // An upload, registered and processed by the worker; then its tiles.
    const api = await httpLogin(running.baseUrl, 'studyadmin', PASS);
    const studies = await api<StudyListResponse>('GET', '/api/studies/list');
    const studyId = studies.json.studies[0]?.id;
    if (!studyId) throw new Error('no demo study');
    const signed = await api<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>('POST', '/api/signed-urls', {
      studyId,
      fileNames: ['CMU-1-Small-Region.svs'],
    });
    const target = signed.json.data.urls[0];
    if (!target) throw new Error('no signed URL');
    const bytes = await readFile(path.join(WSI_DIR, 'CMU-1-Small-Region.svs'));
    expect((await fetch(new URL(target.signedUrl, running.baseUrl), { method: 'PUT', body: bytes })).status).toBe(200);
    const created = await api<{ image: ImageView }>('POST', '/api/images', {
      name: 'CMU-1-Small-Region.svs',
      s3Key: target.s3Key,
      studyId,
    });
    expect(created.status).toBe(200);
    const imageId = created.json.image.id;
    const queued = await scrape();
    expect(sample(queued, 'lamina_upload_bytes_total')).toBe(
      (sample(before, 'lamina_upload_bytes_total') ?? 0) + bytes.length,
    );
    expect(sample(queued, 'lamina_uploads_total')).toBe((sample(before, 'lamina_uploads_total') ?? 0) + 1);
    expect(queued).toMatch(/^lamina_job_queue_depth\{queue="image-processing",state="created"\} \d+$/m);

    const processed = await waitFor(
      'the upload to be processed',
      async () => {
        const image = (await api<ImageView>('GET', `/api/images/${imageId}`)).json;
        if (image.processingStatus === 'FAIL') throw new Error(image.statusMessage ?? 'failed');
        return image.processingStatus === 'SUCCESS' && image.tileUrl ? image : undefined;
      },
      { timeoutMs: 120_000, everyMs: 250, context: () => running.output() },
    );
    const tileUrl = (z: number) =>
      new URL(
        (processed.tileUrl ?? '').replace('{z}', String(z)).replace('{x}', '0').replace('{y}', '0'),
        running.baseUrl,
      );
    for (const z of [0, 1, 2, 0]) expect((await fetch(tileUrl(z))).status).toBe(200);
    expect((await fetch(`${running.baseUrl}/tiles/${imageId}/0/0/0?t=forged`)).status).toBe(403);

    const after = await scrape();
    const moved = (series: string) => (sample(after, series) ?? 0) - (sample(before, series) ?? 0);
    expect(moved('lamina_http_requests_total{method="GET",route="/api/ready",status_class="2xx"}')).toBe(3);
    expect(
      moved('lamina_http_request_duration_seconds_count{method="GET",route="/api/ready",status_class="2xx"}'),
    ).toBe(3);
    expect(
      moved('lamina_http_requests_total{method="GET",route="/api/images/:id",status_class="2xx"}'),
    ).toBeGreaterThan(0);
    expect(moved('lamina_login_failures_total{reason="invalid_credentials"}')).toBe(2);
    expect(moved('lamina_tile_requests_total{status_class="2xx"}')).toBe(4);
    expect(moved('lamina_tile_requests_total{status_class="4xx"}')).toBe(1);
    expect(moved('lamina_tile_duration_seconds_count')).toBe(5);
    expect(moved('lamina_tile_duration_seconds_sum')).toBeGreaterThan(0);
    // The tiles went by the fast path: Fastify never saw them.
    expect(after).not.toMatch(/route="\/tiles\//);
    expect(
      sample(after, 'lamina_job_duration_seconds_count{queue="image-processing",outcome="completed"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(/^lamina_job_queue_depth\{queue="image-processing",state="active"\} \d+$/m);
  }, 240_000);
});
