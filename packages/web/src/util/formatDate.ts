/** Locale of every date the app shows (doc 1 §9). */
export const DATE_LOCALE = 'en-CA';

const timeFormat = new Intl.DateTimeFormat(DATE_LOCALE, { hour: 'numeric', minute: '2-digit' });
const dayFormat = new Intl.DateTimeFormat(DATE_LOCALE, { month: 'short', day: 'numeric', year: 'numeric' });

function sameDay(a: Date, b: Date): boolean {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/**
 * Dates of lists (doc 1 §9): the time when it is today, 'MMM d' within the current year, otherwise
 * 'MMM d yyyy'; a dash when missing or unreadable. Local time, locale en-CA.
 */
export function formatDate(value: string | Date | null | undefined, now: Date = new Date()): string {
  if (value === null || value === undefined || value === '') return '-';
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '-';
  if (sameDay(date, now)) return timeFormat.format(date);
  const parts = dayFormat.formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const monthDay = `${part('month')} ${part('day')}`;
  return date.getFullYear() === now.getFullYear() ? monthDay : `${monthDay} ${part('year')}`;
}

const longDayFormat = new Intl.DateTimeFormat('en-US', { month: 'long', day: 'numeric', year: 'numeric' });
const longTimeFormat = new Intl.DateTimeFormat('en-US', {
  hour: 'numeric',
  minute: '2-digit',
  hour12: true,
  timeZoneName: 'short',
});

function toDate(value: string | Date | null | undefined): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * Dates of the image and case lists (doc 2 §9): long month, day and year ('March 4, 2020'), with
 * the time in 12-hour format and the time zone for a tooltip ('5:06 AM UTC'); dashes when missing.
 */
export function formatLongDate(value: string | Date | null | undefined): { date: string; time: string } {
  const date = toDate(value);
  if (!date) return { date: '-', time: '' };
  return { date: longDayFormat.format(date), time: longTimeFormat.format(date) };
}

/**
 * A calendar date without a time (YYYY-MM-DD, e.g. a query's follow-up date) by the list rule:
 * 'MMM d' within the current year, otherwise 'MMM d yyyy' — never a time, as the date has none.
 */
export function formatDay(value: string | null | undefined, now: Date = new Date()): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(value ?? '');
  if (!match) return '-';
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  const parts = dayFormat.formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const monthDay = `${part('month')} ${part('day')}`;
  return date.getFullYear() === now.getFullYear() ? monthDay : `${monthDay} ${part('year')}`;
}
