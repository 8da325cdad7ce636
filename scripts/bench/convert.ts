/**
 * npm run bench:convert — time and peak memory of building the serving pyramid from the bench slide:
 * sharp (the worker's own code, packages/server/src/modules/processing/pyramid.ts) against
 * `vips tiffsave --tile --pyramid` (Debian libvips-tools) with the same settings (256-px JPEG
 * tiles, Q85). Peak memory is the maximum resident set size of each process (/usr/bin/time, or
 * VmHWM sampled from /proc). BENCH_SLIDE=24x18 makes a 2.8-gigapixel slide; BENCH_RUNS (default 1).
 * BENCH_WRITER=tiffsave|blocks forces one of the worker's two ways of writing (default: the worker's
 * own choice, blocks above 65 535 px a side); the forced run is a child process of this script.
 *
 * The JPEG 2000 case (issue 18): a slide whose tiles are JPEG 2000 (convertJp2k.ts; BENCH_JP2K_SLIDE,
 * BENCH_JP2K_TILES) converted by the worker (its OpenJPEG decoder in worker threads) and by
 * `vips tiffsave --pyramid` reading the same file (Debian's libvips decodes it with its own
 * OpenJPEG), both at the worker's JPEG 2000 pyramid quality (Q90). Goal: at most 2 x vips' wall
 * time. BENCH_CASES=jpeg,jp2k (default both) chooses the cases.
 *
 * The vendor case (issue 31, BENCH_CASES=openslide): a slide read through OpenSlide
 * (openSlideSource.ts: level 0 region by region on koffi's threads into the block writer) against
 * vips writing the same pyramid from the same file through its openslideload (for an NDPI that is
 * what `vips tiffsave --pyramid` picks; for a generic TIFF it would pick libtiff), both Q85. BENCH_OPENSLIDE_SLIDE names the file: the Hamamatsu NDPI of the shared test data by
 * default, `bench` for the bench slide read through OpenSlide as a generic TIFF (the same path at
 * gigapixel scale, for time and peak memory). Goal: at most 1.5 x vips' time, < 1 GiB for 2 GB.
 */
import { spawn } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import {
  buildPyramid,
  JP2K_PYRAMID_QUALITY,
  PYRAMID_QUALITY,
  type PyramidOptions,
} from '../../packages/server/src/modules/processing/pyramid.js';
import { describeSlide } from '../../packages/server/src/modules/processing/slideInfo.js';
import { readTiffStructure } from '../../packages/server/src/modules/processing/tiffStructure.js';
import { BENCH_DIR, benchSlide, cpuInfo, ensureTools, has, log, ROOT, sampleMemory } from './lib.js';
import { jp2kBenchSlide } from './convertJp2k.js';
import { OpenSlideSource } from '../../packages/server/src/modules/processing/openSlideSource.js';
import { writeDecodedPyramid } from '../../packages/server/src/modules/processing/blockPyramid.js';

type Writer = NonNullable<PyramidOptions['writer']>;

interface Run {
  seconds: number;
  /** User + system CPU seconds (null without /usr/bin/time): steadier than wall time on a shared machine. */
  cpuSeconds: number | null;
  peakMb: number;
  bytes: number;
}

function timed(
  command: string,
  args: string[],
): Promise<{ seconds: number; cpuSeconds: number | null; peakMb: number; stdout: string }> {
  const useTime = has('/usr/bin/time');
  // sharp, loaded in this process, sets VIPSHOME to its own libvips: Debian's vips would then not
  // find its modules (openslideload is one).
  const env = { ...process.env };
  delete env.VIPSHOME;
  const started = performance.now();
  const child = useTime
    ? spawn('/usr/bin/time', ['-f', 'TIME_MAXRSS_KB %M CPU %U %S', command, ...args], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const memory = useTime ? null : sampleMemory(child.pid ?? 0, 50);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      const sampled = memory?.stop();
      if (code !== 0) return reject(new Error(`${command} failed (${code}): ${stderr.slice(-2000)}`));
      const times = /TIME_MAXRSS_KB (\d+) CPU ([\d.]+) ([\d.]+)/.exec(stderr);
      const kb = Number(times?.[1] ?? 0);
      const cpuSeconds = times ? Number(times[2]) + Number(times[3]) : null;
      resolve({ seconds, cpuSeconds, peakMb: useTime ? kb / 1024 : (sampled?.peak ?? 0), stdout });
    });
  });
}

async function sharpRun(source: string, target: string, writer: Writer): Promise<Run | string> {
  rmSync(target, { force: true });
  try {
    // The worker's own choice through convertSharp.ts; a forced writer through this script's child mode.
    const args =
      writer === 'auto'
        ? [path.join(ROOT, 'scripts/bench/convertSharp.ts'), source, target]
        : [path.join(ROOT, 'scripts/bench/convert.ts'), '--child', source, target, writer];
    const { seconds, cpuSeconds, peakMb } = await timed(process.execPath, ['--import', 'tsx', ...args]);
    const levels = (await readTiffStructure(target)).ifds.length;
    log(`sharp (${writer}) wrote ${levels} levels`);
    return { seconds, cpuSeconds, peakMb, bytes: statSync(target).size };
  } catch (error) {
    // e.g. sharp refuses JPEG-compressed TIFF output above 65535 px on a side.
    return /DecodeError: (.*)/.exec(String(error))?.[1] ?? String(error).slice(0, 300);
  }
}

async function vipsRun(source: string, target: string, bigtiff: boolean, quality = PYRAMID_QUALITY): Promise<Run> {
  rmSync(target, { force: true });
  const args = [
    'tiffsave',
    source,
    target,
    '--tile',
    '--tile-width',
    '256',
    '--tile-height',
    '256',
    '--pyramid',
    '--compression',
    'jpeg',
    '--Q',
    String(quality),
  ];
  if (bigtiff) args.push('--bigtiff');
  const { seconds, cpuSeconds, peakMb } = await timed('vips', args);
  return { seconds, cpuSeconds, peakMb, bytes: statSync(target).size };
}

/**
 * vips writing the same pyramid from the same file read through OpenSlide: its openslideload named
 * (for a generic TIFF `vips tiffsave` would pick libtiff, a faster reader than OpenSlide's), the
 * output options as vipsRun's.
 */
async function vipsOpenSlideRun(source: string, target: string, bigtiff: boolean): Promise<Run> {
  rmSync(target, { force: true });
  const options = `tile,tile-width=256,tile-height=256,pyramid,compression=jpeg,Q=${PYRAMID_QUALITY}${bigtiff ? ',bigtiff' : ''}`;
  const { seconds, cpuSeconds, peakMb } = await timed('vips', ['openslideload', source, `${target}[${options}]`]);
  return { seconds, cpuSeconds, peakMb, bytes: statSync(target).size };
}

function best(runs: Run[]): Run {
  const first = runs[0];
  if (!first) throw new Error('no runs');
  return runs.reduce((a, b) => (b.seconds < a.seconds ? b : a), first);
}

/** Child mode: `convert.ts --child SOURCE TARGET WRITER` builds the pyramid as the worker does, with that writer. */
async function child(source: string, target: string, writer: Writer): Promise<void> {
  const info = describeSlide(await readTiffStructure(source));
  await buildPyramid(source, target, info, undefined, { writer });
}

function writerFromEnv(): Writer {
  const value = process.env.BENCH_WRITER ?? 'auto';
  if (value !== 'auto' && value !== 'tiffsave' && value !== 'blocks')
    throw new Error('BENCH_WRITER must be tiffsave or blocks');
  return value;
}

function casesFromEnv(): { jpeg: boolean; jp2k: boolean; openslide: boolean } {
  const cases = (process.env.BENCH_CASES ?? 'jpeg,jp2k').split(',').map((c) => c.trim());
  if (cases.some((c) => c !== 'jpeg' && c !== 'jp2k' && c !== 'openslide'))
    throw new Error('BENCH_CASES is a list of jpeg, jp2k, openslide');
  return { jpeg: cases.includes('jpeg'), jp2k: cases.includes('jp2k'), openslide: cases.includes('openslide') };
}

async function main(): Promise<void> {
  ensureTools(['vips']);
  const cases = casesFromEnv();
  log(cpuInfo());
  if (cases.jpeg) await jpegCase();
  if (cases.jp2k) await jp2kCase();
  if (cases.openslide) await openSlideCase();
}

/** Child mode `convert.ts --openslide SOURCE TARGET`: the worker's OpenSlide path on one file. */
async function openSlideChild(source: string, target: string): Promise<void> {
  const started = performance.now();
  const slide = OpenSlideSource.open(source);
  try {
    await writeDecodedPyramid(slide, target, { quality: PYRAMID_QUALITY });
  } finally {
    await slide.close();
  }
  console.log(`CONVERT_JSON ${JSON.stringify({ ms: performance.now() - started })}`);
}

/** The vendor case: the worker's OpenSlide reader against vips reading the same file through OpenSlide. */
async function openSlideCase(): Promise<void> {
  const chosen = process.env.BENCH_OPENSLIDE_SLIDE ?? path.join(ROOT, '../shared/testdata/wsi/test3-DAPI-2-387.ndpi');
  const source = chosen === 'bench' ? benchSlide() : chosen;
  const { size } = statSync(source);
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const width = Number((await timed('vipsheader', ['-f', 'width', source])).stdout.trim());
  const height = Number((await timed('vipsheader', ['-f', 'height', source])).stdout.trim());
  const bigtiff = width * height * 3 > 4 * 1024 ** 3;
  const workerOut = path.join(BENCH_DIR, 'convert-openslide-worker.tif');
  const vipsOut = path.join(BENCH_DIR, 'convert-openslide-vips.tif');
  const workerRuns: Run[] = [];
  const vipsRuns: Run[] = [];
  for (let i = 0; i < runs; i++) {
    log(`run ${i + 1}/${runs}: worker (OpenSlide through koffi, block writer)`);
    rmSync(workerOut, { force: true });
    const w = await timed(process.execPath, [
      '--import',
      'tsx',
      path.join(ROOT, 'scripts/bench/convert.ts'),
      '--openslide',
      source,
      workerOut,
    ]);
    // The build's own time (the process's start, Node and tsx, is ~1 s: most of a small slide's wall time).
    const inProcess = /CONVERT_JSON (.*)/.exec(w.stdout)?.[1];
    const ms = inProcess ? (JSON.parse(inProcess) as { ms: number }).ms : w.seconds * 1000;
    log(`worker process ${w.seconds.toFixed(2)} s, of which the build ${(ms / 1000).toFixed(2)} s`);
    workerRuns.push({ ...w, seconds: ms / 1000, bytes: statSync(workerOut).size });
    log(`run ${i + 1}/${runs}: vips openslideload → tiffsave`);
    vipsRuns.push(await vipsOpenSlideRun(source, vipsOut, bigtiff));
  }
  const v = best(vipsRuns);
  const w = best(workerRuns);
  const line = (name: string, r: Run) =>
    `${name.padEnd(26)} ${r.seconds.toFixed(2).padStart(7)} s  CPU ${r.cpuSeconds === null ? '?' : r.cpuSeconds.toFixed(2).padStart(6)} s  peak RSS ${r.peakMb.toFixed(0).padStart(5)} MiB  pyramid ${(r.bytes / 1024 / 1024).toFixed(1)} MB  (${((width * height) / 1e6 / r.seconds).toFixed(1)} Mpx/s)`;
  console.log('');
  console.log(
    `OpenSlide: pyramid build of ${path.basename(source)}, ${width} x ${height} (${(size / 1024 / 1024).toFixed(1)} MB), best of ${runs}, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(line('vips (openslideload)', v));
  console.log(line('Lamina worker (OpenSlide)', w));
  console.log(
    "(the worker's time is its build in the process, from opening the slide; CPU and memory are the whole process)",
  );
  const cpu = w.cpuSeconds !== null && v.cpuSeconds ? `, CPU time ${(w.cpuSeconds / v.cpuSeconds).toFixed(2)}` : '';
  console.log(
    `worker / vips time: ${(w.seconds / v.seconds).toFixed(2)}${cpu} (goal <= 1.5); worker peak memory ${w.peakMb.toFixed(0)} MiB (goal < 1024 MiB for a 2 GB slide)`,
  );
  rmSync(workerOut, { force: true });
  rmSync(vipsOut, { force: true });
}

/** The JPEG 2000 case: the worker's own decoder against vips reading the same file. */
async function jp2kCase(): Promise<void> {
  const source = await jp2kBenchSlide();
  const { size } = statSync(source);
  const runs = Number(process.env.BENCH_RUNS ?? 1);
  const structure = await readTiffStructure(source);
  const base = structure.ifds[0];
  if (!base) throw new Error('no image in the JPEG 2000 bench slide');
  const { width, height } = base;
  const bigtiff = width * height * 3 > 4 * 1024 ** 3;
  log(
    `${path.basename(source)}: ${width} x ${height} (${((width * height) / 1e9).toFixed(2)} Gpx), ${(size / 1024 / 1024).toFixed(0)} MB, compression ${base.compression}`,
  );
  const workerOut = path.join(BENCH_DIR, 'convert-jp2k-worker.tif');
  const vipsOut = path.join(BENCH_DIR, 'convert-jp2k-vips.tif');
  const workerRuns: Run[] = [];
  const vipsRuns: Run[] = [];
  let failure: string | null = null;
  for (let i = 0; i < runs; i++) {
    log(`run ${i + 1}/${runs}: worker (OpenJPEG WebAssembly, worker threads)`);
    const run = await sharpRun(source, workerOut, 'auto');
    if (typeof run === 'string') failure = run;
    else workerRuns.push(run);
    log(`run ${i + 1}/${runs}: vips tiffsave (Q${JP2K_PYRAMID_QUALITY})`);
    vipsRuns.push(await vipsRun(source, vipsOut, bigtiff, JP2K_PYRAMID_QUALITY));
  }
  const v = best(vipsRuns);
  const line = (name: string, r: Run) =>
    `${name.padEnd(26)} ${r.seconds.toFixed(1).padStart(7)} s  CPU ${r.cpuSeconds === null ? '?' : r.cpuSeconds.toFixed(1).padStart(6)} s  peak RSS ${r.peakMb.toFixed(0).padStart(5)} MiB  pyramid ${(r.bytes / 1024 / 1024).toFixed(0)} MB  (${((width * height) / 1e6 / r.seconds).toFixed(1)} Mpx/s)`;
  console.log('');
  console.log(
    `JPEG 2000: pyramid build of a ${width} x ${height} slide (${(size / 1024 / 1024).toFixed(0)} MB), best of ${runs}, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(line('vips tiffsave --pyramid', v));
  const w = workerRuns.length > 0 ? best(workerRuns) : null;
  if (!w) {
    console.log(`${'Lamina worker'.padEnd(26)} FAILED: ${failure ?? 'unknown error'}`);
  } else {
    console.log(line('Lamina worker', w));
    const cpu = w.cpuSeconds !== null && v.cpuSeconds ? `, CPU time ${(w.cpuSeconds / v.cpuSeconds).toFixed(2)}` : '';
    console.log(
      `worker / vips time: ${(w.seconds / v.seconds).toFixed(2)}${cpu} (goal <= 2); worker peak memory ${w.peakMb.toFixed(0)} MiB (goal < 1024 MiB for a 2 GB slide)`,
    );
  }
  rmSync(workerOut, { force: true });
  rmSync(vipsOut, { force: true });
}

async function jpegCase(): Promise<void> {
  const writer = writerFromEnv();
  const source = benchSlide();
  const { size } = statSync(source);
  const runs = Number(process.env.BENCH_RUNS ?? 1);
  const sharpOut = path.join(BENCH_DIR, 'convert-sharp.tif');
  const vipsOut = path.join(BENCH_DIR, 'convert-vips.tif');
  // The worker writes BigTIFF above 4 GiB of raw pixels; vips gets the same choice.
  const header = await timed('vipsheader', ['-f', 'width', source]);
  const width = Number(header.stdout.trim());
  const height = Number((await timed('vipsheader', ['-f', 'height', source])).stdout.trim());
  const bigtiff = width * height * 3 > 4 * 1024 ** 3;
  log(
    `${path.basename(source)}: ${width} x ${height} (${((width * height) / 1e9).toFixed(2)} Gpx), ${(size / 1024 / 1024).toFixed(0)} MB${bigtiff ? ', BigTIFF output' : ''}`,
  );

  const sharpRuns: Run[] = [];
  const vipsRuns: Run[] = [];
  let sharpFailure: string | null = null;
  for (let i = 0; i < runs; i++) {
    log(`run ${i + 1}/${runs}: sharp (worker code, writer ${writer})`);
    const run = await sharpRun(source, sharpOut, writer);
    if (typeof run === 'string') sharpFailure = run;
    else sharpRuns.push(run);
    log(`run ${i + 1}/${runs}: vips tiffsave`);
    vipsRuns.push(await vipsRun(source, vipsOut, bigtiff));
  }
  const v = best(vipsRuns);
  const line = (name: string, r: Run) =>
    `${name.padEnd(26)} ${r.seconds.toFixed(1).padStart(7)} s  CPU ${r.cpuSeconds === null ? '?' : r.cpuSeconds.toFixed(1).padStart(6)} s  peak RSS ${r.peakMb.toFixed(0).padStart(5)} MiB  pyramid ${(r.bytes / 1024 / 1024).toFixed(0)} MB  (${((width * height) / 1e6 / r.seconds).toFixed(0)} Mpx/s)`;
  console.log('');
  console.log(`Pyramid build of a ${width} x ${height} slide (${(size / 1024 / 1024).toFixed(0)} MB), best of ${runs}`);
  console.log(line('vips tiffsave --pyramid', v));
  const s = sharpRuns.length > 0 ? best(sharpRuns) : null;
  const name = writer === 'auto' ? 'sharp (Lamina worker)' : `sharp (worker, ${writer})`;
  if (!s) {
    console.log(`${name.padEnd(26)} FAILED: ${sharpFailure ?? 'unknown error'}`);
  } else {
    console.log(line(name, s));
    const cpu = s.cpuSeconds !== null && v.cpuSeconds ? `, CPU time ${(s.cpuSeconds / v.cpuSeconds).toFixed(2)}` : '';
    console.log(
      `sharp / vips time: ${(s.seconds / v.seconds).toFixed(2)}${cpu} (target <= 1.2); sharp peak memory ${s.peakMb.toFixed(0)} MiB (target < 1024 MiB for a 2 GB slide)`,
    );
  }
  rmSync(sharpOut, { force: true });
  rmSync(vipsOut, { force: true });
}

const [mode, childSource, childTarget, childWriter] = process.argv.slice(2);
(mode === '--child' && childSource && childTarget
  ? child(childSource, childTarget, (childWriter ?? 'auto') as Writer)
  : mode === '--openslide' && childSource && childTarget
    ? openSlideChild(childSource, childTarget)
    : main()
).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
