import {
  ANNOTATION_COLORS,
  POINT_FILL_OPACITY,
  POINT_FILL_OPACITY_CELIAC,
  POINT_RADIUS,
  POINT_RADIUS_CELIAC,
  hexToRgb,
} from '@lamina/domain';

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
