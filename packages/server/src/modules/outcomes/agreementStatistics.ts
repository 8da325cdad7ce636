import { fQuantile } from './fDistribution.js';

/**
 * Inter-reader agreement statistics of issue 30 (`GET /api/studies/{id}/agreement`), as pure
 * functions: no database, no I/O, nothing imported from the rest of the server. Each runs in one or
 * two passes over its input, O(n·k) for n subjects and k raters.
 *
 * The contract shared by every function here:
 * - A malformed input (rows of different lengths, fewer than two raters, a non-finite number, two
 *   series of different lengths) is a caller's bug: it throws a RangeError.
 * - Fewer than two subjects, or a statistic that is undefined on the data (a zero denominator: every
 *   rating identical), gives `null` — never NaN, never a throw. The route shows null as "not
 *   computable".
 * - Complete rows only. A case where a reader's value could not be computed (no HPF, no crypt: the
 *   value is null with a reason) is left out of the matrix by the caller for that endpoint — listwise
 *   deletion, as R's irr and psych do — so the statistics are over the cases every reader valued.
 *
 * The F quantiles of the ICC's interval come from fDistribution.ts (an incomplete-beta inverse, tested
 * in test/fDistribution.test.ts); everything else is arithmetic written out below with its source. The
 * tests (test/agreementStatistics.test.ts) check each against published worked examples.
 */

/** A category of a nominal reading: the binary reading (`positive`) or any label. */
export type Category = boolean | string | number;

export interface IccResult {
  /** ICC(2,1) = ICC(A,1); null with fewer than two subjects or when undefined (no variance at all). */
  icc: number | null;
  /** Bounds of the 95 % interval; null when the ICC is null or the interval's degrees of freedom are not finite (ICC = 1). */
  lower95: number | null;
  upper95: number | null;
}

export interface BlandAltmanResult {
  /** Mean of a − b. */
  meanDifference: number | null;
  /** Standard deviation of a − b (n − 1 in the denominator). */
  sdDifference: number | null;
  /** meanDifference ∓ 1.96 · sdDifference. */
  loaLower: number | null;
  loaUpper: number | null;
  /** Number of pairs. */
  n: number;
}

const Z_975 = 1.96;

/**
 * ICC(2,1) of Shrout & Fleiss (1979) — two-way random effects, absolute agreement, single rater;
 * McGraw & Wong (1996) call it ICC(A,1) — with its 95 % confidence interval.
 *
 * `matrix`: one row per subject (case), one column per rater, every row complete (see the module's
 * note on missing values). From the two-way ANOVA without replication:
 *   MSR (rows), MSC (columns, raters), MSE (residual),
 *   ICC = (MSR − MSE) / (MSR + (k − 1)·MSE + k·(MSC − MSE)/n).
 * The interval is McGraw & Wong's (1996, Table 7, case 2A; Shrout & Fleiss's approximation), as R's
 * irr::icc and psych::ICC compute it:
 *   a = k·ICC / (n·(1 − ICC)),  b = 1 + k·ICC·(n − 1) / (n·(1 − ICC)),
 *   v = (a·MSC + b·MSE)² / ((a·MSC)²/(k − 1) + (b·MSE)²/((n − 1)(k − 1))),
 *   F* = F(0.975; n − 1, v),  F_* = F(0.975; v, n − 1),
 *   lower = n(MSR − F*·MSE) / (F*·(k·MSC + (k·n − k − n)·MSE) + n·MSR),
 *   upper = n(F_*·MSR − MSE) / (k·MSC + (k·n − k − n)·MSE + n·F_*·MSR).
 */
export function icc21(matrix: readonly (readonly number[])[]): IccResult {
  const none: IccResult = { icc: null, lower95: null, upper95: null };
  const k = raterCount(matrix);
  matrix.forEach((row) => {
    for (const x of row) requireFinite(x);
  });
  const n = matrix.length;
  if (n < 2) return none;

  const rowMeans: number[] = [];
  const colMeans: number[] = new Array<number>(k).fill(0);
  let grand = 0;
  for (const row of matrix) {
    let sum = 0;
    row.forEach((x, j) => {
      sum += x;
      colMeans[j] = (colMeans[j] ?? 0) + x;
    });
    rowMeans.push(sum / k);
    grand += sum;
  }
  grand /= n * k;
  for (let j = 0; j < k; j++) colMeans[j] = (colMeans[j] ?? 0) / n;

  let ssRows = 0;
  for (const mean of rowMeans) ssRows += (mean - grand) ** 2;
  ssRows *= k;
  let ssCols = 0;
  for (const mean of colMeans) ssCols += (mean - grand) ** 2;
  ssCols *= n;
  // The residual summed directly (not SST − SSR − SSC), so perfect agreement gives exactly 0.
  let ssError = 0;
  matrix.forEach((row, i) => {
    const rowMean = rowMeans[i] ?? 0;
    row.forEach((x, j) => {
      ssError += (x - rowMean - (colMeans[j] ?? 0) + grand) ** 2;
    });
  });
  const msr = ssRows / (n - 1);
  const msc = ssCols / (k - 1);
  const mse = ssError / ((n - 1) * (k - 1));

  const denominator = msr + (k - 1) * mse + (k * (msc - mse)) / n;
  if (!(denominator > 0)) return none;
  const icc = (msr - mse) / denominator;

  const a = (k * icc) / (n * (1 - icc));
  const b = 1 + (k * icc * (n - 1)) / (n * (1 - icc));
  const v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)));
  if (!Number.isFinite(v) || v <= 0) return { icc, lower95: null, upper95: null };
  const fLower = fQuantile(0.975, n - 1, v);
  const fUpper = fQuantile(0.975, v, n - 1);
  const spread = k * msc + (k * n - k - n) * mse;
  const lower = (n * (msr - fLower * mse)) / (fLower * spread + n * msr);
  const upper = (n * (fUpper * msr - mse)) / (spread + n * fUpper * msr);
  return { icc, lower95: finiteOrNull(lower), upper95: finiteOrNull(upper) };
}

/**
 * Cohen's kappa (1960) of two raters on the same subjects: κ = (p_o − p_e) / (1 − p_e), with p_o the
 * observed share of agreement and p_e the agreement expected from each rater's own marginal shares.
 * Written for the binary reading (`positive`) and correct for any labels. Null with fewer than two
 * subjects or when p_e = 1 (both raters gave one and the same category to every subject).
 */
export function cohenKappa<T extends Category>(a: readonly T[], b: readonly T[]): number | null {
  if (a.length !== b.length) {
    throw new RangeError(`Cohen's kappa needs two series of the same length (${a.length} and ${b.length})`);
  }
  a.forEach(requireCategory);
  b.forEach(requireCategory);
  const n = a.length;
  if (n < 2) return null;
  const countsA = new Map<T, number>();
  const countsB = new Map<T, number>();
  let agree = 0;
  a.forEach((x, i) => {
    const y = b[i] ?? x; // b has a's length (checked above)
    if (x === y) agree++;
    countsA.set(x, (countsA.get(x) ?? 0) + 1);
    countsB.set(y, (countsB.get(y) ?? 0) + 1);
  });
  const observed = agree / n;
  let expected = 0;
  for (const [category, countA] of countsA) expected += (countA / n) * ((countsB.get(category) ?? 0) / n);
  if (expected >= 1) return null;
  return (observed - expected) / (1 - expected);
}

/**
 * Fleiss' kappa (1971) for m ≥ 2 raters per subject and any number of categories (the binary reading
 * is the two-category case). `matrix`: one row per subject, one column per rater (raters need not
 * be the same people across subjects). With n_ij the raters putting subject i in category j:
 *   P_i = (Σ_j n_ij² − m) / (m(m − 1)),  P̄ = mean P_i,  p_j = Σ_i n_ij / (N·m),  P̄_e = Σ_j p_j²,
 *   κ = (P̄ − P̄_e) / (1 − P̄_e).
 * Null with fewer than two subjects or when P̄_e = 1 (every rating the same category).
 */
export function fleissKappa(matrix: readonly (readonly Category[])[]): number | null {
  const m = raterCount(matrix);
  matrix.forEach((row) => row.forEach(requireCategory));
  const n = matrix.length;
  if (n < 2) return null;
  const totals = new Map<Category, number>();
  const rowCounts = new Map<Category, number>();
  let sumP = 0;
  for (const row of matrix) {
    rowCounts.clear();
    for (const x of row) {
      rowCounts.set(x, (rowCounts.get(x) ?? 0) + 1);
      totals.set(x, (totals.get(x) ?? 0) + 1);
    }
    let squares = 0;
    for (const count of rowCounts.values()) squares += count * count;
    sumP += (squares - m) / (m * (m - 1));
  }
  const observed = sumP / n;
  let expected = 0;
  for (const count of totals.values()) expected += (count / (n * m)) ** 2;
  if (expected >= 1) return null;
  return (observed - expected) / (1 - expected);
}

/**
 * The share (0–1) of subjects on which every rater gave the same category. `matrix` as for
 * {@link fleissKappa}. Null with fewer than two subjects.
 */
export function percentAgreement(matrix: readonly (readonly Category[])[]): number | null {
  raterCount(matrix);
  matrix.forEach((row) => row.forEach(requireCategory));
  const n = matrix.length;
  if (n < 2) return null;
  let agreeing = 0;
  for (const row of matrix) if (row.every((x) => x === row[0])) agreeing++;
  return agreeing / n;
}

/**
 * Bland & Altman (1986): the mean of the differences a − b and the 95 % limits of agreement, mean ∓
 * 1.96 · SD of the differences (SD with n − 1). For more than two readers the caller picks the pair
 * (the route's plot is reader A against reader B). Null values (with n) for fewer than two pairs.
 */
export function blandAltman(a: readonly number[], b: readonly number[]): BlandAltmanResult {
  if (a.length !== b.length) {
    throw new RangeError(`Bland–Altman needs two series of the same length (${a.length} and ${b.length})`);
  }
  a.forEach(requireFinite);
  b.forEach(requireFinite);
  const n = a.length;
  if (n < 2) return { meanDifference: null, sdDifference: null, loaLower: null, loaUpper: null, n };
  const differences = a.map((x, i) => x - (b[i] ?? Number.NaN)); // b has a's length (checked above)
  let sum = 0;
  for (const d of differences) sum += d;
  const mean = sum / n;
  let squares = 0;
  for (const d of differences) squares += (d - mean) ** 2;
  const sd = Math.sqrt(squares / (n - 1));
  return { meanDifference: mean, sdDifference: sd, loaLower: mean - Z_975 * sd, loaUpper: mean + Z_975 * sd, n };
}

/** The common row length (raters per subject), at least 2; throws when rows differ. */
function raterCount(matrix: readonly (readonly unknown[])[]): number {
  const k = matrix[0]?.length ?? 2;
  if (k < 2) throw new RangeError(`Agreement needs at least two raters per subject (got ${k})`);
  matrix.forEach((row, i) => {
    if (row.length !== k) {
      throw new RangeError(
        `Every subject needs the same number of ratings (row 0 has ${k}, row ${i} has ${row.length})`,
      );
    }
  });
  return k;
}

function requireFinite(x: number): void {
  if (typeof x !== 'number' || !Number.isFinite(x))
    throw new RangeError(`A rating is not a finite number: ${String(x)}`);
}

function requireCategory(x: Category): void {
  const ok = typeof x === 'boolean' || typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x));
  if (!ok) throw new RangeError(`A category is not a boolean, a string or a finite number: ${String(x)}`);
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}
