import { describe, expect, it } from 'vitest';
import { formatDate, formatDay } from './formatDate';

const now = new Date(2025, 5, 15, 16, 30); // 15 Jun 2025, 4:30 p.m. local time

describe('formatDate (doc 1 §9)', () => {
  it('shows the time for a date today', () => {
    expect(formatDate(new Date(2025, 5, 15, 9, 5), now)).toBe('9:05 a.m.');
    expect(formatDate(new Date(2025, 5, 15, 15, 7), now)).toBe('3:07 p.m.');
  });

  it("shows 'MMM d' within the current year", () => {
    expect(formatDate(new Date(2025, 0, 5, 12), now)).toBe('Jan 5');
    expect(formatDate(new Date(2025, 5, 14, 23, 59), now)).toBe('Jun 14');
    expect(formatDate(new Date(2025, 11, 31), now)).toBe('Dec 31');
  });

  it("shows 'MMM d yyyy' for another year", () => {
    expect(formatDate(new Date(2024, 11, 31, 23, 59), now)).toBe('Dec 31 2024');
    expect(formatDate(new Date(2026, 1, 3), now)).toBe('Feb 3 2026');
  });

  it('reads ISO strings as instants in local time', () => {
    const iso = new Date(2023, 2, 9, 10).toISOString();
    expect(formatDate(iso, now)).toBe('Mar 9 2023');
  });

  it.each([null, undefined, '', 'not a date'])('shows a dash for %j', (value) => {
    expect(formatDate(value, now)).toBe('-');
  });
});

describe('formatDay (a date without a time)', () => {
  it("shows 'MMM d' this year — even today, never a time — and 'MMM d yyyy' otherwise", () => {
    expect(formatDay('2025-06-15', now)).toBe('Jun 15');
    expect(formatDay('2025-01-05', now)).toBe('Jan 5');
    expect(formatDay('2026-02-03', now)).toBe('Feb 3 2026');
  });

  it.each([null, undefined, '', 'soon'])('shows a dash for %j', (value) => {
    expect(formatDay(value, now)).toBe('-');
  });
});
