import type PgBoss from 'pg-boss';
import { waitFor } from './wait.js';

/**
 * Takes the next job of `queue` as a worker would (pg-boss `fetch`), waiting for it to become
 * fetchable. pg-boss fetches only jobs with `start_after < now()`, and PGlite's clock counts whole
 * milliseconds: a job sent and fetched within the same millisecond is not fetched yet (a worker's
 * next poll takes it; a test's single fetch found none: jobs.reaper.test failed so once in CI).
 */
export function fetchJob<T extends object>(boss: PgBoss, queue: string): Promise<PgBoss.Job<T>> {
  return waitFor(`a ${queue} job to fetch`, async () => (await boss.fetch<T>(queue))[0], {
    timeoutMs: 5_000,
    everyMs: 5,
  });
}
