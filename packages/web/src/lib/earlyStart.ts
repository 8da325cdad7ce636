import { firstTileUrls, viewerMapSize, type EarlyImage } from './earlyTiles';

/**
 * What the document starts before the app's bundles have arrived (issue 28). This module is built on
 * its own into a small classic script (vitePlugins/earlyStart.ts, src/early.ts) written inline in
 * index.html, first in its head: what it imports is bundled into it, so it runs as the document is
 * parsed, before any of the page's files has arrived.
 *
 * - The GETs every page makes first (the session the route guard checks, the app's configuration)
 *   and, on a viewer route, the image or the case: the API client takes each answer once
 *   (lib/earlyRequests.ts) instead of asking again.
 * - On a viewer route, the viewer's chunks (modulepreload) and styles: fetched beside the main
 *   bundle instead of after it has run and the route has asked for them.
 * - On a viewer route, once the image's details are in (for a case, the image its viewer shows
 *   first, itself an early GET): the viewer's first tiles (lib/earlyTiles.ts).
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
    /** The first tiles the early script loads, held while the page lives (lib/earlyTiles.ts). */
    __laminaEarlyTiles?: HTMLImageElement[];
    /** Set while the early script learns which image a case viewer shows (lib/earlyRequests.ts). */
    __laminaEarlyImagePending?: Promise<void>;
    /** Settles once the early script has started its tiles, or found it has none to start. */
    __laminaEarlyTilesStarted?: Promise<void>;
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

/** What the early script needs to start a viewer's first tiles (none without it). */
export interface EarlyTileOptions {
  /** The window's inner size in CSS pixels. */
  viewport: readonly [number, number];
  /** Whether the viewer's sidebar opens open (viewerPreferences' readSidebarOpen). */
  sidebarOpen: boolean;
  /** The image a case viewer will show first, of the case's images (viewerPreferences' shownCaseImage). */
  caseImage: (caseId: number, images: readonly { id: number }[]) => number | null;
}

/**
 * Starts a GET of `path` for the API client to take (lib/earlyRequests.ts). A failure is the app's
 * to see: the client then asks again itself.
 */
function startGet(registry: Map<string, EarlyEntry>, path: string, now: number): Promise<Response> {
  const response = fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  response.catch(() => undefined);
  registry.set(path, { response, startedAt: now });
  return response;
}

/**
 * A copy of an early answer for the early script's own reading (null when it failed), for the
 * answers it reads only: taken in the tick the GET started, before the client can have used the body.
 */
const copyOf = (response: Promise<Response>): Promise<Response | null> =>
  response.then(
    (r) => (r.ok ? r.clone() : null),
    () => null,
  );

const jsonOf = (response: Response | null): Promise<unknown> =>
  response ? response.json().catch(() => null) : Promise.resolve(null);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The fields of an image view the first tiles need, or null. */
function earlyImageOf(value: unknown): EarlyImage | null {
  if (!isRecord(value)) return null;
  const { width, height, maxTmsZoom, tileUrl } = value;
  if (typeof width !== 'number' || typeof height !== 'number' || typeof maxTmsZoom !== 'number') return null;
  return { width, height, maxTmsZoom, tileUrl: typeof tileUrl === 'string' ? tileUrl : null };
}

/** The images of a case view (`{ case: { images: [{ id }] } }`), or an empty list. */
function caseImagesOf(value: unknown): { id: number }[] {
  const images = isRecord(value) && isRecord(value.case) ? value.case.images : null;
  if (!Array.isArray(images)) return [];
  return images.filter((i): i is { id: number } => isRecord(i) && typeof i.id === 'number');
}

/**
 * Loads the first tiles of the viewer's image (lib/earlyTiles.ts) into images kept on `window`
 * (an image the garbage collector drops may stop loading). For a case, first the image its viewer
 * will show, itself started as an early GET for the app to take.
 */
async function startFirstTiles(
  page: { kind: 'image' | 'case'; id: number },
  pageAnswer: Promise<Response | null>,
  registry: Map<string, EarlyEntry>,
  options: EarlyTileOptions,
  now: number,
): Promise<void> {
  let imageAnswer = pageAnswer;
  if (page.kind === 'case') {
    // In an object: a promise resolving to the GET's own promise would wait for its answer.
    const imageGet = pageAnswer.then(jsonOf).then((c) => {
      const imageId = options.caseImage(page.id, caseImagesOf(c));
      return imageId === null ? null : { answer: copyOf(startGet(registry, `/api/images/${String(imageId)}`, now)) };
    });
    // The app's GET of an image waits for this (lib/earlyRequests.ts): one GET of the image, not two.
    const settled = imageGet.then(
      () => undefined,
      () => undefined,
    );
    window.__laminaEarlyImagePending = settled;
    void settled.then(() => {
      if (window.__laminaEarlyImagePending === settled) delete window.__laminaEarlyImagePending;
    });
    const started = await imageGet;
    if (started === null) return;
    imageAnswer = started.answer;
  }
  const image = earlyImageOf(await jsonOf(await imageAnswer));
  if (!image) return;
  const [width, height] = options.viewport;
  const tiles = (window.__laminaEarlyTiles ??= []);
  for (const url of firstTileUrls(image, viewerMapSize(width, height, options.sidebarOpen))) {
    const tile = new Image();
    tile.src = url;
    // Decoded off the main thread as it arrives: the viewer's first frame draws the decoded tile
    // (the browser keeps one decode per image resource) instead of decoding it then.
    // (A browser without decode(), or a test's DOM, loads it as before.)
    if ('decode' in tile) tile.decode().catch(() => undefined);
    tiles.push(tile);
  }
}

/**
 * Starts the early GETs and, on a viewer route, the viewer's files and (given `tiles`) its first
 * tiles.
 */
export function startEarly(
  pathname: string,
  assets: ViewerAssets | null,
  now = Date.now(),
  tiles: EarlyTileOptions | null = null,
): EarlyPage {
  const page = earlyPage(pathname);
  const registry = (window.__laminaEarly ??= new Map<string, EarlyEntry>());
  const answers = earlyPaths(page).map((path) => startGet(registry, path, now));
  // The image's or case's answer is the one the early script reads itself (the session's and the
  // configuration's are the app's alone: no copy of them is kept).
  const pageAnswer = answers[2];
  if (page.kind !== 'other' && tiles && pageAnswer) {
    window.__laminaEarlyTilesStarted = startFirstTiles(page, copyOf(pageAnswer), registry, tiles, now).catch(
      () => undefined,
    );
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
