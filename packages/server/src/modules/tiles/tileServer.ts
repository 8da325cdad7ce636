import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { TilesConfig } from '../../platform/config.js';
import type { TileMetrics } from '../../platform/metrics/tileMetrics.js';
import { fastPathSelfTest, type FastPathNeeds } from './fastPathSelfTest.js';
import { nativeSendfile, takeHttpConnections, type NativeSendfile } from './rawSocket.js';
import {
  releaseToHttp,
  TileConnection,
  TileResponseHeads,
  type RawTileServing,
  type ReleaseConnection,
  type TileConnectionCounts,
  type TileConnectionOwner,
  type TileHandOver,
} from './tileConnection.js';
import type { RawHandler, TileHeaderTemplates, TileResponder } from './tileHandler.js';
import { TILES_PREFIX } from './tileRequest.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The tile fast path (when the tiles role runs): its modes and counts. */
    tileFastPath?: TileFastPath;
  }
}

/** Fastify's keepAliveTimeout (it sets it on the servers it makes itself). */
const KEEP_ALIVE_MS = 72_000;

/**
 * How tiles are answered ahead of Fastify. `connections`: plain tile requests are answered on the
 * connection (tileConnection.ts), the rest go through Node's HTTP server; `http`: every request
 * goes through Node's HTTP server, and tile requests then skip Fastify (the request listener).
 * TILE_HTTP=http chooses the second.
 */
export type TileFastPathMode = 'connections' | 'http';

/**
 * The settings the fast path reads (config.tiles), and whether its connections may move between
 * this process and a tile process (TILE_PROCESS=separate beside another role, or the tile process
 * itself: tileProcess.ts), which the self-test then checks too.
 */
export type TileFastPathSettings = Pick<TilesConfig, 'http' | 'send' | 'socketReads' | 'headersTimeoutSeconds'> & {
  passesConnections?: boolean;
};

/** The start-up self-test: null when every internal the fast path needs works, else what failed. */
export type FastPathCheck = (needs: FastPathNeeds) => Promise<string | null>;

/**
 * Where the HTTP server finds the tile handler: empty until the tiles role has registered its route
 * (a server without that role sends everything to Fastify), emptied again when the server closes.
 */
export class TileFastPath implements TileConnectionOwner {
  handler: RawHandler | null = null;
  serving: RawTileServing | null = null;
  readonly keepAliveMs = KEEP_ALIVE_MS;
  /** sendfile(2) for tiles (unless TILE_SEND=write, the native module is missing or the fast path is off). */
  readonly sendfile: NativeSendfile | null;
  /** Reads into one buffer below the socket's stream (unless TILE_SOCKET_READS=stream or the fast path is off). */
  readonly socketReads: boolean;
  /** The longest any request head may take from its first byte (HEADERS_TIMEOUT), ms. */
  readonly headersTimeoutMs: number;
  /** `connections` only when TILE_HTTP asks for it and the self-test passed (`start`). */
  readonly mode: TileFastPathMode;
  /**
   * Why tiles go through Node's HTTP server though TILE_HTTP=connections: what the start-up
   * self-test found missing or not working (one line), or null.
   */
  readonly offReason: string | null;
  readonly counts: TileConnectionCounts = { sentFromFile: 0, restWritten: 0 };
  /**
   * The tile process, when this process has one (`npm start`: tileProcess.ts): connections go
   * there at their tile requests while it takes them; null: tiles are answered here.
   */
  handOver: TileHandOver | null = null;
  private readonly connections = new Set<TileConnection>();
  /** Node's HTTP server of this process, with a connection's unread bytes put back (attach). */
  private toNodeHttp: ReleaseConnection | null = null;
  /** Connections the tile process gave back, now with Node's HTTP server (takeBack). */
  private readonly returned = new Set<Socket>();
  private returnedGone: (() => void)[] = [];
  private connectionsGone: (() => void)[] = [];

  /** `offReason`: the self-test's finding; the fast path is then off (mode `http`). */
  constructor(tiles: TileFastPathSettings, offReason: string | null = null) {
    this.offReason = offReason;
    this.mode = offReason === null ? tiles.http : 'http';
    const on = this.mode === 'connections';
    this.sendfile = on && tiles.send === 'sendfile' ? nativeSendfile : null;
    this.socketReads = on && tiles.socketReads === 'direct';
    this.headersTimeoutMs = tiles.headersTimeoutSeconds * 1000;
  }

  /**
   * The fast path of a process, decided at start. On only where it serves tiles (the tiles role)
   * with TILE_HTTP=connections, and only when the self-test (fastPathSelfTest.ts) found every Node
   * internal it will use present and behaving as expected — those of TILE_SEND and
   * TILE_SOCKET_READS as set; otherwise tiles go through Node's HTTP server, and `offReason` says
   * why (`report` logs it).
   */
  static async start(
    tiles: TileFastPathSettings,
    servesTiles: boolean,
    check: FastPathCheck = fastPathSelfTest,
  ): Promise<TileFastPath> {
    if (!servesTiles || tiles.http === 'http') return new TileFastPath({ ...tiles, http: 'http' });
    const needs: FastPathNeeds = {
      sendfile: tiles.send === 'sendfile' ? nativeSendfile : null,
      socketReads: tiles.socketReads === 'direct',
      passing: tiles.passesConnections === true,
    };
    return new TileFastPath(tiles, await check(needs));
  }

  /**
   * One line at start: how tiles are answered, and when the self-test turned the fast path off,
   * why (a warning); the metric lamina_tile_fast_path says the same (1 on, 0 off).
   */
  report(log: Pick<FastifyBaseLogger, 'info' | 'warn'>, metrics?: TileMetrics): void {
    if (metrics) metrics.fastPath = this.mode === 'connections' ? 1 : 0;
    if (this.offReason !== null) {
      log.warn(`tile fast path off: ${this.offReason} (tiles go through Node's HTTP server, as with TILE_HTTP=http)`);
    } else if (this.mode === 'connections') {
      const send = this.sendfile ? 'sendfile(2)' : 'writes through the stream';
      const reads = this.socketReads ? 'reads below the stream' : "reads through 'data'";
      log.info(`tile fast path on: tiles answered on the connections, ${send}, ${reads} (self-test passed)`);
    } else {
      log.info("tile fast path off: TILE_HTTP=http (tiles go through Node's HTTP server)");
    }
  }

  install(handler: RawHandler, respond: TileResponder, templates: TileHeaderTemplates): void {
    this.handler = handler;
    if (this.mode === 'connections') this.serving = { respond, heads: new TileResponseHeads(templates, KEEP_ALIVE_MS) };
  }

  /** Server closing: new requests go to Fastify (which answers 503), idle tile connections close. */
  stop(): void {
    this.handler = null;
    this.serving = null;
    this.handOver = null;
    for (const connection of [...this.connections]) connection.closeWhenIdle();
  }

  /** The shutdown's grace is over: every tile connection closes now (the tile process). */
  closeAll(): void {
    for (const connection of [...this.connections]) connection.destroy();
  }

  /**
   * A connection another process read first (the tile process gets `npm start`'s tile connections
   * this way; this process gets back one whose pass did not happen): a tile connection from here
   * on, its `unread` bytes answered first; `release` is where it goes at the hand-over. While the
   * server closes, it goes there at once.
   */
  adopt(socket: Socket, unread: string, release: ReleaseConnection = this.releaseHere): void {
    if (this.serving === null) {
      release(socket, unread);
      return;
    }
    const connection = new TileConnection(socket, this, release);
    this.connections.add(connection);
    socket.resume();
    connection.receiveFirst(unread);
  }

  /**
   * A connection the tile process gave back at a request that is not a plain tile request: Node's
   * HTTP server has it from here on, as at an in-process hand-over. Until it closes, the app's close
   * waits for it (`drained`): Node's server does not count a socket that came from another process.
   */
  takeBack(socket: Socket, unread: string): void {
    this.returned.add(socket);
    socket.once('close', () => {
      this.returned.delete(socket);
      if (this.returned.size === 0) for (const gone of this.returnedGone.splice(0)) gone();
    });
    this.releaseHere(socket, unread);
  }

  /**
   * Resolves once every connection the tile process gave back has closed (app.ts closes them once
   * idle while the server closes).
   */
  drained(): Promise<void> {
    if (this.returned.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.returnedGone.push(resolve));
  }

  /** Node's HTTP server of this process (attach), or, without one, the end of the connection. */
  private readonly releaseHere: ReleaseConnection = (socket, unread) => {
    if (this.toNodeHttp) this.toNodeHttp(socket, unread);
    else socket.destroy();
  };

  /** Open tile connections (for tests). */
  get openConnections(): number {
    return this.connections.size;
  }

  forget(connection: TileConnection): void {
    this.connections.delete(connection);
    if (this.connections.size === 0) for (const gone of this.connectionsGone.splice(0)) gone();
  }

  /** Resolves once no tile connection is open (the tile process's drain). */
  noConnections(): Promise<void> {
    if (this.connections.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.connectionsGone.push(resolve));
  }

  /**
   * Takes the server's connections: each starts as a tile connection while tiles are served, and
   * is handed to Node's HTTP server (its own 'connection' listener, called as it would have been)
   * otherwise or at its first request that is not a plain tile request.
   */
  attach(server: http.Server): void {
    takeHttpConnections(server, (socket, toHttp) => {
      this.toNodeHttp ??= releaseToHttp(toHttp);
      if (this.serving === null) toHttp(socket);
      else this.connections.add(new TileConnection(socket, this, this.releaseHere));
    });
  }
}

/**
 * How Node's HTTP server keeps a request head within `limitSeconds` of its first byte (issue 26):
 * Node compares a head's age with `headersTimeout` only every `connectionsCheckingInterval` (30 s
 * by default: a 60 s limit became up to 90 s, and more), so the check runs every second (a quarter
 * of the limit when that is shorter, at least 250 ms) and `headersTimeout` is the limit less one
 * check: the 408 goes out between the two, never after the limit. The tile connections time their
 * heads to the limit exactly (tileConnection.ts).
 */
export function headTimeouts(limitSeconds: number): { headersTimeoutMs: number; checkIntervalMs: number } {
  const limitMs = limitSeconds * 1000;
  const checkIntervalMs = Math.max(250, Math.min(1000, Math.floor(limitMs / 4)));
  return { headersTimeoutMs: Math.max(1, limitMs - checkIntervalMs), checkIntervalMs };
}

/**
 * The app's HTTP server (Fastify's `serverFactory`). In `connections` mode its connections start
 * as tile connections; requests that reach Node's HTTP server go to the tile handler when they are
 * GET or HEAD under `/tiles/` (and a handler is installed), everything else to Fastify. Keep-alive
 * as Fastify sets it on the server it makes itself; no limit on a whole request (uploads stream for
 * as long as they need), but a request head must arrive within HEADERS_TIMEOUT (headTimeouts).
 */
export function createAppServer(fastifyHandler: http.RequestListener, fastPath: TileFastPath): http.Server {
  const heads = headTimeouts(fastPath.headersTimeoutMs / 1000);
  const server = http.createServer({ connectionsCheckingInterval: heads.checkIntervalMs }, (req, res) => {
    const tiles = fastPath.handler;
    if (
      tiles !== null &&
      (req.method === 'GET' || req.method === 'HEAD') &&
      req.url !== undefined &&
      req.url.startsWith(TILES_PREFIX)
    ) {
      tiles(req, res);
    } else {
      fastifyHandler(req, res);
    }
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.requestTimeout = 0;
  server.headersTimeout = heads.headersTimeoutMs;
  server.setTimeout(0);
  if (fastPath.mode === 'connections') fastPath.attach(server);
  return server;
}
