import type CircleStyle from 'ol/style/Circle';
import { describe, expect, it } from 'vitest';
import {
  MIN_POINT_SCREEN_RADIUS,
  POINT_OUTLINE,
  POINT_OUTLINE_WIDTH,
  pointLook,
  pointScreenRadius,
  pointStyle,
} from './annotationStyle';
import { disc } from './glAnnotationLayer';

/** Pixels of a w × h RGBA buffer with some opacity, and those of them that are dark (the ring). */
function coverage(px: Uint8ClampedArray): { drawn: number; dark: number } {
  let drawn = 0;
  let dark = 0;
  for (let i = 0; i < px.length; i += 4) {
    if ((px[i + 3] ?? 0) === 0) continue;
    drawn++;
    if ((px[i] ?? 0) + (px[i + 1] ?? 0) + (px[i + 2] ?? 0) < 120) dark++;
  }
  return { drawn, dark };
}

describe('point look (issue 29)', () => {
  it("keeps the spec's radius at full resolution, growing past it, but never under 4 screen px", () => {
    const celiac = pointLook(true).radius;
    const other = pointLook(false).radius;
    expect([celiac, other]).toEqual([1.5, 3]);
    // 10x on a 40x scan (resolution 4): 1.5 / 4 = 0.375 px would be a speck — drawn at 4 px.
    expect(pointScreenRadius(celiac, 4)).toBe(MIN_POINT_SCREEN_RADIUS);
    expect(pointScreenRadius(other, 1)).toBe(MIN_POINT_SCREEN_RADIUS);
    expect(pointScreenRadius(celiac, 64)).toBe(4);
    // Digital zoom past full resolution: the spec's size scales with the slide once it is larger.
    expect(pointScreenRadius(other, 0.5)).toBe(6);
    expect(pointScreenRadius(10, 1)).toBe(10);
  });

  it('the software path rasterises a point of at least 4 px radius inside a dark 1.5-px ring', () => {
    const [w, h] = [40, 40];
    const px = new Uint8ClampedArray(w * h * 4);
    const radius = pointScreenRadius(pointLook(true).radius, 4);
    disc(px, w, h, 20, 20, radius, POINT_OUTLINE_WIDTH, 135 / 255, 1, 1 / 255, 0.75, false);
    const { drawn, dark } = coverage(px);
    // A disc of radius 5.5 (4 + the ring) covers about π·30 ≈ 95 pixels; a 1.5-px one covered 7.
    expect(drawn).toBeGreaterThanOrEqual(Math.floor(Math.PI * 16));
    expect(drawn).toBeLessThanOrEqual(Math.ceil(Math.PI * 36));
    // The ring: every drawn pixel more than 4 px from the centre is the outline's near-black.
    expect(dark).toBeGreaterThanOrEqual(30);
    const centre = (20 * w + 20) * 4;
    expect([px[centre], px[centre + 1], px[centre + 2]]).toEqual([135, 255, 1]);
    const rim = (20 * w + 24) * 4; // 4.5 px from the centre: the ring
    expect(px[rim + 3]).toBe(Math.round(POINT_OUTLINE[3] * 255));
    expect((px[rim] ?? 255) + (px[rim + 1] ?? 255) + (px[rim + 2] ?? 255)).toBeLessThan(120);
  });

  it('the canvas style (no WebGL 2) has the same on-screen radius and ring', () => {
    const image = pointStyle('#87FF01', true, false, 4).getImage() as CircleStyle;
    expect(image.getRadius()).toBe(MIN_POINT_SCREEN_RADIUS + 0.75);
    expect(image.getStroke()?.getWidth()).toBe(1.5);
    expect(image.getStroke()?.getColor()).toBe('rgba(17,20,24,0.9)');
    expect(image.getFill()?.getColor()).toBe('rgba(135,255,1,0.75)');
    const lit = pointStyle('#87FF01', true, true, 4).getImage() as CircleStyle;
    expect(lit.getRadius()).toBe(10.75);
    expect(lit.getStroke()?.getColor()).toBe('#ffffff');
  });
});
