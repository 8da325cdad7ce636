/**
 * CSV as the exports write it (RFC 4180): comma-separated, CRLF line ends, a field quoted when it
 * holds a comma, a quote or a line break (quotes doubled). A text field that a spreadsheet could read
 * as a formula or a DDE call is prefixed with an apostrophe (OWASP's CSV-injection advice): one
 * starting with =, +, -, @, tab or carriage return, with the pipe | (DDE), or with the fullwidth
 * forms ＝ ＋ － ＠ ｜ (U+FF1D, U+FF0B, U+FF0D, U+FF20, U+FF5C), which spreadsheets in East Asian
 * locales turn into the ASCII ones (issue 26). Numbers are written as numbers. Every export writes
 * through csvField.
 */
export type CsvValue = string | number | boolean | null | undefined;

/** The byte-order mark that makes spreadsheet programs read the file as UTF-8. */
export const CSV_BOM = '\uFEFF';

const FORMULA_START = /^[=+\-@|\t\r\uFF1D\uFF0B\uFF0D\uFF20\uFF5C]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** DD-MMM-YYYY (doc 1 §9), in UTC: the date of exported file names. */
export function ddMmmYyyy(date: Date): string {
  const day = String(date.getUTCDate()).padStart(2, '0');
  return `${day}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()}`;
}
