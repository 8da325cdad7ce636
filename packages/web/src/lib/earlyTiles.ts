/**
 * The first tiles of a viewer, asked for by the document's early script (lib/earlyStart.ts) as soon
 * as the image's details have arrived — before the app's and the viewer's code has run (issue 28).
 * Each tile is loaded into an `Image` as OpenLayers will load it (same URL, no CORS mode); when the
 * viewer asks for the same URL the browser hands it the image already loading or loaded instead of
 * asking the server again, so the viewer's first frame no longer waits on the network after the
 * code has run.
 *
 * The tiles are the ones the viewer's first frame wants: the slide fitted to the map
 * (ViewerEngine's zoomToFit: resolution = fitResolution(width, height, map size)), the tile level
 * OpenLayers picks for that resolution (TileGrid.getZForResolution, the nearest resolution), every
 * tile of that level (the whole slide is in view), the level below it (the tile layer's preload of
 * 1), and the mini-map's level. A wrong guess of the map's size costs some unused tiles, nothing
 * else: the viewer asks for what it needs either way. packages/e2e/test/startup.e2e.ts checks that
 * at 1280 × 800 every tile the viewer asks for first was asked for once, by this script.
 *
 * Imports nothing at run time beyond the domain's tile size: it is bundled into the early script.
 */

/** The tile edge in pixels (the domain's TILE_SIZE; repeated here so the early script stays tiny). */
export const EARLY_TILE_SIZE = 256;
/** The mini-map's edge in pixels (the viewer's MINI_MAP_PX), less its 2 px border on each side. */
const MINI_MAP_VIEW_PX = 180 - 4;

/** What the early script reads of GET /api/images/{id}. */
export interface EarlyImage {
  width: number;
  height: number;
  maxTmsZoom: number;
  tileUrl: string | null;
}

/**
 * The viewers' map in CSS pixels, in a window `innerWidth` × `innerHeight` (both viewers share
 * ViewerFrame's layout): the window less the app header (5.6rem) and the viewer's top bar (4rem)
 * above it, and less the sidebar (34rem, its border inside) beside it when the sidebar is open (the
 * user's choice, kept in viewerPreferences). The root font size is 10 px (app.css).
 * startup.e2e.ts checks the tiles this size leads to against the ones the viewer asks for.
 */
export function viewerMapSize(innerWidth: number, innerHeight: number, sidebarOpen: boolean): [number, number] {
  return [Math.max(1, innerWidth - (sidebarOpen ? SIDEBAR_PX : 0)), Math.max(1, innerHeight - ABOVE_MAP_PX)];
}

const SIDEBAR_PX = 340;
const ABOVE_MAP_PX = 56 + 40;

/** The tile level OpenLayers draws `resolution` with: the grid's nearest resolution (2^(maxZoom − z)). */
export function tileZoomFor(resolution: number, maxZoom: number): number {
  // OpenLayers' linearFindNearest over the descending resolutions 2^maxZoom … 1 (ties go to the finer).
  if (resolution >= 2 ** maxZoom) return 0;
  if (resolution <= 1) return maxZoom;
  for (let z = 1; z <= maxZoom; z++) {
    const finer = 2 ** (maxZoom - z);
    if (finer === resolution) return z;
    if (finer < resolution) return 2 * finer - resolution < resolution - finer ? z - 1 : z;
  }
  return maxZoom;
}

/** Tiles across `length` pixels, as OpenLayers' tile range counts them (rounded to 5 decimals, then up). */
const tilesAcross = (length: number, span: number): number => Math.ceil(Math.round((length / span) * 1e5) / 1e5);

/** Every tile URL of level `z` (the whole slide), row by row from the top left. */
function levelUrls(image: EarlyImage & { tileUrl: string }, z: number): string[] {
  const span = EARLY_TILE_SIZE * 2 ** (image.maxTmsZoom - z);
  const columns = tilesAcross(image.width, span);
  const rows = tilesAcross(image.height, span);
  const urls: string[] = [];
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < columns; x++) {
      urls.push(image.tileUrl.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)));
    }
  }
  return urls;
}

/**
 * The URLs of the tiles the viewer's first frame asks for on a map of `mapSize` (the drawn level
 * first, then the preloaded one, then the mini-map's), each once; none without a tile URL.
 */
export function firstTileUrls(image: EarlyImage, mapSize: readonly [number, number]): string[] {
  const { tileUrl, width, height, maxTmsZoom } = image;
  if (tileUrl === null || width <= 0 || height <= 0 || maxTmsZoom < 0) return [];
  const withUrl = { ...image, tileUrl };
  const [mapWidth, mapHeight] = mapSize;
  const z = tileZoomFor(Math.max(width / mapWidth, height / mapHeight), maxTmsZoom);
  const miniMapZ = tileZoomFor(Math.max(width, height) / MINI_MAP_VIEW_PX, maxTmsZoom);
  const levels = [z, z - 1, miniMapZ].filter((level, i, all) => level >= 0 && all.indexOf(level) === i);
  return levels.flatMap((level) => levelUrls(withUrl, level));
}
