import {
  ANNOTATION_COLORS,
  HPF_HIGHLIGHT_RING,
  HPF_WEIGHT,
  HPF_WEIGHT_HIGHLIGHTED,
  POINT_FILL_OPACITY,
  POINT_FILL_OPACITY_CELIAC,
  POINT_RADIUS,
  POINT_RADIUS_CELIAC,
  hexToRgb,
} from '@lamina/domain';
import type { FlatStyleLike } from 'ol/style/flat';

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

/**
 * The WebGL style of points and HPFs (doc 3 §9). Feature properties: `t` 1 HPF / 0 point, `id`,
 * `cls` (class id, OTHER), `par` (a point's HPF, OTHER for the Orphan), `r` (HPF radius in image
 * pixels), `c` (colour). HPFs: weight 5, 10 when highlighted with a ring at 1.1× the radius;
 * their radius follows the zoom (image pixels / resolution). Points: a fixed screen radius.
 */
export function glStyle(celiac: boolean): FlatStyleLike {
  const { radius } = pointLook(celiac);
  const isHpf = ['==', ['get', 't'], 1];
  const isPoint = ['==', ['get', 't'], 0];
  const hpfLit = ['any', ['==', ['get', 'id'], ['var', 'hlHpf']], ['==', ['get', 'cls'], ['var', 'hlHpfClass']]];
  const pointLit = [
    'any',
    ['all', ['==', ['get', 'par'], ['var', 'hlPtHpf']], ['==', ['get', 'cls'], ['var', 'hlPtClass']]],
    ['==', ['get', 'par'], ['var', 'hlHpf']],
  ];
  const hpfRadius = ['/', ['get', 'r'], ['resolution']];
  return [
    {
      filter: isHpf,
      style: {
        'circle-radius': hpfRadius,
        'circle-fill-color': 'rgba(0,0,0,0)',
        'circle-stroke-color': ['get', 'c'],
        'circle-stroke-width': ['case', hpfLit, HPF_WEIGHT_HIGHLIGHTED, HPF_WEIGHT],
      },
    },
    {
      filter: ['all', isHpf, hpfLit],
      style: {
        'circle-radius': ['*', hpfRadius, HPF_HIGHLIGHT_RING],
        'circle-fill-color': 'rgba(0,0,0,0)',
        'circle-stroke-color': ['get', 'c'],
        'circle-stroke-width': 2,
      },
    },
    {
      filter: isPoint,
      style: {
        'circle-radius': ['case', pointLit, radius * 2.5, radius],
        'circle-fill-color': ['get', 'c'],
        'circle-stroke-color': ['case', pointLit, 'rgba(255,255,255,1)', 'rgba(0,0,0,0)'],
        'circle-stroke-width': ['case', pointLit, 1.5, 0],
      },
    },
  ];
}
