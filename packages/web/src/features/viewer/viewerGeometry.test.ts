import { describe, expect, it } from 'vitest';
import {
  fitResolution,
  formatLength,
  formatMagnification,
  fullResolutionPower,
  imageExtentOf,
  legacyScaleFactor,
  magnificationAt,
  magnificationForKey,
  metresPerPixel,
  scaleBarAt,
  isCalibrated,
  stackTileUrl,
  tileResolutions,
  tmsZoomOf,
} from './viewerGeometry';

describe('viewer geometry', () => {
  it('puts the slide in pixel space with y up: extent [0, -height, width, 0]', () => {
    expect(imageExtentOf(2220, 2967)).toEqual([0, -2967, 2220, 0]);
  });

  it('has tile resolutions 2^(maxZoom - z): the whole slide in one tile at z 0, 1 at full resolution', () => {
    expect(tileResolutions(4)).toEqual([16, 8, 4, 2, 1]);
    expect(tileResolutions(0)).toEqual([1]);
    // 2220 x 2967 at z 0: 2967 / 16 = 185 px, inside one 256-px tile.
    expect(2967 / tileResolutions(4)[0]!).toBeLessThanOrEqual(256);
    expect(tmsZoomOf(1, 4)).toBe(4);
    expect(tmsZoomOf(16, 4)).toBe(0);
    expect(tmsZoomOf(4, 4)).toBe(2);
  });

  it('gives the magnification as objective power / downsample at each zoom', () => {
    const power = 20;
    expect(tileResolutions(4).map((r) => magnificationAt(r, power))).toEqual([1.25, 2.5, 5, 10, 20]);
    expect(magnificationAt(0.5, 40)).toBe(80);
    expect(magnificationAt(2, null)).toBeNull();
    expect(formatMagnification(1.25)).toBe('1.25x');
    expect(formatMagnification(20)).toBe('20x');
    expect(formatMagnification(13.333)).toBe('13.3x');
    expect(formatMagnification(null)).toBe('—');
  });

  it('maps keys 1–6 to 1.25x, 2.5x, 5x, 10x, 20x, 40x', () => {
    expect(['1', '2', '3', '4', '5', '6'].map(magnificationForKey)).toEqual([1.25, 2.5, 5, 10, 20, 40]);
    expect(magnificationForKey('7')).toBeNull();
    expect(magnificationForKey('0')).toBeNull();
    expect(magnificationForKey('a')).toBeNull();
  });

  it('finds the objective power from the slide, the pixel size, or the listed magnifications', () => {
    expect(fullResolutionPower({ objectivePower: 40 })).toBe(40);
    expect(fullResolutionPower({ objectivePower: null, physicalResolution: 0.499 })).toBe(20);
    expect(fullResolutionPower({ objectivePower: null, physicalResolution: 0.25 })).toBe(40);
    expect(fullResolutionPower({ magnifications: [1.25, 2.5, 5, 10] })).toBe(10);
    expect(fullResolutionPower({})).toBeNull();
  });

  it('uses physicalResolution × 1e-6 metres per pixel, 2e-7 m when unknown', () => {
    expect(metresPerPixel(0.499)).toBeCloseTo(4.99e-7, 15);
    expect(metresPerPixel(null)).toBe(2e-7);
    expect(metresPerPixel(0)).toBe(2e-7);
  });

  it('measures the 100-px scale bar in µm and mm', () => {
    // Full resolution, 0.499 µm/px: 100 px = 49.9 µm.
    expect(scaleBarAt(1, metresPerPixel(0.499))).toEqual({
      widthPx: 100,
      metres: 100 * 4.99e-7,
      label: '49.9 µm',
      calibrated: true,
    });
    // Downsample 16: 798 µm.
    expect(scaleBarAt(16, metresPerPixel(0.499)).label).toBe('798 µm');
    // Unknown resolution: 2e-7 m/px; downsample 64 → 1.28 mm.
    expect(scaleBarAt(64, metresPerPixel(null)).label).toBe('1.28 mm');
    expect(scaleBarAt(0.25, metresPerPixel(0.25)).label).toBe('6.25 µm');
    expect(formatLength(0.001)).toBe('1 mm');
    // A slide without a pixel size: an estimate from 2e-7 m/px, marked (issue 20).
    expect(scaleBarAt(0.35, metresPerPixel(null), isCalibrated(null)).label).toBe('≈ 7 µm (uncalibrated)');
    expect(isCalibrated(0.499)).toBe(true);
    expect(isCalibrated(0)).toBe(false);
  });

  it("has the spec's scale factor: 1 when max zoom is 0, else 2^(19 - maxZoom)", () => {
    expect(legacyScaleFactor(0)).toBe(1);
    expect(legacyScaleFactor(4)).toBe(2 ** 15);
    expect(legacyScaleFactor(9)).toBe(1024);
  });

  it('fits the slide into the viewport keeping its aspect', () => {
    expect(fitResolution(2220, 2967, [800, 600])).toBeCloseTo(2967 / 600);
    expect(fitResolution(4000, 1000, [800, 600])).toBe(5);
  });

  it('adds the z-stack plane to the tile URL', () => {
    expect(stackTileUrl('/tiles/1/{z}/{x}/{y}?t=abc', 0)).toBe('/tiles/1/{z}/{x}/{y}?t=abc');
    expect(stackTileUrl('/tiles/1/{z}/{x}/{y}?t=abc', 2)).toBe('/tiles/1/{z}/{x}/{y}?t=abc&stack=2');
    expect(stackTileUrl('https://tiles.example/tiles/1/{z}/{x}/{y}', 1)).toBe(
      'https://tiles.example/tiles/1/{z}/{x}/{y}?stack=1',
    );
  });
});
