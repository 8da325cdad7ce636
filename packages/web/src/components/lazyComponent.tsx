import { useEffect, useState, type ComponentType } from 'react';
import { errorMessage } from '../api/ApiError';
import { showToast } from './appToaster';

/**
 * A component whose code loads when it is first rendered — a dialog behind a button — so that its
 * module (and what only it imports) stays out of the chunk of the page that renders it (issue 28:
 * the upload dialog took Uppy into the viewers' chunk, code parsed before every slide's first
 * frame). It renders nothing until the code is in, then the component; later renders have it at
 * once. Not React.lazy: a Suspense boundary's content is revealed no sooner than 300 ms after its
 * fallback appeared (React's throttle), a delay every opening would show. A failed load says so
 * (`what` names the part), and rendering it again tries again.
 */
export function lazyComponent<P extends object>(what: string, load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  function LazyComponent(props: P) {
    const [Component, setComponent] = useState<ComponentType<P> | null>(() => loaded);
    useEffect(() => {
      if (Component) return undefined;
      let live = true;
      loading ??= load();
      loading.then(
        (component) => {
          loaded = component;
          if (live) setComponent(() => component);
        },
        (error: unknown) => {
          loading = null;
          if (live) void showToast(`Could not load ${what}: ${errorMessage(error)}`, 'danger');
        },
      );
      return () => {
        live = false;
      };
    }, [Component]);
    return Component ? <Component {...props} /> : null;
  }
  return LazyComponent;
}
