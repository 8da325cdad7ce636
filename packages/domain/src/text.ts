/**
 * The one rule for text the API accepts: well-formed Unicode without NUL. PostgreSQL's text cannot
 * hold NUL (SQLSTATE 22021), and a lone surrogate cannot be written as UTF-8 at all (drivers write
 * U+FFFD instead), so either would be stored as something other than what was sent — or not at all.
 * The server applies `findInvalidText` to every parsed request input before the route's schema
 * (platform/http/inputText.ts); forms may use `isValidText` to say the same thing earlier.
 */
export const TEXT_MESSAGES = {
  invalidCharacters: 'Text contains invalid characters',
  tooDeep: 'The request is nested too deeply',
} as const;

/** Deepest nesting of objects and arrays a request may carry (no API shape comes near it). */
export const MAX_INPUT_DEPTH = 32;

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

export function isValidText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/**
 * The text as PostgreSQL stores it: lone surrogates become U+FFFD (as the UTF-8 encoders of both
 * drivers write them) and NUL, which text cannot hold, becomes U+FFFD too. Identity for valid text.
 */
export function asStoredText(text: string): string {
  if (isValidText(text)) return text;
  return text.replace(LONE_SURROGATES, '\uFFFD').replaceAll('\u0000', '\uFFFD');
}

function isPlainContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return true;
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export interface InvalidInput {
  /** Where in the input: 'username', 'fileNames.2', 'value.name' … ('' for the input itself). */
  path: string;
  message: string;
}

/**
 * The first string (value or object key) in a parsed JSON value or query that breaks the text rule,
 * or nesting deeper than `maxDepth`; null when the input is clean. Iterative, so no input can
 * exhaust the stack.
 */
export function findInvalidText(input: unknown, maxDepth = MAX_INPUT_DEPTH): InvalidInput | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: input, path: '', depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path, depth } = next;
    if (typeof value === 'string') {
      if (!isValidText(value)) return { path, message: TEXT_MESSAGES.invalidCharacters };
      continue;
    }
    if (!isPlainContainer(value)) continue; // numbers, booleans, null; Buffers and streams of raw bodies
    if (depth >= maxDepth) return { path, message: TEXT_MESSAGES.tooDeep };
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((item, i) => [String(i), item])
      : Object.entries(value);
    for (const [key] of entries) {
      if (!isValidText(key)) return { path: path ? `${path}.${key}` : key, message: TEXT_MESSAGES.invalidCharacters };
    }
    // Reversed onto the stack, so the first offending value in document order is the one reported.
    for (const [key, item] of entries.reverse()) {
      stack.push({ value: item, path: path ? `${path}.${key}` : key, depth: depth + 1 });
    }
  }
  return null;
}
