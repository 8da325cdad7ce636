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
