/**
 * The F distribution's CDF and quantile, written here for the interval of the read-agreement ICC
 * (agreementStatistics.ts), whose degrees of freedom may be non-integer. Pure functions, no
 * dependencies.
 *
 * F(d1, d2) relates to the beta distribution (Abramowitz & Stegun 26.6.2):
 *   P(X ≤ f) = I_x(d1/2, d2/2)  with  x = d1·f / (d1·f + d2),
 * so the quantile is f = d2·x / (d1·(1 − x)) for x = I⁻¹_p(d1/2, d2/2). The F functions work with x
 * and y = 1 − x given separately (never y computed as 1 − x), and the quantile searches over
 * s = ln(x / y) = ln(d1·f / d2): a quantile of 1e-200 or 1e62 keeps its relative precision.
 *
 * The regularized incomplete beta is Numerical Recipes' (Press et al., 3rd ed., 2007, §6.4): the
 * continued fraction (6.4.5) evaluated by the modified Lentz method (§5.2), with the symmetry
 * I_x(a, b) = 1 − I_{1−x}(b, a) so that it is only used where it converges fast,
 * x < (a + 1)/(a + b + 2). ln Γ is NR's Lanczos approximation (§6.1, `gammln`).
 *
 * Tested in test/fDistribution.test.ts against R's qf, a grid of @stdlib's values and closed forms.
 */

const EPSILON = Number.EPSILON;
/** Smallest magnitude the Lentz recurrence lets a denominator take (NR's FPMIN). */
const FP_MIN = Number.MIN_VALUE / EPSILON;
/**
 * Continued-fraction terms before giving up. Near the switch point it needs about √max(a, b) terms:
 * ~450 at 10⁶ degrees of freedom, ~8 000 at 10¹⁰.
 */
const MAX_TERMS = 100_000;
/** Steps of the quantile's search before it stops where it stands (bisection alone needs ~60). */
const MAX_STEPS = 200;

/** Lanczos coefficients of NR 3rd ed. §6.1 (`gammln`, g = 671/128, 14 terms), as the nearest doubles. */
const LANCZOS = [
  57.15623566586292, -59.59796035547549, 14.136097974741746, -0.4919138160976202, 3.399464998481189e-5,
  4.652362892704858e-5, -9.837447530487956e-5, 1.580887032249125e-4, -2.1026444172410488e-4, 2.1743961811521265e-4,
  -1.643181065367639e-4, 8.441822398385275e-5, -2.6190838401581408e-5, 3.6899182659531625e-6,
];

/** ln Γ(x) for x > 0 (NaN otherwise); NR 3rd ed. §6.1, relative error near double precision. */
export function logGamma(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) return Number.NaN;
  let tmp = x + 5.2421875;
  tmp = (x + 0.5) * Math.log(tmp) - tmp;
  let series = 0.9999999999999971;
  let y = x;
  for (const c of LANCZOS) series += c / ++y;
  return tmp + Math.log((2.5066282746310007 * series) / x);
}

/**
 * ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b). With the larger argument q ≥ 10 the two large terms
 * are subtracted in closed form (Stirling: ln Γ(z) = (z − ½)·ln z − z + ½·ln 2π + δ(z)), so that
 * 10⁶ degrees of freedom do not cost eight digits to the cancellation of ln Γ values near 10⁷.
 */
export function logBeta(a: number, b: number): number {
  const p = Math.min(a, b);
  const q = Math.max(a, b);
  if (q < 10) return logGamma(p) + logGamma(q) - logGamma(p + q);
  // ln Γ(q) − ln Γ(p + q) = −(q − ½)·ln(1 + p/q) − p·ln(p + q) + p + δ(q) − δ(p + q).
  return (
    logGamma(p) -
    (q - 0.5) * Math.log1p(p / q) -
    p * Math.log(p + q) +
    p +
    stirlingCorrection(q) -
    stirlingCorrection(p + q)
  );
}

/**
 * δ(z) = ln Γ(z) − ((z − ½)·ln z − z + ½·ln 2π) for z ≥ 10 by its asymptotic series (A&S 6.1.41;
 * the first omitted term is below 4e-15 at z = 10).
 */
function stirlingCorrection(z: number): number {
  const w = 1 / (z * z);
  return (1 / 12 - w * (1 / 360 - w * (1 / 1260 - w * (1 / 1680 - w * (1 / 1188 - w * (691 / 360360)))))) / z;
}

/** Both tails of the beta distribution at one point: lower = I_x(a, b), upper = 1 − lower. */
interface BetaTails {
  lower: number;
  upper: number;
  /** x^a·y^b / B(a, b): the derivative of `lower` with respect to s = ln(x/y). */
  density: number;
}

/**
 * I_x(a, b) and its complement, from x, y = 1 − x and their logarithms (given separately so that
 * neither tail loses precision to a subtraction). NR 3rd ed. §6.4 (`betai`).
 */
function betaTails(a: number, b: number, x: number, y: number, logX: number, logY: number): BetaTails {
  const logDensity = a * logX + b * logY - logBeta(a, b);
  const density = Math.exp(logDensity);
  if (x < (a + 1) / (a + b + 2)) {
    const lower = (density * continuedFraction(a, b, x)) / a;
    return { lower, upper: 1 - lower, density };
  }
  const upper = (density * continuedFraction(b, a, y)) / b;
  return { lower: 1 - upper, upper, density };
}

/** NR 3rd ed. (6.4.5) by the modified Lentz method (§5.2, `betacf`); NaN if it does not converge. */
function continuedFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < FP_MIN) d = FP_MIN;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAX_TERMS; m++) {
    const m2 = 2 * m;
    // Even step: d_{2m} = m(b − m)x / ((a + 2m − 1)(a + 2m)).
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < FP_MIN) d = FP_MIN;
    c = 1 + aa / c;
    if (Math.abs(c) < FP_MIN) c = FP_MIN;
    d = 1 / d;
    h *= d * c;
    // Odd step: d_{2m+1} = −(a + m)(a + b + m)x / ((a + 2m)(a + 2m + 1)).
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < FP_MIN) d = FP_MIN;
    c = 1 + aa / c;
    if (Math.abs(c) < FP_MIN) c = FP_MIN;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) <= EPSILON) return h;
  }
  return Number.NaN;
}

/** x = e^s/(1 + e^s), y = 1/(1 + e^s) and their logarithms, without overflow for any s. */
function betaTailsAtLogOdds(a: number, b: number, s: number): BetaTails {
  // ln(1 + e^−|s|) is the shared term; the larger of x and y is 1/(1 + e^−|s|).
  const log1pExp = Math.log1p(Math.exp(-Math.abs(s)));
  const logX = s > 0 ? -log1pExp : s - log1pExp;
  const logY = s > 0 ? -s - log1pExp : -log1pExp;
  return betaTails(a, b, Math.exp(logX), Math.exp(logY), logX, logY);
}

/**
 * The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1 (NaN otherwise): the
 * CDF of Beta(a, b) at x.
 */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (!validShape(a) || !validShape(b) || !(x >= 0 && x <= 1)) return Number.NaN;
  if (x === 0) return 0;
  if (x === 1) return 1;
  return betaTails(a, b, x, 1 - x, Math.log(x), Math.log1p(-x)).lower;
}

/** P(X ≤ f) for X ~ F(d1, d2): 0 for f ≤ 0, NaN for a NaN f or degrees of freedom not finite and > 0. */
export function fCdf(f: number, d1: number, d2: number): number {
  if (!validShape(d1) || !validShape(d2) || Number.isNaN(f)) return Number.NaN;
  if (f <= 0) return 0;
  if (f === Number.POSITIVE_INFINITY) return 1;
  // x = d1·f/(d1·f + d2), y = d2/(d1·f + d2), from s = ln(d1·f/d2).
  return betaTailsAtLogOdds(d1 / 2, d2 / 2, Math.log(f) - (Math.log(d2) - Math.log(d1))).lower;
}

/**
 * The p-quantile of F(d1, d2): the f with P(X ≤ f) = p. Degrees of freedom may be non-integer.
 * 0 at p = 0, Infinity at p = 1; NaN when p is outside [0, 1] or NaN, or a degree of freedom is not
 * finite and > 0. A quantile beyond the largest double is Infinity, one below the smallest is 0.
 *
 * Solves I_x(d1/2, d2/2) = p (A&S 26.6.2) over s = ln(x/y) by Newton's method on the log of the
 * smaller tail (nearly linear in s in both tails, so few steps), kept inside a bracket that every
 * evaluation narrows and falling back to bisection when a step leaves it, so it converges however
 * small the degrees of freedom. Relative error against SciPy's fdtri and @stdlib: below 1e-10 for
 * degrees of freedom up to 10⁷, ~1e-8 at 10⁹; beyond that it grows (x within 1/df of 1 carries its
 * rounding into the continued fraction, an error of about df·ε), and where the continued fraction
 * or ln B(a, b) fails (around 10¹⁵) the answer is NaN. The ICC's degrees of freedom are at most
 * n·(k − 1) for n cases and k readers.
 */
export function fQuantile(p: number, d1: number, d2: number): number {
  if (!validShape(d1) || !validShape(d2) || !(p >= 0 && p <= 1)) return Number.NaN;
  if (p === 0) return 0;
  if (p === 1) return Number.POSITIVE_INFINITY;
  const a = d1 / 2;
  const b = d2 / 2;
  // Work with the tail that holds at most half the mass, so its target keeps full relative precision.
  const useLower = p <= 0.5;
  const target = useLower ? p : 1 - p;
  const logTarget = Math.log(target);
  /** ln(tail) − ln(target), increasing in s, and its derivative. */
  const residual = (s: number): { value: number; slope: number } => {
    const tails = betaTailsAtLogOdds(a, b, s);
    const tail = useLower ? tails.lower : tails.upper;
    const slope = tails.density / tail;
    return useLower ? { value: Math.log(tail) - logTarget, slope } : { value: logTarget - Math.log(tail), slope };
  };

  // The bracket: far enough that e^s·d2/d1 under- or overflows at either end.
  const scale = Math.log(d2) - Math.log(d1); // ln(d2/d1): f = e^(s + scale)
  let low = -800 - Math.abs(scale);
  let high = 800 + Math.abs(scale);
  const atLow = residual(low).value;
  const atHigh = residual(high).value;
  if (Number.isNaN(atLow) || Number.isNaN(atHigh)) return Number.NaN; // degrees of freedom beyond reach
  if (atLow >= 0) return 0;
  if (atHigh <= 0) return Number.POSITIVE_INFINITY;

  // Start at x = 1/2 (s = 0), the solution's order of magnitude for most degrees of freedom; the
  // bracket takes care of the rest.
  let s = 0;
  for (let step = 0; step < MAX_STEPS; step++) {
    const { value, slope } = residual(s);
    if (Number.isNaN(value)) return Number.NaN; // the continued fraction did not converge
    if (value === 0) break;
    if (value < 0) low = s;
    else high = s;
    let next = s - value / slope;
    if (!(next > low && next < high)) next = (low + high) / 2;
    const tolerance = 4 * EPSILON * Math.max(1, Math.abs(next));
    const moved = Math.abs(next - s);
    s = next;
    if (moved <= tolerance || high - low <= tolerance) break;
  }
  return Math.exp(s + scale);
}

function validShape(x: number): boolean {
  return x > 0 && Number.isFinite(x);
}
