import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Glide, GLIDE_MIN_VELOCITY, GLIDE_MS } from './viewerGlide';

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(1_000_000);
});
afterEach(() => vi.useRealTimers());

/** Pointer positions every 16 ms, as DragPan feeds them. */
function drag(glide: Glide, points: [number, number][]): void {
  glide.begin();
  for (const [x, y] of points) {
    glide.update(x, y);
    vi.advanceTimersByTime(16);
  }
}

describe('Glide', () => {
  it('hands a released flick to the engine (DragPan does not animate) and starts at the speed of the hand', () => {
    const onGlide = vi.fn();
    const glide = new Glide(onGlide);
    // 2 px/ms to the left.
    drag(
      glide,
      [0, 1, 2, 3, 4, 5].map((i) => [-32 * i, 0] as [number, number]),
    );
    expect(glide.end()).toBe(false);
    expect(onGlide).toHaveBeenCalledOnce();
    const [distance, angle] = onGlide.mock.calls[0] as [number, number];
    expect(Math.abs(angle)).toBeCloseTo(Math.PI, 9);
    // An ease-out (cubic) glide of d over T starts at 3d/T: the release speed less the minimum.
    expect((3 * distance) / GLIDE_MS).toBeCloseTo(2 - GLIDE_MIN_VELOCITY, 9);
  });

  it('does not glide when the pointer rested before the release', () => {
    const onGlide = vi.fn();
    const glide = new Glide(onGlide);
    drag(
      glide,
      [0, 1, 2, 3].map((i) => [0, 32 * i] as [number, number]),
    );
    vi.advanceTimersByTime(120);
    expect(glide.end()).toBe(false);
    expect(onGlide).not.toHaveBeenCalled();
  });
});
