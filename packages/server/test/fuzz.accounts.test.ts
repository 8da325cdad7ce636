import { fuzzRouteGroup } from './fuzz/harness.js';

/** The fuzz suite (test/fuzz/harness.ts) over the routes of sign-in, sessions, passwords, users, organizations, permissions, configuration and health. */
fuzzRouteGroup('accounts');
