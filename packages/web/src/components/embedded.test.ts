import { describe, expect, it } from 'vitest';
import { detectEmbeddedMode, type EmbeddingWindow } from './embedded';

function fakeWindow(search: string, framed: boolean, storage = new Map<string, string>()): EmbeddingWindow {
  const self = {} as EmbeddingWindow['self'];
  return {
    location: { search } as Location,
    self,
    top: framed ? ({} as EmbeddingWindow['self']) : self,
    sessionStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
    } as Storage,
  };
}

describe('detectEmbeddedMode', () => {
  it('is on with embeddedBy=NOTO inside a frame', () => {
    expect(detectEmbeddedMode(fakeWindow('?embeddedBy=NOTO', true))).toBe(true);
  });

  it('is off with embeddedBy=NOTO in a top-level window', () => {
    expect(detectEmbeddedMode(fakeWindow('?embeddedBy=NOTO', false))).toBe(false);
  });

  it('is off inside a frame without the parameter, or with another value', () => {
    expect(detectEmbeddedMode(fakeWindow('', true))).toBe(false);
    expect(detectEmbeddedMode(fakeWindow('?embeddedBy=OTHER', true))).toBe(false);
  });

  it('stays on for the tab once set', () => {
    const storage = new Map<string, string>();
    expect(detectEmbeddedMode(fakeWindow('?embeddedBy=NOTO&x=1', true, storage))).toBe(true);
    expect(detectEmbeddedMode(fakeWindow('?x=1', true, storage))).toBe(true);
  });

  it('treats an inaccessible top window as framed', () => {
    const win = fakeWindow('?embeddedBy=NOTO', false);
    Object.defineProperty(win, 'top', {
      get() {
        throw new DOMException('cross-origin', 'SecurityError');
      },
    });
    expect(detectEmbeddedMode(win)).toBe(true);
  });
});
