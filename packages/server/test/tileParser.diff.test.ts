import http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTileHead } from '../src/modules/tiles/tileConnection.js';

/**
 * A differential test of the tile connections' request parser against Node's own (llhttp, through
 * a real http.Server): for every generated request head, either the tile parser declines it (the
 * connection is then handed to Node with the bytes untouched) or Node parses the very same request:
 * the same method, target, single Host, If-None-Match and Connection: close. Heads are generated
 * from the grammar of a tile request and mutated (odd bytes in names and values, duplicate or
 * missing Host, whitespace, obs-fold, bare LF, other methods and versions, bodies announced).
 */

interface NodeView {
  method: string;
  url: string;
  hosts: number;
  ifNoneMatch: string | undefined;
  close: boolean;
}

let server: http.Server;
let port: number;
const seen: NodeView[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const hosts = req.rawHeaders.filter((_v, i) => i % 2 === 0 && _v.toLowerCase() === 'host').length;
    const inm = req.rawHeaders.filter(
      (_v, i) => i % 2 === 1 && req.rawHeaders[i - 1]?.toLowerCase() === 'if-none-match',
    );
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      hosts,
      ifNoneMatch: inm.length > 0 ? inm.join(', ') : undefined,
      close: !req.headers.connection ? false : /(?:^|,)\s*close\s*(?:,|$)/i.test(req.headers.connection),
    });
    res.writeHead(204, { connection: 'close' });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** What Node makes of one request head (null: it refused it). */
function nodeParse(head: string): Promise<NodeView | null> {
  const before = seen.length;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () =>
      resolve(answer.startsWith('HTTP/1.1 204') && seen.length > before ? (seen[before] ?? null) : null),
    );
    socket.end(Buffer.from(`${head}\r\n\r\n`, 'latin1'));
  });
}

/** ASCII character sets, one character each. */
const chars = (set: string) => fc.constantFrom(...Array.from(set));
const tchar = chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~");
const byte = fc.integer({ min: 0, max: 255 }).map((b) => String.fromCharCode(b));
const token = fc.string({ unit: tchar, minLength: 1, maxLength: 12 });
const value = fc.oneof(
  { weight: 1, arbitrary: fc.constant('x') },
  { weight: 4, arbitrary: fc.string({ unit: chars(' \tabc"W/-=,*0123456789'), maxLength: 20 }) },
  fc.string({ unit: byte, maxLength: 8 }),
  fc.constantFrom('close', 'keep-alive', 'Close, upgrade', 'upgrade', '"abc", W/"d"', '*', ' x ', ''),
);
const target = fc.oneof(
  fc
    .tuple(fc.nat(9999), fc.nat(12), fc.nat(99), fc.nat(99), fc.string({ unit: tchar, maxLength: 30 }))
    .map(([id, z, x, y, t]) => `/tiles/${id}/${z}/${x}/${y}?t=${t}`),
  fc.string({ unit: byte, minLength: 1, maxLength: 20 }).map((s) => `/tiles/${s}`),
  fc.constantFrom('/tiles/', '/tiles/1/0/0/0', '/api/health', '*', 'http://h/tiles/1/0/0/0', '/tiles/1/0/0/0#x'),
);
const header = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('Host', 'host', 'HOST'), value) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('If-None-Match', 'if-none-match'), value) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('Connection', 'connection'), value) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom('Content-Length', 'Transfer-Encoding', 'Expect', 'Upgrade'), value),
  },
  { weight: 3, arbitrary: fc.tuple(token, value) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: byte, minLength: 1, maxLength: 6 }), value) },
);
const head = fc
  .record({
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('GET', 'HEAD') },
      fc.constantFrom('POST', 'get', 'OPTIONS'),
    ),
    target,
    version: fc.oneof(
      { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
      fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 '),
    ),
    headers: fc.array(header, { maxLength: 4 }),
    host: fc.oneof({ weight: 8, arbitrary: fc.constant(true) }, fc.constant(false)),
    separator: fc.constantFrom(': ', ':', ' : ', ':\t', ': ', ':  '),
    lineEnd: fc.oneof({ weight: 10, arbitrary: fc.constant('\r\n') }, fc.constantFrom('\n', '\r\n ')),
  })
  .map(({ method, target, version, headers, host, separator, lineEnd }) => {
    const lines = [`${method} ${target} ${version}`];
    if (host) lines.push('Host: tiles.test');
    for (const [name, v] of headers) lines.push(`${name}${separator}${v}`);
    return lines.join(lineEnd);
  });

describe('the tile request parser agrees with Node', () => {
  it('every head it accepts, Node parses to the same request (the rest go to Node untouched)', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(head, async (text) => {
        const ours = parseTileHead(text);
        if (ours === null) return;
        accepted += 1;
        const node = await nodeParse(text);
        expect(node, `Node refused a head the tile parser accepted: ${JSON.stringify(text)}`).not.toBeNull();
        expect({
          method: node!.method,
          url: node!.url,
          hosts: node!.hosts,
          ifNoneMatch: node!.ifNoneMatch,
          close: node!.close,
        }).toEqual({
          method: ours.head ? 'HEAD' : 'GET',
          url: ours.url,
          hosts: 1,
          ifNoneMatch: ours.ifNoneMatch,
          close: ours.close,
        });
      }),
      { numRuns: 1500, seed: 424242 },
    );
    // The generator reaches the accepting side often enough to mean something.
    expect(accepted).toBeGreaterThan(150);
  }, 60_000);
});
