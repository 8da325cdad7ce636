import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time even on 2 cores (vitest's default there is one): a file waits on its
    // database, child processes and sharp's threads much of its time. At most 4: on PostgreSQL
    // each file holds its pools' connections (and some start server processes with their own).
    maxWorkers: Math.min(4, Math.max(2, availableParallelism() - 1)),
  },
});
