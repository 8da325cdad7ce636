import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ellipsePerimeter,
  formatAreaUm2,
  formatMicrons,
  hpfRadiusPx,
  regionMeasures,
  ringAreaPx,
  ringPerimeterPx,
  type AnnotationView,
} from '../src/index.js';

type Region = Pick<AnnotationView, 'annotationType' | 'geometry' | 'radius' | 'radiusX' | 'radiusY'>;
const noRadii = { radius: null, radiusX: null, radiusY: null };
type Ring = [number, number][];
const polygon = (ring: Ring, ...holes: Ring[]): Region => ({
  annotationType: 'FREEHAND',
  geometry: { type: 'Polygon', coordinates: [ring, ...holes] },
  ...noRadii,
});
const centre: AnnotationView['geometry'] = { type: 'Point', coordinates: [500, 500] };

describe('areas and perimeters of regions in µm (issue 29 item 4)', () => {
  it('a 100 × 50 µm rectangle (200 × 100 px at 0.5 µm/px): 5 000 µm², 300 µm', () => {
    const rect = polygon([
      [10, 10],
      [210, 10],
      [210, 110],
      [10, 110],
      [10, 10],
    ]);
    expect(regionMeasures(rect, 0.5)).toEqual({ area: 5000, perimeter: 300 });
  });

  it('the shoelace formula: either winding, closed or open, a concave L and a triangle', () => {
    const l = [
      [0, 0],
      [4, 0],
      [4, 1],
      [1, 1],
      [1, 3],
      [0, 3],
    ];
    // The L: a 4 × 1 bar and a 1 × 2 leg = 6 px²; its outline 4 + 1 + 3 + 2 + 1 + 3 = 14 px.
    expect(ringAreaPx(l)).toBe(6);
    expect(ringAreaPx([...l].reverse())).toBe(6);
    expect(ringAreaPx([...l, l[0] as number[]])).toBe(6);
    expect(ringPerimeterPx(l)).toBe(14);
    expect(ringPerimeterPx([...l, l[0] as number[]])).toBe(14);
    // A 3-4-5 right triangle: 6 px², 12 px.
    expect(
      regionMeasures(
        polygon([
          [0, 0],
          [3, 0],
          [0, 4],
          [0, 0],
        ]),
        1,
      ),
    ).toEqual({ area: 6, perimeter: 12 });
  });

  it('a hole is taken off the area, not added to the perimeter', () => {
    const outer: Ring = [
      [0, 0],
      [100, 0],
      [100, 100],
      [0, 100],
      [0, 0],
    ];
    const hole: Ring = [
      [10, 10],
      [20, 10],
      [20, 20],
      [10, 20],
      [10, 10],
    ];
    expect(regionMeasures(polygon(outer, hole), 1)).toEqual({ area: 9900, perimeter: 400 });
  });

  it('an ellipse: π·a·b and Ramanujan’s perimeter, exact for a circle; the tilt does not matter', () => {
    // 140 × 80 px radii at 0.25 µm/px: a = 35 µm, b = 20 µm.
    const ellipse: Region = { annotationType: 'ELLIPSE', geometry: centre, radius: null, radiusX: 140, radiusY: 80 };
    const m = regionMeasures(ellipse, 0.25);
    expect(m.area).toBeCloseTo(Math.PI * 35 * 20, 9); // 2 199.11 µm²
    // π[3(55) − √((125)(95))] = π(165 − 108.9725) = 176.0157 µm.
    expect(m.perimeter).toBeCloseTo(176.0157, 3);
    expect(ellipsePerimeter(10, 10)).toBeCloseTo(2 * Math.PI * 10, 12);
    // A flat ellipse tends to 4a (Ramanujan's approximation gives 3.9829a at b = 0).
    expect(ellipsePerimeter(1, 0) / 4).toBeCloseTo(0.9958, 3);
  });

  it('an HPF circle: πr² and 2πr — 0.238 mm² (238 000 µm²) at any pixel size, four times for NASH', () => {
    for (const mpp of [0.25, 0.5, 0.2527]) {
      const hpf: Region = {
        annotationType: 'HPF',
        geometry: centre,
        radius: hpfRadiusPx(mpp, false),
        radiusX: null,
        radiusY: null,
      };
      const m = regionMeasures(hpf, mpp);
      expect(m.area).toBeCloseTo(238_000, 6);
      expect(m.perimeter).toBeCloseTo(2 * Math.sqrt(Math.PI * 238_000), 6);
      const nash = regionMeasures({ ...hpf, radius: hpfRadiusPx(mpp, true) }, mpp);
      expect(nash.area).toBeCloseTo(4 * 238_000, 5);
    }
  });

  it('null without a physical pixel size, and for annotations that are not regions', () => {
    const rect = polygon([
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 0],
    ]);
    for (const mpp of [null, undefined, 0, -1, Number.NaN])
      expect(regionMeasures(rect, mpp)).toEqual({ area: null, perimeter: null });
    const line: Region = {
      annotationType: 'LINE',
      geometry: {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [10, 0],
        ],
      },
      ...noRadii,
    };
    expect(regionMeasures(line, 0.5)).toEqual({ area: null, perimeter: null });
    expect(regionMeasures({ annotationType: 'POINT', geometry: centre, ...noRadii }, 0.5)).toEqual({
      area: null,
      perimeter: null,
    });
  });

  it('the area scales with the square of the pixel size, the perimeter linearly (any rectangle)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.double({ min: 0.05, max: 5, noNaN: true }),
        (w, h, mpp) => {
          const m = regionMeasures(
            polygon([
              [0, 0],
              [w, 0],
              [w, h],
              [0, h],
              [0, 0],
            ]),
            mpp,
          );
          expect(m.area).toBeCloseTo(w * h * mpp * mpp, 6);
          expect(m.perimeter).toBeCloseTo(2 * (w + h) * mpp, 6);
        },
      ),
    );
  });

  it('formats: whole µm² and µm, thousands apart', () => {
    expect(formatAreaUm2(12_345.4)).toBe('12 345 µm²');
    expect(formatAreaUm2(5000)).toBe('5 000 µm²');
    expect(formatAreaUm2(999.6)).toBe('1 000 µm²');
    expect(formatAreaUm2(1_234_567)).toBe('1 234 567 µm²');
    expect(formatMicrons(35)).toBe('35 µm');
    expect(formatMicrons(1250.2)).toBe('1 250 µm');
  });
});
