import { fuzzRouteGroup } from './fuzz/harness.js';

/** The fuzz suite (test/fuzz/harness.ts) over the routes of queries, query reasons, annotations, and every route no other group names. */
fuzzRouteGroup('rest');
