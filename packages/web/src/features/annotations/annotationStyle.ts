import {
  ANNOTATION_COLORS,
  POINT_FILL_OPACITY,
  POINT_FILL_OPACITY_CELIAC,
  POINT_RADIUS,
  POINT_RADIUS_CELIAC,
  hexToRgb,
} from '@lamina/domain';
import CircleStyle from 'ol/style/Circle';
import Fill from 'ol/style/Fill';
import Stroke from 'ol/style/Stroke';
import Style from 'ol/style/Style';

/** The map's highlight variables: -1 marks 'Other' / 'Orphan', NONE nothing. */
export const NONE = -9;
export const OTHER = -1;

/** '#RRGGBB' at an opacity → 'rgba(…)' (a colour OpenLayers' WebGL style reads from a feature). */
export function rgba(
  hex: string | null | undefined,
  alpha: number,
  fallback: string = ANNOTATION_COLORS.default,
): string {
  const rgb = hexToRgb(hex) ?? hexToRgb(fallback) ?? [255, 255, 0];
  return `rgba(${rgb[0]},${rgb[1]},${rgb[2]},${alpha})`;
}

/** Point radius and fill opacity (doc 3 §9): smaller and translucent in celiac studies. */
export function pointLook(celiac: boolean): { radius: number; opacity: number } {
  return celiac
    ? { radius: POINT_RADIUS_CELIAC, opacity: POINT_FILL_OPACITY_CELIAC }
    : { radius: POINT_RADIUS, opacity: POINT_FILL_OPACITY };
}

/** '#RRGGBB' at an opacity → [r, g, b, a] in 0…1 (the WebGL layer's colours). */
export function rgbaFloats(hex: string | null | undefined, alpha: number, fallback: string): number[] {
  const rgb = hexToRgb(hex) ?? hexToRgb(fallback) ?? [255, 255, 0];
  return [rgb[0] / 255, rgb[1] / 255, rgb[2] / 255, alpha];
}

/**
 * The smallest radius, in screen (CSS) pixels, a point is drawn with, whatever the zoom: the spec's
 * 1.5 px (celiac) or 3 px is a speck at 10x that no one can find or click (issue 29).
 */
export const MIN_POINT_SCREEN_RADIUS = 4;
/**
 * Every point has a ring this wide (screen pixels) just outside its fill, in POINT_OUTLINE: 1.5, as
 * an antialiased 1-px ring reads as a grey haze more than an edge.
 */
export const POINT_OUTLINE_WIDTH = 1.5;
/** The ring's colour (r, g, b, a in 0…1): near-black, so bright class colours stand out on tissue and glass. */
export const POINT_OUTLINE: readonly [number, number, number, number] = [17 / 255, 20 / 255, 24 / 255, 0.9];

/**
 * A point's radius on screen at a view resolution (slide pixels per screen pixel): the spec's radius
 * (pointLook) is its size at full resolution, so it grows as the view zooms past it, but never
 * below MIN_POINT_SCREEN_RADIUS. Its ring (POINT_OUTLINE_WIDTH) lies outside this radius.
 */
export function pointScreenRadius(specRadius: number, resolution: number): number {
  const scaled = resolution > 0 ? specRadius / resolution : specRadius;
  return Math.max(MIN_POINT_SCREEN_RADIUS, scaled);
}

/**
 * The canvas style of a point (the layers' path without WebGL 2): the same on-screen radius and ring
 * as the WebGL layer draws; `lit` (the tab's hover) at 2.5× the radius with a white rim.
 */
export function pointStyle(
  colour: string | null | undefined,
  celiac: boolean,
  lit: boolean,
  resolution: number,
): Style {
  const look = pointLook(celiac);
  const radius = pointScreenRadius(look.radius, resolution) * (lit ? 2.5 : 1);
  const [r, g, b, a] = POINT_OUTLINE;
  return new Style({
    image: new CircleStyle({
      radius: radius + POINT_OUTLINE_WIDTH / 2,
      fill: new Fill({ color: rgba(colour, look.opacity) }),
      stroke: new Stroke({
        color: lit ? '#ffffff' : `rgba(${Math.round(r * 255)},${Math.round(g * 255)},${Math.round(b * 255)},${a})`,
        width: POINT_OUTLINE_WIDTH,
      }),
    }),
  });
}
