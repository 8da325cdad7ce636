/** Input types that take no typed text: a checkbox, a radio, a slider, a button. */
const NON_TEXT_INPUTS = new Set(['checkbox', 'radio', 'range', 'button', 'submit', 'reset', 'color', 'file', 'image']);

/** An open dialog (Blueprint's, or any modal) owns every key while the focus is in it. */
const DIALOG = '[role="dialog"], [role="alertdialog"], [aria-modal="true"], .bp6-dialog, .bp6-drawer';

/** Controls that move with the arrow keys: a slider, a tab list, a radio group, a menu, a list box. */
const ARROW_CONTROLS =
  '[role="slider"], [role="tab"], [role="tablist"], [role="radio"], [role="radiogroup"], [role="menu"], [role="menuitem"], [role="listbox"], [role="option"], input[type="range"], input[type="radio"]';
const ARROW_KEYS = new Set(['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown']);

/** Controls whose Enter or Space is their own action: an open menu's item, a list box's option. */
const MENU_CONTROLS = '[role="menu"], [role="menuitem"], [role="listbox"], [role="option"]';

/** A checkbox or a radio ticks with Space. */
const TICKING = 'input[type="checkbox"], input[type="radio"], [role="checkbox"], [role="switch"], [role="radio"]';

/**
 * Whether the focus is where text is typed, so no key is a shortcut (doc 3 §2: an input or a
 * textarea; also a select, editable text and an open dialog). A button, a checkbox or a sidebar tab
 * with the focus (after a click) is not: the shortcuts work there (issue 29, item 7).
 */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT' && !NON_TEXT_INPUTS.has((target as HTMLInputElement).type)) return true;
  return target.closest(DIALOG) !== null;
}

/**
 * Whether a key belongs to the focused element rather than to the viewer's shortcuts: every key
 * while typing (isTypingTarget); the arrows of a focused slider, tab, radio or menu (the brightness
 * slider's arrows must not pan the slide under it); Enter, Escape and Space in an open menu; Space on a
 * checkbox. Letters, digits, + - and Escape stay shortcuts on every other control.
 */
export function keyBelongsToFocus(event: Pick<KeyboardEvent, 'key' | 'target'>): boolean {
  const { key, target } = event;
  if (isTypingTarget(target)) return true;
  if (!(target instanceof HTMLElement)) return false;
  if (ARROW_KEYS.has(key)) return target.closest(ARROW_CONTROLS) !== null;
  if (key === 'Enter' || key === 'Escape') return target.closest(MENU_CONTROLS) !== null;
  if (key === ' ') return target.closest(`${MENU_CONTROLS}, ${TICKING}`) !== null;
  return false;
}
