import type { Socket } from 'node:net';
import pino from 'pino';
import { loadConfig } from '../../platform/config.js';
import { IMAGE_SECURITY_HEADERS } from '../../platform/http/securityHeaders.js';
import { TileMetrics } from '../../platform/metrics/tileMetrics.js';
import { createStorage } from '../../platform/storage/createStorage.js';
import type { LiveSessionRow, PyramidRow, TileRows } from '../../platform/tiles/tileRows.js';
import { TileTokens } from '../../platform/tiles/tileToken.js';
import { passSocket } from './rawSocket.js';
import type { ReleaseConnection } from './tileConnection.js';
import type { FromTileProcess, ToTileProcess } from './tileProcessMessages.js';
import { TileFastPath } from './tileServer.js';
import { createTileService } from './tileService.js';

/**
 * The tile process (started by tileProcess.ts; entry src/tileProcessMain.ts): a tile host without
 * a port of its own. It answers the connections its parent passes it, as a dedicated tile host
 * (ROLES=tiles) answers its own: on the connection, blocking reads of local pyramids (TILE_READS's
 * default for a process with the tiles role alone), sendfile(2). It never opens the database: the
 * image rows and live sessions come from the parent over IPC (`ask`). A connection whose next
 * request is not a plain tile request goes back to the parent with its unanswered bytes.
 *
 * SIGTERM or SIGINT (the parent stopping it, or Ctrl-C reaching the whole process group): it drains
 * as a server does — idle connections close, a busy one after its answer, a request that is not a
 * tile request goes back to the parent (which answers 503 while it closes) — and exits 0, at the
 * latest when SHUTDOWN_GRACE is over. When the parent is gone (its IPC channel closed), likewise.
 */

/** A database read the parent has not answered within this long fails (the responder refuses or logs). */
const ASK_TIMEOUT_MS = 10_000;

export async function runTileProcess(): Promise<void> {
  if (!process.send) throw new Error('the tile process is started by the server (tileProcess.ts), with an IPC channel');
  const toParent = (message: FromTileProcess, socket?: Socket, sent?: (error: Error | null) => void): void => {
    if (!process.connected) {
      sent?.(new Error('the parent process is gone'));
      return;
    }
    process.send?.(message, socket, undefined, sent ?? (() => {}));
  };
  const config = loadConfig();
  const log = pino({ level: config.logLevel }).child({ role: 'tiles' });
  const parent = new ParentRows(toParent);
  const metrics = config.metrics.port === null ? null : new TileMetrics();
  const tiles = createTileService({
    rows: parent,
    storage: createStorage(config),
    tileTokens: new TileTokens(config.sessionSecret),
    securityHeaders: IMAGE_SECURITY_HEADERS,
    log,
    localReads: config.tiles.reads,
    accessRefreshSeconds: config.tiles.accessRefreshSeconds,
    rangeCacheBytes: config.tiles.cacheBytes,
    metrics: metrics ?? undefined,
  });
  const fastPath = await TileFastPath.start({ ...config.tiles, passesConnections: true }, true);
  if (fastPath.mode !== 'connections') {
    toParent({ t: 'unavailable', reason: `its tile fast path is off (${fastPath.offReason ?? 'TILE_HTTP=http'})` });
    process.disconnect();
    return;
  }
  fastPath.report(log, metrics ?? undefined);

  /** Connections on their way back to the parent: the process exits only once they have gone. */
  let passing = 0;
  const passed: (() => void)[] = [];
  const giveBack: ReleaseConnection = (socket, unread) => {
    const bytes = unread + passSocket(socket).toString('latin1');
    passing += 1;
    toParent({ t: 'back', unread: bytes }, socket, () => {
      // Sent (the socket object has no descriptor left) or not (the parent is gone): closed here.
      socket.destroy();
      passing -= 1;
      if (passing === 0) for (const done of passed.splice(0)) done();
    });
  };

  process.on('message', (message: ToTileProcess, socket?: Socket) => {
    switch (message.t) {
      case 'connection':
        if (socket) fastPath.adopt(socket, message.unread, giveBack);
        return;
      case 'rows':
        parent.settle(message);
        return;
      case 'metrics':
        toParent({ t: 'metrics', id: message.id, snapshot: metrics?.snapshot() ?? null });
        return;
    }
  });

  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${why}: the tile process stops (grace ${config.shutdownGraceSeconds} s)`);
    const cutOff = setTimeout(() => {
      log.warn('shutdown grace over: closing the tile connections still open');
      fastPath.closeAll();
    }, config.shutdownGraceSeconds * 1000);
    cutOff.unref();
    fastPath.stop();
    await fastPath.noConnections();
    if (passing > 0) await new Promise<void>((resolve) => passed.push(resolve));
    clearTimeout(cutOff);
    tiles.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('disconnect', () => void stop('the server process is gone'));

  fastPath.install(tiles.handler, tiles.respond, tiles.templates);
  await tiles.start();
  const send = fastPath.sendfile ? 'sendfile(2)' : 'writes through the stream';
  toParent({ t: 'ready', how: `TILE_READS=${config.tiles.reads}, ${send}` });
}

/** The database reads of the tile server, asked of the parent (which owns the database). */
class ParentRows implements TileRows {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(rows: unknown): void; reject(error: Error): void }>();

  constructor(private readonly toParent: (message: FromTileProcess) => void) {}

  image(imageId: number): Promise<PyramidRow | undefined> {
    return this.ask<PyramidRow | null>((id) => ({ t: 'image', id, imageId })).then((row) => row ?? undefined);
  }

  liveSessions(ref?: string): Promise<LiveSessionRow[]> {
    return this.ask<LiveSessionRow[]>((id) => (ref === undefined ? { t: 'sessions', id } : { t: 'sessions', id, ref }));
  }

  settle(message: ToTileProcess & { t: 'rows' }): void {
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    if (message.error !== undefined) waiting.reject(new Error(`the server process could not read: ${message.error}`));
    else waiting.resolve(message.rows ?? null);
  }

  private ask<T>(message: (id: number) => FromTileProcess): Promise<T> {
    if (!process.connected) return Promise.reject(new Error('the server process is gone'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the server process did not answer within ${ASK_TIMEOUT_MS} ms`));
      }, ASK_TIMEOUT_MS);
      this.waiting.set(id, {
        resolve: (rows) => {
          clearTimeout(timer);
          resolve(rows as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.toParent(message(id));
    });
  }
}
