/**
 * npm run bench:agreement — the read agreement statistics of issue 30 (the goal: a study of
 * 10 000 cases × 2 readers answers `GET /api/studies/{id}/agreement` in < 500 ms). Times, on
 * random ratings (seeded, so every run sees the same data), what the route computes per endpoint:
 * ICC(2,1) with its interval, kappa on the binary reading (Cohen's for 2 readers, Fleiss' for 3),
 * percent agreement and Bland–Altman of the first two readers — for BENCH_AGREEMENT_CASES cases
 * (10 000 by default) × 2 and × 3 readers. Prints the median and the slowest of 21 runs after 5
 * warm-up runs. Pure computation: no database (the route's query is measured with the route).
 */
import {
  blandAltman,
  cohenKappa,
  fleissKappa,
  icc21,
  percentAgreement,
} from '../../packages/server/src/modules/outcomes/agreementStatistics.js';
import { cpuInfo, log } from './lib.js';

const CASES = Number(process.env.BENCH_AGREEMENT_CASES ?? 10_000);
const WARMUP = 5;
const RUNS = 21;
const THRESHOLD = 15;

/** Mulberry32: a small seeded generator, so the data is the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Peak eosinophil counts per case: a true value per case, each reader off by some noise. */
function ratings(cases: number, readers: number): number[][] {
  const next = random(30 + readers);
  return Array.from({ length: cases }, () => {
    const truth = Math.floor(next() * 60);
    return Array.from({ length: readers }, () => Math.max(0, truth + Math.round((next() - 0.5) * 12)));
  });
}

/** What the route does for one endpoint over the study's cases. */
function agreement(matrix: number[][]): number {
  const icc = icc21(matrix);
  const positive = matrix.map((row) => row.map((value) => value >= THRESHOLD));
  const kappa =
    positive[0]?.length === 2
      ? cohenKappa(
          positive.map((row) => row[0] ?? false),
          positive.map((row) => row[1] ?? false),
        )
      : fleissKappa(positive);
  const agreeing = percentAgreement(positive);
  const ba = blandAltman(
    matrix.map((row) => row[0] ?? 0),
    matrix.map((row) => row[1] ?? 0),
  );
  return (icc.icc ?? 0) + (kappa ?? 0) + (agreeing ?? 0) + (ba.meanDifference ?? 0);
}

function time(matrix: number[][]): { median: number; max: number; sample: string } {
  for (let i = 0; i < WARMUP; i++) agreement(matrix);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    agreement(matrix);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const icc = icc21(matrix);
  const sample = `ICC ${icc.icc?.toFixed(3) ?? 'null'} (${icc.lower95?.toFixed(3) ?? 'null'}–${icc.upper95?.toFixed(3) ?? 'null'})`;
  return { median: times[Math.floor(RUNS / 2)] ?? 0, max: times[RUNS - 1] ?? 0, sample };
}

log(cpuInfo());
for (const readers of [2, 3]) {
  const matrix = ratings(CASES, readers);
  const { median, max, sample } = time(matrix);
  log(
    `${CASES} cases x ${readers} readers: median ${median.toFixed(2)} ms, slowest ${max.toFixed(2)} ms of ${RUNS} runs (${sample})`,
  );
}
