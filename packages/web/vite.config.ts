import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { earlyStart } from './vitePlugins/earlyStart.ts';
import { lightThemeCss } from './vitePlugins/lightThemeCss.ts';
import { precompress } from './vitePlugins/precompress.ts';
import { routeChunks } from './vitePlugins/routeChunks.ts';
import { filesNeedingIsolation } from '../../scripts/vitestIsolation.mjs';

const backend = 'http://127.0.0.1:8080';

/** The shell and the viewer routes each load one chunk of what they import (vitePlugins/routeChunks.ts). */
const chunks = routeChunks(import.meta.dirname, {
  shell: 'src/main.tsx',
  viewer: ['src/features/viewer/ImageViewerPage.tsx', 'src/features/viewer/CaseViewerPage.tsx'],
});

const TEST_FILES = ['src/**/*.test.ts', 'src/**/*.test.tsx', 'vitePlugins/**/*.test.ts'];
const ISOLATED = filesNeedingIsolation(import.meta.dirname, ['src', 'vitePlugins'], /\.test\.tsx?$/);

export default defineConfig({
  // precompress: .br and .gz beside the built files, which the server sends to browsers that take them.
  // earlyStart: index.html's first script starts the page's data and a viewer's chunks (issue 28).
  plugins: [react(), chunks.plugin, earlyStart(), precompress()],
  // Blueprint's stylesheet less what the light-only app never applies (vitePlugins/lightThemeCss.ts).
  css: { postcss: { plugins: [lightThemeCss()] } },
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
    rolldownOptions: {
      output: {
        codeSplitting: { groups: chunks.groups },
      },
    },
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['src/test/setup.ts'],
    // A file that replaces a module (vi.mock) or spies on a shared object runs with a module graph
    // of its own; the others share their worker's (imported once: the tier took half the time).
    // Each test's DOM is cleaned up and its mocks and stubbed globals restored (setup.ts and the
    // options below), so what files share is code, not state.
    projects: [
      { extends: true, test: { name: 'web', include: TEST_FILES, exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'web (isolated)', include: ISOLATED, isolate: true } },
    ],
    css: false,
    restoreMocks: true,
    unstubGlobals: true,
    // Form tests click through many fields; on a loaded 2-core machine one takes up to ~10 s.
    testTimeout: 30_000,
  },
});
