import type {} from './earlyStart';

/** An answer not taken within this long is left alone: the app asks afresh (its data may have changed). */
export const EARLY_RESPONSE_TTL_MS = 10_000;

/** Forgets every early answer not taken yet: after a mutation (a login, say) they may be stale. */
export function dropEarlyResponses(): void {
  window.__laminaEarly?.clear();
}

/**
 * The answer the document's early script (lib/earlyStart.ts) got for a GET of `path`, handed over
 * once; null when it started none (or too long ago).
 */
export function takeEarlyResponse(path: string, now = Date.now()): Promise<Response> | null {
  const registry = window.__laminaEarly;
  const entry = registry?.get(path);
  if (!registry || !entry) return null;
  registry.delete(path);
  return now - entry.startedAt <= EARLY_RESPONSE_TTL_MS ? entry.response : null;
}
