/**
 * What the document starts before the app's bundles have arrived (issue 28). This module is built on
 * its own into a small classic script (vitePlugins/earlyStart.ts, src/early.ts) that index.html loads
 * first, `async`: it imports nothing at run time, so it runs as soon as it arrives.
 *
 * - The GETs every page makes first (the session the route guard checks, the app's configuration)
 *   and, on a viewer route, the image or the case: the API client takes each answer once
 *   (lib/earlyRequests.ts) instead of asking again.
 * - On a viewer route, the viewer's chunks (modulepreload) and styles: fetched beside the main
 *   bundle instead of after it has run and the route has asked for them.
 *
 * The answers wait on `window`, not in a module's scope: the early script and the app are separate
 * bundles.
 */

/** An early answer, as the API client finds it. */
export interface EarlyEntry {
  response: Promise<Response>;
  startedAt: number;
}

declare global {
  interface Window {
    __laminaEarly?: Map<string, EarlyEntry>;
  }
}

/** The files a viewer route loads (its chunk, the chunks it imports, its styles), named at build time. */
export interface ViewerAssets {
  image: string[];
  case: string[];
}

/** The pages whose data the document starts: the viewer routes of the route table (router.tsx). */
export type EarlyPage = { kind: 'image'; id: number } | { kind: 'case'; id: number } | { kind: 'other' };

/** What `pathname` is, as far as the early requests care (router.test.tsx checks it against the routes). */
export function earlyPage(pathname: string): EarlyPage {
  const match = /^\/studies\/\d{1,10}\/(images|cases)\/(\d{1,10})\/?$/.exec(pathname);
  const id = match ? Number(match[2]) : 0;
  if (!match || id <= 0) return { kind: 'other' };
  return { kind: match[1] === 'images' ? 'image' : 'case', id };
}

/** The GETs started for `page`, by path exactly as the API client asks for them. */
export function earlyPaths(page: EarlyPage): string[] {
  const paths = ['/api/users/info', '/api/config'];
  if (page.kind === 'image') paths.push(`/api/images/${page.id}`);
  if (page.kind === 'case') paths.push(`/api/cases/${page.id}`);
  return paths;
}

/** Starts the early GETs and, on a viewer route, the viewer's files. */
export function startEarly(pathname: string, assets: ViewerAssets | null, now = Date.now()): EarlyPage {
  const page = earlyPage(pathname);
  const registry = (window.__laminaEarly ??= new Map());
  for (const path of earlyPaths(page)) {
    const response = fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    // A failure is the app's to see: the client then asks again itself.
    response.catch(() => undefined);
    registry.set(path, { response, startedAt: now });
  }
  if (page.kind !== 'other' && assets) {
    for (const href of assets[page.kind]) {
      const link = document.createElement('link');
      // As Vite links them (crossorigin): the module map then takes the same fetch, not a second.
      link.rel = href.endsWith('.css') ? 'stylesheet' : 'modulepreload';
      link.crossOrigin = '';
      link.href = href;
      document.head.appendChild(link);
    }
  }
  return page;
}

/** The viewer assets the build wrote on the script's tag (`data-viewer-assets`), or null. */
export function readViewerAssets(json: string | undefined): ViewerAssets | null {
  if (!json) return null;
  try {
    const value = JSON.parse(json) as Partial<ViewerAssets>;
    const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    return { image: list(value.image), case: list(value.case) };
  } catch {
    return null;
  }
}
