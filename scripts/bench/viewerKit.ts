/**
 * What the viewer benchmarks share (bench:viewer, bench:annotations): the 17 000 px bench slide, the
 * web build of the current sources, and the in-page frame recorder with its analysis — the time
 * from a release to a complete, still field of view.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { BENCH_DIR, benchSlide, log, ROOT, sleep } from './lib.js';

export type Gesture = 'pan and rest' | 'flick';

export const MOVE_MS = 16;
/** Pan and rest: 70 % of the view's width or height in 20 moves, 100 ms still, release. */
export const REST_PAN = { fraction: 0.7, moves: 20, restMs: 100 };
/** Flick: 35 % of the view in 8 moves (about 2 px/ms on this view), released while moving. */
export const FLICK_PAN = { fraction: 0.35, moves: 8 };
/** The square spiral: the direction the view moves (the pointer moves the other way). */
export const SPIRAL: [number, number][] = [
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
export const QUIET_MS = 400;
export const SETTLE_TIMEOUT_MS = 8_000;

export interface Frame {
  t: number;
  complete: boolean;
  /** The view's centre in screen pixels (slide pixels / resolution). */
  x: number;
  y: number;
  /** Lamina only: slide pixels per screen pixel. */
  r?: number;
}

export interface PanResult {
  complete: number;
  still: number;
  field: number;
  timedOut: boolean;
}

export function run(command: string, args: string[], cwd = ROOT): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status})`);
}

/** SIZE × SIZE px of the bench slide, written as make-bench-slide.sh writes (cached). */
export function viewerSlide(SIZE: number): string {
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
export function webBuild(): string {
  // BENCH_WEB_DIST: a web app built elsewhere (an older commit's, to compare two builds on one server).
  const given = process.env.BENCH_WEB_DIST;
  if (given) {
    if (!existsSync(path.join(given, 'index.html'))) throw new Error(`BENCH_WEB_DIST has no index.html: ${given}`);
    log(`the web app of BENCH_WEB_DIST: ${given}`);
    return given;
  }
  const out = path.join(BENCH_DIR, 'viewer-web');
  const index = path.join(out, 'index.html');
  const sources = [
    'packages/web/src',
    'packages/web/index.html',
    'packages/web/vite.config.ts',
    'packages/web/vitePlugins',
    'packages/domain/src',
  ].map((p) => newestMtime(path.join(ROOT, p)));
  if (existsSync(index) && statSync(index).mtimeMs > Math.max(...sources)) return out;
  log('building the web app (vite build)');
  run(
    'npx',
    ['vite', 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'],
    path.join(ROOT, 'packages/web'),
  );
  return out;
}

/** Records in every page: the release times and, for Lamina, the engine's frame events. */
export const RECORDER = `
  window.__bench = { frames: [], releases: [] };
  performance.setResourceTimingBufferSize(5000);
  addEventListener('pointerup', (event) => window.__bench.releases.push(event.timeStamp), true);
  document.addEventListener('lamina-viewer-frame', (event) => {
    const d = event.detail;
    window.__bench.frames.push({ t: performance.now(), complete: d.complete, x: d.center[0] / d.resolution, y: -d.center[1] / d.resolution, r: d.resolution });
  }, true);
`;

export interface BenchWindow {
  __bench: { frames: Frame[]; releases: number[] };
}

export async function frames(page: Page): Promise<{ frames: Frame[]; releases: number[]; now: number }> {
  return page.evaluate(() => {
    const bench = (globalThis as unknown as BenchWindow).__bench;
    return { frames: bench.frames, releases: bench.releases, now: performance.now() };
  });
}

/** Waits until the last frame is complete and nothing has changed for QUIET_MS. */
export async function settle(page: Page, since: number): Promise<{ frames: Frame[]; timedOut: boolean }> {
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
export function analyse(all: Frame[], release: number, timedOut: boolean): PanResult {
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

export interface MapBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export async function drag(page: Page, box: MapBox, direction: [number, number], gesture: Gesture): Promise<void> {
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

export async function firstComplete(page: Page): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await frames(page);
    const first = state.frames.find((f) => f.complete);
    if (first) return first.t;
    if (Date.now() > deadline) throw new Error('the viewer never drew a complete frame');
    await sleep(20);
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export function ms(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(0)} ms` : 'never';
}
