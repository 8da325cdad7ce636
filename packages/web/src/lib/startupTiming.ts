/**
 * User Timing marks of the start-up (issue 28): when the early script, the app and a viewer reached
 * each step. DevTools' Performance panel shows them; bench:viewer's trace prints them beside the
 * requests, so a slow first tile can be told from a slow network, a slow bundle or a slow render.
 */
export type StartupStep =
  | 'early'
  | 'main'
  | 'viewer-module'
  | 'viewer-engine'
  | 'viewer-attached'
  /** The slide's first complete frame, or the engine stopped waiting for it (its `firstFrame`). */
  | 'viewer-first-frame';

export function markStartup(step: StartupStep): void {
  // Once per page load: the first time is the one the start-up waited for.
  if (typeof performance === 'undefined' || performance.getEntriesByName(`lamina:${step}`, 'mark').length > 0) return;
  performance.mark(`lamina:${step}`);
}
