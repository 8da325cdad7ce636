import type { CarriedView } from './ViewerEngine';

/**
 * Viewer settings kept in local storage (doc 3 §3 "Persisted viewer state": zoom, selected image,
 * brightness adjust, annotation opacity, locator panel expanded). Storage may be unavailable
 * (private mode, quota): a setting then lasts for the page only, and a stored value that is not
 * what it should be reads as the default.
 */
const KEYS = {
  miniMapExpanded: 'lamina.viewer.miniMapExpanded',
  brightness: 'lamina.viewer.brightness',
  microscope: 'lamina.viewer.microscope',
  annotationOpacity: 'lamina.viewer.annotationOpacity',
  aiOpacity: 'lamina.viewer.aiOpacity',
  sidebarOpen: 'lamina.viewer.sidebarOpen',
  views: 'lamina.viewer.views',
  caseImages: 'lamina.viewer.caseImages',
} as const;

function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // Storage unavailable: the choice lasts for this page only.
  }
}

/** A whole number in [min, max] stored under `key`, or `fallback`. */
function readInteger(key: string, range: { min: number; max: number }, fallback: number): number {
  const raw = read(key);
  if (raw === null) return fallback;
  const value = Number(raw);
  return Number.isInteger(value) && value >= range.min && value <= range.max ? value : fallback;
}

function readFlag(key: string, fallback: boolean): boolean {
  const raw = read(key);
  return raw === null ? fallback : raw === 'true';
}

export const readMiniMapExpanded = (): boolean => readFlag(KEYS.miniMapExpanded, true);
export const writeMiniMapExpanded = (expanded: boolean): void => write(KEYS.miniMapExpanded, String(expanded));

export const readMicroscope = (): boolean => readFlag(KEYS.microscope, false);
export const writeMicroscope = (on: boolean): void => write(KEYS.microscope, String(on));

export const readSidebarOpen = (): boolean => readFlag(KEYS.sidebarOpen, true);
export const writeSidebarOpen = (open: boolean): void => write(KEYS.sidebarOpen, String(open));

/** Brightness adjust −100…100 (doc 3 §9), 0 by default. */
export const BRIGHTNESS_RANGE = { min: -100, max: 100 } as const;
export const readBrightness = (): number => readInteger(KEYS.brightness, BRIGHTNESS_RANGE, 0);
export const writeBrightness = (value: number): void => write(KEYS.brightness, String(value));

/** Annotation opacity 0…100, 100 by default (doc 3 §9). */
export const OPACITY_RANGE = { min: 0, max: 100 } as const;
export const readAnnotationOpacity = (): number => readInteger(KEYS.annotationOpacity, OPACITY_RANGE, 100);
export const writeAnnotationOpacity = (value: number): void => write(KEYS.annotationOpacity, String(value));

/** The AI annotations' opacity: 0 when AI annotations exist and nothing is set (doc 3 §9). */
export const readAiOpacity = (): number => readInteger(KEYS.aiOpacity, OPACITY_RANGE, 0);
export const writeAiOpacity = (value: number): void => write(KEYS.aiOpacity, String(value));

/**
 * Whether the annotation and AI layers are shown ('a', 'i', the Annotations checkbox): kept for the
 * browser tab (session storage), so switching the case's images keeps them, and a new visit starts
 * with both shown. (Not in the spec's persisted state, so not in local storage.)
 */
export type LayerVisibility = { annotations: boolean; ai: boolean };
const LAYERS_KEY = 'lamina.viewer.layers';

export function readLayerVisibility(): LayerVisibility {
  try {
    const raw = JSON.parse(window.sessionStorage.getItem(LAYERS_KEY) ?? '{}') as Partial<LayerVisibility>;
    return { annotations: raw.annotations !== false, ai: raw.ai !== false };
  } catch {
    return { annotations: true, ai: true };
  }
}

export function writeLayerVisibility(layers: LayerVisibility): void {
  try {
    window.sessionStorage.setItem(LAYERS_KEY, JSON.stringify(layers));
  } catch {
    // Storage unavailable: the choice lasts for this slide only.
  }
}

/** The CSS brightness of the tiles: a percentage of 100 plus the value (doc 3 §9). */
export function brightnessFilter(value: number): string {
  return `brightness(${100 + value}%)`;
}

/**
 * Entries kept in a per-object map (the view of each image, the image chosen in each case): the
 * most recently used ones, so storage does not grow without end.
 */
export const REMEMBERED_ENTRIES = 100;

function readMap<T>(key: string, valid: (value: unknown) => value is T): Map<string, T> {
  try {
    const parsed: unknown = JSON.parse(read(key) ?? '[]');
    if (!Array.isArray(parsed)) return new Map();
    return new Map(
      parsed.filter(
        (entry): entry is [string, T] => Array.isArray(entry) && typeof entry[0] === 'string' && valid(entry[1]),
      ),
    );
  } catch {
    return new Map();
  }
}

function remember<T>(key: string, valid: (value: unknown) => value is T, id: string, value: T): void {
  const entries = readMap(key, valid);
  entries.delete(id);
  entries.set(id, value);
  write(key, JSON.stringify([...entries].slice(-REMEMBERED_ENTRIES)));
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function isCarriedView(value: unknown): value is CarriedView {
  if (typeof value !== 'object' || value === null) return false;
  const { resolution, centerFraction } = value as Partial<CarriedView>;
  return (
    finite(resolution) &&
    resolution > 0 &&
    Array.isArray(centerFraction) &&
    centerFraction.length === 2 &&
    centerFraction.every(finite)
  );
}

/** The zoom and place last shown of an image: it opens there again (doc 3 §3, zoom). */
export const readImageView = (imageId: number): CarriedView | undefined =>
  readMap(KEYS.views, isCarriedView).get(String(imageId));
export const writeImageView = (imageId: number, view: CarriedView): void =>
  remember(KEYS.views, isCarriedView, String(imageId), view);

const isId = (value: unknown): value is number => Number.isInteger(value) && (value as number) > 0;

/** The image last chosen in a case (doc 3 §3, selected image). */
export const readCaseImage = (caseId: number): number | undefined => readMap(KEYS.caseImages, isId).get(String(caseId));
/** The image a case viewer shows first: the one last chosen in the case if it is still there, else the first. */
export function shownCaseImage<T extends { id: number }>(
  images: readonly T[],
  kept: number | null | undefined,
): T | null {
  return images.find((image) => image.id === kept) ?? images[0] ?? null;
}
export const writeCaseImage = (caseId: number, imageId: number): void =>
  remember(KEYS.caseImages, isId, String(caseId), imageId);
