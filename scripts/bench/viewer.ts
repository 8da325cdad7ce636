/**
 * npm run bench:viewer — Lamina's image viewer and case viewer against OpenSeadragon 6 on the same
 * slide, in headless Chromium (playwright-core, /usr/bin/chromium) at 1280 × 800.
 *
 * 1. A 17 000 × 17 000 px slide: the bench slide (../shared/scripts/make-bench-slide.sh, 8 x 6
 *    copies of CMU-1-Small-Region.svs) cropped with vips; its Deep Zoom tiles (vips dzsave,
 *    256-px JPEG tiles at Q85 like the worker's, no overlap) for OpenSeadragon. Both cached in
 *    .tmp/bench/.
 * 2. The web app built from the current sources into .tmp/bench/viewer-web (again only when a
 *    source is newer than the build).
 * 3. The real server (all roles, demo data) on a fresh DATA_DIR; the slide uploaded through the
 *    signed URL and processed by the worker, as bench:tiles does. For the case viewer, a case
 *    holding that image, created through POST /api/cases as the demo `studyadmin` (the uploader
 *    may not create cases nor open the case viewer). nginx serves a static page with OpenSeadragon
 *    from node_modules (canvas drawer) and the Deep Zoom tiles.
 * 4. Per round, page and viewer, two fresh browser contexts (empty caches): one for "pan and
 *    rest", one for "flick". Each opens the viewer (Lamina's image viewer: logged in as `uploader`,
 *    /studies/{id}/images/{id}; Lamina's case viewer: logged in as `studyadmin`,
 *    /studies/{id}/cases/{id}, the slide beside the case's sidebar; OpenSeadragon: the size of
 *    Lamina's map in that page), takes the time from navigation to the first complete frame, zooms
 *    to full resolution (1 screen px = 1 slide px) at the centre and pans eight times in a square
 *    spiral (right, down, left, left, up, up, right, right): every pan shows tiles not seen before.
 *
 * What is measured, for both viewers alike, from per-frame records in the page:
 * - complete: the frame shows every tile of the view at the level drawn (Lamina: the tile layer's
 *   renderComplete, announced by the engine's VIEWER_FRAME_EVENT after each frame; OpenSeadragon:
 *   the tiled image's fully-loaded flag in the same animation frame, blendTime 0).
 * - still: the view is within 1 screen px of where it ends.
 * - field of view = the later of the two: from the release (the page's pointerup) to the first
 *   frame after which every frame is complete and the view no longer moves.
 * Rounds alternate Lamina / OpenSeadragon within each page. It prints figures; it asserts nothing.
 * Environment: BENCH_ROUNDS (default 3), BENCH_VIEWER_PAGES (default image,case: which of Lamina's
 * pages, each with its own OpenSeadragon run at its map's size), BENCH_OSD_FLICK (default true:
 * OpenSeadragon's mouse flick on, so that a flick glides in both viewers), CHROMIUM_PATH.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { CaseView, ImageView } from '@lamina/domain';
import {
  api,
  BENCH_DIR,
  BENCH_PASSWORD,
  cpuInfo,
  ensureTools,
  freePort,
  log,
  login,
  ROOT,
  sleep,
  startNginx,
  startServer,
  uploadAndProcess,
} from './lib.js';
import {
  analyse,
  drag,
  firstComplete,
  frames,
  median,
  ms,
  RECORDER,
  run,
  settle,
  SETTLE_TIMEOUT_MS,
  SPIRAL,
  viewerSlide,
  webBuild,
  type Gesture,
  type MapBox,
  type PanResult,
} from './viewerKit.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const OSD_FLICK = process.env.BENCH_OSD_FLICK !== 'false';
type PageKind = 'image' | 'case';
const PAGE_KINDS: readonly PageKind[] = ['image', 'case'];
/** BENCH_VIEWER_PAGES: a comma-separated subset of image,case (default both), in that order. */
const PAGES: readonly PageKind[] = (() => {
  const asked = (process.env.BENCH_VIEWER_PAGES ?? 'image,case')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = asked.filter((p) => !PAGE_KINDS.includes(p as PageKind));
  if (unknown.length > 0 || asked.length === 0)
    throw new Error(`BENCH_VIEWER_PAGES must list image and/or case, not ${unknown.join(', ') || 'nothing'}`);
  return PAGE_KINDS.filter((p) => asked.includes(p));
})();
const PAGE_NAMES: Record<PageKind, string> = { image: 'image viewer', case: 'case viewer' };
/** The demo account that opens each page: the uploader has no case viewer permission. */
const PAGE_USERS: Record<PageKind, string> = { image: 'uploader', case: 'studyadmin' };
const SIZE = 17_000;
const VIEWPORT = { width: 1280, height: 800 };
const SECRET = 'bench-session-secret';
/** Pointer moves every 16 ms, as a 60 Hz mouse reports them. */
type Viewer = 'Lamina' | 'OpenSeadragon';

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

interface Session {
  open: number;
  pans: PanResult[];
}

interface Urls {
  base: string;
  osd: string;
  lamina: Partial<Record<PageKind, string>>;
}

async function viewerSession(
  browser: Browser,
  kind: PageKind,
  viewer: Viewer,
  gesture: Gesture,
  urls: Urls,
  mapBoxes: Map<PageKind, MapBox>,
): Promise<Session> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    await context.addInitScript(RECORDER);
    const page = await context.newPage();
    let box: MapBox;
    let open: number;
    if (viewer === 'Lamina') {
      await page.goto(`${urls.base}/login`);
      await page.getByLabel('Username').fill(PAGE_USERS[kind]);
      await page.getByLabel('Password').fill(BENCH_PASSWORD);
      await page.getByRole('button', { name: 'Log in', exact: true }).click();
      await page.waitForURL((url) => url.pathname !== '/login');
      const url = urls.lamina[kind];
      if (!url) throw new Error(`no URL for the ${PAGE_NAMES[kind]}`);
      await page.goto(url);
      open = await firstComplete(page);
      const found = await page.locator('.lamina-slide-map').boundingBox();
      if (!found) throw new Error(`no .lamina-slide-map in the ${PAGE_NAMES[kind]}`);
      box = found;
      if (!mapBoxes.has(kind)) mapBoxes.set(kind, box);
      // Full resolution (20x: this slide's objective power) with the viewer's own key.
      await page.keyboard.press('5');
    } else {
      const size = mapBoxes.get(kind);
      if (!size) throw new Error(`Lamina first: its map in the ${PAGE_NAMES[kind]} gives the size`);
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
    if (zoomed.timedOut) throw new Error(`${viewer}, ${PAGE_NAMES[kind]}: the zoomed view did not complete`);
    const resolution = zoomed.frames.at(-1)?.r;
    if (viewer === 'Lamina' && (resolution === undefined || Math.abs(resolution - 1) > 0.01))
      throw new Error(`Lamina, ${PAGE_NAMES[kind]}: not at full resolution after the key 5 (${resolution})`);
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

/**
 * A case holding the bench slide, made through the product's API as a study admin can
 * (POST /api/cases: the required Endo Procedure ID and Subject ID, a site and one of the study's
 * visits, the image).
 */
async function benchCase(url: string, image: ImageView): Promise<CaseView> {
  if (image.studyId === null) throw new Error('the bench slide is in no study');
  const session = await login(url, PAGE_USERS.case, BENCH_PASSWORD);
  const created = await api<{ case: CaseView }>(url, session, 'POST', '/api/cases', {
    studyId: image.studyId,
    procId: `BENCH-VIEWER-${image.id}`,
    subjectId: 'BENCH-001',
    siteId: 'BENCH-SITE',
    visitId: 'SCREENING',
    images: [image.id],
  });
  log(`case ${created.case.id} (${created.case.procId ?? ''}) made with image ${image.id} as ${PAGE_USERS.case}`);
  return created.case;
}

interface OsdViewport {
  zoomTo(zoom: number, point: null, immediately: boolean): void;
  imageToViewportZoom(zoom: number): number;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function main(): Promise<void> {
  ensureTools(['vips', 'nginx']);
  log(cpuInfo());
  const slide = viewerSlide(SIZE);
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
    const caseView = PAGES.includes('case') ? await benchCase(server.url, image) : null;
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
    const urls: Urls = {
      base: server.url,
      osd: `http://127.0.0.1:${nginxPort}/index.html`,
      lamina: {
        image: `${server.url}/studies/${image.studyId}/images/${image.id}`,
        ...(caseView ? { case: `${server.url}/studies/${caseView.studyId}/cases/${caseView.id}` } : {}),
      },
    };
    const mapBoxes = new Map<PageKind, MapBox>();
    const results = new Map<string, Session[]>();
    const viewers: Viewer[] = ['Lamina', 'OpenSeadragon'];
    const gestures: Gesture[] = ['pan and rest', 'flick'];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of PAGES) {
        for (const viewer of viewers) {
          for (const gesture of gestures) {
            const session = await viewerSession(browser, kind, viewer, gesture, urls, mapBoxes);
            const key = `${kind}|${viewer}|${gesture}`;
            results.set(key, [...(results.get(key) ?? []), session]);
            const fields = session.pans.map((p) => p.field);
            log(
              `round ${round} ${PAGE_NAMES[kind].padEnd(12)} ${viewer.padEnd(13)} ${gesture.padEnd(12)} open ${ms(session.open)}, field of view median ${ms(median(fields))} max ${ms(Math.max(...fields))} (load average ${loadAverage()})`,
            );
          }
        }
      }
    }

    const size = (kind: PageKind) => {
      const box = mapBoxes.get(kind);
      return box ? `${Math.round(box.width)} x ${Math.round(box.height)}` : '?';
    };
    console.log('');
    console.log(
      `${SIZE} x ${SIZE} px slide in a ${VIEWPORT.width} x ${VIEWPORT.height} page, full resolution; ${ROUNDS} rounds x 8 pans per gesture; map (OpenSeadragon at the same size): ${PAGES.map((kind) => `${PAGE_NAMES[kind]} ${size(kind)} px`).join(', ')}`,
    );
    console.log(
      'times from the release: complete = every tile of the view drawn; still = within 1 px of the end; field = both',
    );
    const header = `${'Page'.padEnd(13)} ${'Viewer'.padEnd(14)} ${'Gesture'.padEnd(13)} ${'open (median, max)'.padEnd(20)} ${'field median'.padStart(12)} ${'field max'.padStart(10)} ${'complete med/max'.padStart(17)} ${'still med/max'.padStart(15)}`;
    console.log(header);
    console.log('-'.repeat(header.length));
    for (const kind of PAGES) {
      for (const viewer of viewers) {
        for (const gesture of gestures) {
          const sessions = results.get(`${kind}|${viewer}|${gesture}`) ?? [];
          const pans = sessions.flatMap((s) => s.pans);
          const opens = sessions.map((s) => s.open);
          const timedOut = pans.filter((p) => p.timedOut).length;
          const col = (values: number[]) => `${median(values).toFixed(0)}/${Math.max(...values).toFixed(0)}`;
          console.log(
            `${PAGE_NAMES[kind].padEnd(13)} ${viewer.padEnd(14)} ${gesture.padEnd(13)} ${`${ms(median(opens))}, ${ms(Math.max(...opens))}`.padEnd(20)} ${ms(median(pans.map((p) => p.field))).padStart(12)} ${ms(Math.max(...pans.map((p) => p.field))).padStart(10)} ${col(pans.map((p) => p.complete)).padStart(17)} ${col(pans.map((p) => p.still)).padStart(15)}${timedOut ? `  (${timedOut} not settled in ${SETTLE_TIMEOUT_MS / 1000} s)` : ''}`,
          );
        }
      }
    }
    console.log(
      'Goals (issue 13): open < 1 s; pan and rest <= 50 ms; flick <= 250 ms and no slower than OpenSeadragon; the case viewer no slower than the image viewer.',
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
