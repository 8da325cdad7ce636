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
 *    holding that image and assigned to the demo `reader1`, created through POST /api/cases as the
 *    demo `studyadmin` (the uploader may not create cases nor open the case viewer). nginx serves a
 *    static page with OpenSeadragon from node_modules (canvas drawer) and the Deep Zoom tiles.
 * 4. Per round, page (a viewer and the demo account that opens it) and viewer, two fresh browser
 *    contexts (empty caches): one for "pan and rest", one for "flick". Each logs in through the
 *    login page (so the app's files are in the context's cache, as on any visit after the first),
 *    opens the viewer (Lamina's image viewer, /studies/{id}/images/{id}; Lamina's case viewer,
 *    /studies/{id}/cases/{id}, the slide beside the case's sidebar; OpenSeadragon: the size of
 *    Lamina's map in that page), takes the time from navigation to the first tile request and to
 *    the first complete frame, zooms to full resolution (1 screen px = 1 slide px) at the centre and
 *    pans eight times in a square spiral (right, down, left, left, up, up, right, right): every pan
 *    shows tiles not seen before.
 *
 * What is measured, for both viewers alike, from per-frame records in the page:
 * - complete: the frame shows every tile of the view at the level drawn (Lamina: the tile layer's
 *   renderComplete, announced by the engine's VIEWER_FRAME_EVENT after each frame; OpenSeadragon:
 *   the tiled image's fully-loaded flag in the same animation frame, blendTime 0).
 * - still: the view is within 1 screen px of where it ends.
 * - field of view = the later of the two: from the release (the page's pointerup) to the first
 *   frame after which every frame is complete and the view no longer moves.
 * Before the rounds, each of Lamina's pages is opened once, unmeasured (a warm server and disk cache).
 * Rounds alternate Lamina / OpenSeadragon within each page. It prints figures; it asserts nothing.
 * Environment: BENCH_ROUNDS (default 3), BENCH_VIEWER_PAGES (default
 * image:uploader,image:isc,case:studyadmin,case:reader1: Lamina's pages as page:account, each with
 * its own OpenSeadragon run at its map's size; `image` alone is image:uploader, `case` alone
 * case:studyadmin), BENCH_OSD_FLICK (default true: OpenSeadragon's mouse flick on, so that a flick
 * glides in both viewers), BENCH_VIEWER_COLD (true: Lamina opens in a fresh context holding only
 * the session's cookie, nothing cached — the first visit — instead of after the login page), BENCH_VIEWER_TRACE (true: print every request of the first Lamina open
 * of each page, from navigation: start, end, size, and the app's start-up marks), BENCH_VIEWER_PROFILE
 * (true, with the trace: that open's main-thread time by script and function), BENCH_VIEWER_TIMELINE
 * (true, with the trace: that open's main-thread tasks from Chromium's own trace — script, style,
 * layout, paint — each of 4 ms or more, from navigation; the whole trace is saved in .tmp/bench for
 * DevTools' Performance panel), CHROMIUM_PATH.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
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
/**
 * BENCH_VIEWER_COLD=true: Lamina's viewer opens in a fresh context with the session's cookie and
 * nothing cached (the first visit, as issue 28 measured it), instead of after the login page.
 */
const COLD = process.env.BENCH_VIEWER_COLD === 'true';
type PageKind = 'image' | 'case';
const PAGE_KINDS: readonly PageKind[] = ['image', 'case'];
/** A Lamina page and the demo account that opens it. */
interface PageSpec {
  kind: PageKind;
  user: string;
}
/** Who opens a page when BENCH_VIEWER_PAGES names none: the uploader has no case viewer permission. */
const DEFAULT_USERS: Record<PageKind, string> = { image: 'uploader', case: 'studyadmin' };
/** The case is assigned to this reader, so a central reader's case viewer can be measured. */
const CASE_READER = 'reader1';
/** BENCH_VIEWER_PAGES: a comma-separated list of page[:account] (default below), in that order. */
const PAGES: readonly PageSpec[] = (
  process.env.BENCH_VIEWER_PAGES ?? 'image:uploader,image:isc,case:studyadmin,case:reader1'
)
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean)
  .map((entry) => {
    const [kind, user] = entry.split(':');
    if (!PAGE_KINDS.includes(kind as PageKind))
      throw new Error(`BENCH_VIEWER_PAGES lists image[:user] and/or case[:user], not ${entry}`);
    return { kind: kind as PageKind, user: user || DEFAULT_USERS[kind as PageKind] };
  });
if (PAGES.length === 0) throw new Error('BENCH_VIEWER_PAGES lists no page');
const TRACE = process.env.BENCH_VIEWER_TRACE === 'true';
/** BENCH_VIEWER_PROFILE=true (with the trace): where the main thread's time went in the traced open. */
const PROFILE = process.env.BENCH_VIEWER_PROFILE === 'true';
/** BENCH_VIEWER_TIMELINE=true (with the trace): the traced open's main-thread tasks, from Chromium's trace. */
const TIMELINE = process.env.BENCH_VIEWER_TIMELINE === 'true';
const PAGE_NAMES: Record<PageKind, string> = { image: 'image viewer', case: 'case viewer' };
const pageName = (page: PageSpec) => `${PAGE_NAMES[page.kind]} (${page.user})`;
const pageKey = (page: PageSpec) => `${page.kind}:${page.user}`;
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
  /** From navigation to the first tile request (Lamina: /tiles/…; OpenSeadragon: the Deep Zoom tiles). */
  firstTile: number;
  pans: PanResult[];
}

interface Urls {
  base: string;
  osd: string;
  lamina: Partial<Record<PageKind, string>>;
}

/** The first tile request's start, from navigation (the page's resource timing, same clock as the frames). */
async function firstTileRequest(page: Page, viewer: Viewer): Promise<number> {
  const marker = viewer === 'Lamina' ? '/tiles/' : '/dz/slide_files/';
  return page.evaluate((m) => {
    const starts = performance
      .getEntriesByType('resource')
      .filter((entry) => entry.name.includes(m))
      .map((entry) => entry.startTime);
    return starts.length > 0 ? Math.min(...starts) : Number.POSITIVE_INFINITY;
  }, marker);
}

/** Every request of the page so far, from navigation: start, end, bytes over the wire, path. */
async function traceRequests(page: Page, title: string): Promise<void> {
  const entries = await page.evaluate(() => {
    // The page's own types (this script compiles without the DOM library).
    const timing = (globalThis as unknown as { performance: { getEntriesByType(type: string): unknown[] } })
      .performance;
    const rows = [...timing.getEntriesByType('navigation'), ...timing.getEntriesByType('resource')] as {
      name: string;
      startTime: number;
      responseEnd: number;
      transferSize: number;
    }[];
    const marks = (timing.getEntriesByType('mark') as { name: string; startTime: number }[]).filter((m) =>
      m.name.startsWith('lamina:'),
    );
    return [
      ...rows.map((r) => ({ name: r.name, start: r.startTime, end: r.responseEnd, bytes: r.transferSize })),
      // The app's start-up marks (lib/startupTiming.ts), as rows of their own.
      ...marks.map((m) => ({ name: `mark:${m.name}`, start: m.startTime, end: m.startTime, bytes: -1 })),
    ];
  });
  const tiles = entries.filter((e) => e.name.includes('/tiles/'));
  const others = entries.filter((e) => !e.name.includes('/tiles/'));
  const requests = others.filter((e) => e.bytes >= 0);
  log(
    `requests of ${title} (${requests.length} before and beside ${tiles.length} tiles; ms from navigation, bytes transferred, 0 = from cache):`,
  );
  for (const e of others.sort((x, y) => x.start - y.start))
    console.log(
      e.bytes < 0
        ? `  ${e.start.toFixed(0).padStart(5)}    ${' '.repeat(14)}  ${e.name.slice('mark:'.length)}`
        : `  ${e.start.toFixed(0).padStart(5)} → ${e.end.toFixed(0).padStart(5)}  ${String(e.bytes).padStart(7)}  ${new URL(e.name).pathname}`,
    );
  const first = tiles.sort((x, y) => x.start - y.start)[0];
  if (first) console.log(`  ${first.start.toFixed(0).padStart(5)} → ${first.end.toFixed(0).padStart(5)}  first tile`);
}

/** A CPU profile of the page's main thread (Chrome DevTools Protocol), from navigation to the first complete frame. */
type Profiler = { stop(): Promise<CpuProfile> };
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

async function startProfile(page: Page): Promise<Profiler> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  return {
    async stop() {
      const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: CpuProfile };
      await cdp.detach();
      return profile;
    },
  };
}

/** Where the main thread's time went: self time by script (and the top functions), in ms. */
async function printProfile(profiler: Profiler, title: string): Promise<void> {
  const profile = await profiler.stop();
  // For DevTools (Performance → Load profile) or a source-mapped reading against the build's maps.
  const file = path.join(BENCH_DIR, `viewer-open-${title.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  log(`profile written to ${file}`);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byScript = new Map<string, number>();
  const byFunction = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    if (!node) return;
    const { url, functionName } = node.callFrame;
    const script = url ? new URL(url).pathname : `(${functionName || 'native'})`;
    byScript.set(script, (byScript.get(script) ?? 0) + ms);
    const fn = `${functionName || '(anonymous)'} ${script}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  });
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  log(`main thread of ${title}, navigation to the first complete frame (self time, ms):`);
  for (const [name, ms] of top(byScript, 12)) console.log(`  ${ms.toFixed(0).padStart(6)}  ${name}`);
  log('top functions:');
  for (const [name, ms] of top(byFunction, 15)) console.log(`  ${ms.toFixed(0).padStart(6)}  ${name}`);
}

/** Chromium's trace events that say where a renderer's main thread spent its time. */
const TIMELINE_EVENTS = new Set([
  'ParseHTML',
  'ParseAuthorStyleSheet',
  'EvaluateScript',
  'v8.compile',
  'v8.compileModule',
  'v8.evaluateModule',
  'v8.produceModuleCache',
  'FunctionCall',
  'TimerFire',
  'FireAnimationFrame',
  'EventDispatch',
  'XHRReadyStateChange',
  'RunMicrotasks',
  'UpdateLayoutTree',
  'Layout',
  'PrePaint',
  'Paint',
  'Layerize',
  'Commit',
  'MajorGC',
  'MinorGC',
  'V8.GC_SCAVENGER',
  'DecodeImage',
  'ImageDecodeTask',
  'HitTest',
]);
interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string; data?: { url?: string; functionName?: string; documentLoaderURL?: string } };
}

/** Records Chromium's trace (devtools timeline) of `page` until `stop`, which prints its main-thread tasks. */
async function startTimeline(
  browser: Browser,
  page: Page,
): Promise<{ stop(title: string, until: number): Promise<void> }> {
  await browser.startTracing(page, {
    categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8', 'v8.execute'],
  });
  return {
    async stop(title, until) {
      const raw = (await browser.stopTracing()).toString('utf8');
      const file = path.join(BENCH_DIR, `viewer-open-${title.replace(/[^a-z0-9]+/gi, '-')}.trace.json`);
      writeFileSync(file, raw);
      log(`trace saved to ${path.relative(ROOT, file)} (DevTools' Performance panel opens it)`);
      const { traceEvents } = JSON.parse(raw) as { traceEvents: TraceEvent[] };
      const main = traceEvents.find((e) => e.name === 'lamina:main');
      const navigation = traceEvents.find(
        (e) =>
          e.name === 'navigationStart' && e.pid === main?.pid && e.args?.data?.documentLoaderURL?.startsWith('http'),
      );
      if (!main || !navigation) return log(`${title}: no lamina:main or navigationStart in the trace`);
      const at = (ts: number) => (ts - navigation.ts) / 1000;
      const events = traceEvents
        .filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && TIMELINE_EVENTS.has(e.name))
        .filter((e) => at(e.ts) >= 0 && at(e.ts) <= until)
        .sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
      const totals = new Map<string, number>();
      const stack: TraceEvent[] = [];
      log(`main-thread tasks of ${title}, navigation to the first complete frame (start, duration ms; 4 ms or more):`);
      for (const e of events) {
        while (stack.length > 0 && (stack.at(-1)?.ts ?? 0) + (stack.at(-1)?.dur ?? 0) <= e.ts) stack.pop();
        const dur = (e.dur ?? 0) / 1000;
        if (stack.length === 0) totals.set(e.name, (totals.get(e.name) ?? 0) + dur);
        const depth = stack.length;
        stack.push(e);
        if (dur < 4 || depth > 3) continue;
        const data = e.args?.data;
        const what = data?.url ? new URL(data.url, 'http://x').pathname : (data?.functionName ?? '');
        console.log(
          `  ${at(e.ts).toFixed(0).padStart(5)} ${dur.toFixed(0).padStart(5)}  ${'  '.repeat(depth)}${e.name} ${what}`,
        );
      }
      log(
        'outermost tasks by kind (ms): ' +
          [...totals]
            .sort((a, b) => b[1] - a[1])
            .map(([n, v]) => `${n} ${v.toFixed(0)}`)
            .join(', '),
      );
    },
  };
}

async function viewerSession(
  browser: Browser,
  spec: PageSpec,
  viewer: Viewer,
  gesture: Gesture,
  urls: Urls,
  mapBoxes: Map<string, MapBox>,
  trace: boolean,
): Promise<Session> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    await context.addInitScript(RECORDER);
    const page = await context.newPage();
    let box: MapBox;
    let open: number;
    if (viewer === 'Lamina') {
      if (COLD) {
        // The session's cookie only: every file of the app comes from the network.
        const session = await login(urls.base, spec.user, BENCH_PASSWORD);
        const [name = '', value = ''] = session.cookie.split('=');
        await context.addCookies([{ name, value, url: urls.base }]);
      } else {
        await page.goto(`${urls.base}/login`);
        await page.getByLabel('Username').fill(spec.user);
        await page.getByLabel('Password').fill(BENCH_PASSWORD);
        await page.getByRole('button', { name: 'Log in', exact: true }).click();
        await page.waitForURL((url) => url.pathname !== '/login');
        // The page after login settles first, so that none of its requests runs into the viewer's.
        await page.waitForLoadState('networkidle');
      }
      const url = urls.lamina[spec.kind];
      if (!url) throw new Error(`no URL for the ${pageName(spec)}`);
      const profiler = trace && PROFILE ? await startProfile(page) : null;
      const timeline = trace && TIMELINE ? await startTimeline(browser, page) : null;
      await page.goto(url);
      open = await firstComplete(page);
      if (profiler) await printProfile(profiler, `${pageName(spec)}, ${gesture}`);
      if (timeline) await timeline.stop(`${pageName(spec)}, ${gesture}`, open);
      if (trace) await traceRequests(page, `${pageName(spec)}, ${gesture}`);
      const found = await page.locator('.lamina-slide-map').boundingBox();
      if (!found) throw new Error(`no .lamina-slide-map in the ${pageName(spec)}`);
      box = found;
      if (!mapBoxes.has(pageKey(spec))) mapBoxes.set(pageKey(spec), box);
      // Full resolution (20x: this slide's objective power) with the viewer's own key.
      await page.keyboard.press('5');
    } else {
      const size = mapBoxes.get(pageKey(spec));
      if (!size) throw new Error(`Lamina first: its map in the ${pageName(spec)} gives the size`);
      await page.goto(`${urls.osd}?w=${Math.round(size.width)}&h=${Math.round(size.height)}&flick=${OSD_FLICK}`);
      open = await firstComplete(page);
      box = { x: 0, y: 0, width: Math.round(size.width), height: Math.round(size.height) };
      await page.evaluate(() => {
        const v = (globalThis as unknown as { viewer: { viewport: OsdViewport } }).viewer.viewport;
        v.zoomTo(v.imageToViewportZoom(1), null, true);
      });
    }
    const firstTile = await firstTileRequest(page, viewer);
    await sleep(300);
    const zoomed = await settle(page, 0);
    if (zoomed.timedOut) throw new Error(`${viewer}, ${pageName(spec)}: the zoomed view did not complete`);
    const resolution = zoomed.frames.at(-1)?.r;
    if (viewer === 'Lamina' && (resolution === undefined || Math.abs(resolution - 1) > 0.01))
      throw new Error(`Lamina, ${pageName(spec)}: not at full resolution after the key 5 (${resolution})`);
    const pans: PanResult[] = [];
    for (const direction of SPIRAL) {
      await drag(page, box, direction, gesture);
      const released = (await frames(page)).releases.at(-1) ?? 0;
      const { frames: recorded, timedOut } = await settle(page, released);
      pans.push(analyse(recorded, released, timedOut));
    }
    return { open, firstTile, pans };
  } finally {
    await context.close();
  }
}

/**
 * A case holding the bench slide, made through the product's API as a study admin can
 * (POST /api/cases: the required Endo Procedure ID and Subject ID, a site and the study's first
 * visit, the image), assigned to the demo reader1 (a central reader sees only assigned cases).
 */
async function benchCase(url: string, image: ImageView): Promise<CaseView> {
  if (image.studyId === null) throw new Error('the bench slide is in no study');
  const session = await login(url, DEFAULT_USERS.case, BENCH_PASSWORD);
  const { readers } = await api<{ readers: { id: number; username: string }[] }>(
    url,
    session,
    'GET',
    `/api/studies/${image.studyId}/users?name=Rita`,
  );
  const reader = readers.find((r) => r.username === CASE_READER);
  const study = await api<{ visitIds: string[] }>(url, session, 'GET', `/api/studies/${image.studyId}`);
  if (!reader) throw new Error(`${CASE_READER} is no reader of the study ${image.studyId}`);
  const created = await api<{ case: CaseView }>(url, session, 'POST', '/api/cases', {
    studyId: image.studyId,
    procId: `BENCH-VIEWER-${image.id}`,
    subjectId: 'BENCH-001',
    siteId: 'BENCH-SITE',
    visitId: study.visitIds[0] ?? 'SCREENING',
    images: [image.id],
    readers: [reader.id],
  });
  log(
    `case ${created.case.id} (${created.case.procId ?? ''}) made with image ${image.id} as ${DEFAULT_USERS.case}, assigned to ${CASE_READER}`,
  );
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
    const caseView = PAGES.some((p) => p.kind === 'case') ? await benchCase(server.url, image) : null;
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
    const mapBoxes = new Map<string, MapBox>();
    const results = new Map<string, Session[]>();
    const viewers: Viewer[] = ['Lamina', 'OpenSeadragon'];
    const gestures: Gesture[] = ['pan and rest', 'flick'];
    // One unmeasured open of each page first: the server's and the browser's first requests after
    // a start (a cold JIT, files read for the first time) are not what a reader's open waits for.
    for (const spec of PAGES) await viewerSession(browser, spec, 'Lamina', 'pan and rest', urls, mapBoxes, false);
    log('warmed up: one unmeasured open of each page');
    const traced = new Set<string>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const spec of PAGES) {
        for (const viewer of viewers) {
          for (const gesture of gestures) {
            const trace = TRACE && viewer === 'Lamina' && !traced.has(pageKey(spec));
            traced.add(pageKey(spec));
            const session = await viewerSession(browser, spec, viewer, gesture, urls, mapBoxes, trace);
            const key = `${pageKey(spec)}|${viewer}|${gesture}`;
            results.set(key, [...(results.get(key) ?? []), session]);
            const fields = session.pans.map((p) => p.field);
            log(
              `round ${round} ${pageName(spec).padEnd(25)} ${viewer.padEnd(13)} ${gesture.padEnd(12)} first tile ${ms(session.firstTile)}, open ${ms(session.open)}, field of view median ${ms(median(fields))} max ${ms(Math.max(...fields))} (load average ${loadAverage()})`,
            );
          }
        }
      }
    }

    const size = (spec: PageSpec) => {
      const box = mapBoxes.get(pageKey(spec));
      return box ? `${Math.round(box.width)} x ${Math.round(box.height)}` : '?';
    };
    console.log('');
    console.log(
      `${SIZE} x ${SIZE} px slide in a ${VIEWPORT.width} x ${VIEWPORT.height} page, full resolution; ${ROUNDS} rounds x 8 pans per gesture; map (OpenSeadragon at the same size): ${PAGES.map((spec) => `${pageName(spec)} ${size(spec)} px`).join(', ')}`,
    );
    console.log(
      "from navigation: first tile = the first tile requested, open = the first complete frame (both gestures' sessions); times from the release: complete = every tile of the view drawn; still = within 1 px of the end; field = both",
    );
    const header = `${'Page'.padEnd(26)} ${'Viewer'.padEnd(14)} ${'first tile (med, max)'.padEnd(22)} ${'open (median, max)'.padEnd(20)} ${'Gesture'.padEnd(13)} ${'field median'.padStart(12)} ${'field max'.padStart(10)} ${'complete med/max'.padStart(17)} ${'still med/max'.padStart(15)}`;
    console.log(header);
    console.log('-'.repeat(header.length));
    for (const spec of PAGES) {
      for (const viewer of viewers) {
        const all = gestures.flatMap((gesture) => results.get(`${pageKey(spec)}|${viewer}|${gesture}`) ?? []);
        const opens = all.map((s) => s.open);
        const firstTiles = all.map((s) => s.firstTile);
        for (const [index, gesture] of gestures.entries()) {
          const sessions = results.get(`${pageKey(spec)}|${viewer}|${gesture}`) ?? [];
          const pans = sessions.flatMap((s) => s.pans);
          const timedOut = pans.filter((p) => p.timedOut).length;
          const col = (values: number[]) => `${median(values).toFixed(0)}/${Math.max(...values).toFixed(0)}`;
          const opening =
            index === 0
              ? `${`${ms(median(firstTiles))}, ${ms(Math.max(...firstTiles))}`.padEnd(22)} ${`${ms(median(opens))}, ${ms(Math.max(...opens))}`.padEnd(20)}`
              : `${''.padEnd(22)} ${''.padEnd(20)}`;
          console.log(
            `${pageName(spec).padEnd(26)} ${viewer.padEnd(14)} ${opening} ${gesture.padEnd(13)} ${ms(median(pans.map((p) => p.field))).padStart(12)} ${ms(Math.max(...pans.map((p) => p.field))).padStart(10)} ${col(pans.map((p) => p.complete)).padStart(17)} ${col(pans.map((p) => p.still)).padStart(15)}${timedOut ? `  (${timedOut} not settled in ${SETTLE_TIMEOUT_MS / 1000} s)` : ''}`,
          );
        }
      }
    }
    console.log(
      'Goals (issues 13, 28): open < 1 s and no slower than OpenSeadragon; pan and rest <= 50 ms; flick <= 250 ms and no slower than OpenSeadragon; the case viewer no slower than the image viewer.',
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
