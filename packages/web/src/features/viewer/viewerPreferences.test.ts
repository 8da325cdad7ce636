import { beforeEach, describe, expect, it } from 'vitest';
import {
  readLayerVisibility,
  writeLayerVisibility,
  brightnessFilter,
  readAiOpacity,
  readAnnotationOpacity,
  readBrightness,
  readCaseImage,
  readImageView,
  readMiniMapExpanded,
  REMEMBERED_ENTRIES,
  writeAiOpacity,
  writeBrightness,
  writeCaseImage,
  writeImageView,
} from './viewerPreferences';

beforeEach(() => window.localStorage.clear());

describe('persisted viewer state (doc 3 §3, §9)', () => {
  it('defaults: brightness 0, annotation opacity 100, AI opacity 0, mini-map expanded', () => {
    expect(readBrightness()).toBe(0);
    expect(readAnnotationOpacity()).toBe(100);
    expect(readAiOpacity()).toBe(0);
    expect(readMiniMapExpanded()).toBe(true);
  });

  it('keeps values in range and reads anything else as the default', () => {
    writeBrightness(-40);
    expect(readBrightness()).toBe(-40);
    writeAiOpacity(65);
    expect(readAiOpacity()).toBe(65);
    for (const bad of ['101', '-101', '2.5', 'abc', '']) {
      window.localStorage.setItem('lamina.viewer.brightness', bad === '101' ? '101' : bad);
      window.localStorage.setItem('lamina.viewer.aiOpacity', bad);
      expect(readBrightness()).toBe(bad === '' ? 0 : 0);
      expect(readAiOpacity()).toBe(bad === '' ? 0 : 0);
    }
    expect(brightnessFilter(-40)).toBe('brightness(60%)');
  });

  it('the view of each image, and the image chosen in each case', () => {
    writeImageView(7, { resolution: 0.5, centerFraction: [0.25, 0.75] });
    writeCaseImage(40, 12);
    expect(readImageView(7)).toEqual({ resolution: 0.5, centerFraction: [0.25, 0.75] });
    expect(readImageView(8)).toBeUndefined();
    expect(readCaseImage(40)).toBe(12);
    expect(readCaseImage(41)).toBeUndefined();
  });

  it('ignores damaged entries', () => {
    window.localStorage.setItem('lamina.viewer.views', '{not json');
    expect(readImageView(7)).toBeUndefined();
    window.localStorage.setItem(
      'lamina.viewer.views',
      JSON.stringify([
        ['7', { resolution: -1, centerFraction: [0, 0] }],
        ['8', { resolution: 1, centerFraction: [0] }],
        ['9', { resolution: 2, centerFraction: [0.5, 0.5] }],
      ]),
    );
    expect(readImageView(7)).toBeUndefined();
    expect(readImageView(8)).toBeUndefined();
    expect(readImageView(9)).toEqual({ resolution: 2, centerFraction: [0.5, 0.5] });
    window.localStorage.setItem(
      'lamina.viewer.caseImages',
      JSON.stringify([
        ['40', 0],
        ['41', 'x'],
        ['42', 3],
      ]),
    );
    expect(readCaseImage(40)).toBeUndefined();
    expect(readCaseImage(41)).toBeUndefined();
    expect(readCaseImage(42)).toBe(3);
  });

  it('keeps only the most recently used entries', () => {
    for (let id = 1; id <= REMEMBERED_ENTRIES + 5; id++) writeCaseImage(id, id);
    expect(readCaseImage(1)).toBeUndefined();
    expect(readCaseImage(5)).toBeUndefined();
    expect(readCaseImage(6)).toBe(6);
    // Using an old entry again moves it to the end.
    writeCaseImage(6, 60);
    writeCaseImage(1000, 1);
    expect(readCaseImage(6)).toBe(60);
    expect(readCaseImage(7)).toBeUndefined();
  });
});

describe('layer visibility', () => {
  it('is kept for the browser tab (so switching images keeps it), both shown by default', () => {
    window.sessionStorage.clear();
    expect(readLayerVisibility()).toEqual({ annotations: true, ai: true });
    writeLayerVisibility({ annotations: false, ai: true });
    expect(readLayerVisibility()).toEqual({ annotations: false, ai: true });
    expect(window.localStorage.getItem('lamina.viewer.layers')).toBeNull();
    window.sessionStorage.setItem('lamina.viewer.layers', 'not json');
    expect(readLayerVisibility()).toEqual({ annotations: true, ai: true });
  });
});
