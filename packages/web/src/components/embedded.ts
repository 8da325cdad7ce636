import { EMBEDDED_BY_NOTO, EMBEDDED_PARAM } from '@lamina/domain';
import { createContext, useContext } from 'react';

const STORAGE_KEY = 'lamina.embeddedBy';

export type EmbeddingWindow = Pick<Window, 'location' | 'self' | 'top' | 'sessionStorage'>;

function isInFrame(win: EmbeddingWindow): boolean {
  try {
    return win.self !== win.top;
  } catch {
    // A cross-origin parent can make `top` inaccessible: that alone means we are framed.
    return true;
  }
}

/**
 * Embedded mode (doc 1 §2.3): on when `?embeddedBy=NOTO` is present and the page is inside a
 * parent frame. Once on, it stays on for the tab (sessionStorage), so in-tab navigation and
 * reloads that drop the query parameter keep it.
 */
export function detectEmbeddedMode(win: EmbeddingWindow = window): boolean {
  const params = new URLSearchParams(win.location.search);
  const requested = params.get(EMBEDDED_PARAM) === EMBEDDED_BY_NOTO && isInFrame(win);
  try {
    if (requested) win.sessionStorage.setItem(STORAGE_KEY, EMBEDDED_BY_NOTO);
    return requested || win.sessionStorage.getItem(STORAGE_KEY) === EMBEDDED_BY_NOTO;
  } catch {
    return requested;
  }
}

export const EmbeddedModeContext = createContext(false);

export function useEmbeddedMode(): boolean {
  return useContext(EmbeddedModeContext);
}
