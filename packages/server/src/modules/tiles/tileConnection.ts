import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { readTileRange, TruncatedTileError, type TileInFile } from './pyramidFile.js';
import { socketDescriptor, takeSocketReads, type NativeSendfile, type SocketReads } from './rawSocket.js';
import { answerLength, type TileAnswer, type TileHeaderTemplates, type TileResponder } from './tileHandler.js';

/**
 * Tile requests answered on the connection itself, before Node's HTTP server sees them.
 *
 * Node's `http` module costs far more per request than the tile work (request and response
 * objects, streams, events, timers per request): on a busy 2-core machine a bare `http` server
 * answering a fixed buffer spends ~70 µs of CPU per response, the same answer written by hand on
 * the socket ~30 µs, nginx ~23 µs (docs/BENCHMARKS.md). So each new connection starts here: its
 * requests are read as they arrive, and as long as they are plain `GET`/`HEAD /tiles/…` HTTP/1.1
 * requests without a body they are answered directly. At the first request that is anything else
 * (another path or method, HTTP/1.0, a body, `Expect`, `Upgrade`, no `Host`, a malformed or
 * oversized head …) the connection is handed to Node's HTTP server for good, with that request's
 * bytes put back in front of the stream: Node parses it (and everything after) exactly as if it
 * had read the connection from the start, and answers or refuses it as it always does. This
 * parser therefore only has to recognise the simple case; it never decides a framing question
 * (no bodies, no chunked encoding), so it cannot disagree with Node (or a proxy) about where a
 * request ends.
 *
 * While it answers tiles, a connection reads below the socket's stream and sends tiles it has read
 * once with sendfile(2) (rawSocket.ts; both fall back to the stream); at the hand-over its reads go
 * back to the stream.
 *
 * Where a connection goes at the hand-over is its owner's choice (`release`): Node's HTTP server of
 * this process, or, in the tile process, back to the process that serves the API (tileProcess.ts).
 * And when the owner has another process for tiles (`handOver`: the tile process beside `npm
 * start`'s API), a connection goes there at a tile request, its unanswered bytes with it.
 */

/** What a connection needs to answer tiles: the responder and the response heads. */
export interface RawTileServing {
  respond: TileResponder;
  heads: TileResponseHeads;
}

/** What the connections did, for operations and tests. */
export interface TileConnectionCounts {
  /** Tiles sent with sendfile(2). */
  sentFromFile: number;
  /** Of those, tiles whose end was written through the stream (the socket's buffer was full). */
  restWritten: number;
}

export interface TileConnectionOwner {
  /** Tiles are sent from their files with this, when given. */
  readonly sendfile: NativeSendfile | null;
  /** Reads go into one buffer below the socket's stream (when this Node allows it). */
  readonly socketReads: boolean;
  readonly counts: TileConnectionCounts;
  /** The current serving, or null once the server is closing (then connections are handed over). */
  readonly serving: RawTileServing | null;
  /** Idle connections close after this long (the server's keepAliveTimeout), ms. */
  readonly keepAliveMs: number;
  /**
   * The longest a request head may take to arrive, from its first byte (Node's headersTimeout):
   * the idle timer alone restarts with every byte, so a client sending one byte every few seconds
   * would hold the connection for ever.
   */
  readonly headersTimeoutMs: number;
  /** Another process that answers tile connections, when there is one (tileProcess.ts). */
  readonly handOver?: TileHandOver | null;
  forget(connection: TileConnection): void;
}

/**
 * Another process that answers tile connections (the tile process beside `npm start`'s API,
 * tileProcess.ts): a connection goes there at a tile request, with the bytes read and unanswered.
 */
export interface TileHandOver {
  /** Whether it takes connections now (started, answering, reachable). */
  accepting(): boolean;
  /** Takes the connection; `unread` starts with the head of the tile request to answer first. */
  take(socket: Socket, unread: string): void;
}

/**
 * Where a connection goes when it stops being a tile connection, with the bytes read and not
 * answered (latin1: one character per byte), the request that is not a tile request first.
 */
export type ReleaseConnection = (socket: Socket, unread: string) => void;

/**
 * The release to Node's HTTP server of this process (`toHttp`: its own 'connection' listener): the
 * unread bytes are put back in front of the socket's stream, so Node parses them exactly as if it
 * had read the connection from the start, then reads on.
 */
export function releaseToHttp(toHttp: (socket: Socket) => void): ReleaseConnection {
  return (socket, unread) => {
    socket.pause();
    if (unread.length > 0) socket.unshift(Buffer.from(unread, 'latin1'));
    toHttp(socket);
    socket.resume();
  };
}

/** Node's default limit on a request head (--max-http-header-size). */
const MAX_HEAD_BYTES = 16 * 1024;
/** Pipelined bytes kept while an answer is awaited, before the connection stops being read. */
const MAX_QUEUED_BYTES = 4 * MAX_HEAD_BYTES;
/** A request target: visible ASCII only. */
const TARGET = /^[\x21-\x7e]+$/;
/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value: no control characters other than HTAB (what Node accepts). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const CLOSE_TOKEN = /(?:^|,)[ \t]*close[ \t]*(?:,|$)/i;

interface TileHead {
  url: string;
  head: boolean;
  ifNoneMatch: string | undefined;
  close: boolean;
}

function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * A request head (request line and header lines, without the final empty line) this connection
 * answers itself, or null when Node's HTTP server should have it.
 */
export function parseTileHead(text: string): TileHead | null {
  const lineEnd = text.indexOf('\r\n');
  if (lineEnd === -1) return null; // no Host header
  let from: number;
  let head: boolean;
  if (text.startsWith('GET /tiles/')) {
    from = 4;
    head = false;
  } else if (text.startsWith('HEAD /tiles/')) {
    from = 5;
    head = true;
  } else {
    return null;
  }
  const space = text.indexOf(' ', from);
  if (space === -1 || space + 9 !== lineEnd || !text.startsWith(' HTTP/1.1', space)) return null;
  const url = text.slice(from, space);
  if (!TARGET.test(url)) return null;

  let hosts = 0;
  let ifNoneMatch: string | undefined;
  let close = false;
  let at = lineEnd + 2;
  while (at < text.length) {
    let end = text.indexOf('\r\n', at);
    if (end === -1) end = text.length;
    const colon = text.indexOf(':', at);
    if (colon <= at || colon >= end) return null;
    const name = text.slice(at, colon);
    const value = trimOws(text.slice(colon + 1, end));
    if (!TOKEN.test(name) || !FIELD_VALUE.test(value)) return null;
    switch (name.toLowerCase()) {
      case 'host':
        hosts++;
        break;
      case 'if-none-match':
        ifNoneMatch = ifNoneMatch === undefined ? value : `${ifNoneMatch}, ${value}`;
        break;
      case 'connection':
        if (/upgrade/i.test(value)) return null;
        if (CLOSE_TOKEN.test(value)) close = true;
        break;
      case 'content-length':
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
    }
    at = end + 2;
  }
  if (hosts !== 1) return null;
  return { url, head, ifNoneMatch, close };
}

/** A line feed not preceded by a carriage return: a head Node reads differently (or refuses). */
function hasBareLineFeed(text: string): boolean {
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (i === 0 || text.charCodeAt(i - 1) !== 13) return true;
  }
  return false;
}

function headerLines(pairs: readonly string[], from = 0): string {
  let text = '';
  for (let i = from; i + 1 < pairs.length; i += 2) text += `${pairs[i]}: ${pairs[i + 1]}\r\n`;
  return text;
}

/** The response heads as text, from the same templates as the `writeHead` path. */
export class TileResponseHeads {
  private readonly okStart: string;
  private readonly okEnd: string;
  private readonly notModifiedEnd: string;
  private readonly refusals: Record<403 | 404 | 500, string>;
  private readonly keepAlive: string;
  private second = -1;
  private date = '';
  /** The 200 head as bytes up to the Content-Length value. */
  private readonly okStartBytes: Buffer;
  /** The 200 head as bytes after the ETag line; made again when the date changes. */
  private okTails: { keepAlive: Buffer; close: Buffer } | null = null;

  constructor(templates: TileHeaderTemplates, keepAliveMs: number) {
    // ok = [Content-Type, image/jpeg, Content-Length, <n>, ETag, <etag>, …]
    this.okStart = `HTTP/1.1 200 OK\r\n${templates.ok[0]}: ${templates.ok[1]}\r\n${templates.ok[2]}: `;
    this.okEnd = headerLines(templates.ok, 6);
    // notModified = [ETag, <etag>, …]
    this.notModifiedEnd = headerLines(templates.notModified, 2);
    const refusal = (status: 403 | 404 | 500) =>
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${headerLines(templates.refusal[status])}`;
    this.refusals = { 403: refusal(403), 404: refusal(404), 500: refusal(500) };
    this.keepAlive = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n\r\n`;
    this.okStartBytes = Buffer.from(this.okStart, 'latin1');
  }

  /** The Date header's value, formatted once a second (as Node does). */
  private httpDate(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.date = new Date(now).toUTCString();
      this.okTails = null;
    }
    return this.date;
  }

  /** The head's last lines: the date, and whether the connection stays open. */
  private ending(close: boolean): string {
    return `Date: ${this.httpDate()}\r\n${close ? 'Connection: close\r\n\r\n' : this.keepAlive}`;
  }

  /**
   * The head of a 200 sent from the file, followed by the JPEG prefix, in one buffer: the fixed
   * parts are bytes made once (the part after the ETag once a second, with the date), only the
   * length and the ETag are written per tile.
   */
  fileHead(etag: string, tile: TileInFile, close: boolean): Buffer {
    this.httpDate(); // a new second clears the tails
    this.okTails ??= {
      keepAlive: Buffer.from(this.okEnd + this.ending(false), 'latin1'),
      close: Buffer.from(this.okEnd + this.ending(true), 'latin1'),
    };
    const tail = close ? this.okTails.close : this.okTails.keepAlive;
    const middle = `${tile.prefix.length + tile.length}\r\nETag: ${etag}\r\n`;
    const start = this.okStartBytes;
    const buffer = Buffer.allocUnsafe(start.length + middle.length + tail.length + tile.prefix.length);
    start.copy(buffer, 0);
    let at = start.length;
    at += buffer.write(middle, at, 'latin1');
    at += tail.copy(buffer, at);
    tile.prefix.copy(buffer, at);
    return buffer;
  }

  head(answer: TileAnswer, close: boolean): string {
    let text: string;
    if (answer.status === 200) {
      text = `${this.okStart}${answerLength(answer)}\r\nETag: ${answer.etag}\r\n${this.okEnd}`;
    } else if (answer.status === 304) {
      text = `HTTP/1.1 304 Not Modified\r\nETag: ${answer.etag}\r\n${this.notModifiedEnd}`;
    } else {
      text = this.refusals[answer.status];
    }
    return text + this.ending(close);
  }
}

/** One client connection while its requests are tile requests (see the top of this file). */
export class TileConnection {
  /** Bytes received and not yet answered, as latin1 text (one character per byte). */
  private pending = '';
  /** An answer is being prepared asynchronously (first tile of an image, or a pyramid on S3). */
  private busy = false;
  /** Waiting for the socket to drain before reading on. */
  private draining = false;
  /** The client has sent its last byte. */
  private ended = false;
  private done = false;
  /** The socket's descriptor when tiles are sent from their files with sendfile(2), else -1. */
  private readonly fd: number;
  /** The socket's reads taken from its stream (rawSocket.ts), or null: read through 'data'. */
  private readonly reads: SocketReads | null;
  /** Runs while a request head is incomplete (armed at its first partial read only). */
  private headTimer: NodeJS.Timeout | null = null;

  /**
   * @param release where the connection goes at the hand-over: Node's HTTP server of this process
   * (its own 'connection' listener, the bytes put back in front of the stream), or another process.
   */
  constructor(
    private readonly socket: Socket,
    private readonly owner: TileConnectionOwner,
    private readonly release: ReleaseConnection,
  ) {
    this.fd = owner.sendfile ? socketDescriptor(socket) : -1;
    socket.setTimeout(owner.keepAliveMs);
    this.reads = owner.socketReads ? takeSocketReads(socket, this.onBytes) : null;
    if (!this.reads) socket.on('data', this.onData);
    socket.on('timeout', this.onTimeout);
    socket.on('error', this.onError);
    socket.on('end', this.onEnd);
    socket.on('drain', this.onDrain);
    socket.on('close', this.onClose);
  }

  /**
   * Bytes another process read on this connection before passing it here (tileProcess.ts): they
   * are answered as if read here. Called once, after the owner has counted the connection.
   */
  receiveFirst(unread: string): void {
    if (unread.length > 0) this.receive(unread);
  }

  /** Server closing: an idle connection is closed now, a busy one after its answer. */
  closeWhenIdle(): void {
    this.ended = true;
    if (!this.busy && !this.draining) this.finish();
  }

  /** The shutdown's grace is over: the connection closes now, whatever it was doing. */
  destroy(): void {
    this.done = true;
    this.socket.destroy();
  }

  private readonly onBytes = (buffer: Buffer, length: number) => {
    this.receive(buffer.toString('latin1', 0, length));
  };

  private readonly onData = (chunk: Buffer) => {
    this.receive(chunk.toString('latin1'));
  };

  private receive(text: string): void {
    if (this.done) return; // answered 'Connection: close': the rest is ignored
    this.pending += text;
    // Waiting for an answer: requests sent behind it are kept, up to a bound, then reading stops.
    if (this.busy && this.pending.length > MAX_QUEUED_BYTES) this.socket.pause();
    this.processOrDrop();
  }

  private readonly onTimeout = () => {
    this.socket.destroy();
  };

  /** The head did not arrive in time: 408, as Node's HTTP server answers, and the connection ends. */
  private readonly onHeadTimeout = () => {
    this.headTimer = null;
    if (this.done) return;
    this.done = true;
    this.pending = '';
    this.socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', 'latin1');
    this.socket.destroySoon();
  };

  private clearHeadTimer(): void {
    if (this.headTimer) clearTimeout(this.headTimer);
    this.headTimer = null;
  }

  private readonly onError = () => {
    // 'close' follows; nothing to answer.
  };

  private readonly onEnd = () => {
    this.ended = true;
    this.processOrDrop();
  };

  private readonly onDrain = () => {
    if (!this.draining) return;
    this.draining = false;
    this.socket.resume();
    this.processOrDrop();
  };

  private readonly onClose = () => {
    this.done = true;
    this.clearHeadTimer();
    this.owner.forget(this);
  };

  /** The responder never throws; should anything else, the connection is dropped, not the process. */
  private processOrDrop(): void {
    try {
      this.process();
    } catch {
      this.done = true;
      this.socket.destroy();
    }
  }

  private process(): void {
    while (!this.busy && !this.draining && !this.done && this.pending.length > 0) {
      const end = this.pending.indexOf('\r\n\r\n');
      if (end === -1) {
        if (this.pending.length > MAX_HEAD_BYTES || hasBareLineFeed(this.pending)) {
          this.handOff();
          return;
        }
        this.headTimer ??= setTimeout(this.onHeadTimeout, this.owner.headersTimeoutMs);
        break; // the rest of the head is still to come
      }
      this.clearHeadTimer();
      const serving = this.owner.serving;
      const request = end <= MAX_HEAD_BYTES && serving ? parseTileHead(this.pending.slice(0, end)) : null;
      if (!request || !serving) {
        this.handOff();
        return;
      }
      // The tile process answers it (and the rest of the connection), when it takes connections now
      // and nothing written here is still queued on the socket.
      const handOver = this.owner.handOver;
      if (handOver && this.socket.writableLength === 0 && handOver.accepting()) {
        const unread = this.pending;
        this.detach();
        handOver.take(this.socket, unread);
        return;
      }
      const heads = serving.heads;
      this.pending = this.pending.slice(end + 4);
      const answer = serving.respond(request.url, request.ifNoneMatch, this.fd >= 0);
      if (answer instanceof Promise) {
        this.busy = true;
        void answer.then((settled) => {
          this.busy = false;
          if (this.done) return;
          if (!this.draining) this.socket.resume();
          try {
            this.send(heads, request, settled);
          } catch {
            this.socket.destroy();
            return;
          }
          this.processOrDrop();
        });
        return;
      }
      this.send(heads, request, answer);
    }
    // The client sent its last byte: close once the answers are out (an unfinished head is dropped).
    if (this.ended && !this.busy && !this.draining) this.finish();
  }

  private send(heads: TileResponseHeads, request: TileHead, answer: TileAnswer): void {
    const socket = this.socket;
    if (answer.file && !request.head) {
      this.sendFromFile(heads.fileHead(answer.etag, answer.file, request.close), answer.file);
    } else if (answer.body && !request.head) {
      const head = heads.head(answer, request.close);
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(answer.body);
      socket.uncork();
    } else {
      socket.write(heads.head(answer, request.close), 'latin1');
    }
    if (request.close) {
      this.ended = true;
      this.pending = '';
      this.finish();
    } else if (socket.writableNeedDrain) {
      this.draining = true;
      socket.pause();
    }
  }

  /**
   * The head (with the JPEG prefix), then the tile from its file: with sendfile(2) when nothing is
   * queued on the socket, and whatever that could not write (the socket's buffer is full) read and
   * written through the stream, which keeps it in order before anything written later and waits
   * for the drain.
   */
  private sendFromFile(head: Buffer, tile: TileInFile): void {
    const socket = this.socket;
    const { sendfile, counts } = this.owner;
    let written = 0;
    if (sendfile && socket.writableLength === 0) {
      written = sendfile.sendTile(this.fd, head, tile.fd, tile.offset, tile.length);
      if (written < 0) throw new Error(`sendfile failed (errno ${-written})`);
      counts.sentFromFile++;
      if (written === head.length + tile.length) return;
      counts.restWritten++;
    }
    const rest = Buffer.allocUnsafe(head.length + tile.length - written);
    const at = written < head.length ? head.copy(rest, 0, written) : 0;
    if (!readTileRange(tile, Math.max(0, written - head.length), rest, at)) {
      throw new TruncatedTileError(`Tile at ${tile.offset} is truncated`);
    }
    socket.write(rest);
  }

  /** No more requests: close our side once everything written has gone. */
  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.socket.end();
  }

  /**
   * Gives the connection up (`release`: Node's HTTP server, or the API's process), with the bytes
   * read and not answered; Node's HTTP server puts them back in front of the stream and reads them
   * before anything that arrives later (the flow resumes on the next tick, before the next read).
   */
  private handOff(): void {
    const unread = this.pending;
    this.detach();
    this.release(this.socket, unread);
  }

  /** This object lets the socket go: its listeners, timers and reads (given back to the stream). */
  private detach(): void {
    const socket = this.socket;
    this.done = true;
    this.clearHeadTimer(); // whoever has it next times the head from there (Node: its headersTimeout)
    this.owner.forget(this);
    if (this.reads) this.reads.release();
    else socket.removeListener('data', this.onData);
    socket.removeListener('timeout', this.onTimeout);
    socket.removeListener('error', this.onError);
    socket.removeListener('end', this.onEnd);
    socket.removeListener('drain', this.onDrain);
    socket.removeListener('close', this.onClose);
    socket.setTimeout(0);
    this.pending = '';
  }
}
