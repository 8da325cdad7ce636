import { effectiveObjectivePower, MAGNIFICATIONS, TILE_SIZE } from '@lamina/domain';

/**
 * The viewer's geometry, as pure functions (doc 3 §9). Convention: the map is in full-resolution
 * pixel space, 1 map unit = 1 slide pixel, y pointing up, so the slide covers the extent
 * [0, -height, width, 0] with its top-left corner at the origin. A view resolution r is "r slide
 * pixels per screen pixel" (the downsample); TMS zoom z has resolution 2^(maxZoom - z).
 */

export type Extent = [number, number, number, number];

/** Pan step of the arrow keys, scale bar width (the longest the bar gets), mini-map size (doc 3 §9). */
export const PAN_STEP_PX = 80;
export const SCALE_BAR_PX = 100;
export const MINI_MAP_PX = 180;
/** Metres per pixel when the slide does not say (doc 3 §9). */
export const DEFAULT_METRES_PER_PIXEL = 2e-7;
/**
 * How far past full resolution the view may zoom (digital zoom): 2 screen pixels per slide pixel,
 * i.e. twice the scan's native magnification (issue 20; 40x on a 20x scan, never 80x).
 */
export const MIN_RESOLUTION = 1 / 2;

export function imageExtentOf(width: number, height: number): Extent {
  return [0, -height, width, 0];
}

/** Resolutions of the tile grid, index = TMS zoom: 2^maxZoom (whole slide in one tile) … 1. */
export function tileResolutions(maxZoom: number): number[] {
  return Array.from({ length: maxZoom + 1 }, (_, z) => 2 ** (maxZoom - z));
}

/** The view may zoom out to twice the resolution at which the whole slide fits one tile. */
export function maxViewResolution(maxZoom: number): number {
  return 2 ** (maxZoom + 1);
}

/** Fractional TMS zoom of a view resolution (maxZoom at full resolution). */
export function tmsZoomOf(resolution: number, maxZoom: number): number {
  return maxZoom - Math.log2(resolution);
}

/** Spec's scale factor (doc 3 §9): 1 when the max zoom is 0, otherwise 2^(19 - maxZoom). Kept for
 * coordinates written by the earlier system, whose map unit was this many times a slide pixel. */
export function legacyScaleFactor(maxZoom: number): number {
  return maxZoom === 0 ? 1 : 2 ** (19 - maxZoom);
}

/** Whether the slide records its pixel size: without it lengths are estimates (issue 20). */
export function isCalibrated(physicalResolution: number | null | undefined): boolean {
  return typeof physicalResolution === 'number' && physicalResolution > 0;
}

/** Metres per slide pixel: physicalResolution (µm/px) × 1e-6, default 2e-7 m (doc 3 §9). */
export function metresPerPixel(physicalResolution: number | null | undefined): number {
  return physicalResolution && physicalResolution > 0 ? physicalResolution * 1e-6 : DEFAULT_METRES_PER_PIXEL;
}

/** The objective power at full resolution: the slide's, else estimated from the pixel size, else the
 * highest magnification listed for the image; null when nothing tells. */
export function fullResolutionPower(image: {
  objectivePower?: number | null;
  physicalResolution?: number | null;
  magnifications?: readonly number[];
}): number | null {
  const power = effectiveObjectivePower(image.objectivePower ?? null, image.physicalResolution ?? null);
  if (power) return power;
  const listed = image.magnifications ?? [];
  return listed.length > 0 ? Math.max(...listed) : null;
}

/** Magnification shown at a view resolution: the full-resolution power divided by the downsample. */
export function magnificationAt(resolution: number, power: number | null): number | null {
  return power ? power / resolution : null;
}

export function resolutionForMagnification(magnification: number, power: number): number {
  return power / magnification;
}

/** '10x', '1.25x', '2.5x'; '13.3x' between the standard steps; '—' when unknown. */
export function formatMagnification(magnification: number | null): string {
  if (magnification === null || !Number.isFinite(magnification)) return '—';
  const rounded = magnification >= 10 ? Math.round(magnification * 10) / 10 : Math.round(magnification * 100) / 100;
  return `${rounded}x`;
}

/** The magnification that keys 1–6 jump to (1.25x … 40x). */
export function magnificationForKey(key: string): number | null {
  const index = Number(key) - 1;
  return Number.isInteger(index) && index >= 0 && index < MAGNIFICATIONS.length
    ? (MAGNIFICATIONS[index] ?? null)
    : null;
}

export interface ScaleBar {
  widthPx: number;
  metres: number;
  label: string;
  /** False when the slide records no pixel size: the length assumes the default (doc 3 §9). */
  calibrated: boolean;
}

/** A length in metres as µm (below 1 mm) or mm, three significant digits. */
export function formatLength(metres: number): string {
  const microns = metres * 1e6;
  if (microns < 1000) return `${Number(microns.toPrecision(3))} µm`;
  return `${Number((microns / 1000).toPrecision(3))} mm`;
}

/**
 * The longest round length in the 1–2–5 series (… 10, 20, 50, 100, 200, 500 µm, 1, 2, 5 mm …) that
 * is at most `maxMicrons`: the scale bar shows '100 µm', never '99.8 µm'. Null below 1 nm (none).
 */
export function roundScaleMicrons(maxMicrons: number): number | null {
  if (!Number.isFinite(maxMicrons) || maxMicrons < 1e-3) return null;
  let decade = 10 ** Math.floor(Math.log10(maxMicrons));
  // log10 can land a hair below an exact power of ten (1000 → 2.9999…): take the decade above then.
  if (decade * 10 <= maxMicrons * (1 + 1e-12)) decade *= 10;
  for (const step of [5, 2, 1]) {
    const microns = Number((step * decade).toPrecision(12));
    if (microns <= maxMicrons * (1 + 1e-12)) return microns;
  }
  return Number(decade.toPrecision(12));
}

/**
 * The scale bar at a view resolution (slide pixels per screen pixel): the longest round length
 * (roundScaleMicrons) that fits in SCALE_BAR_PX (100 px, doc 3 §9), its bar as long on screen as
 * that length is at the slide's µm per pixel — so 40 to 100 px. The map's unit is a slide pixel, not a
 * metre, so OpenLayers' ScaleLine (which reads the projection's metres) is not used. Uncalibrated (no
 * pixel size recorded), the length is an estimate from the default resolution and says so:
 * '≈ 5 µm (uncalibrated)'.
 */
export function scaleBarAt(resolution: number, mPerPixel: number, calibrated = true): ScaleBar {
  const metresPerScreenPx = resolution * mPerPixel;
  const microns = roundScaleMicrons(SCALE_BAR_PX * metresPerScreenPx * 1e6);
  const metres = microns === null ? SCALE_BAR_PX * metresPerScreenPx : microns / 1e6;
  const widthPx = microns === null ? SCALE_BAR_PX : Math.round((metres / metresPerScreenPx) * 100) / 100;
  const length = formatLength(metres);
  return {
    widthPx,
    metres,
    label: calibrated ? length : `≈ ${length} (uncalibrated)`,
    calibrated,
  };
}

/** Magnification above the scan's native one (full resolution): the view enlarges pixels only. */
export function isDigitalZoom(resolution: number): boolean {
  return resolution < 1 - 1e-9;
}

/** Resolution at which the extent fits a viewport of `size` pixels. */
export function fitResolution(width: number, height: number, size: readonly [number, number]): number {
  const [w, h] = size;
  if (w <= 0 || h <= 0) return Math.max(width, height) / TILE_SIZE;
  return Math.max(width / w, height / h);
}

/** The URL of z-stack plane `stack`: the image's tile URL template plus `stack=n` (plane 0 needs none). */
export function stackTileUrl(tileUrl: string, stack: number): string {
  if (stack === 0) return tileUrl;
  return `${tileUrl}${tileUrl.includes('?') ? '&' : '?'}stack=${stack}`;
}
