import { fuzzRouteGroup } from './fuzz/harness.js';

/** The fuzz suite (test/fuzz/harness.ts) over the routes of images, uploads, signed URLs, storage, .mld imports and tiles. */
fuzzRouteGroup('slides');
