/** Controls that use the keys themselves: arrows move a slider, switch tabs or radios, walk a menu. */
const KEY_CONTROLS =
  '[role="slider"], [role="tab"], [role="radio"], [role="menu"], [role="menuitem"], [role="listbox"], [role="dialog"]';

/**
 * Shortcuts are ignored while typing in a field (doc 3 §2) and while a control that answers keys
 * itself has the focus (the brightness slider's arrows must not pan the slide under it).
 */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') return true;
  return target.closest(KEY_CONTROLS) !== null;
}
