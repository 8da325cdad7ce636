import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '@lamina/domain';
import { IMMUTABLE_CACHE, OTHER_CACHE, PAGE_CACHE } from '../src/platform/http/webApp.js';
import { sql } from 'kysely';
import { createUser, PASSWORD } from './factories.js';
import { createTestApp, login, type TestContext } from './testApp.js';

// The built web app as the server sees it (packages/web: vite build and its precompress plugin):
// index.html, hashed files under assets/ with their .br and .gz, a style without variants, a favicon.
const SCRIPT = Buffer.from(
  Array.from({ length: 300 }, (_, i) => `export function step${i}(x) { return x * ${i} + 1; }\n`).join(''),
);
/** The web build's early script, inline in the page (vitePlugins/earlyStart.ts). */
const INLINE_SCRIPT = '(function(){window.__early=[1,"</b>"]})();';
const PAGE = Buffer.from(
  `<!doctype html><html><head><title>Lamina</title><script data-viewer-assets="{}">${INLINE_SCRIPT}</script>` +
    '<link rel="modulepreload" href="/assets/x.js">'.repeat(40) +
    '<script type="module" src="/assets/index-AbCd1234.js"></script></head><body></body></html>',
);
const STYLE = Buffer.from('.a{color:red}');
const ICON = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>');
const JS = '/assets/index-AbCd1234.js';
/** The type of the file itself (@fastify/send's mime table), which its variants carry too. */
const JS_TYPE = 'application/javascript; charset=utf-8';

let dist: string;
let ctx: TestContext;

beforeAll(async () => {
  dist = mkdtempSync(path.join(tmpdir(), 'lamina-web-'));
  mkdirSync(path.join(dist, 'assets'));
  const write = (file: string, bytes: Buffer, variants: boolean): void => {
    writeFileSync(path.join(dist, file), bytes);
    if (!variants) return;
    writeFileSync(path.join(dist, `${file}.br`), brotliCompressSync(bytes));
    writeFileSync(path.join(dist, `${file}.gz`), gzipSync(bytes, { level: 9 }));
  };
  write('index.html', PAGE, true);
  write('assets/index-AbCd1234.js', SCRIPT, true);
  write('assets/style-EfGh5678.css', STYLE, false);
  write('favicon.svg', ICON, false);
  ctx = await createTestApp({ WEB_DIST: dist });
});

afterAll(async () => {
  await ctx.close();
  rmSync(dist, { recursive: true, force: true });
});

function get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: 'GET', url, headers });
}

/** The page's security headers (registerSecurityHeaders): a static file carries them as any response. */
function expectSecurityHeaders(response: LightMyRequestResponse): void {
  expect(response.headers['content-security-policy']).toContain("default-src 'self'");
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
}

describe('the web app: precompressed, cacheable files (issue 28, part 2)', () => {
  it('sends a hashed file as brotli when the browser takes it, immutable for a year', async () => {
    const response = await get(JS, { 'accept-encoding': 'gzip, deflate, br' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBe('br');
    expect(response.headers['content-type']).toBe(JS_TYPE);
    expect(response.headers['vary']).toMatch(/accept-encoding/i);
    expect(response.headers['cache-control']).toBe(IMMUTABLE_CACHE);
    expect(response.headers['content-length']).toBe(String(statSync(path.join(dist, `${JS}.br`)).size));
    expect(response.rawPayload.length).toBeLessThan(SCRIPT.length);
    expect(brotliDecompressSync(response.rawPayload)).toEqual(SCRIPT);
    expect(response.headers['etag']).toBeTruthy();
    expect(response.headers['last-modified']).toBeTruthy();
    expectSecurityHeaders(response);
  });

  it('sends gzip to a browser that takes only gzip, and the file itself to one that takes neither', async () => {
    const gzip = await get(JS, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers['content-type']).toBe(JS_TYPE);
    expect(gzip.headers['content-length']).toBe(String(statSync(path.join(dist, `${JS}.gz`)).size));
    expect(gunzipSync(gzip.rawPayload)).toEqual(SCRIPT);
    expect(gzip.headers['cache-control']).toBe(IMMUTABLE_CACHE);

    const refusing: Record<string, string>[] = [
      {},
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'br;q=0, gzip;q=0' },
    ];
    for (const headers of refusing) {
      const plain = await get(JS, headers);
      expect(plain.statusCode).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers['content-type']).toBe(JS_TYPE);
      expect(plain.headers['content-length']).toBe(String(SCRIPT.length));
      expect(plain.rawPayload).toEqual(SCRIPT);
      // The variant was chosen by Accept-Encoding, so a shared cache must key on it here too.
      expect(plain.headers['vary']).toMatch(/accept-encoding/i);
      expect(plain.headers['cache-control']).toBe(IMMUTABLE_CACHE);
    }
  });

  it('sends a file the build did not compress as it is, to any browser', async () => {
    const response = await get('/assets/style-EfGh5678.css', { 'accept-encoding': 'gzip, br' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(response.rawPayload).toEqual(STYLE);
    expect(response.headers['cache-control']).toBe(IMMUTABLE_CACHE);
  });

  it('answers 304 to a browser that has the variant (If-None-Match, If-Modified-Since)', async () => {
    const first = await get(JS, { 'accept-encoding': 'gzip, br' });
    const etag = first.headers['etag'] as string;
    const again = await get(JS, { 'accept-encoding': 'gzip, br', 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers['cache-control']).toBe(IMMUTABLE_CACHE);
    expect(again.headers['vary']).toMatch(/accept-encoding/i);
    // Each variant has its own validator: the brotli ETag does not match the gzip bytes.
    const gzip = await get(JS, { 'accept-encoding': 'gzip', 'if-none-match': etag });
    expect(gzip.statusCode).toBe(200);
    expect(gunzipSync(gzip.rawPayload)).toEqual(SCRIPT);
    const since = await get(JS, { 'if-modified-since': first.headers['last-modified'] as string });
    expect(since.statusCode).toBe(304);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const response = await ctx.app.inject({ method: 'HEAD', url: JS, headers: { 'accept-encoding': 'br' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBe('br');
    expect(response.headers['content-length']).toBe(String(statSync(path.join(dist, `${JS}.br`)).size));
    expect(response.rawPayload.length).toBe(0);
  });

  it('sends index.html with no-cache at /, at /index.html and at a client route, compressed and revalidated', async () => {
    for (const url of ['/', '/index.html', '/studies/12/cases?page=2']) {
      const response = await get(url, { 'accept-encoding': 'gzip, br' });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control'], url).toBe(PAGE_CACHE);
      expect(response.headers['content-encoding']).toBe('br');
      expect(response.headers['vary']).toMatch(/accept-encoding/i);
      expect(brotliDecompressSync(response.rawPayload)).toEqual(PAGE);
      expectSecurityHeaders(response);

      const again = await get(url, {
        'accept-encoding': 'gzip, br',
        'if-none-match': response.headers['etag'] as string,
      });
      expect(again.statusCode, url).toBe(304);
      expect(again.headers['cache-control']).toBe(PAGE_CACHE);

      const plain = await get(url);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.rawPayload).toEqual(PAGE);
      expect(plain.headers['cache-control']).toBe(PAGE_CACHE);
    }
  });

  it('keeps other files of the build for an hour', async () => {
    const response = await get('/favicon.svg');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('image/svg+xml');
    expect(response.headers['cache-control']).toBe(OTHER_CACHE);
    expect(response.rawPayload).toEqual(ICON);
  });

  it('answers 404 for a missing hashed file, not index.html (a stale page would run HTML as a script)', async () => {
    // Before, GET /assets/missing.js answered index.html with 200.
    for (const url of ['/assets/index-Gone0000.js', `${JS}.br`, '/assets/']) {
      const response = await get(url, { 'accept-encoding': 'gzip, br' });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toEqual({ success: false, message: MESSAGES.notFound });
      expect(response.headers['cache-control']).toBeUndefined();
    }
  });

  it("lets the page's inline script run by its hash, and no other inline script (Content-Security-Policy)", async () => {
    const hash = createHash('sha256').update(INLINE_SCRIPT, 'utf8').digest('base64');
    const policy = String((await get('/studies/1/images/2')).headers['content-security-policy']);
    const scriptSrc = policy.split('; ').find((d) => d.startsWith('script-src'));
    // The module script has a src: 'self' covers it; only the inline one is named.
    expect(scriptSrc).toBe(`script-src 'self' 'sha256-${hash}'`);
    expect(String((await get(JS)).headers['content-security-policy'])).toContain(scriptSrc);
  });

  it('loads no session for the files and pages of the web app, as it does for the API (issue 28)', async () => {
    // A session last seen an hour ago is touched (its idle expiry moved) when it is loaded: the
    // files and pages leave it as it was, the API's first call moves it.
    const user = await createUser(ctx.database.db, {});
    const session = await login(ctx.app, user.username, PASSWORD);
    const lastSeen = async () =>
      (
        await ctx.database.db
          .selectFrom('sessions')
          .select('last_seen_at')
          .where('user_id', '=', user.id)
          .executeTakeFirstOrThrow()
      ).last_seen_at;
    await ctx.database.db
      .updateTable('sessions')
      .set({ last_seen_at: sql<Date>`now() - interval '1 hour'` })
      .where('user_id', '=', user.id)
      .execute();
    const before = await lastSeen();
    for (const url of [JS, '/', '/studies/12/images/3', '/assets/missing-0000.js'])
      expect((await session.request({ method: 'GET', url })).statusCode).toBe(url.includes('missing') ? 404 : 200);
    expect(await lastSeen()).toEqual(before);
    expect((await session.request({ method: 'GET', url: '/api/users/info' })).statusCode).toBe(200);
    expect((await lastSeen()).getTime()).toBeGreaterThan(before.getTime());
  });

  it('leaves the API, the tiles and other methods as they were: 404 in the envelope', async () => {
    const api = await get('/api/nothing-here');
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ success: false, message: MESSAGES.notFound });
    expect(api.headers['cache-control']).toBe('no-store');
    const tiles = await get('/tiles/not-a-tile');
    expect(tiles.statusCode).toBe(404);
    expect(tiles.json()).toEqual({ success: false, message: MESSAGES.notFound });
    const post = await ctx.app.inject({ method: 'POST', url: '/studies/12' });
    expect(post.statusCode).toBe(404);
    expect(post.json()).toEqual({ success: false, message: MESSAGES.notFound });
  });
});
