import { defineConfig } from 'vitest/config';

/**
 * Domain unit tests. The same timeouts as the other tiers: vitest's default 5 s failed
 * text.test.ts at 6.9 s on a loaded 2-core machine.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
