/** Viewer settings kept in local storage (doc 3 §3 "Persisted viewer state"). */
const MINI_MAP_KEY = 'lamina.viewer.miniMapExpanded';

export function readMiniMapExpanded(): boolean {
  try {
    return window.localStorage.getItem(MINI_MAP_KEY) !== 'false';
  } catch {
    return true;
  }
}

export function writeMiniMapExpanded(expanded: boolean): void {
  try {
    window.localStorage.setItem(MINI_MAP_KEY, String(expanded));
  } catch {
    // Storage unavailable: the choice lasts for this page only.
  }
}
