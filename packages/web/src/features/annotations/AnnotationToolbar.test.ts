import { describe, expect, it } from 'vitest';
import { ellipseSizeText } from './AnnotationToolbar';

describe('the ellipse panel’s size (issue 29 item 4)', () => {
  it('shows the radii in µm and the area in µm² from the slide’s pixel size', () => {
    // 140 × 80 px at 0.25 µm/px: radii 35 × 20 µm, area π·35·20 = 2 199.1 µm².
    expect(ellipseSizeText(140, 80, 0.25)).toBe('Radii 35 µm × 20 µm · 2 199 µm²');
    expect(ellipseSizeText(4000, 2000, 1)).toBe('Radii 4 000 µm × 2 000 µm · 25 132 741 µm²');
  });

  it('falls back to px only when the slide records no pixel size', () => {
    expect(ellipseSizeText(140.4, 79.6, null)).toBe('Radii 140 × 80 px');
    expect(ellipseSizeText(140, 80, 0)).toBe('Radii 140 × 80 px');
  });
});
