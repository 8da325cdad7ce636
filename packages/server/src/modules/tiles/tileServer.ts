import http from 'node:http';
import type { TilesConfig } from '../../platform/config.js';
import type { Socket } from 'node:net';
import { nativeSendfile, type NativeSendfile } from './rawSocket.js';
import {
  TileConnection,
  TileResponseHeads,
  type RawTileServing,
  type TileConnectionCounts,
  type TileConnectionOwner,
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
 * Where the HTTP server finds the tile handler: empty until the tiles role has registered its route
 * (a server without that role sends everything to Fastify), emptied again when the server closes.
 */
export class TileFastPath implements TileConnectionOwner {
  handler: RawHandler | null = null;
  serving: RawTileServing | null = null;
  readonly keepAliveMs = KEEP_ALIVE_MS;
  /** sendfile(2) for tiles (unless TILE_SEND=write or the native module is missing). */
  readonly sendfile: NativeSendfile | null;
  /** Reads into one buffer below the socket's stream (unless TILE_SOCKET_READS=stream). */
  readonly socketReads: boolean;
  /** The longest a tile connection may take to send one request head (as Node's headersTimeout). */
  readonly headersTimeoutMs: number;
  readonly mode: TileFastPathMode;
  readonly counts: TileConnectionCounts = { sentFromFile: 0, restWritten: 0 };
  private readonly connections = new Set<TileConnection>();

  constructor(tiles: Pick<TilesConfig, 'http' | 'send' | 'socketReads' | 'headersTimeoutSeconds'>) {
    this.mode = tiles.http;
    this.sendfile = tiles.send === 'write' ? null : nativeSendfile;
    this.socketReads = tiles.socketReads === 'direct';
    this.headersTimeoutMs = tiles.headersTimeoutSeconds * 1000;
  }

  install(handler: RawHandler, respond: TileResponder, templates: TileHeaderTemplates): void {
    this.handler = handler;
    if (this.mode === 'connections') this.serving = { respond, heads: new TileResponseHeads(templates, KEEP_ALIVE_MS) };
  }

  /** Server closing: new requests go to Fastify (which answers 503), idle tile connections close. */
  stop(): void {
    this.handler = null;
    this.serving = null;
    for (const connection of [...this.connections]) connection.closeWhenIdle();
  }

  /** Open tile connections (for tests). */
  get openConnections(): number {
    return this.connections.size;
  }

  forget(connection: TileConnection): void {
    this.connections.delete(connection);
  }

  /**
   * Takes the server's connections: each starts as a tile connection while tiles are served, and
   * is handed to Node's HTTP server (its own 'connection' listener, called as it would have been)
   * otherwise or at its first request that is not a plain tile request.
   */
  attach(server: http.Server): void {
    const [listener] = server.listeners('connection') as ((this: http.Server, socket: Socket) => void)[];
    if (!listener) throw new Error('the HTTP server has no connection listener');
    server.removeListener('connection', listener);
    const toHttp = (socket: Socket) => listener.call(server, socket);
    server.on('connection', (socket: Socket) => {
      if (this.serving === null) toHttp(socket);
      else this.connections.add(new TileConnection(socket, this, toHttp));
    });
  }
}

/**
 * The app's HTTP server (Fastify's `serverFactory`). In `connections` mode its connections start
 * as tile connections; requests that reach Node's HTTP server go to the tile handler when they are
 * GET or HEAD under `/tiles/` (and a handler is installed), everything else to Fastify. Timeouts
 * as Fastify sets them on the server it makes itself.
 */
export function createAppServer(fastifyHandler: http.RequestListener, fastPath: TileFastPath): http.Server {
  const server = http.createServer((req, res) => {
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
  server.setTimeout(0);
  if (fastPath.mode === 'connections') fastPath.attach(server);
  return server;
}
