import type { EndpointAgreement, EndpointDefinition } from '@lamina/domain';
import { blandAltman, cohenKappa, fleissKappa, icc21, percentAgreement } from './agreementStatistics.js';

/** One primary reader's frozen value of one endpoint on one case. */
export interface PrimaryReading {
  caseId: number;
  readerId: number;
  value: number | null;
  positive: boolean | null;
}

/**
 * One endpoint's frozen primary values as the query groups them (outcomeQueries.studyPrimaryReadings:
 * four aligned arrays, one reading per index) — cheaper to read than a row per value at 10^4 cases.
 */
export function primaryReadingsOf(grouped: {
  case_ids: readonly number[];
  reader_ids: readonly number[];
  values: readonly (number | null)[];
  positives: readonly (boolean | null)[];
}): PrimaryReading[] {
  return grouped.case_ids.map((caseId, i) => ({
    caseId,
    readerId: grouped.reader_ids[i] ?? 0,
    value: grouped.values[i] ?? null,
    positive: grouped.positives[i] ?? null,
  }));
}

/** The count that occurs most often (ties: the larger), or 0 for none. */
function commonestCount(counts: readonly number[]): number {
  const seen = new Map<number, number>();
  for (const c of counts) seen.set(c, (seen.get(c) ?? 0) + 1);
  let best = 0;
  let bestTimes = 0;
  for (const [count, times] of seen) {
    if (times > bestTimes || (times === bestTimes && count > best)) [best, bestTimes] = [count, times];
  }
  return best;
}

/**
 * The cases that enter an endpoint's statistics (the one rule for the figures and for the charts'
 * pairs): of the cases with at least two primary reads (`cases` counts them), those read by the
 * commonest number of readers k, in the order of the cases' ids, each case's readings in the order of
 * the readers' ids (reader slots, as a two-way model needs columns).
 */
export function agreementCases(readings: readonly PrimaryReading[]): {
  cases: number;
  k: number;
  slots: PrimaryReading[][];
} {
  const byCase = new Map<number, PrimaryReading[]>();
  for (const r of readings) {
    // Appended in place: a copy per reading would be quadratic in a study's 10^4 cases.
    const rows = byCase.get(r.caseId);
    if (rows) rows.push(r);
    else byCase.set(r.caseId, [r]);
  }
  // Cases in id order, so the same readings give the same figures to the last bit.
  const read = [...byCase.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, rows]) => rows)
    .filter((rows) => rows.length >= 2)
    .map((rows) => [...rows].sort((a, b) => a.readerId - b.readerId));
  const k = commonestCount(read.map((rows) => rows.length));
  return { cases: read.length, k, slots: read.filter((rows) => rows.length === k) };
}

/**
 * The Bland–Altman pairs of one endpoint, for the Reads tab's charts: where k = 2, each case of
 * `agreementCases` whose two readers both have a value, `a` the reader with the smaller id — the
 * values the agreement's mean difference and limits are computed from (first slot minus second).
 * Empty for any other k.
 */
export function agreementPairs(readings: readonly PrimaryReading[]): { caseId: number; a: number; b: number }[] {
  const { k, slots } = agreementCases(readings);
  if (k !== 2) return [];
  const pairs: { caseId: number; a: number; b: number }[] = [];
  for (const [first, second] of slots) {
    if (first?.value == null || second?.value == null) continue;
    pairs.push({ caseId: first.caseId, a: first.value, b: second.value });
  }
  return pairs;
}

/**
 * The agreement of one endpoint (docs/OUTCOMES.md, Agreement). Cases with at least two primary
 * reads count; the statistics take the cases read by the commonest number of readers k, each case's
 * readings in the order of the readers' ids (reader slots, as a two-way model needs columns), the
 * cases in the order of theirs, and —
 * listwise — only cases where every reading has a value (ICC(2,1), Bland–Altman when k = 2) or a
 * category (Cohen's kappa when k = 2, Fleiss' otherwise; percent agreement). Pure: the readings come
 * from the caller.
 */
export function endpointAgreement(
  definition: EndpointDefinition,
  readings: readonly PrimaryReading[],
): EndpointAgreement {
  const { cases, k, slots } = agreementCases(readings);
  const values = slots
    .filter((rows) => rows.every((r) => r.value !== null))
    .map((rows) => rows.map((r) => r.value ?? 0));
  const categories = slots
    .filter((rows) => rows.every((r) => r.positive !== null))
    .map((rows) => rows.map((r) => r.positive ?? false));
  const icc = icc21(values);
  const pairs =
    k === 2
      ? blandAltman(
          values.map((row) => row[0] ?? 0),
          values.map((row) => row[1] ?? 0),
        )
      : null;
  const kappa =
    k === 2
      ? cohenKappa(
          categories.map((row) => row[0] ?? false),
          categories.map((row) => row[1] ?? false),
        )
      : fleissKappa(categories);
  return {
    endpointKey: definition.key,
    label: definition.label,
    cases,
    readers: k,
    valuedCases: values.length,
    categorisedCases: categories.length,
    icc: icc.icc,
    iccLower95: icc.lower95,
    iccUpper95: icc.upper95,
    kappa,
    kappaKind: kappa === null ? null : k === 2 ? 'COHEN' : 'FLEISS',
    percentAgreement: percentAgreement(categories),
    meanDifference: pairs?.meanDifference ?? null,
    loaLower: pairs?.loaLower ?? null,
    loaUpper: pairs?.loaUpper ?? null,
  };
}
