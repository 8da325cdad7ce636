import { OverlayToaster, type Intent, type Toaster } from '@blueprintjs/core';

let toaster: Promise<Toaster> | null = null;

/** Shows a short message at the top of the page (Blueprint Toaster, created on first use). */
export async function showToast(message: string, intent: Intent = 'success'): Promise<void> {
  toaster ??= OverlayToaster.create({ position: 'top' });
  (await toaster).show({ message, intent, icon: intent === 'success' ? 'tick' : undefined, timeout: 4000 });
}
