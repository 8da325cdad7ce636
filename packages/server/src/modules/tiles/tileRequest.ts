/**
 * Parsing a tile request's URL by hand: `/tiles/{imageId}/{z}/{x}/{y}?t={token}[&stack={n}]`.
 * No URL object, no query-string object, no regular expression: this runs for every tile.
 */

/** What a tile URL asks for; numbers are -1 when the text is not 1–9 decimal digits. */
export interface TileRequest {
  imageId: number;
  z: number;
  x: number;
  y: number;
  /** 0 when the query names no plane. */
  stack: number;
  token: string | undefined;
}

export const TILES_PREFIX = '/tiles/';

/** The decimal number in `text[start, end)` (1–9 ASCII digits), else -1. */
function digits(text: string, start: number, end: number): number {
  const length = end - start;
  if (length < 1 || length > 9) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** A query value as a query-string parser gives it: '+' is a space, %XX decoded; undefined if malformed. */
function queryValue(text: string): string | undefined {
  if (text.indexOf('%') === -1 && text.indexOf('+') === -1) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * The parts of a tile URL, or null when the path is not `/tiles/` followed by exactly four
 * non-empty segments (a request no tile route matches: 404). The first `t` and `stack` of the
 * query count; other parameters are ignored.
 */
export function parseTileUrl(url: string): TileRequest | null {
  if (!url.startsWith(TILES_PREFIX)) return null;
  const queryAt = url.indexOf('?');
  const pathEnd = queryAt === -1 ? url.length : queryAt;
  const s0 = TILES_PREFIX.length;
  const e0 = url.indexOf('/', s0);
  if (e0 === -1 || e0 >= pathEnd) return null;
  const e1 = url.indexOf('/', e0 + 1);
  if (e1 === -1 || e1 >= pathEnd) return null;
  const e2 = url.indexOf('/', e1 + 1);
  if (e2 === -1 || e2 >= pathEnd) return null;
  const e3 = url.indexOf('/', e2 + 1);
  if (e3 !== -1 && e3 < pathEnd) return null;
  if (e0 === s0 || e1 === e0 + 1 || e2 === e1 + 1 || pathEnd === e2 + 1) return null;

  let token: string | undefined;
  let stackText: string | undefined;
  if (queryAt !== -1) {
    let at = queryAt + 1;
    while (at < url.length) {
      let end = url.indexOf('&', at);
      if (end === -1) end = url.length;
      const eq = url.indexOf('=', at);
      if (eq !== -1 && eq < end) {
        const keyLength = eq - at;
        if (keyLength === 1 && token === undefined && url.charCodeAt(at) === 116 /* t */) {
          token = queryValue(url.slice(eq + 1, end)) ?? '';
        } else if (keyLength === 5 && stackText === undefined && url.startsWith('stack', at)) {
          stackText = queryValue(url.slice(eq + 1, end)) ?? '';
        }
      }
      at = end + 1;
    }
  }

  return {
    imageId: digits(url, s0, e0),
    z: digits(url, e0 + 1, e1),
    x: digits(url, e1 + 1, e2),
    y: digits(url, e2 + 1, pathEnd),
    stack: stackText === undefined ? 0 : digits(stackText, 0, stackText.length),
    token,
  };
}
