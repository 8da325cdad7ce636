import fc from 'fast-check';

/**
 * Stand-in for a value nested thousands of levels deep: JSON.stringify is recursive, so the deep
 * text is spliced into the serialised body instead (see `serialiseBody`).
 */
export const DEEP = '\u2063deep-nesting\u2063';
const DEEP_LEVELS = 5000;

/** Strings that have broken servers: encoding edge cases, NUL, sizes, look-alike numbers, paths. */
export const evilString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfffy',
    '\udbff\udfff',
    'e\u0301\u0327\u0338',
    '😀',
    '病理.svs',
    'ø.tif',
    '\u202eevil.svs',
    '\r\nX-Injected: 1',
    '../../etc/passwd',
    '%00',
    '%ED%A0%80',
    '1e3',
    ' 12 ',
    '0x10',
    '-1',
    '0',
    '99999999999999999999',
    'NaN',
    'null',
    'true',
    '__proto__',
    "'; drop table users; --",
    '<script>alert(1)</script>',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 10 }),
  fc.constantFrom(200_000, 1_100_000).map((n) => 'x'.repeat(n)),
);

/** Numbers at the edges of every integer type the server touches. */
export const evilNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1.5,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    4294967295,
    2 ** 53 + 2,
    -(2 ** 53),
    1e308,
    -1e308,
    5e-324,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any value of another type than expected, or an edge of the expected one. */
export const evilValue: fc.Arbitrary<unknown> = fc.oneof(
  evilString,
  evilNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constant(DEEP),
  fc.array(evilString, { maxLength: 3 }),
  fc.dictionary(evilString, evilNumber, { maxKeys: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
);

type Path = (string | number)[];

function pathsOf(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...path, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...path, key], out);
  return out;
}

function setAt(value: unknown, path: Path, replacement: unknown, remove = false): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Path];
  if (Array.isArray(value)) {
    const copy = [...(value as unknown[])];
    if (remove && rest.length === 0) copy.splice(Number(head), 1);
    else copy[Number(head)] = setAt(copy[Number(head)], rest, replacement, remove);
    return copy;
  }
  const source = value as Record<string, unknown>;
  if (remove && rest.length === 0) return Object.fromEntries(Object.entries(source).filter(([key]) => key !== head));
  return { ...source, [head]: setAt(source[head], rest, replacement, remove) };
}

/**
 * A valid value left alone, or mutated once or twice: a node replaced by an evil value, a key
 * dropped, an unknown key added (including `__proto__` and `constructor`).
 */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const once = (v: unknown): fc.Arbitrary<unknown> => {
    const paths = pathsOf(v);
    return fc.oneof(
      fc.record({ at: fc.constantFrom(...paths), to: evilValue }).map(({ at, to }) => setAt(v, at, to)),
      fc.constantFrom(...paths).map((at) => (at.length === 0 ? undefined : setAt(v, at, undefined, true))),
      fc
        .record({
          key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'isSystemAdmin', 'id', 'extra'), evilString),
          to: evilValue,
        })
        .map(({ key, to }) =>
          v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...v, [key]: to } : { [key]: to },
        ),
    );
  };
  return valid.chain((v) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(v) },
      { weight: 5, arbitrary: once(v) },
      { weight: 2, arbitrary: once(v).chain(once) },
    ),
  );
}

/** JSON text of a body, with the deep-nesting stand-in expanded. */
export function serialiseBody(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replaceAll(JSON.stringify(DEEP), '['.repeat(DEEP_LEVELS) + ']'.repeat(DEEP_LEVELS));
}

/** Percent-encodes for a URL, lone surrogates included (as the invalid UTF-8 an attacker would send). */
export function percentEncode(text: string): string {
  // At once when it can be (the cases include 1 MB strings); code point by code point only around
  // a lone surrogate, which encodeURIComponent refuses.
  try {
    return encodeURIComponent(text);
  } catch {
    // below
  }
  let out = '';
  for (const ch of text) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      // A lone surrogate: its three-byte form, which is not valid UTF-8.
      const code = ch.charCodeAt(0);
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    }
  }
  return out;
}

/** A query string from a generated object: arrays repeat the key, objects go as JSON. */
export function queryString(value: unknown): string {
  if (value === undefined) return '';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return percentEncode(serialiseBody(value));
  const parts: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const items = Array.isArray(item) ? item : [item];
    for (const one of items) {
      if (one === undefined) continue;
      const text = typeof one === 'object' && one !== null ? serialiseBody(one) : String(one);
      parts.push(`${percentEncode(key)}=${percentEncode(text === DEEP ? '[[[[' : text)}`);
    }
  }
  return parts.join('&');
}
