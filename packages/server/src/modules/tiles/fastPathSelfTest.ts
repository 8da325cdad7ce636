import { closeSync, openSync, readSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  readStopProblem,
  socketDescriptor,
  socketReadsProblem,
  takeHttpConnections,
  type NativeSendfile,
} from './rawSocket.js';
import { releaseToHttp, TileConnection, TileResponseHeads, type TileConnectionOwner } from './tileConnection.js';
import { tileHeaderTemplates, type TileAnswer, type TileResponder } from './tileHandler.js';

/**
 * The tile fast path's start-up self-test. The fast path reaches below Node's public API
 * (rawSocket.ts; docs/ARCHITECTURE.md, "The tile fast path: Node internals it uses"), so a Node
 * upgrade could take away or change what it relies on. Before a process answers tiles on its
 * connections, this runs the fast path's own code — takeHttpConnections, a TileConnection with
 * its reads below the stream and sendfile(2), the hand-over to Node's HTTP server — on one
 * loopback connection to a throw-away server on 127.0.0.1, and compares every answer with what
 * it must be. Anything missing, different, thrown or late makes it return one line naming what
 * failed; the caller (TileFastPath.start) then leaves tiles to Node's HTTP server and logs it.
 *
 * The conversation (one client connection):
 * 1. A tile request, read below the stream (no 'data' listener on the socket) and answered on the
 *    connection from a file with sendfile(2): the head, a prefix and this module's first bytes.
 * 2. A tile request and a POST whose body is cut short, in one packet: the tile is answered on the
 *    connection, the POST hands the connection to Node's own 'connection' listener.
 * 3. The rest of that body and a GET, in a later packet: Node reads them after the hand-over and
 *    answers both, in order.
 */

/** What the fast path of this process would use, so what the self-test must check. */
export interface FastPathNeeds {
  /** The native sendfile module the connections would send tiles with (null: through the stream). */
  sendfile: NativeSendfile | null;
  /** Reads below the socket's stream (TILE_SOCKET_READS=direct). */
  socketReads: boolean;
  /**
   * Connections passed between this process and its tile process (TILE_PROCESS=separate,
   * tileProcess.ts): their reads are stopped below the stream first (rawSocket.ts stopReads).
   */
  passing?: boolean;
}

const HOST = 'self-test';
const ETAG = '"self-test"';
const PREFIX = Buffer.from('lamina tile fast path self-test\n');
/** Bytes sent with sendfile(2): the start of this module's own file (always there, never changed). */
const SOURCE_FILE = fileURLToPath(import.meta.url);
const SOURCE_BYTES = 1024;

class SelfTestFailure extends Error {}

interface Answer {
  status: number;
  body: Buffer;
}

/** Reads HTTP/1.1 responses with a Content-Length off the client side of the connection. */
class ResponseReader {
  private received = Buffer.alloc(0);
  private readonly answers: Answer[] = [];
  private wake: (() => void) | null = null;
  private closed = false;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.parse();
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  private parse(): void {
    for (;;) {
      const end = this.received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = this.received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (this.received.length < end + 4 + length) return;
      const status = Number(head.slice(9, 12));
      this.answers.push({ status, body: Buffer.from(this.received.subarray(end + 4, end + 4 + length)) });
      this.received = this.received.subarray(end + 4 + length);
    }
  }

  /** The next `count` answers (the self-test's deadline ends the wait). */
  async next(count: number, step: string): Promise<Answer[]> {
    while (this.answers.length < count) {
      if (this.closed)
        throw new SelfTestFailure(`${step}: the connection closed after ${this.answers.length} of ${count} answers`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return this.answers.splice(0, count);
  }
}

function expectAnswer(step: string, answer: Answer | undefined, status: number, body: Buffer | string): void {
  const expected = typeof body === 'string' ? Buffer.from(body) : body;
  if (!answer) throw new SelfTestFailure(`${step}: no answer`);
  if (answer.status !== status || !answer.body.equals(expected)) {
    const shown = (b: Buffer) => JSON.stringify(b.subarray(0, 60).toString('latin1'));
    throw new SelfTestFailure(
      `${step}: expected ${status} ${shown(expected)} (${expected.length} bytes), got ${answer.status} ${shown(answer.body)} (${answer.body.length} bytes)`,
    );
  }
}

/** What Node's HTTP server answers in the self-test: the request as it parsed it. */
function answerAsNode(req: http.IncomingMessage, res: http.ServerResponse): void {
  let body = '';
  req.setEncoding('latin1');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    const text = `node ${req.method ?? ''} ${req.url ?? ''} ${body}`;
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  });
}

const get = (url: string) => `GET ${url} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;

/** Resolves once `server` listens on a free port of 127.0.0.1. */
function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * Runs the self-test for what the fast path needs: null when everything worked as the fast path
 * expects, else one line naming what did not (within `timeoutMs`, else that it did not finish).
 */
export async function fastPathSelfTest(needs: FastPathNeeds, timeoutMs = 5000): Promise<string | null> {
  let step = 'start';
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  const cleanup: (() => void)[] = [];
  const run = async (): Promise<void> => {
    step = "take http.Server's 'connection' listener";
    const server = http.createServer(answerAsNode);
    cleanup.push(() => {
      server.close();
      server.closeAllConnections();
    });
    const file = needs.sendfile ? openSync(SOURCE_FILE, 'r') : -1;
    if (file >= 0) cleanup.push(() => closeSync(file));
    const fileBytes = Buffer.alloc(SOURCE_BYTES);
    fileBytes.fill(0x2e); // bytes that differ from the file's, should sendfile send nothing
    const fileLength = file >= 0 ? readSync(file, fileBytes, 0, SOURCE_BYTES, 0) : SOURCE_BYTES;
    const expectedFileAnswer = Buffer.concat([PREFIX, fileBytes.subarray(0, fileLength)]);

    /** Set by the tile requests: the server-side socket as the responder saw it. */
    const seen = { inFile: false, dataListeners: -1 };
    let accepted: Socket | null = null;
    const respond: TileResponder = (url, _ifNoneMatch, inFile): TileAnswer => {
      if (url !== '/tiles/self-test/file') return { status: 200, etag: ETAG, body: Buffer.from(`tile ${url}`) };
      seen.inFile = inFile;
      seen.dataListeners = accepted?.listenerCount('data') ?? -1;
      if (inFile) {
        return {
          status: 200,
          etag: ETAG,
          body: null,
          file: { fd: file, offset: 0, length: fileLength, prefix: PREFIX },
        };
      }
      return { status: 200, etag: ETAG, body: expectedFileAnswer };
    };
    const owner: TileConnectionOwner = {
      sendfile: needs.sendfile,
      socketReads: needs.socketReads,
      counts: { sentFromFile: 0, restWritten: 0 },
      serving: { respond, heads: new TileResponseHeads(tileHeaderTemplates([]), timeoutMs) },
      keepAliveMs: timeoutMs,
      headersTimeoutMs: timeoutMs,
      forget() {},
    };
    let inspected: (problem: string | null) => void = () => {};
    const inspection = new Promise<string | null>((resolve) => (inspected = resolve));
    takeHttpConnections(server, (socket, toHttp) => new TileConnection(socket, owner, releaseToHttp(toHttp)));
    // Ahead of the fast path's own listener: look at the accepted socket before it is touched.
    server.prependListener('connection', (socket: Socket) => {
      accepted = socket;
      let problem = needs.socketReads ? socketReadsProblem(socket) : null;
      if (problem === null && needs.sendfile && socketDescriptor(socket) < 0) {
        problem = 'net.Socket._handle.fd missing (no descriptor for sendfile(2))';
      }
      if (problem === null && needs.passing) problem = readStopProblem(socket);
      inspected(problem);
    });

    step = 'listen on 127.0.0.1';
    const port = await listen(server);
    if (finished) return; // timed out meanwhile: the cleanup has run, the server must not stay open
    step = 'connect to 127.0.0.1';
    const client = net.connect(port, '127.0.0.1');
    cleanup.push(() => client.destroy());
    client.on('error', () => {}); // seen as a close or a missing answer
    const reader = new ResponseReader(client);
    step = 'inspect the accepted socket';
    const problem = await inspection;
    if (problem !== null) throw new SelfTestFailure(problem);

    step = needs.socketReads
      ? 'a tile request read below the stream (net.Socket._handle.useUserBuffer, kBuffer, kBufferCb), answered on the connection'
      : "a tile request read through 'data', answered on the connection";
    if (needs.sendfile) step += ' with sendfile(2)';
    client.write(get('/tiles/self-test/file'));
    const [fromFile] = await reader.next(1, step);
    expectAnswer(step, fromFile, 200, expectedFileAnswer);
    if (needs.socketReads && seen.dataListeners !== 0) {
      throw new SelfTestFailure(`${step}: the socket was read through 'data' (${seen.dataListeners} listeners)`);
    }
    if (needs.sendfile && (!seen.inFile || owner.counts.sentFromFile !== 1)) {
      throw new SelfTestFailure(`${step}: the tile was not sent with sendfile(2) (net.Socket._handle.fd)`);
    }

    step =
      "a tile answered on the connection, then the hand-over to Node's HTTP server (its own 'connection' listener)";
    client.write(
      `${get('/tiles/self-test/second')}POST /self-test HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 4\r\n\r\nab`,
    );
    const [second] = await reader.next(1, step);
    expectAnswer(step, second, 200, 'tile /tiles/self-test/second');

    step = "Node's HTTP server reading the later packets of a connection handed over";
    client.write(`cd${get('/self-test/after')}`);
    const [posted, after] = await reader.next(2, step);
    expectAnswer(step, posted, 200, 'node POST /self-test abcd');
    expectAnswer(step, after, 200, 'node GET /self-test/after ');
  };
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new SelfTestFailure(`${step}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([run(), deadline]);
    return null;
  } catch (error) {
    if (error instanceof SelfTestFailure) return error.message;
    return `${step}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    finished = true;
    clearTimeout(timer);
    for (const done of cleanup.reverse()) {
      try {
        done();
      } catch {
        // already closed
      }
    }
  }
}
