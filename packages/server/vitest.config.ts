import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { filesNeedingIsolation } from '../../scripts/vitestIsolation.mjs';

/**
 * A file that replaces a module (vi.mock) or spies on a shared object runs with a module graph of
 * its own; every other file shares its worker's module graph with the files run before it there
 * (`isolate: false`): the server's ~300 modules are imported once per worker instead of once per
 * file, which took the tier from ~450 s to ~300 s on 2 cores. What a file changes it makes for
 * itself — its database (from the template), app, server and storage folder — so what files share
 * is code, not state.
 */
const ISOLATED = filesNeedingIsolation(import.meta.dirname, ['test'], /\.test\.ts$/);

export default defineConfig({
  test: {
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time even on 2 cores (vitest's default there is one): a file waits on its
    // database, child processes and sharp's threads much of its time. At most 4: on PostgreSQL
    // each file holds its pools' connections (and some start server processes with their own).
    maxWorkers: Math.min(4, Math.max(2, availableParallelism() - 1)),
    projects: [
      { extends: true, test: { name: 'server', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'server (isolated)', include: ISOLATED, isolate: true } },
    ],
  },
});
