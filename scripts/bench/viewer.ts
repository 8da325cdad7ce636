/**
 * npm run bench:viewer — Lamina's image viewer against OpenSeadragon 6 on the same slide, in
 * headless Chromium (playwright-core, /usr/bin/chromium) at 1280 × 800.
 *
 * 1. A 17 000 × 17 000 px slide: the bench slide (../shared/scripts/make-bench-slide.sh, 8 x 6
 *    copies of CMU-1-Small-Region.svs) cropped with vips; its Deep Zoom tiles (vips dzsave,
 *    256-px JPEG tiles at Q85 like the worker's, no overlap) for OpenSeadragon. Both cached in
 *    .tmp/bench/.
 * 2. The web app built from the current sources into .tmp/bench/viewer-web (again only when a
 *    source is newer than the build).
 * 3. The real server (all roles, demo data) on a fresh DATA_DIR; the slide uploaded through the
 *    signed URL and processed by the worker, as bench:tiles does. nginx serves a static page with
 *    OpenSeadragon from node_modules (canvas drawer) and the Deep Zoom tiles.
 * 4. Per round and viewer, two fresh browser contexts (empty caches): one for "pan and rest", one
 *    for "flick". Each opens the viewer (Lamina: logged in as `uploader`, /studies/{id}/images/{id};
 *    OpenSeadragon: the same viewport size as Lamina's map), takes the time from navigation to the
 *    first complete frame, zooms to full resolution (1 screen px = 1 slide px) at the centre and
 *    pans eight times in a square spiral (right, down, left, left, up, up, right, right): every
 *    pan shows tiles not seen before.
 *
 * What is measured, for both viewers alike, from per-frame records in the page:
 * - complete: the frame shows every tile of the view at the level drawn (Lamina: the tile layer's
 *   renderComplete, announced by the engine's VIEWER_FRAME_EVENT after each frame; OpenSeadragon:
 *   the tiled image's fully-loaded flag in the same animation frame, blendTime 0).
 * - still: the view is within 1 screen px of where it ends.
 * - field of view = the later of the two: from the release (the page's pointerup) to the first
 *   frame after which every frame is complete and the view no longer moves.
 * Rounds alternate Lamina / OpenSeadragon. It prints figures; it asserts nothing.
 * Environment: BENCH_ROUNDS (default 3), BENCH_OSD_FLICK (default true: OpenSeadragon's mouse
 * flick on, so that a flick glides in both viewers), CHROMIUM_PATH.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { ImageView } from '@lamina/domain';
import {
  BENCH_DIR,
  BENCH_PASSWORD,
  benchSlide,
  cpuInfo,
  ensureTools,
  freePort,
  log,
  ROOT,
  sleep,
  startNginx,
  startServer,
  uploadAndProcess,
} from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const OSD_FLICK = process.env.BENCH_OSD_FLICK !== 'false';
const SIZE = 17_000;
const VIEWPORT = { width: 1280, height: 800 };
const SECRET = 'bench-session-secret';
/** Pointer moves every 16 ms, as a 60 Hz mouse reports them. */
const MOVE_MS = 16;
/** Pan and rest: 70 % of the view's width or height in 20 moves, 100 ms still, release. */
const REST_PAN = { fraction: 0.7, moves: 20, restMs: 100 };
/** Flick: 35 % of the view in 8 moves (about 2 px/ms on this view), released while moving. */
const FLICK_PAN = { fraction: 0.35, moves: 8 };
/** The square spiral: the direction the view moves (the pointer moves the other way). */
const SPIRAL: [number, number][] = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [-1, 0],
  [0, -1],
  [0, -1],
  [1, 0],
  [1, 0],
];
/** After a release: settled once the last frame is complete and nothing changed for this long. */
const QUIET_MS = 400;
const SETTLE_TIMEOUT_MS = 8_000;

type Viewer = 'Lamina' | 'OpenSeadragon';
type Gesture = 'pan and rest' | 'flick';

interface Frame {
  t: number;
  complete: boolean;
  /** The view's centre in screen pixels (slide pixels / resolution). */
  x: number;
  y: number;
}

interface PanResult {
  complete: number;
  still: number;
  field: number;
  timedOut: boolean;
}

function run(command: string, args: string[], cwd = ROOT): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status})`);
}

/** 17 000 × 17 000 px of the bench slide, written as make-bench-slide.sh writes (cached). */
function viewerSlide(): string {
  const file = path.join(BENCH_DIR, `viewer-slide-${SIZE}.tif`);
  if (existsSync(file) && statSync(file).size > 0) return file;
  const source = benchSlide();
  log(`cropping ${path.basename(source)} to ${SIZE} x ${SIZE}`);
  run('vips', [
    'crop',
    source,
    `${file}[tile,tile-width=256,tile-height=256,compression=jpeg,Q=80,bigtiff,xres=2004.01,yres=2004.01]`,
    '0',
    '0',
    String(SIZE),
    String(SIZE),
  ]);
  return file;
}

/** Deep Zoom tiles of the slide for OpenSeadragon: 256 px, no overlap, JPEG Q85 (cached). */
function deepZoom(slide: string): string {
  const dir = path.join(BENCH_DIR, `viewer-dz-${SIZE}`);
  const dzi = path.join(dir, 'slide.dzi');
  if (existsSync(dzi)) return dir;
  log('making Deep Zoom tiles with vips dzsave');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  run('vips', [
    'dzsave',
    slide,
    path.join(dir, 'slide'),
    '--tile-size',
    '256',
    '--overlap',
    '0',
    '--suffix',
    '.jpg[Q=85]',
  ]);
  return dir;
}

function newestMtime(entry: string): number {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules' || name === 'dist') continue;
    newest = Math.max(newest, newestMtime(path.join(entry, name)));
  }
  return newest;
}

/** The web app of the current sources, built with vite into .tmp/bench/viewer-web. */
function webBuild(): string {
  const out = path.join(BENCH_DIR, 'viewer-web');
  const index = path.join(out, 'index.html');
  const sources = ['packages/web/src', 'packages/web/index.html', 'packages/domain/src'].map((p) =>
    newestMtime(path.join(ROOT, p)),
  );
  if (existsSync(index) && statSync(index).mtimeMs > Math.max(...sources)) return out;
  log('building the web app (vite build)');
  run(
    'npx',
    ['vite', 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'],
    path.join(ROOT, 'packages/web'),
  );
  return out;
}

/** The static page of OpenSeadragon: its script from node_modules, the Deep Zoom tiles. */
function osdSite(dzDir: string): string {
  const root = path.join(BENCH_DIR, 'viewer-static');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  cpSync(path.join(ROOT, 'node_modules/openseadragon/build/openseadragon'), path.join(root, 'osd'), {
    recursive: true,
  });
  cpSync(dzDir, path.join(root, 'dz'), { recursive: true });
  writeFileSync(
    path.join(root, 'index.html'),
    `<!doctype html>
<html><head><meta charset="utf-8"><title>OpenSeadragon bench</title>
<style>html, body { margin: 0; background: #fff; } #viewer { position: absolute; left: 0; top: 0; background: #fff; }</style>
</head><body><div id="viewer"></div>
<script src="/osd/openseadragon.min.js"></script>
<script>
  const params = new URLSearchParams(location.search);
  const element = document.getElementById('viewer');
  element.style.width = params.get('w') + 'px';
  element.style.height = params.get('h') + 'px';
  const viewer = OpenSeadragon({
    element,
    prefixUrl: '/osd/images/',
    tileSources: '/dz/slide.dzi',
    drawer: 'canvas',
    showNavigationControl: false,
    gestureSettingsMouse: { clickToZoom: false, flickEnabled: params.get('flick') === 'true' },
  });
  window.viewer = viewer;
  // One record per animation frame in which something changed, after OpenSeadragon's own update.
  let last = '';
  const sample = () => {
    const item = viewer.world.getItemAt(0);
    if (item) {
      const centre = viewer.viewport.viewportToImageCoordinates(viewer.viewport.getCenter(true));
      const scale = viewer.viewport.viewportToImageZoom(viewer.viewport.getZoom(true));
      const frame = { t: performance.now(), complete: item.getFullyLoaded(), x: centre.x * scale, y: centre.y * scale };
      const key = frame.complete + ' ' + frame.x.toFixed(2) + ' ' + frame.y.toFixed(2);
      if (key !== last) window.__bench.frames.push(frame);
      last = key;
    }
    requestAnimationFrame(sample);
  };
  viewer.addOnceHandler('open', () => requestAnimationFrame(sample));
</script></body></html>
`,
  );
  return root;
}

/** Records in every page: the release times and, for Lamina, the engine's frame events. */
const RECORDER = `
  window.__bench = { frames: [], releases: [] };
  addEventListener('pointerup', (event) => window.__bench.releases.push(event.timeStamp), true);
  document.addEventListener('lamina-viewer-frame', (event) => {
    const d = event.detail;
    window.__bench.frames.push({ t: performance.now(), complete: d.complete, x: d.center[0] / d.resolution, y: -d.center[1] / d.resolution });
  }, true);
`;

interface BenchWindow {
  __bench: { frames: Frame[]; releases: number[] };
}

async function frames(page: Page): Promise<{ frames: Frame[]; releases: number[]; now: number }> {
  return page.evaluate(() => {
    const bench = (globalThis as unknown as BenchWindow).__bench;
    return { frames: bench.frames, releases: bench.releases, now: performance.now() };
  });
}

/** Waits until the last frame is complete and nothing has changed for QUIET_MS. */
async function settle(page: Page, since: number): Promise<{ frames: Frame[]; timedOut: boolean }> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    await sleep(50);
    const state = await frames(page);
    const after = state.frames.filter((f) => f.t >= since);
    const last = state.frames.at(-1);
    if (last?.complete && state.now - Math.max(last.t, since) >= QUIET_MS)
      return { frames: state.frames, timedOut: false };
    if (Date.now() > deadline) return { frames: after, timedOut: true };
  }
}

/** Complete, still and field-of-view times of the frames after a release (see the header). */
function analyse(all: Frame[], release: number, timedOut: boolean): PanResult {
  const before = all.filter((f) => f.t < release).at(-1);
  const after = all.filter((f) => f.t >= release);
  const final = after.at(-1) ?? before;
  if (!final) return { complete: 0, still: 0, field: 0, timedOut };
  const lastIncomplete = after.findLastIndex((f) => !f.complete);
  let complete = 0;
  if (lastIncomplete >= 0) {
    const next = after[lastIncomplete + 1];
    complete = next ? next.t - release : Infinity;
  } else if (before && !before.complete) {
    complete = (after[0]?.t ?? release) - release;
  }
  const near = (f: Frame) => Math.hypot(f.x - final.x, f.y - final.y) < 1;
  let firstStill = after.length;
  while (firstStill > 0 && near(after[firstStill - 1] as Frame)) firstStill--;
  const still = firstStill === 0 && (!before || near(before)) ? 0 : (after[firstStill]?.t ?? release) - release;
  return { complete, still, field: Math.max(complete, still), timedOut };
}

interface MapBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function drag(page: Page, box: MapBox, direction: [number, number], gesture: Gesture): Promise<void> {
  const spec = gesture === 'flick' ? FLICK_PAN : REST_PAN;
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const dx = -direction[0] * spec.fraction * box.width;
  const dy = -direction[1] * spec.fraction * box.height;
  const start = { x: cx - dx / 2, y: cy - dy / 2 };
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  for (let i = 1; i <= spec.moves; i++) {
    await sleep(MOVE_MS);
    await page.mouse.move(start.x + (dx * i) / spec.moves, start.y + (dy * i) / spec.moves);
  }
  if (gesture === 'pan and rest') await sleep(REST_PAN.restMs);
  await page.mouse.up();
}

interface Session {
  open: number;
  pans: PanResult[];
}

async function firstComplete(page: Page): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await frames(page);
    const first = state.frames.find((f) => f.complete);
    if (first) return first.t;
    if (Date.now() > deadline) throw new Error('the viewer never drew a complete frame');
    await sleep(20);
  }
}

async function viewerSession(
  browser: Browser,
  viewer: Viewer,
  gesture: Gesture,
  urls: { lamina: string; osd: string; base: string },
  mapBox: { value: MapBox | null },
): Promise<Session> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    await context.addInitScript(RECORDER);
    const page = await context.newPage();
    let box: MapBox;
    let open: number;
    if (viewer === 'Lamina') {
      await page.goto(`${urls.base}/login`);
      await page.getByLabel('Username').fill('uploader');
      await page.getByLabel('Password').fill(BENCH_PASSWORD);
      await page.getByRole('button', { name: 'Log in', exact: true }).click();
      await page.waitForURL((url) => url.pathname !== '/login');
      await page.goto(urls.lamina);
      open = await firstComplete(page);
      const found = await page.locator('.lamina-slide-map').boundingBox();
      if (!found) throw new Error('no .lamina-slide-map');
      box = found;
      mapBox.value ??= box;
      // Full resolution (20x: this slide's objective power) with the viewer's own key.
      await page.keyboard.press('5');
    } else {
      const size = mapBox.value;
      if (!size) throw new Error('Lamina first: its map gives the size');
      await page.goto(`${urls.osd}?w=${Math.round(size.width)}&h=${Math.round(size.height)}&flick=${OSD_FLICK}`);
      open = await firstComplete(page);
      box = { x: 0, y: 0, width: Math.round(size.width), height: Math.round(size.height) };
      await page.evaluate(() => {
        const v = (globalThis as unknown as { viewer: { viewport: OsdViewport } }).viewer.viewport;
        v.zoomTo(v.imageToViewportZoom(1), null, true);
      });
    }
    await sleep(300);
    const zoomed = await settle(page, 0);
    if (zoomed.timedOut) throw new Error(`${viewer}: the zoomed view did not complete`);
    const pans: PanResult[] = [];
    for (const direction of SPIRAL) {
      await drag(page, box, direction, gesture);
      const released = (await frames(page)).releases.at(-1) ?? 0;
      const { frames: recorded, timedOut } = await settle(page, released);
      pans.push(analyse(recorded, released, timedOut));
    }
    return { open, pans };
  } finally {
    await context.close();
  }
}

interface OsdViewport {
  zoomTo(zoom: number, point: null, immediately: boolean): void;
  imageToViewportZoom(zoom: number): number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(0)} ms` : 'never';
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function main(): Promise<void> {
  ensureTools(['vips', 'nginx']);
  log(cpuInfo());
  const slide = viewerSlide();
  const dz = deepZoom(slide);
  const web = webBuild();
  const staticRoot = osdSite(dz);
  const dataDir = path.join(BENCH_DIR, 'viewer-data');
  rmSync(dataDir, { recursive: true, force: true });
  log('starting the server (api, tiles, worker) on a fresh data folder');
  const server = await startServer({
    DATA_DIR: dataDir,
    SESSION_SECRET: SECRET,
    DEMO_PASSWORD: BENCH_PASSWORD,
    DEMO: 'true',
    WEB_DIST: web,
    LOG_LEVEL: 'warn',
  });
  let nginx: ChildProcess | null = null;
  let browser: Browser | null = null;
  try {
    const image: ImageView = await uploadAndProcess(server, slide);
    const nginxPort = await freePort();
    nginx = await startNginx({
      root: staticRoot,
      port: nginxPort,
      prefix: path.join(BENCH_DIR, 'viewer-nginx'),
      defaultType: 'application/octet-stream',
      serverDirectives: `types { text/html html; application/javascript js; application/json map; image/jpeg jpg; image/png png; application/xml dzi; }
    location /dz/ { add_header Cache-Control "private, max-age=31536000, immutable"; }`,
    });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    log(
      `Chromium ${browser.version()}, ${VIEWPORT.width} x ${VIEWPORT.height}; OpenSeadragon mouse flick ${OSD_FLICK ? 'on' : 'off'}`,
    );
    const urls = {
      base: server.url,
      lamina: `${server.url}/studies/${image.studyId}/images/${image.id}`,
      osd: `http://127.0.0.1:${nginxPort}/index.html`,
    };
    const mapBox: { value: MapBox | null } = { value: null };
    const results = new Map<string, Session[]>();
    const viewers: Viewer[] = ['Lamina', 'OpenSeadragon'];
    const gestures: Gesture[] = ['pan and rest', 'flick'];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const viewer of viewers) {
        for (const gesture of gestures) {
          const session = await viewerSession(browser, viewer, gesture, urls, mapBox);
          const key = `${viewer}|${gesture}`;
          results.set(key, [...(results.get(key) ?? []), session]);
          const fields = session.pans.map((p) => p.field);
          log(
            `round ${round} ${viewer.padEnd(13)} ${gesture.padEnd(12)} open ${ms(session.open)}, field of view median ${ms(median(fields))} max ${ms(Math.max(...fields))} (load average ${loadAverage()})`,
          );
        }
      }
    }

    const box = mapBox.value;
    console.log('');
    console.log(
      `${SIZE} x ${SIZE} px slide, map ${box ? `${Math.round(box.width)} x ${Math.round(box.height)}` : '?'} px in a ${VIEWPORT.width} x ${VIEWPORT.height} page, full resolution; ${ROUNDS} rounds x 8 pans per gesture`,
    );
    console.log(
      'times from the release: complete = every tile of the view drawn; still = within 1 px of the end; field = both',
    );
    const header = `${'Viewer'.padEnd(14)} ${'Gesture'.padEnd(13)} ${'open (median, max)'.padEnd(20)} ${'field median'.padStart(12)} ${'field max'.padStart(10)} ${'complete med/max'.padStart(17)} ${'still med/max'.padStart(15)}`;
    console.log(header);
    console.log('-'.repeat(header.length));
    for (const viewer of viewers) {
      for (const gesture of gestures) {
        const sessions = results.get(`${viewer}|${gesture}`) ?? [];
        const pans = sessions.flatMap((s) => s.pans);
        const opens = sessions.map((s) => s.open);
        const timedOut = pans.filter((p) => p.timedOut).length;
        const col = (values: number[]) => `${median(values).toFixed(0)}/${Math.max(...values).toFixed(0)}`;
        console.log(
          `${viewer.padEnd(14)} ${gesture.padEnd(13)} ${`${ms(median(opens))}, ${ms(Math.max(...opens))}`.padEnd(20)} ${ms(median(pans.map((p) => p.field))).padStart(12)} ${ms(Math.max(...pans.map((p) => p.field))).padStart(10)} ${col(pans.map((p) => p.complete)).padStart(17)} ${col(pans.map((p) => p.still)).padStart(15)}${timedOut ? `  (${timedOut} not settled in ${SETTLE_TIMEOUT_MS / 1000} s)` : ''}`,
        );
      }
    }
    console.log(
      'Goals (issue 13): open < 1 s; pan and rest <= 50 ms; flick <= 250 ms and no slower than OpenSeadragon.',
    );
  } finally {
    await browser?.close();
    nginx?.kill('SIGQUIT');
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
