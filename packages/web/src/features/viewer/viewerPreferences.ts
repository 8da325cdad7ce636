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

const BRIGHTNESS_KEY = 'lamina.viewer.brightness';
const MICROSCOPE_KEY = 'lamina.viewer.microscope';

/** Brightness adjust −100…100 (doc 3 §9), 0 by default. */
export const BRIGHTNESS_RANGE = { min: -100, max: 100 } as const;

export function readBrightness(): number {
  try {
    const value = Number(window.localStorage.getItem(BRIGHTNESS_KEY) ?? '0');
    return Number.isInteger(value) && value >= BRIGHTNESS_RANGE.min && value <= BRIGHTNESS_RANGE.max ? value : 0;
  } catch {
    return 0;
  }
}

export function writeBrightness(value: number): void {
  try {
    window.localStorage.setItem(BRIGHTNESS_KEY, String(value));
  } catch {
    // Storage unavailable: the choice lasts for this page only.
  }
}

export function readMicroscope(): boolean {
  try {
    return window.localStorage.getItem(MICROSCOPE_KEY) === 'true';
  } catch {
    return false;
  }
}

export function writeMicroscope(on: boolean): void {
  try {
    window.localStorage.setItem(MICROSCOPE_KEY, String(on));
  } catch {
    // Storage unavailable: the choice lasts for this page only.
  }
}

/** The CSS brightness of the tiles: a percentage of 100 plus the value (doc 3 §9). */
export function brightnessFilter(value: number): string {
  return `brightness(${100 + value}%)`;
}
