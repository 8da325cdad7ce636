import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  adjudicationFires,
  adjudicationRefusal,
  adjudicationSchema,
  categoryNeedsThreshold,
  classNotInStudy,
  computeEndpoint,
  countsPerHpf,
  ENDPOINT_MESSAGES,
  endpointDefinitionSchema,
  endpointInputOf,
  endpointKeyUnknown,
  endpointRefusal,
  endpointsSchema,
  endpointUnit,
  ENDPOINT_KINDS,
  finalOutcome,
  installZodMessages,
  MAX_ENDPOINTS,
  type AnnotationView,
  type EndpointDefinition,
  type EndpointInput,
  type EndpointKind,
} from '../src/index.js';

installZodMessages();

const pec: EndpointDefinition = {
  key: 'pec',
  label: 'Peak eosinophil count',
  kind: 'PEAK_COUNT_PER_HPF',
  className: 'Eosinophil',
  threshold: 15,
  positiveWhen: 'GTE',
};
const def = (kind: EndpointKind, extra: Partial<EndpointDefinition> = {}): EndpointDefinition => ({
  key: kind.toLowerCase(),
  label: kind,
  kind,
  ...(kind === 'PEAK_COUNT_PER_HPF' || kind === 'MEAN_COUNT_PER_HPF' || kind === 'TOTAL_COUNT'
    ? { className: 'Eosinophil' }
    : {}),
  ...extra,
});

const pts = (n: number, parentId: number | null, className: string | null = 'Eosinophil') =>
  Array.from({ length: n }, () => ({ className, parentId }));
const vh = (...um: number[]) => um.map((lengthUm) => ({ category: 'VILLUS_HEIGHT' as const, lengthUm }));
const cd = (...um: number[]) => um.map((lengthUm) => ({ category: 'CRYPT_DEPTH' as const, lengthUm }));

/** Messages of a failed parse, for exact comparison. */
function messages(result: { success: boolean; error?: { issues: { message: string }[] } }): string[] {
  return result.success ? [] : (result.error?.issues.map((i) => i.message) ?? []);
}

describe('endpointDefinitionSchema', () => {
  it('accepts each kind with what it needs, and trims the label', () => {
    expect(endpointDefinitionSchema.parse({ ...pec, label: '  PEC  ' }).label).toBe('PEC');
    for (const kind of ['VH_CD_RATIO', 'MEAN_VILLUS_HEIGHT_UM', 'MEAN_CRYPT_DEPTH_UM'] as const) {
      expect(endpointDefinitionSchema.safeParse({ key: 'k', label: 'L', kind }).success).toBe(true);
    }
    expect(
      endpointDefinitionSchema.safeParse({
        key: 'vh_cd',
        label: 'Vh:Cd',
        kind: 'VH_CD_RATIO',
        threshold: 2,
        positiveWhen: 'LT',
      }).success,
    ).toBe(true);
  });

  it.each([
    [{ key: 'PEC' }, ENDPOINT_MESSAGES.keyInvalid],
    [{ key: '' }, ENDPOINT_MESSAGES.keyInvalid],
    [{ key: 'a'.repeat(33) }, ENDPOINT_MESSAGES.keyInvalid],
    [{ key: 'pec-1' }, ENDPOINT_MESSAGES.keyInvalid],
    [{ label: '   ' }, ENDPOINT_MESSAGES.labelRequired],
    [{ label: 'x'.repeat(101) }, ENDPOINT_MESSAGES.labelTooLong],
    [{ kind: 'MEDIAN' }, ENDPOINT_MESSAGES.kindInvalid],
    [{ className: undefined }, ENDPOINT_MESSAGES.classNameRequired],
    [{ className: '  ' }, ENDPOINT_MESSAGES.classNameRequired],
    [{ threshold: undefined }, ENDPOINT_MESSAGES.thresholdPair],
    [{ positiveWhen: undefined }, ENDPOINT_MESSAGES.thresholdPair],
    [{ positiveWhen: 'GT' }, ENDPOINT_MESSAGES.positiveWhenInvalid],
    [{ threshold: -1 }, ENDPOINT_MESSAGES.thresholdInvalid],
    [{ threshold: '15' }, ENDPOINT_MESSAGES.thresholdInvalid],
  ])('refuses %o with its message', (change, message) => {
    expect(messages(endpointDefinitionSchema.safeParse({ ...pec, ...change }))).toEqual([message]);
  });

  it('refuses a className on the kinds that count no points', () => {
    expect(
      messages(endpointDefinitionSchema.safeParse({ key: 'r', label: 'R', kind: 'VH_CD_RATIO', className: 'IEL' })),
    ).toEqual([ENDPOINT_MESSAGES.classNameRefused]);
  });

  it('names the field and the allowed values in its messages', () => {
    expect(ENDPOINT_MESSAGES.kindInvalid).toBe(
      'kind must be one of PEAK_COUNT_PER_HPF, MEAN_COUNT_PER_HPF, TOTAL_COUNT, VH_CD_RATIO, MEAN_VILLUS_HEIGHT_UM, MEAN_CRYPT_DEPTH_UM',
    );
    expect(ENDPOINT_MESSAGES.positiveWhenInvalid).toBe('positiveWhen must be one of GTE, LT');
    expect(ENDPOINT_MESSAGES.classNameRequired).toBe(
      'className is required for PEAK_COUNT_PER_HPF, MEAN_COUNT_PER_HPF, TOTAL_COUNT',
    );
  });
});

describe('endpointsSchema and endpointRefusal', () => {
  it('accepts an empty list and unique keys', () => {
    expect(endpointsSchema.parse([])).toEqual([]);
    expect(endpointsSchema.safeParse([pec, def('TOTAL_COUNT')]).success).toBe(true);
  });

  it('refuses a key used twice', () => {
    expect(messages(endpointsSchema.safeParse([pec, { ...def('TOTAL_COUNT'), key: 'pec' }]))).toEqual([
      ENDPOINT_MESSAGES.keysNotUnique,
    ]);
  });

  it(`refuses more than ${MAX_ENDPOINTS} endpoints`, () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ ...pec, key: `e${i}` }));
    expect(endpointsSchema.safeParse(list(MAX_ENDPOINTS)).success).toBe(true);
    expect(messages(endpointsSchema.safeParse(list(MAX_ENDPOINTS + 1)))).toContain(ENDPOINT_MESSAGES.tooManyEndpoints);
  });

  it("refuses a className that is not one of the study's point classes", () => {
    const ratio = def('VH_CD_RATIO');
    expect(endpointRefusal([pec, ratio], ['Eosinophil', 'Neutrophil'])).toBeNull();
    expect(endpointRefusal([ratio, { ...pec, className: 'Eos' }], ['Eosinophil', 'Neutrophil'])).toBe(
      "className Eos is not one of the study's point classes (Eosinophil, Neutrophil)",
    );
    expect(endpointRefusal([pec], [])).toBe(classNotInStudy('Eosinophil', []));
    expect(classNotInStudy('Eosinophil', [])).toBe(
      "className Eosinophil is not one of the study's point classes (the study has none)",
    );
    // A ratio names no class: nothing to check against an empty list.
    expect(endpointRefusal([ratio], [])).toBeNull();
  });
});

describe('adjudicationSchema and adjudicationRefusal', () => {
  it('accepts null and both rules with what they need', () => {
    expect(adjudicationSchema.parse(null)).toBeNull();
    expect(adjudicationSchema.safeParse({ endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' }).success).toBe(true);
    expect(adjudicationSchema.safeParse({ endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 5 }).success).toBe(true);
  });

  it.each([
    [{ rule: 'ABS_DIFF_ABOVE' }, ENDPOINT_MESSAGES.valueRequired],
    [{ rule: 'ABS_DIFF_ABOVE', value: 0 }, ENDPOINT_MESSAGES.valueRequired],
    [{ rule: 'ABS_DIFF_ABOVE', value: -2 }, ENDPOINT_MESSAGES.valueRequired],
    [{ rule: 'CATEGORY_DISAGREES', value: 3 }, ENDPOINT_MESSAGES.valueRefused],
    [{ rule: 'MAJORITY' }, ENDPOINT_MESSAGES.ruleInvalid],
    [{ rule: 'CATEGORY_DISAGREES', endpointKey: 'P EC' }, ENDPOINT_MESSAGES.keyInvalid],
  ])('refuses %o with its message', (change, message) => {
    expect(messages(adjudicationSchema.safeParse({ endpointKey: 'pec', ...change }))).toEqual([message]);
  });

  it("checks the endpointKey against the study's endpoints and CATEGORY_DISAGREES against a threshold", () => {
    const ratio = def('VH_CD_RATIO');
    expect(adjudicationRefusal(null, [])).toBeNull();
    expect(adjudicationRefusal({ endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' }, [pec, ratio])).toBeNull();
    expect(adjudicationRefusal({ endpointKey: 'peak', rule: 'CATEGORY_DISAGREES' }, [pec, ratio])).toBe(
      "endpointKey peak is not one of the study's endpoints (pec, vh_cd_ratio)",
    );
    expect(adjudicationRefusal({ endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 1 }, [])).toBe(
      endpointKeyUnknown('pec', []),
    );
    expect(adjudicationRefusal({ endpointKey: 'vh_cd_ratio', rule: 'CATEGORY_DISAGREES' }, [pec, ratio])).toBe(
      categoryNeedsThreshold('vh_cd_ratio'),
    );
    expect(categoryNeedsThreshold('vh_cd_ratio')).toBe(
      'CATEGORY_DISAGREES needs an endpoint with a threshold: vh_cd_ratio has none',
    );
    // ABS_DIFF_ABOVE compares values: no threshold needed.
    expect(adjudicationRefusal({ endpointKey: 'vh_cd_ratio', rule: 'ABS_DIFF_ABOVE', value: 0.5 }, [ratio])).toBeNull();
  });
});

describe('computeEndpoint: point counts', () => {
  // HPF 1: 3 eosinophils, 2 neutrophils; HPF 2: 7 eosinophils; HPF 3: empty; 4 eosinophils in no HPF;
  // 1 eosinophil whose parent is not one of the reader's HPFs (a deleted one); 2 points without a class.
  const input: EndpointInput = {
    hpfs: [{ id: 1 }, { id: 2 }, { id: 3 }],
    points: [
      ...pts(3, 1),
      ...pts(2, 1, 'Neutrophil'),
      ...pts(7, 2),
      ...pts(4, null),
      ...pts(1, 99),
      ...pts(2, 2, null),
    ],
    lines: [],
  };

  it('counts per HPF only the class asked, 0 for an empty HPF', () => {
    expect(countsPerHpf(input, 'Eosinophil')).toEqual([3, 7, 0]);
    expect(countsPerHpf(input, 'Neutrophil')).toEqual([2, 0, 0]);
  });

  it('PEAK_COUNT_PER_HPF is the largest count in one HPF; points in no HPF do not count', () => {
    expect(computeEndpoint(pec, input)).toEqual({ value: 7, positive: false, reason: null });
    expect(computeEndpoint({ ...pec, threshold: 7 }, input).positive).toBe(true);
    expect(computeEndpoint({ ...pec, className: 'Neutrophil' }, input).value).toBe(2);
  });

  it('MEAN_COUNT_PER_HPF is the mean over every HPF, the empty ones included, unrounded', () => {
    expect(computeEndpoint(def('MEAN_COUNT_PER_HPF'), input)).toEqual({ value: 10 / 3, positive: null, reason: null });
  });

  it('TOTAL_COUNT counts every point of the class, in an HPF or not', () => {
    expect(computeEndpoint(def('TOTAL_COUNT'), input).value).toBe(3 + 7 + 4 + 1);
    expect(computeEndpoint(def('TOTAL_COUNT', { className: 'Lymphocyte' }), input).value).toBe(0);
  });

  it('is null with its reason without an HPF; a total still counts', () => {
    const noHpf: EndpointInput = { hpfs: [], points: pts(5, null), lines: [] };
    const none = { value: null, positive: null, reason: ENDPOINT_MESSAGES.noHpf };
    expect(computeEndpoint(pec, noHpf)).toEqual(none);
    expect(computeEndpoint(def('MEAN_COUNT_PER_HPF'), noHpf)).toEqual(none);
    expect(computeEndpoint(def('TOTAL_COUNT'), noHpf)).toEqual({ value: 5, positive: null, reason: null });
  });

  it('an HPF with no point of the class gives 0, not null', () => {
    expect(computeEndpoint(pec, { hpfs: [{ id: 4 }], points: pts(3, 4, 'Neutrophil'), lines: [] })).toEqual({
      value: 0,
      positive: false,
      reason: null,
    });
  });
});

describe('endpointInputOf', () => {
  const row = (over: Partial<AnnotationView>) => ({
    id: 0,
    annotationType: 'POINT' as const,
    userId: 1,
    annotationClassId: 10,
    parentId: null,
    multilineCategory: null,
    length: null,
    ...over,
  });
  const classNames = new Map([
    [10, 'Eosinophil'],
    [11, 'Unit 1'],
  ]);
  // Reader 1: HPF 100 with 2 eosinophils. Reader 2: HPF 200 with 20 eosinophils, a line.
  // An AI object (no reader) with 30 eosinophils in reader 1's HPF.
  const rows = [
    row({ id: 100, annotationType: 'HPF', annotationClassId: null }),
    row({ id: 101, parentId: 100 }),
    row({ id: 102, parentId: 100 }),
    row({ id: 103, parentId: null, annotationClassId: null }),
    row({ id: 200, annotationType: 'HPF', userId: 2, annotationClassId: null }),
    ...Array.from({ length: 20 }, (_, i) => row({ id: 201 + i, userId: 2, parentId: 200 })),
    ...Array.from({ length: 30 }, (_, i) => row({ id: 300 + i, userId: null, parentId: 100 })),
    row({
      id: 400,
      annotationType: 'MULTILINE',
      userId: 2,
      annotationClassId: 11,
      multilineCategory: 'CRYPT_DEPTH',
      length: 80,
    }),
    row({ id: 401, annotationType: 'LINE', length: 50 }),
  ];

  it("keeps the reader's own annotations only", () => {
    const one = endpointInputOf(rows, 1, classNames);
    expect(one).toEqual({
      hpfs: [{ id: 100 }],
      points: [
        { className: 'Eosinophil', parentId: 100 },
        { className: 'Eosinophil', parentId: 100 },
        { className: null, parentId: null },
      ],
      lines: [],
    });
    expect(computeEndpoint(pec, one).value).toBe(2);
    const two = endpointInputOf(rows, 2, classNames);
    expect(computeEndpoint(pec, two)).toEqual({ value: 20, positive: true, reason: null });
    expect(two.lines).toEqual([{ category: 'CRYPT_DEPTH', lengthUm: 80 }]);
    expect(computeEndpoint(pec, endpointInputOf(rows, 3, classNames))).toEqual({
      value: null,
      positive: null,
      reason: ENDPOINT_MESSAGES.noHpf,
    });
  });
});

describe('computeEndpoint: celiac lines', () => {
  const ratio = def('VH_CD_RATIO', { threshold: 2, positiveWhen: 'LT' });

  it('VH_CD_RATIO is mean villus height ÷ mean crypt depth, unrounded', () => {
    const input: EndpointInput = { hpfs: [], points: [], lines: [...vh(300, 400, 350), ...cd(100, 200)] };
    expect(computeEndpoint(ratio, input)).toEqual({ value: 350 / 150, positive: false, reason: null });
    expect(computeEndpoint(def('MEAN_VILLUS_HEIGHT_UM'), input).value).toBe(350);
    expect(computeEndpoint(def('MEAN_CRYPT_DEPTH_UM'), input).value).toBe(150);
    const atrophy: EndpointInput = { hpfs: [], points: [], lines: [...vh(150), ...cd(100)] };
    expect(computeEndpoint(ratio, atrophy)).toEqual({ value: 1.5, positive: true, reason: null });
    expect(
      computeEndpoint(def('MEAN_VILLUS_HEIGHT_UM', { threshold: 150, positiveWhen: 'GTE' }), atrophy).positive,
    ).toBe(true);
  });

  it('is null with its reason without a villus line, a crypt line, or a crypt depth', () => {
    const only = (lines: EndpointInput['lines']): EndpointInput => ({ hpfs: [], points: [], lines });
    const none = (reason: string) => ({ value: null, positive: null, reason });
    expect(computeEndpoint(ratio, only(cd(100)))).toEqual(none(ENDPOINT_MESSAGES.noVillusLine));
    expect(computeEndpoint(ratio, only([]))).toEqual(none(ENDPOINT_MESSAGES.noVillusLine));
    expect(computeEndpoint(ratio, only(vh(300)))).toEqual(none(ENDPOINT_MESSAGES.noCryptLine));
    expect(computeEndpoint(ratio, only([...vh(300), ...cd(0, 0)]))).toEqual(none(ENDPOINT_MESSAGES.cryptDepthZero));
    expect(computeEndpoint(def('MEAN_VILLUS_HEIGHT_UM'), only(cd(100)))).toEqual(none(ENDPOINT_MESSAGES.noVillusLine));
    expect(computeEndpoint(def('MEAN_CRYPT_DEPTH_UM'), only(vh(100)))).toEqual(none(ENDPOINT_MESSAGES.noCryptLine));
    // A mean crypt depth of 0 is a value for the depth itself.
    expect(computeEndpoint(def('MEAN_CRYPT_DEPTH_UM'), only(cd(0))).value).toBe(0);
  });

  it('point endpoints ignore lines, line endpoints ignore points', () => {
    const input: EndpointInput = { hpfs: [{ id: 1 }], points: pts(4, 1), lines: [...vh(300), ...cd(100)] };
    expect(computeEndpoint(pec, input).value).toBe(4);
    expect(computeEndpoint(ratio, input).value).toBe(3);
  });
});

describe('computeEndpoint: properties of the point counts on random sets', () => {
  /**
   * 1–8 HPFs and up to 200 points of two classes (or none); a point's parent is one of the HPFs, none
   * ('Orphan') or an id that is no HPF of this reader. fast-check, as the other property tests here.
   */
  const inputs: fc.Arbitrary<EndpointInput> = fc.integer({ min: 1, max: 8 }).chain((n) => {
    const hpfs = Array.from({ length: n }, (_, i) => ({ id: 1 + i * 3 }));
    const parents = [...hpfs.map((h) => h.id), null, 1000];
    return fc
      .array(
        fc.record({
          className: fc.constantFrom('Eosinophil', 'Neutrophil', null),
          parentId: fc.constantFrom(...parents),
        }),
        { maxLength: 200 },
      )
      .map((points) => ({ hpfs, points, lines: [] }));
  });

  it('peak ≥ mean, peak = the naive maximum over HPFs, total ≥ the sum over HPFs (500 sets)', () => {
    fc.assert(
      fc.property(inputs, fc.constantFrom('Eosinophil', 'Neutrophil'), (input, className) => {
        const peak = computeEndpoint({ ...pec, className }, input).value;
        const meanCount = computeEndpoint(def('MEAN_COUNT_PER_HPF', { className }), input).value;
        const total = computeEndpoint(def('TOTAL_COUNT', { className }), input).value;
        // Naively: for each HPF, scan every point.
        const naive = input.hpfs.map(
          (h) => input.points.filter((p) => p.parentId === h.id && p.className === className).length,
        );
        expect(peak).toBe(Math.max(...naive));
        expect(meanCount).toBeCloseTo(naive.reduce((a, b) => a + b, 0) / naive.length, 12);
        expect(peak! >= meanCount!).toBe(true);
        expect(total! >= naive.reduce((a, b) => a + b, 0)).toBe(true);
        expect(total).toBe(input.points.filter((p) => p.className === className).length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('adjudicationFires', () => {
  const category = { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' as const };
  const diff = { endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE' as const, value: 5 };
  const r = (value: number | null, positive: boolean | null = value === null ? null : value >= 15) => ({
    value,
    positive,
  });

  it('CATEGORY_DISAGREES fires when the readings differ', () => {
    expect(adjudicationFires(category, [r(16), r(40)])).toBe(false);
    expect(adjudicationFires(category, [r(3), r(14)])).toBe(false);
    expect(adjudicationFires(category, [r(14), r(15)])).toBe(true);
    expect(adjudicationFires(category, [r(20), r(20), r(2)])).toBe(true);
  });

  it('ABS_DIFF_ABOVE fires when max − min is above the value, not at it', () => {
    expect(adjudicationFires(diff, [r(10), r(15)])).toBe(false);
    expect(adjudicationFires(diff, [r(10), r(15.5)])).toBe(true);
    expect(adjudicationFires(diff, [r(12), r(10), r(16)])).toBe(true);
    expect(adjudicationFires(diff, [r(12), r(10), r(14)])).toBe(false);
  });

  it('a null value among the readers fires either rule', () => {
    expect(adjudicationFires(category, [r(20), r(null)])).toBe(true);
    expect(adjudicationFires(diff, [r(null), r(10)])).toBe(true);
    expect(adjudicationFires(diff, [r(null), r(null)])).toBe(true);
    expect(adjudicationFires(category, [r(null), r(null)])).toBe(true);
  });

  it('fewer than two readings never fire', () => {
    expect(adjudicationFires(diff, [])).toBe(false);
    expect(adjudicationFires(category, [r(null)])).toBe(false);
  });
});

describe('finalOutcome', () => {
  const r = (value: number | null, positive: boolean | null) => ({ value, positive });

  it("is the readers' mean and common reading without adjudication", () => {
    expect(finalOutcome(pec, [r(16, true), r(21, true)], null)).toEqual({
      value: 18.5,
      positive: true,
      adjudicated: false,
    });
    expect(finalOutcome(pec, [r(1, false), r(2, false), r(4, false)], null)).toEqual({
      value: 7 / 3,
      positive: false,
      adjudicated: false,
    });
  });

  it('has no common reading where the readers differ or a value is null, and no mean with a null value', () => {
    expect(finalOutcome(pec, [r(14, false), r(16, true)], null)).toEqual({
      value: 15,
      positive: null,
      adjudicated: false,
    });
    expect(finalOutcome(pec, [r(20, true), r(null, null)], null)).toEqual({
      value: null,
      positive: null,
      adjudicated: false,
    });
    expect(finalOutcome(pec, [], null)).toEqual({ value: null, positive: null, adjudicated: false });
  });

  it('has no reading without a threshold', () => {
    expect(finalOutcome(def('TOTAL_COUNT'), [r(3, null), r(5, null)], null)).toEqual({
      value: 4,
      positive: null,
      adjudicated: false,
    });
  });

  it("is the adjudicator's where the case was adjudicated", () => {
    expect(finalOutcome(pec, [r(14, false), r(16, true)], r(17, true))).toEqual({
      value: 17,
      positive: true,
      adjudicated: true,
    });
    expect(finalOutcome(pec, [r(14, false), r(16, true)], r(null, null))).toEqual({
      value: null,
      positive: null,
      adjudicated: true,
    });
  });
});

describe('endpointUnit (the read-outcomes report’s Unit column)', () => {
  it('counts per HPF, cells, µm for the mean lengths, nothing for the ratio', () => {
    expect(Object.fromEntries(ENDPOINT_KINDS.map((kind) => [kind, endpointUnit(kind)]))).toEqual({
      PEAK_COUNT_PER_HPF: 'cells/HPF',
      MEAN_COUNT_PER_HPF: 'cells/HPF',
      TOTAL_COUNT: 'cells',
      VH_CD_RATIO: '',
      MEAN_VILLUS_HEIGHT_UM: 'µm',
      MEAN_CRYPT_DEPTH_UM: 'µm',
    });
  });
});
