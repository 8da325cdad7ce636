import { fuzzRouteGroup } from './fuzz/harness.js';

/** The fuzz suite (test/fuzz/harness.ts) over the routes of studies, cases, sample data, Image Management and reports. */
fuzzRouteGroup('studies');
