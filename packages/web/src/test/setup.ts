import { afterAll, afterEach } from 'vitest';
import { cleanup, configure } from '@testing-library/react';

// Async queries (findBy…, waitFor) wait up to 5 s: CI machines have two cores shared by parallel
// test files, and the default 1 s makes slow-but-correct renders fail.
configure({ asyncUtilTimeout: 5000 });

// Each test's rendered trees are unmounted after it (Testing Library does this by itself only
// where vitest's globals are on). Files share a worker's document (vite.config.ts, isolate: false).
afterEach(() => {
  cleanup();
});

// Blueprint's overlays open and close through ~300 ms transitions (react-transition-group timers).
// Let any still pending at the end of a file run while the test environment exists: fired after
// jsdom is torn down they throw 'window is not defined' as an unhandled error, which fails the run.
// A sleep on purpose: the timers are Blueprint's and react-transition-group's, which nothing
// announces and which outlive the unmounted components (no condition to wait on).
afterAll(() => new Promise<void>((resolve) => setTimeout(resolve, 400)));
