import { useEffect } from 'react';

/** Sets the browser tab title to `{title} · Lamina`. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = title === '' ? 'Lamina' : `${title} · Lamina`;
  }, [title]);
}
