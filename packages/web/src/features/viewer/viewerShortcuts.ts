import type { ViewerCommand } from './ViewerEngine';
import { magnificationForKey } from './viewerGeometry';

/** The viewer's keyboard shortcuts as data (doc 3 §2): key → command. */
const KEY_COMMANDS: Readonly<Record<string, ViewerCommand>> = {
  ArrowLeft: { type: 'pan', direction: 'left' },
  ArrowRight: { type: 'pan', direction: 'right' },
  ArrowUp: { type: 'pan', direction: 'up' },
  ArrowDown: { type: 'pan', direction: 'down' },
  '+': { type: 'zoomIn' },
  '=': { type: 'zoomIn' },
  '-': { type: 'zoomOut' },
  c: { type: 'toggleOverlays' },
};

/** Shortcuts are ignored while typing in a field (doc 3 §2). */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT';
}

/** The command of a key press, or null (typing in a field, a modifier held, an unbound key). */
export function commandForKey(
  event: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): ViewerCommand | null {
  if (event.ctrlKey || event.metaKey || event.altKey || isTypingTarget(event.target)) return null;
  const bound = KEY_COMMANDS[event.key];
  if (bound) return bound;
  const magnification = magnificationForKey(event.key);
  return magnification === null ? null : { type: 'zoomToMagnification', magnification };
}
