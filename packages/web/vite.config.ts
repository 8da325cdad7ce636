import react from '@vitejs/plugin-react';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * OpenLayers' WebGL vector layer (the annotation layer, issue 14) builds its buffers in a worker it
 * makes from a blob: URL, which the app's Content-Security-Policy (script-src 'self', no
 * worker-src) refuses — the layer then draws nothing. At build, the worker's source becomes a file
 * of the app (same origin, content-hashed) and the worker is made from it, so the policy stays
 * strict. The dev server sends no such policy and keeps OpenLayers' own module.
 */
function olWebglWorkerAsFile(): Plugin {
  return {
    name: 'lamina-ol-webgl-worker-as-file',
    apply: 'build',
    load(id) {
      if (!/[\\/]ol[\\/]worker[\\/]webgl\.js$/.test(id)) return null;
      const module = readFileSync(id, 'utf8');
      const match = /const source = ("(?:[^"\\]|\\.)*");/s.exec(module);
      if (!match?.[1]) this.error('ol/worker/webgl.js changed: its worker source was not found');
      const source = JSON.parse(match[1]) as string;
      const fileName = `assets/ol-webgl-worker-${createHash('sha256').update(source).digest('hex').slice(0, 10)}.js`;
      this.emitFile({ type: 'asset', fileName, source });
      return `export function create() { return new Worker(new URL('/${fileName}', self.location.href)); }`;
    },
  };
}

const backend = 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react(), olWebglWorkerAsFile()],
  resolve: {
    // One React for the app and every library (the root package.json overrides Blueprint's
    // react-popper peer range, which stops at React 18).
    dedupe: ['react', 'react-dom'],
  },
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/tiles': { target: backend, changeOrigin: false },
    },
  },
  preview: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/tiles': { target: backend, changeOrigin: false },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['src/test/setup.ts'],
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    css: false,
    restoreMocks: true,
    unstubGlobals: true,
    // Form tests click through many fields; on a loaded 2-core machine one takes up to ~10 s.
    testTimeout: 30_000,
  },
});
