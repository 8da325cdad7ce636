import { ANNOTATION_TOOLS, TOOL_KEYS, TOOL_LABELS, TOOLS_NEEDING_EDIT } from '@lamina/domain';
import { keyBelongsToFocus } from '../../lib/typingTarget';
import { REDO_KEYS, UNDO_KEYS } from '../annotations/useAnnotationHistory';
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

/** The command of a key press, or null (typing in a field, a modifier held, an unbound key). */
export function commandForKey(
  event: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): ViewerCommand | null {
  if (event.ctrlKey || event.metaKey || event.altKey || keyBelongsToFocus(event)) return null;
  const bound = KEY_COMMANDS[event.key];
  if (bound) return bound;
  const magnification = magnificationForKey(event.key);
  return magnification === null ? null : { type: 'zoomToMagnification', magnification };
}

/** Keys that toggle the viewer's layers (doc 3 §2): the page holds these states, not the map engine. */
export type LayerToggle = 'annotations' | 'ai';
const LAYER_KEYS: Readonly<Record<string, LayerToggle>> = { a: 'annotations', i: 'ai' };

/** The layer a key toggles, or null (typing in a field, a modifier held, another key). */
export function layerToggleForKey(
  event: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): LayerToggle | null {
  if (event.ctrlKey || event.metaKey || event.altKey || keyBelongsToFocus(event)) return null;
  return LAYER_KEYS[event.key] ?? null;
}

/**
 * The shortcuts as the keyboard shortcuts dialog lists them (doc 3 §2): the bound keys above, the
 * magnification jumps, the annotation tools and '?' for the dialog itself.
 */
export const SHORTCUT_HELP: readonly { keys: string; action: string }[] = [
  { keys: '← ↑ → ↓', action: 'Pan 80 px' },
  { keys: '+ or =', action: 'Zoom in' },
  { keys: '-', action: 'Zoom out' },
  { keys: '1 – 6', action: 'Jump to 1.25x, 2.5x, 5x, 10x, 20x, 40x' },
  { keys: 'c', action: 'Show or hide the mini-map and the other controls' },
  { keys: 'a', action: 'Show or hide the annotations' },
  { keys: 'i', action: 'Show or hide the AI annotation layers' },
  ...ANNOTATION_TOOLS.map((tool) => ({
    keys: TOOL_KEYS[tool],
    action: `${TOOL_LABELS[tool]} tool${TOOLS_NEEDING_EDIT.includes(tool) ? ' (needs the permission to create annotations)' : ''}`,
  })),
  { keys: 'Esc', action: 'Cancel the shape being drawn, then close the tool' },
  { keys: 'Space (hold)', action: 'Pan while drawing' },
  {
    keys: UNDO_KEYS,
    action: 'Undo your last annotation change on this image (needs the permission to create annotations)',
  },
  { keys: REDO_KEYS, action: 'Redo the change you undid' },
  { keys: '?', action: 'This list of shortcuts' },
];

/** '?' opens the shortcuts dialog (not while typing, nor with a modifier other than Shift). */
export function isHelpKey(event: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey'>): boolean {
  return event.key === '?' && !event.ctrlKey && !event.metaKey && !event.altKey && !keyBelongsToFocus(event);
}
