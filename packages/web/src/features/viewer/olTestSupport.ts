import { vi } from 'vitest';

/** jsdom has no ResizeObserver, which OpenLayers' Map needs; nothing renders there anyway (no size). */
export function stubResizeObserver(): void {
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe(): void {}
      unobserve(): void {}
      disconnect(): void {}
    },
  );
}
