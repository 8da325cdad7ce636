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
  roundScaleMicrons,
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

  it('rounds the scale length down to the 1–2–5 series (… 10, 20, 50, 100 µm …, 1, 2, 5 mm)', () => {
    expect(roundScaleMicrons(99.8)).toBe(50);
    expect(roundScaleMicrons(100)).toBe(100);
    expect(roundScaleMicrons(199.99)).toBe(100);
    expect(roundScaleMicrons(200)).toBe(200);
    expect(roundScaleMicrons(499)).toBe(200);
    expect(roundScaleMicrons(500)).toBe(500);
    expect(roundScaleMicrons(999.9)).toBe(500);
    // Exact powers of ten, where log10 may fall a hair short.
    expect(roundScaleMicrons(1000)).toBe(1000);
    expect(roundScaleMicrons(1e-3 * 1e6)).toBe(1000);
    expect(roundScaleMicrons(0.3)).toBe(0.2);
    expect(roundScaleMicrons(12.8e3)).toBe(10e3);
    expect(roundScaleMicrons(0)).toBeNull();
    expect(roundScaleMicrons(Number.NaN)).toBeNull();
    // Every value it gives is d × 10^n with d in {1, 2, 5}, at most the input and over 40% of it.
    for (let x = 0.01; x < 1e5; x *= 1.07) {
      const v = roundScaleMicrons(x) ?? 0;
      const mantissa = Number((v / 10 ** Math.floor(Math.log10(v) + 1e-9)).toPrecision(6));
      expect([1, 2, 5]).toContain(mantissa);
      expect(v).toBeLessThanOrEqual(x * (1 + 1e-9));
      expect(v).toBeGreaterThan(x * 0.4);
    }
  });

  it('draws the scale bar as a round length, its width (at most 100 px) from the µm per pixel', () => {
    // Full resolution, 0.499 µm/px: 100 px = 49.9 µm, so the bar is 20 µm over 20 / 0.499 px.
    expect(scaleBarAt(1, metresPerPixel(0.499))).toEqual({
      widthPx: 40.08,
      metres: 20e-6,
      label: '20 µm',
      calibrated: true,
    });
    // Downsample 16: 100 px = 798 µm → 500 µm over 62.63 px.
    expect(scaleBarAt(16, metresPerPixel(0.499))).toMatchObject({ label: '500 µm', widthPx: 62.63 });
    // 0.25 µm/px at downsample 4: 100 px = exactly 100 µm.
    expect(scaleBarAt(4, metresPerPixel(0.25))).toMatchObject({ label: '100 µm', widthPx: 100 });
    // Unknown resolution: 2e-7 m/px; downsample 64 → 1.28 mm fits 1 mm over 78.13 px.
    expect(scaleBarAt(64, metresPerPixel(null))).toMatchObject({ label: '1 mm', widthPx: 78.13 });
    expect(scaleBarAt(512, metresPerPixel(0.25))).toMatchObject({ label: '10 mm', widthPx: 78.13 });
    expect(scaleBarAt(0.25, metresPerPixel(0.25))).toMatchObject({ label: '5 µm', widthPx: 80 });
    expect(formatLength(0.001)).toBe('1 mm');
    // A slide without a pixel size: an estimate from 2e-7 m/px, marked (issue 20).
    expect(scaleBarAt(0.35, metresPerPixel(null), isCalibrated(null)).label).toBe('≈ 5 µm (uncalibrated)');
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
