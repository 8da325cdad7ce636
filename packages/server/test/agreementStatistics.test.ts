import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  blandAltman,
  cohenKappa,
  fleissKappa,
  icc21,
  percentAgreement,
  type Category,
} from '../src/modules/outcomes/agreementStatistics.js';

/** Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges. */
const SHROUT_FLEISS = [
  [9, 2, 5, 8],
  [6, 1, 3, 2],
  [8, 4, 6, 8],
  [7, 1, 2, 6],
  [10, 5, 6, 9],
  [6, 2, 4, 7],
];

/**
 * R's irr package, data set `anxiety` (irr 0.84, data/anxiety.rda): 20 subjects rated 1–6 by three
 * raters; one array per rater.
 */
const ANXIETY_RATERS = [
  [3, 3, 3, 4, 5, 5, 2, 3, 5, 2, 2, 6, 1, 5, 2, 2, 1, 2, 4, 3],
  [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4],
  [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2],
];
const ANXIETY = ANXIETY_RATERS[0]!.map((_, subject) => ANXIETY_RATERS.map((rater) => rater[subject]!));

/**
 * Bland & Altman (1986, Lancet i:307–310), Table 1: peak expiratory flow rate (l/min) of 17 subjects,
 * first reading on the Wright peak flow meter and on the mini Wright meter.
 */
const PEFR_WRIGHT = [494, 395, 516, 434, 476, 557, 413, 442, 650, 433, 417, 656, 267, 478, 178, 423, 427];
const PEFR_MINI = [512, 430, 520, 428, 500, 600, 364, 380, 658, 445, 432, 626, 260, 477, 259, 350, 451];

/**
 * Fleiss (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters, 5 categories;
 * each row gives how many raters put the subject in categories 1..5.
 */
const FLEISS_COUNTS = [
  [0, 0, 0, 0, 14],
  [0, 2, 6, 4, 2],
  [0, 0, 3, 5, 6],
  [0, 3, 9, 2, 0],
  [2, 2, 8, 1, 1],
  [7, 7, 0, 0, 0],
  [3, 2, 6, 3, 0],
  [2, 5, 3, 2, 2],
  [6, 5, 2, 1, 0],
  [0, 2, 2, 3, 7],
];

/** The counts as ratings: one column per rater, the category's number as the label. */
function ratingsFromCounts(counts: number[][]): number[][] {
  return counts.map((row) => row.flatMap((count, category) => Array<number>(count).fill(category + 1)));
}

/** Wikipedia's "Cohen's kappa" example: 50 proposals, A and B say yes/no. */
function cohenExample(): { a: boolean[]; b: boolean[] } {
  const pairs: [boolean, boolean, number][] = [
    [true, true, 20],
    [true, false, 5],
    [false, true, 10],
    [false, false, 15],
  ];
  const a: boolean[] = [];
  const b: boolean[] = [];
  for (const [x, y, count] of pairs) {
    for (let i = 0; i < count; i++) {
      a.push(x);
      b.push(y);
    }
  }
  return { a, b };
}

describe('icc21 (ICC(2,1), absolute agreement, single rater)', () => {
  it('gives Shrout & Fleiss 1979’s worked example: ICC(2,1) = 0.29', () => {
    const { icc } = icc21(SHROUT_FLEISS);
    expect(icc).toBeCloseTo(0.29, 2);
    // From the paper's mean squares (BMS 11.24, JMS 32.49, EMS 1.02): (11.24 − 1.02) / (11.24 + 3·1.02 + 4·(32.49 − 1.02)/6).
    expect(icc).toBeCloseTo((11.2417 - 1.0194) / (11.2417 + 3 * 1.0194 + (4 * (32.4861 - 1.0194)) / 6), 3);
  });

  it('gives the published 95 % interval of the same data (psych::ICC documentation: ICC2 0.29, 0.019 to 0.76)', () => {
    const { lower95, upper95 } = icc21(SHROUT_FLEISS);
    expect(lower95).toBeCloseTo(0.019, 3);
    expect(upper95).toBeCloseTo(0.76, 2);
  });

  it('gives irr::icc’s documented example: icc(anxiety, model="twoway", type="agreement") = 0.198, −0.039 < ICC < 0.494', () => {
    const { icc, lower95, upper95 } = icc21(ANXIETY);
    expect(icc).toBeCloseTo(0.198, 3);
    expect(lower95).toBeCloseTo(-0.039, 3);
    expect(upper95).toBeCloseTo(0.494, 3);
  });

  it('puts the estimate inside its interval, and a larger sample of the same pattern narrows it', () => {
    const small = icc21(SHROUT_FLEISS);
    const large = icc21([...SHROUT_FLEISS, ...SHROUT_FLEISS, ...SHROUT_FLEISS, ...SHROUT_FLEISS]);
    for (const r of [small, large]) {
      expect(r.lower95!).toBeLessThan(r.icc!);
      expect(r.upper95!).toBeGreaterThan(r.icc!);
    }
    expect(large.upper95! - large.lower95!).toBeLessThan(small.upper95! - small.lower95!);
  });

  it('is 1 for perfect agreement (interval null: its degrees of freedom are not finite)', () => {
    expect(
      icc21([
        [1, 1],
        [5, 5],
        [9, 9],
      ]),
    ).toEqual({ icc: 1, lower95: null, upper95: null });
  });

  it('penalises a constant offset between raters (absolute agreement, not consistency)', () => {
    const offset = icc21([
      [1, 4],
      [5, 8],
      [9, 12],
      [3, 6],
    ]);
    expect(offset.icc!).toBeLessThan(1);
    expect(offset.icc!).toBeGreaterThan(0);
  });

  it('is null with fewer than two subjects or no variance at all', () => {
    const none = { icc: null, lower95: null, upper95: null };
    expect(icc21([])).toEqual(none);
    expect(icc21([[3, 4]])).toEqual(none);
    expect(
      icc21([
        [2, 2],
        [2, 2],
      ]),
    ).toEqual(none);
  });

  it('refuses ragged rows, a single rater and non-finite ratings', () => {
    expect(() => icc21([[1, 2], [3]])).toThrow(RangeError);
    expect(() => icc21([[1], [2]])).toThrow(RangeError);
    expect(() =>
      icc21([
        [1, Number.NaN],
        [2, 3],
      ]),
    ).toThrow(RangeError);
  });

  it('does not depend on the order of subjects or of raters (property)', () => {
    const matrix = fc.array(fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 3, maxLength: 3 }), {
      minLength: 2,
      maxLength: 30,
    });
    fc.assert(
      fc.property(matrix, (m) => {
        const r = icc21(m);
        const reversedRows = icc21([...m].reverse());
        const reversedRaters = icc21(m.map((row) => [...row].reverse()));
        for (const other of [reversedRows, reversedRaters]) {
          if (r.icc === null) expect(other.icc).toBeNull();
          else expect(other.icc).toBeCloseTo(r.icc, 9);
        }
        if (r.icc !== null) expect(r.icc).toBeLessThanOrEqual(1 + 1e-12);
      }),
    );
  });
});

describe('cohenKappa', () => {
  it('gives Wikipedia’s worked example (50 subjects, 20/5/10/15): κ = 0.40', () => {
    const { a, b } = cohenExample();
    expect(cohenKappa(a, b)).toBeCloseTo(0.4, 10);
  });

  it('works for any labels, and is symmetric in the two raters', () => {
    const { a, b } = cohenExample();
    const label = (x: boolean): string => (x ? 'active' : 'remission');
    expect(cohenKappa(a.map(label), b.map(label))).toBeCloseTo(0.4, 10);
    expect(cohenKappa(b, a)).toBeCloseTo(0.4, 10);
  });

  it('is 1 for perfect agreement on two categories and negative for systematic disagreement', () => {
    expect(cohenKappa([true, false, true], [true, false, true])).toBe(1);
    expect(cohenKappa([true, false, true, false], [false, true, false, true])).toBe(-1);
  });

  it('is null when undefined (both raters one and the same category throughout) or with fewer than two subjects', () => {
    expect(cohenKappa([true, true, true], [true, true, true])).toBeNull();
    expect(cohenKappa([true], [false])).toBeNull();
    expect(cohenKappa([], [])).toBeNull();
  });

  it('refuses series of different lengths', () => {
    expect(() => cohenKappa([true, false], [true])).toThrow(RangeError);
  });
});

describe('fleissKappa', () => {
  it('gives Fleiss 1971 as worked on Wikipedia (10 subjects, 14 raters, 5 categories): κ ≈ 0.210', () => {
    expect(fleissKappa(ratingsFromCounts(FLEISS_COUNTS))).toBeCloseTo(0.21, 3);
  });

  it('takes string labels the same way as numbers', () => {
    const labelled = ratingsFromCounts(FLEISS_COUNTS).map((row) => row.map((c) => `grade ${c}`));
    expect(fleissKappa(labelled)).toBeCloseTo(0.21, 3);
  });

  it('is Scott’s pi for two raters on the binary reading (hand-computed from the Cohen example: 0.195 / 0.495)', () => {
    const { a, b } = cohenExample();
    // p_o = 0.7; pooled share of yes 55/100, so P_e = 0.55² + 0.45² = 0.505; (0.7 − 0.505) / (1 − 0.505).
    expect(fleissKappa(a.map((x, i) => [x, b[i]!]))).toBeCloseTo(0.195 / 0.495, 10);
  });

  it('is 1 for perfect agreement and null when every rating is the same category', () => {
    expect(
      fleissKappa([
        [true, true, true],
        [false, false, false],
      ]),
    ).toBe(1);
    expect(
      fleissKappa([
        [true, true, true],
        [true, true, true],
      ]),
    ).toBeNull();
  });

  it('is null with fewer than two subjects and refuses ragged rows', () => {
    expect(fleissKappa([[true, false, true]])).toBeNull();
    expect(() => fleissKappa([[true, false], [true]])).toThrow(RangeError);
  });
});

describe('percentAgreement', () => {
  it('is the share of subjects on which every rater agrees', () => {
    const { a, b } = cohenExample();
    expect(percentAgreement(a.map((x, i) => [x, b[i]!]))).toBeCloseTo(0.7, 12);
    // Fleiss's example: only subject 1 (all 14 raters in category 5) is unanimous.
    expect(percentAgreement(ratingsFromCounts(FLEISS_COUNTS))).toBeCloseTo(0.1, 12);
  });

  it('is null with fewer than two subjects and refuses a non-category', () => {
    expect(percentAgreement([[1, 1]])).toBeNull();
    expect(() =>
      percentAgreement([
        [Number.NaN, 1],
        [1, 1],
      ]),
    ).toThrow(RangeError);
    expect(() => percentAgreement([[null as unknown as Category, 1]])).toThrow(RangeError);
  });
});

describe('blandAltman', () => {
  it('gives Bland & Altman 1986’s PEFR example: mean difference −2.1, SD 38.8, limits −78 to 74 l/min', () => {
    const r = blandAltman(PEFR_WRIGHT, PEFR_MINI);
    expect(r.n).toBe(17);
    expect(r.meanDifference).toBeCloseTo(-2.1, 1);
    expect(r.sdDifference).toBeCloseTo(38.8, 1);
    // The paper rounds the limits to whole l/min: −2.1 ∓ 2·38.8 there, ∓ 1.96·38.8 here.
    expect(Math.round(r.loaLower!)).toBe(-78);
    expect(Math.round(r.loaUpper!)).toBe(74);
  });

  it('flips the sign of the mean difference when the series are swapped', () => {
    const r = blandAltman(PEFR_MINI, PEFR_WRIGHT);
    expect(r.meanDifference).toBeCloseTo(36 / 17, 10);
    expect(r.loaLower).toBeCloseTo(-blandAltman(PEFR_WRIGHT, PEFR_MINI).loaUpper!, 10);
  });

  it('is null (with n) for fewer than two pairs, zero-width for identical series', () => {
    expect(blandAltman([5], [4])).toEqual({
      meanDifference: null,
      sdDifference: null,
      loaLower: null,
      loaUpper: null,
      n: 1,
    });
    expect(blandAltman([1, 2, 3], [1, 2, 3])).toEqual({
      meanDifference: 0,
      sdDifference: 0,
      loaLower: 0,
      loaUpper: 0,
      n: 3,
    });
  });

  it('refuses series of different lengths and non-finite values', () => {
    expect(() => blandAltman([1, 2], [1])).toThrow(RangeError);
    expect(() => blandAltman([1, Number.POSITIVE_INFINITY], [1, 2])).toThrow(RangeError);
  });
});
