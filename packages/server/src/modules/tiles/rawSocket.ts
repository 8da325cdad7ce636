import { existsSync } from 'node:fs';
import type http from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Every Node internal the tile fast path touches is reached from this file (docs/ARCHITECTURE.md,
 * "The tile fast path: Node internals it uses"): the HTTP server's own 'connection' listener
 * (takeHttpConnections), the socket's libuv handle (`_handle`: its `fd` for sendfile(2), its
 * `useUserBuffer`, its `readStop` before a connection moves to another process) and the socket's
 * private read symbols (kBuffer, kBufferCb, kBufferGen). The start-up self-test
 * (fastPathSelfTest.ts) checks each before a process uses any of them.
 *
 * What the tile connections take from below Node's socket streams: the native sendfile path and
 * reads into one buffer. Both fall back to the streams when unavailable.
 *
 * The native sendfile path of the tile connections (packages/server/native/sendfile): the response
 * head and JPEG prefix with one send(2), the tile's bytes straight from the pyramid file with
 * sendfile(2), as nginx serves static files. Writing through Node's stream costs a copy of every
 * tile into a buffer and a libuv write request per response; this costs two system calls
 * (docs/BENCHMARKS.md: about a third more tiles per second).
 *
 * Loaded once; null when the module was not built (no compiler, not Linux), and the connections
 * then write every answer through the socket's stream (as they do with TILE_SEND=write).
 */
export interface NativeSendfile {
  /**
   * Bytes written (head first, then `length` bytes of the file from `offset`); fewer when the
   * socket's buffer filled up; negative (-errno) on an error.
   */
  sendTile(socketFd: number, head: Buffer, fileFd: number, offset: number, length: number): number;
}

const MODULE_PATH = fileURLToPath(
  new URL('../../../native/sendfile/build/Release/lamina_sendfile.node', import.meta.url),
);

function load(): NativeSendfile | null {
  if (process.platform !== 'linux' || !existsSync(MODULE_PATH)) return null;
  try {
    return createRequire(import.meta.url)(MODULE_PATH) as NativeSendfile;
  } catch {
    return null;
  }
}

export const nativeSendfile: NativeSendfile | null = load();

/**
 * The descriptor under a plain TCP socket (Node keeps it on the socket's libuv handle), or -1 for
 * anything else (a TLS socket, a pipe, a closed socket): those are written through the stream.
 */
export function socketDescriptor(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  const encrypted = (socket as { encrypted?: boolean }).encrypted === true;
  return typeof fd === 'number' && fd >= 0 && !encrypted ? fd : -1;
}

/** Node's private keys of a socket's user-buffer reads (net.js: kBuffer, kBufferCb, kBufferGen). */
interface ReadKeys {
  buffer: symbol;
  callback: symbol;
  generator: symbol;
}

const READ_KEY_NAMES = { buffer: 'kBuffer', callback: 'kBufferCb', generator: 'kBufferGen' } as const;

/** The read keys on this socket, found by their descriptions, or the name of the first missing one. */
function readKeysOf(socket: Socket): ReadKeys | string {
  const symbols = Object.getOwnPropertySymbols(socket);
  const find = (name: string) => symbols.find((s) => s.description === name);
  const buffer = find(READ_KEY_NAMES.buffer);
  const callback = find(READ_KEY_NAMES.callback);
  const generator = find(READ_KEY_NAMES.generator);
  if (!buffer) return READ_KEY_NAMES.buffer;
  if (!callback) return READ_KEY_NAMES.callback;
  if (!generator) return READ_KEY_NAMES.generator;
  return { buffer, callback, generator };
}

let readKeys: ReadKeys | null | undefined;

/** The read keys, looked up on the first socket and kept (they are the same for every socket). */
function findReadKeys(socket: Socket): ReadKeys | null {
  if (readKeys !== undefined) return readKeys;
  const keys = readKeysOf(socket);
  readKeys = typeof keys === 'string' ? null : keys;
  return readKeys;
}

/**
 * Why reads below the stream cannot be taken on this socket (what is missing or not as expected,
 * in one line), or null when everything takeSocketReads uses is there. The self-test's first check.
 */
export function socketReadsProblem(socket: Socket): string | null {
  const handle = (socket as unknown as { _handle?: { useUserBuffer?: unknown } | null })._handle;
  if (!handle || typeof handle !== 'object') return 'net.Socket._handle missing';
  if (typeof handle.useUserBuffer !== 'function') return 'net.Socket._handle.useUserBuffer missing';
  const keys = readKeysOf(socket);
  if (typeof keys === 'string') return `net.Socket private symbol ${keys} missing`;
  const fields = socket as unknown as Record<symbol, unknown>;
  for (const [key, name] of [
    [keys.buffer, READ_KEY_NAMES.buffer],
    [keys.generator, READ_KEY_NAMES.generator],
  ] as const) {
    if (fields[key] !== null) return `net.Socket[${name}] is not null on an accepted socket`;
  }
  return null;
}

/** Reads into a caller's buffer: the bytes are valid only during the call. */
export type SocketBytes = (buffer: Buffer, length: number) => void;

export interface SocketReads {
  /**
   * Gives the socket's reads back to its stream: from now on every read is copied and pushed into
   * the socket as a readable stream, as Node does by itself ('data', pipe, Node's HTTP server).
   */
  release(): void;
}

const READ_BUFFER_BYTES = 64 * 1024;

/**
 * The socket's reads delivered straight to `onBytes`, in one buffer reused for every read, without
 * the readable stream (Node's `onread` option of `net.Socket`, which sockets accepted by a server
 * cannot be given): per read no Buffer is allocated, nothing is pushed through the stream's
 * buffering, no 'data' event and no `process.nextTick` — about 10 µs of a tile's CPU
 * (docs/BENCHMARKS.md). 'end', 'error', 'close', timeouts, pause() and resume() work as usual.
 *
 * It uses Node's own machinery for `onread` (the socket's kBuffer/kBufferCb and the handle's
 * useUserBuffer), found by their names: null when this Node does not have them, and the caller
 * then reads through 'data' events (as it does with TILE_SOCKET_READS=stream).
 */
export function takeSocketReads(socket: Socket, onBytes: SocketBytes): SocketReads | null {
  const handle = (socket as unknown as { _handle?: { useUserBuffer?: unknown } | null })._handle;
  const keys = findReadKeys(socket);
  if (!keys || !handle || typeof handle.useUserBuffer !== 'function') return null;
  const fields = socket as unknown as Record<symbol, unknown>;
  if (fields[keys.buffer] !== null || fields[keys.generator] !== null) return null;
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  (handle.useUserBuffer as (b: Buffer) => void).call(handle, buffer);
  fields[keys.buffer] = buffer;
  fields[keys.callback] = (length: number, into: Buffer) => {
    onBytes(into, length);
  };
  return {
    release() {
      fields[keys.callback] = (length: number, into: Buffer) => socket.push(Buffer.from(into.subarray(0, length)));
    },
  };
}

/** Gives a socket to Node's HTTP server: its own 'connection' listener, called as Node would. */
export type ToHttp = (socket: Socket) => void;

/**
 * Takes the HTTP server's connections: Node's own 'connection' listener (http.Server's
 * connectionListener, which sets up its parser on the socket) is removed, and every new socket
 * goes to `onConnection` with that listener, to call when (if ever) Node's HTTP server should have
 * the connection — at once, or later after some of its bytes were read and put back with
 * `unshift` (Node then parses them as if it had read them itself). Throws unless the server has
 * exactly that one listener.
 */
export function takeHttpConnections(server: http.Server, onConnection: (socket: Socket, toHttp: ToHttp) => void): void {
  const listeners = server.listeners('connection') as ((this: http.Server, socket: Socket) => void)[];
  const [listener] = listeners;
  if (!listener || listeners.length !== 1) {
    throw new Error(`http.Server has ${listeners.length} 'connection' listeners, not Node's own one`);
  }
  server.removeListener('connection', listener);
  const toHttp: ToHttp = (socket) => listener.call(server, socket);
  server.on('connection', (socket: Socket) => onConnection(socket, toHttp));
}

/** Why reads cannot be stopped below the stream on this socket (stopReads), or null. */
export function readStopProblem(socket: Socket): string | null {
  const handle = (socket as unknown as { _handle?: { readStop?: unknown } | null })._handle;
  if (!handle || typeof handle !== 'object') return 'net.Socket._handle missing';
  if (typeof handle.readStop !== 'function') return 'net.Socket._handle.readStop missing';
  return null;
}

/**
 * Stops the socket's reads for good, before its descriptor goes to another process
 * (tileProcess.ts): the handle stops reading at once, so no byte the client sends later is read
 * here (Node's handle passing does not stop it, and what this process read after the hand-over
 * would be lost); returns the bytes the socket's stream had read and not delivered (reads through
 * 'data' only: below the stream nothing is kept), which go to the other process with the rest.
 */
export function stopReads(socket: Socket): Buffer {
  socket.pause();
  const chunks: Buffer[] = [];
  while (socket.readableLength > 0) {
    const chunk = socket.read() as Buffer | string | null;
    if (chunk === null) break;
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
  }
  // read() may have asked the handle to read again: stopped after it, before any read can happen.
  const handle = (socket as unknown as { _handle?: { reading?: boolean; readStop?: () => number } | null })._handle;
  if (handle && typeof handle.readStop === 'function') {
    handle.reading = false;
    handle.readStop();
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/**
 * Readies a socket for `child.send(message, socket)` (tileProcess.ts): its reads stopped
 * (stopReads; what its stream held is returned, to send along), and its `server` cleared. Node's
 * handle passing treats a socket with a `server` as cluster does — it counts the connection as the
 * receiving process's from then on and, when the server closes, takes that process's word for
 * all of them: the server's close would then no longer wait for its own connections. Without it the
 * sender keeps counting the socket until it destroys the (then empty) socket object.
 */
export function passSocket(socket: Socket): Buffer {
  const unread = stopReads(socket);
  (socket as unknown as { server: unknown }).server = null;
  return unread;
}
