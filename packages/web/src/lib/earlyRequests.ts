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

/**
 * The early answer for a GET of `path`, awaited (null when there is none, or it failed). A GET of an
 * image (`/api/images/…`) asked for while the early script is still learning which image a case
 * viewer shows first (the case's answer is in, its image's GET not yet started) waits for that to
 * settle: else the app and the early script would each ask for the image, and the early script's
 * first tiles would race the app's.
 */
export async function takeEarlyAnswer(path: string): Promise<Response | null> {
  let taken = takeEarlyResponse(path);
  const pending = window.__laminaEarlyImagePending;
  if (!taken && pending && path.startsWith('/api/images/')) {
    await pending;
    taken = takeEarlyResponse(path);
  }
  return taken ? taken.catch(() => null) : null;
}
