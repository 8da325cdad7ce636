import { defineConfig } from 'vitest/config';

/**
 * End-to-end browser tests: one server for the whole run (test/globalSetup.ts), one Chromium per
 * test file, one fresh browser context per test. Files run one after another (2-core machine).
 */
export default defineConfig({
  test: {
    include: ['test/**/*.e2e.ts'],
    globalSetup: ['test/globalSetup.ts'],
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
  },
});
