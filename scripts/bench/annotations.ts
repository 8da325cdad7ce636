/**
 * npm run bench:annotations — 200,000 annotations on one slide (issue 14): the import, the list
 * call, and the image viewer in headless Chromium (playwright-core, /usr/bin/chromium) at 1280 × 800.
 *
 * 1. The 17 000 × 17 000 px bench slide of bench:viewer (cached in .tmp/bench/), uploaded through
 *    the signed URL and processed by the worker on a fresh server (demo data; embedded PGlite, or
 *    PostgreSQL when DATABASE_URL is set).
 * 2. 200,000 objects drawn by `sysadmin` through POST /api/images/{id}/annotations/import (one
 *    GeoJSON file: BENCH_HPFS HPFs on a grid, the rest points, placed by a fixed pseudo-random
 *    sequence; each point takes the HPF that holds it, as when drawn).
 * 3. GET /api/images/{id}/annotations, BENCH_LIST_ROUNDS times: time to the last byte, and size.
 * 4. The viewer, BENCH_ROUNDS fresh browser contexts: load = from navigation to the first frame
 *    drawn after the annotation layers hold every object and every tile of the view is drawn (the
 *    engine's 'lamina-annotations-drawn' and 'lamina-viewer-frame' events); then at 2.5x (the key 2:
 *    thousands of objects in view) and at 10x (the key 4), eight pans of 70 % of the view in a square
 *    spiral (bench:viewer's pan and rest, viewerKit.ts), each timed from the pointer's last move to a
 *    complete, still field of view, with the longest frame while the hand moved the view.
 * Goals (issue 14): list < 1.5 s; load < 3 s; median new field < 150 ms. It prints; it asserts nothing.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { hpfRadiusPx, type ImageView } from '@lamina/domain';
import {
  BENCH_DIR,
  BENCH_PASSWORD,
  cpuInfo,
  ensureTools,
  log,
  login,
  startServer,
  uploadAndProcess,
  type Session,
} from './lib.js';
import {
  drag,
  frames,
  median,
  ms,
  RECORDER,
  settle,
  SPIRAL,
  viewerSlide,
  webBuild,
  type MapBox,
  type Frame,
} from './viewerKit.js';

const SIZE = 17_000;
const TOTAL = Number(process.env.BENCH_ANNOTATIONS ?? 200_000);
const HPFS = Number(process.env.BENCH_HPFS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LIST_ROUNDS = Number(process.env.BENCH_LIST_ROUNDS ?? 5);
const VIEWPORT = { width: 1280, height: 800 };
const USER = 'sysadmin';
const DRAWN_EVENT = 'lamina-annotations-drawn';

/** A fixed pseudo-random sequence (mulberry32), so every run draws the same objects. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** HPFs on a grid over the slide, points spread over it (most inside an HPF, as readers count). */
function benchFile(image: ImageView): object {
  const width = image.width ?? SIZE;
  const height = image.height ?? SIZE;
  const radius = hpfRadiusPx(image.physicalResolution, false);
  const across = Math.ceil(Math.sqrt((HPFS * width) / height));
  const down = Math.ceil(HPFS / across);
  const features: object[] = [];
  const centres: [number, number][] = [];
  for (let i = 0; i < HPFS; i++) {
    const cx = ((i % across) + 0.5) * (width / across);
    const cy = (Math.floor(i / across) + 0.5) * (height / down);
    centres.push([cx, cy]);
    features.push({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [cx, cy] },
      properties: { lamina: { annotationType: 'HPF' } },
    });
  }
  const next = random(14);
  const clamp = (v: number, max: number) => Math.min(max, Math.max(0, v));
  for (let i = HPFS; i < TOTAL; i++) {
    const inside = next() < 0.8;
    const centre = centres[Math.floor(next() * centres.length)] ?? [0, 0];
    const angle = next() * 2 * Math.PI;
    const r = Math.sqrt(next()) * Math.min(radius, width / across / 2);
    const x = inside ? clamp(centre[0] + r * Math.cos(angle), width) : next() * width;
    const y = inside ? clamp(centre[1] + r * Math.sin(angle), height) : next() * height;
    features.push({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [Math.round(x * 100) / 100, Math.round(y * 100) / 100] },
      properties: {},
    });
  }
  return { type: 'FeatureCollection', features };
}

async function request(url: string, session: Session, method: string, route: string, body?: string) {
  const started = performance.now();
  const response = await fetch(`${url}${route}`, {
    method,
    headers: {
      cookie: session.cookie,
      'x-csrf-token': session.csrf,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 500)}`);
  return { ms: performance.now() - started, text };
}

interface Field {
  /** From the pointer's last move to the first frame from which every frame is complete and still. */
  field: number;
  /** The longest time between two frames while the hand moved the view (a stall shows here). */
  longestFrame: number;
  timedOut: boolean;
}

interface ViewerRound {
  load: number;
  fields: Record<string, Field[]>;
}

/**
 * A pan's new field of view: the time from the pointer's last move (the view is where the hand left
 * it: a pan and rest) to the first frame after which every frame is complete (every tile, and the
 * annotation layers drawn in the same frame) and within 1 px of the end; and the longest frame
 * interval while the pointer moved the view (200,000 objects drawn each frame).
 */
function newField(all: Frame[], moves: number[], since: number, release: number, timedOut: boolean): Field {
  const dragMoves = moves.filter((t) => t > since && t <= release);
  const lastMove = dragMoves.at(-1) ?? release;
  const firstMove = dragMoves[0] ?? lastMove;
  const final = all.at(-1);
  if (!final) return { field: 0, longestFrame: 0, timedOut };
  const near = (f: Frame) => Math.hypot(f.x - final.x, f.y - final.y) < 1;
  const after = all.filter((f) => f.t >= lastMove);
  let settled = after.length;
  while (settled > 0 && after[settled - 1]?.complete && near(after[settled - 1] as Frame)) settled--;
  const field = settled === after.length ? Infinity : (after[settled]?.t ?? lastMove) - lastMove;
  const during = all.filter((f) => f.t >= firstMove && f.t <= lastMove).map((f) => f.t);
  let longestFrame = 0;
  for (let i = 1; i < during.length; i++)
    longestFrame = Math.max(longestFrame, (during[i] ?? 0) - (during[i - 1] ?? 0));
  return { field: Math.max(0, field), longestFrame, timedOut };
}

async function viewerRound(browser: Browser, url: string, image: ImageView): Promise<ViewerRound> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    await context.addInitScript(RECORDER);
    await context.addInitScript(`
      window.__drawn = null;
      window.__moves = [];
      addEventListener('pointermove', (event) => { if (event.buttons) window.__moves.push(event.timeStamp); }, true);
      document.addEventListener('${DRAWN_EVENT}', (event) => {
        if (event.detail && event.detail.count >= ${TOTAL} && window.__drawn === null) window.__drawn = performance.now();
      }, true);
    `);
    const page = await context.newPage();
    await page.goto(`${url}/login`);
    await page.getByLabel('Username').fill(USER);
    await page.getByLabel('Password').fill(BENCH_PASSWORD);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.waitForURL((u) => u.pathname !== '/login');
    // A new document: its clock (performance.now) starts at this navigation, so times are from it.
    await page.goto(`${url}/studies/${image.studyId}/images/${image.id}`);
    const deadline = Date.now() + 120_000;
    let load = 0;
    for (;;) {
      const state = await page.evaluate(() => {
        const w = globalThis as unknown as {
          __drawn: number | null;
          __bench: { frames: { t: number; complete: boolean }[] };
        };
        return { drawn: w.__drawn, frames: w.__bench.frames };
      });
      if (state.drawn !== null) {
        const drawn = state.drawn;
        const frame = state.frames.find((f) => f.t >= drawn && f.complete);
        if (frame) {
          load = frame.t;
          break;
        }
      }
      if (Date.now() > deadline)
        throw new Error('the viewer never drew the annotations (no lamina-annotations-drawn event)');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const box: MapBox | null = await page.locator('.lamina-slide-map').boundingBox();
    if (!box) throw new Error('no .lamina-slide-map');
    const fields: Record<string, Field[]> = {};
    for (const [key, label] of [
      ['2', '2.5x'],
      ['4', '10x'],
    ] as const) {
      await page.locator('.lamina-slide-map').click({ position: { x: box.width / 2, y: box.height / 2 } });
      await page.keyboard.press(key);
      await settle(page, 0);
      fields[label] = [];
      let previous = (await frames(page)).releases.at(-1) ?? 0;
      for (const direction of SPIRAL) {
        await drag(page, box, direction, 'pan and rest');
        const released = (await frames(page)).releases.at(-1) ?? 0;
        const { frames: recorded, timedOut } = await settle(page, released);
        const moves = await page.evaluate(() => (globalThis as unknown as { __moves: number[] }).__moves);
        fields[label].push(newField(recorded, moves, previous, released, timedOut));
        previous = released;
      }
    }
    return { load, fields };
  } finally {
    await context.close();
  }
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] ?? 0;
}

async function main(): Promise<void> {
  ensureTools(['vips']);
  log(cpuInfo());
  const slide = viewerSlide(SIZE);
  const web = webBuild();
  const dataDir = path.join(BENCH_DIR, 'annotations-data');
  rmSync(dataDir, { recursive: true, force: true });
  log(`starting the server on a fresh data folder (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'})`);
  const server = await startServer({
    DATA_DIR: dataDir,
    SESSION_SECRET: 'bench-session-secret',
    DEMO_PASSWORD: BENCH_PASSWORD,
    DEMO: 'true',
    WEB_DIST: web,
    LOG_LEVEL: 'warn',
  });
  let browser: Browser | null = null;
  try {
    const image = await uploadAndProcess(server, slide);
    const session = await login(server.url, USER, BENCH_PASSWORD);
    const file = JSON.stringify(benchFile(image));
    log(
      `importing ${TOTAL.toLocaleString('en')} objects (${HPFS} HPFs; ${(file.length / 1e6).toFixed(1)} MB of GeoJSON)`,
    );
    const imported = await request(server.url, session, 'POST', `/api/images/${image.id}/annotations/import`, file);
    log(`import: ${ms(imported.ms)} — ${imported.text}`);

    const lists: number[] = [];
    let bytes = 0;
    for (let i = 0; i < LIST_ROUNDS; i++) {
      const listed = await request(server.url, session, 'GET', `/api/images/${image.id}/annotations`);
      const body = JSON.parse(listed.text) as { annotations: unknown[] };
      if (body.annotations.length !== TOTAL) throw new Error(`listed ${body.annotations.length}, expected ${TOTAL}`);
      lists.push(listed.ms);
      bytes = listed.text.length;
    }

    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const rounds: ViewerRound[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const result = await viewerRound(browser, server.url, image);
      rounds.push(result);
      log(
        `round ${round}: load ${ms(result.load)}; ${Object.entries(result.fields)
          .map(
            ([label, pans]) =>
              `${label} field median ${ms(median(pans.map((p) => p.field)))}, longest frame ${ms(Math.max(...pans.map((p) => p.longestFrame)))}`,
          )
          .join(', ')}`,
      );
    }

    console.log('');
    console.log(
      `${TOTAL.toLocaleString('en')} annotations (${HPFS} HPFs) on a ${SIZE} x ${SIZE} px slide, ${VIEWPORT.width} x ${VIEWPORT.height} page, Chromium ${browser.version()} (software WebGL)`,
    );
    console.log(`import (POST …/annotations/import): ${ms(imported.ms)}`);
    console.log(
      `list (GET …/annotations, ${LIST_ROUNDS} runs, ${(bytes / 1e6).toFixed(1)} MB): median ${ms(median(lists))}, max ${ms(Math.max(...lists))}`,
    );
    const loads = rounds.map((r) => r.load);
    console.log(
      `viewer load (navigation → every object and tile drawn), ${ROUNDS} rounds: median ${ms(median(loads))}, max ${ms(Math.max(...loads))}`,
    );
    for (const label of Object.keys(rounds[0]?.fields ?? {})) {
      const pans = rounds.flatMap((r) => r.fields[label] ?? []);
      const field = pans.map((p) => p.field);
      const frames = pans.map((p) => p.longestFrame);
      const timedOut = pans.filter((p) => p.timedOut).length;
      console.log(
        `new field of view at ${label} (${pans.length} pans, from the last move): median ${ms(median(field))}, p95 ${ms(p95(field))}, max ${ms(Math.max(...field))}; longest frame while panning: median ${ms(median(frames))}, max ${ms(Math.max(...frames))}${timedOut ? ` (${timedOut} not settled)` : ''}`,
      );
    }
    console.log('Goals (issue 14): list < 1.5 s; load < 3 s; median new field < 150 ms.');
  } finally {
    await browser?.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
