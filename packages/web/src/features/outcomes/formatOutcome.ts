/** What a missing value or figure shows. */
export const NO_VALUE = '—';

const twoDecimals = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2, useGrouping: false });

/**
 * A value or figure for display: at most 2 decimals (16 → '16', 10/3 → '3.33'), never in the data
 * (the server keeps values unrounded); null → '—'.
 */
export function formatOutcome(value: number | null | undefined): string {
  if (value === null || value === undefined) return NO_VALUE;
  const text = twoDecimals.format(value);
  // -0.001 rounds to '-0'.
  return text === '-0' ? '0' : text;
}

/** A share 0–1 as a percentage with at most 1 decimal: 0.7 → '70 %'. */
export function formatPercent(share: number | null): string {
  if (share === null) return NO_VALUE;
  return `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 }).format(share * 100)} %`;
}

/**
 * A round axis for the values: the smallest step of 1, 2, 2.5 or 5 times a power of ten that cuts
 * their span in at most five, the domain widened to whole steps (so a few more ticks at most), and
 * its ticks. Every value — the identity line's ends, the limits of agreement — lies inside it.
 */
export function niceAxis(values: readonly number[]): { domain: [number, number]; ticks: number[] } {
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (low === high) [low, high] = [low - 1, high + 1];
  const magnitude = 10 ** Math.floor(Math.log10((high - low) / 5));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => (high - low) / s <= 5) ?? 10 * magnitude;
  const clean = (x: number) => Number(x.toFixed(10));
  const from = clean(Math.floor(low / step) * step);
  const to = clean(Math.ceil(high / step) * step);
  const ticks: number[] = [];
  for (let x = from; x <= to + step / 2; x += step) ticks.push(clean(x));
  return { domain: [from, to], ticks };
}
