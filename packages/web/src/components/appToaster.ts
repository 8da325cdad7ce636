import { OverlayToaster, type IconName, type Intent, type Toaster } from '@blueprintjs/core';

let toaster: Promise<Toaster> | null = null;

/** Shows a short message at the top of the page (Blueprint Toaster, created on first use). */
export async function showToast(message: string, intent: Intent = 'success'): Promise<void> {
  toaster ??= OverlayToaster.create({ position: 'top' });
  (await toaster).show({ message, intent, icon: intent === 'success' ? 'tick' : undefined, timeout: 4000 });
}

/**
 * A message with one action (the delete's Undo, issue 29), shown longer so the hand can reach it;
 * resolves to a function that dismisses it. `onDismiss` runs however it goes.
 */
export async function showActionToast(
  message: string,
  action: { text: string; icon?: IconName; onClick: () => void },
  onDismiss?: () => void,
): Promise<() => void> {
  toaster ??= OverlayToaster.create({ position: 'top' });
  const shown = await toaster;
  const key = shown.show({ message, timeout: 8000, action, onDismiss: () => onDismiss?.() });
  return () => shown.dismiss(key);
}
