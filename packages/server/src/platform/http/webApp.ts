import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic, { type FastifyStaticOptions } from '@fastify/static';
import { MESSAGES } from '@lamina/domain';
import { policy } from '../rbac/policy.js';

/** Vite's build.assetsDir: every file in it has its content's hash in its name (`[name]-[hash]`). */
const ASSETS_DIR = 'assets';

/** A hashed file: a new build names a changed file anew, so a browser may keep it for a year, unasked. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
/** index.html names the hashed files: the browser asks each time (a 304 when it has not changed). */
export const PAGE_CACHE = 'no-cache';
/** Any other file of the build (none today; a favicon, robots.txt …). */
export const OTHER_CACHE = 'public, max-age=3600';

/** The precompressed variants the web build writes beside a file (packages/web/vitePlugins/precompress.ts). */
const VARIANT = /\.(?:br|gz)$/;

/** A `<script>` element: its attributes and its text. */
const SCRIPT_ELEMENT = /<script\b([^>]*)>([\s\S]*?)<\/script>/gi;

/**
 * The Content-Security-Policy sources that let index.html's inline scripts run: `'sha256-…'` of
 * each one's text (the web build writes its early script there: vitePlugins/earlyStart.ts). Read
 * once at start, as the files are; none without a built web app.
 */
export function inlineScriptSources(webDist: string): string[] {
  const index = path.join(path.resolve(webDist), 'index.html');
  if (!existsSync(index)) return [];
  const sources = [];
  for (const [, attributes = '', text = ''] of readFileSync(index, 'utf8').matchAll(SCRIPT_ELEMENT)) {
    if (/\bsrc\s*=/i.test(attributes) || text.trim() === '') continue;
    sources.push(`'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`);
  }
  return sources;
}

/**
 * Serves the built single-page app from `webDist`; unknown non-API paths get index.html so client
 * routes work on reload. Every file goes out as its `.br` or `.gz` variant when the request's
 * Accept-Encoding takes it and the build wrote one (@fastify/static `preCompressed`: the original's
 * Content-Type, `Vary: Accept-Encoding`, ETag and Last-Modified of the bytes sent, 304). A missing
 * file under /assets/ is a 404: index.html in its place would reach a script tag of a stale page
 * as HTML.
 */
export async function registerWebApp(app: FastifyInstance, webDist: string): Promise<void> {
  const root = path.resolve(webDist);
  const hasIndex = existsSync(path.join(root, 'index.html'));
  const assets = path.join(root, ASSETS_DIR) + path.sep;
  const index = path.join(root, 'index.html');
  const options: FastifyStaticOptions = {
    root,
    preCompressed: true,
    index: false,
    // Cache-Control by file: what send derives from maxAge is one value for all of them.
    cacheControl: false,
    setHeaders: (reply, file) => {
      const original = file.replace(VARIANT, '');
      const cache = original.startsWith(assets) ? IMMUTABLE_CACHE : original === index ? PAGE_CACHE : OTHER_CACHE;
      reply.header('Cache-Control', cache);
    },
  };
  if (hasIndex) {
    // reply.sendFile for the not-found handler's index.html; no routes.
    await app.register(fastifyStatic, { ...options, serve: false });
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...route.config, policy: policy.webApp() };
      });
      // A route per file of the build found at start (wildcard: false); none for the variants.
      await scope.register(fastifyStatic, {
        ...options,
        wildcard: false,
        decorateReply: false,
        globIgnore: ['**/*.br', '**/*.gz'],
      });
    });
  }
  app.setNotFoundHandler(async (request, reply) => {
    const wantsPage =
      (request.method === 'GET' || request.method === 'HEAD') &&
      !request.url.startsWith('/api/') &&
      !request.url.startsWith('/tiles/') &&
      !request.url.startsWith(`/${ASSETS_DIR}/`);
    if (hasIndex && wantsPage) return reply.sendFile('index.html');
    return reply.status(404).send({ success: false, message: MESSAGES.notFound });
  });
}
