import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

const backend = 'http://127.0.0.1:8080';

/**
 * The root node_modules holds React 18 (a peer of react-popper, pulled in by Blueprint) while this
 * package has React 19 in its own node_modules. Everything — Blueprint, React Router, TanStack
 * Query, Testing Library — must share this package's single React, so React is pinned here, both
 * for the bundle (alias + dedupe) and for tests (the React-using libraries are inlined so the
 * alias applies to them too).
 */
const fromHere = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const reactAliases = [
  { find: /^react$/, replacement: fromHere('./node_modules/react/index.js') },
  { find: /^react\/(.*)$/, replacement: fromHere('./node_modules/react/$1') },
  { find: /^react-dom$/, replacement: fromHere('./node_modules/react-dom/index.js') },
  { find: /^react-dom\/(.*)$/, replacement: fromHere('./node_modules/react-dom/$1') },
];

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: reactAliases,
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
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    css: false,
    restoreMocks: true,
    unstubGlobals: true,
    deps: {
      optimizer: {
        client: {
          enabled: true,
          include: ['react', 'react-dom', 'react-dom/client', 'react/jsx-runtime', 'react/jsx-dev-runtime', '@testing-library/react', '@blueprintjs/core', '@blueprintjs/icons', 'react-router', '@tanstack/react-query'],
        },
      },
    },
  },
});
