import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../platform/config.js';
import type { TileMetrics, TileMetricsSnapshot } from '../../platform/metrics/tileMetrics.js';
import type { LiveSessionRow, PyramidRow, TileRows } from '../../platform/tiles/tileRows.js';
import { passSocket, socketDescriptor } from './rawSocket.js';
import type { TileHandOver } from './tileConnection.js';
import type { FromTileProcess, ToTileProcess } from './tileProcessMessages.js';
import type { TileFastPath } from './tileServer.js';

/**
 * The tile process of `npm start` (issue 28): a process with the tiles role beside another (all
 * three by default) answers its tile connections in a child process of its own, on the same port.
 *
 * Why: a process that serves the API must not block its event loop, so it reads pyramids through
 * libuv's thread pool (TILE_READS=async), at about 0.4 of nginx's tiles a second; a dedicated tile
 * host reads them with blocking `pread`s and sends them with sendfile(2), at about 0.9. The child
 * is such a tile host: its blocking reads block nobody else.
 *
 * How (docs/ARCHITECTURE.md, "The tile process"): this process still accepts every connection, and
 * each starts as a tile connection here (tileConnection.ts). At a plain tile request it stops
 * reading the socket and passes its descriptor to the child over the IPC channel (Node's handle
 * passing, as `cluster` does), with the request's bytes; the child answers that request and the
 * connection's next tile requests itself. At the first request that is not a plain tile request the
 * child stops reading and passes the connection back with the unanswered bytes, and Node's HTTP
 * server of this process takes it as at an in-process hand-over (tileServer.ts takeBack): so a
 * keep-alive connection may carry tiles, then a POST, then tiles, and nothing is lost or repeated.
 *
 * The child reads the database only through this process (`rows`: an image's pyramid row, the live
 * sessions for token revocation), so it works beside the embedded PGlite, which one process owns.
 * Its log lines go to this process's stdout (JSON lines with `"role":"tiles"`). Its tile counters
 * join this process's at each scrape of METRICS_PORT. While it is not ready, or after it ended (it
 * is started again, 1 s later, then doubling up to 30 s), connections stay here and tiles are
 * answered in this process as before; the log says so and lamina_tile_process is 0.
 */

/** The child's entry (src/tileProcessMain.ts). */
const ENTRY = fileURLToPath(new URL('../../tileProcessMain.ts', import.meta.url));

/** Whether a process with this configuration runs a tile process (when its tile fast path is on). */
export function usesTileProcess(config: Pick<Config, 'roles' | 'tiles'>): boolean {
  return config.tiles.process === 'separate' && config.roles.has('tiles') && config.roles.size > 1;
}

export interface TileProcessLog {
  info(message: string): void;
  warn(message: string): void;
  error(object: object, message: string): void;
}

export interface TileProcessOptions {
  /** This process's tile fast path: connections come from it and go back to it. */
  fastPath: TileFastPath;
  /** How the child's database reads are answered. */
  rows: TileRows;
  log: TileProcessLog;
  /** This process's tile metrics: the child's state and counters are reported with them. */
  metrics: TileMetrics;
  /** The child's environment (ROLES=tiles, the session secret). */
  env: NodeJS.ProcessEnv;
  /** The child's SHUTDOWN_GRACE: how long `stop` waits for it before killing it (plus 10 s). */
  graceMs: number;
  /** Before starting an ended child again: the first delay, doubled up to `maxMs`. */
  restartDelay?: { firstMs: number; maxMs: number };
  /** Where the child's output goes (this process's stdout and stderr). */
  stdout?: Writable;
  stderr?: Writable;
}

/** A child that ran this long before it ended is started again after the first delay. */
const STEADY_MS = 60_000;
/** A scrape does not wait longer than this for the child's counters. */
const METRICS_WAIT_MS = 1000;

export class TileProcess implements TileHandOver {
  private child: ChildProcess | null = null;
  private ready = false;
  /** The child found the fast path off: it is not started again. */
  private unavailable = false;
  private stopping = false;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private restartDelayMs: number;
  /** Connections passed and not yet confirmed sent, with their bytes (rescued if the child ends). */
  private readonly inTransit = new Map<Socket, string>();
  private readonly metricsAsked = new Map<number, (snapshot: TileMetricsSnapshot | null) => void>();
  private nextId = 1;
  private readonly exitWaiters: (() => void)[] = [];
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: TileProcessOptions) {
    this.firstDelayMs = options.restartDelay?.firstMs ?? 1000;
    this.maxDelayMs = options.restartDelay?.maxMs ?? 30_000;
    this.restartDelayMs = this.firstDelayMs;
  }

  /** The child's process id while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the child; connections go to it once it says it is ready. */
  start(): void {
    const { fastPath, metrics } = this.options;
    fastPath.handOver = this;
    metrics.tileProcess.read = () => this.readMetrics();
    this.spawn();
  }

  accepting(): boolean {
    return this.ready && this.child?.connected === true;
  }

  take(socket: Socket, unread: string): void {
    const child = this.child;
    if (!child) {
      this.options.fastPath.adopt(socket, unread);
      return;
    }
    const bytes = unread + passSocket(socket).toString('latin1');
    this.inTransit.set(socket, bytes);
    const message: ToTileProcess = { t: 'connection', unread: bytes };
    child.send(message, socket, (error) => {
      if (!this.inTransit.delete(socket)) return; // rescued when the child ended
      if (error) this.rescue(socket, bytes);
      // Sent: this process's socket object has no descriptor left; destroying it only lets the
      // server count one connection fewer (Node's handle passing leaves that to the sender here).
      else socket.destroy();
    });
  }

  /**
   * Stops the child (SIGTERM: it drains as a server does, within its SHUTDOWN_GRACE) and resolves
   * once it has exited; killed if it has not within that grace and 10 s.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.ready = false;
    this.options.metrics.tileProcess.serving = 0;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.exitWaiters.push(resolve));
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), this.options.graceMs + 10_000);
    kill.unref();
    await exited;
    clearTimeout(kill);
  }

  private spawn(): void {
    const { log } = this.options;
    this.startedAt = Date.now();
    // The child runs from source through the same loader as this process (tsx), without a debugger port.
    const child = fork(ENTRY, [], {
      env: this.options.env,
      execArgv: process.execArgv.filter((arg) => !arg.startsWith('--inspect')),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    this.child = child;
    if (child.stdout) this.forward(child.stdout, this.options.stdout ?? process.stdout);
    if (child.stderr) this.forward(child.stderr, this.options.stderr ?? process.stderr);
    child.on('message', (message: FromTileProcess, socket?: Socket) => this.onMessage(child, message, socket));
    child.on('error', (error) => log.error({ err: error }, 'tile process: IPC or start failed'));
    child.on('exit', (code, signal) => this.onExit(child, code, signal));
    log.info(`tile process started (pid ${String(child.pid)})`);
  }

  /** The child's lines: its pino JSON lines (with "role":"tiles") as they are, anything else marked. */
  private forward(from: Readable, to: Writable): void {
    createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
      to.write(line.startsWith('{') ? `${line}\n` : `[tiles] ${line}\n`);
    });
  }

  private onMessage(child: ChildProcess, message: FromTileProcess, socket: Socket | undefined): void {
    const { log, fastPath, rows, metrics } = this.options;
    switch (message.t) {
      case 'ready':
        if (this.stopping || child !== this.child) return;
        this.ready = true;
        metrics.tileProcess.serving = 1;
        log.info(
          `tile process ready (pid ${String(child.pid)}): new tile connections are answered there; ${message.how}`,
        );
        return;
      case 'unavailable':
        this.unavailable = true;
        log.warn(`tile process not used: ${message.reason}; tiles are answered in this process`);
        return;
      case 'back':
        if (socket) fastPath.takeBack(socket, message.unread);
        return;
      case 'image':
        this.answer(
          child,
          message.id,
          rows.image(message.imageId).then((row) => row ?? null),
        );
        return;
      case 'sessions':
        this.answer(child, message.id, rows.liveSessions(message.ref));
        return;
      case 'metrics':
        this.metricsAsked.get(message.id)?.(message.snapshot);
        this.metricsAsked.delete(message.id);
        return;
    }
  }

  private answer(child: ChildProcess, id: number, read: Promise<PyramidRow | LiveSessionRow[] | null>): void {
    read.then(
      (rows) => this.send(child, { t: 'rows', id, rows }),
      (error: unknown) =>
        this.send(child, { t: 'rows', id, error: error instanceof Error ? error.message : String(error) }),
    );
  }

  private send(child: ChildProcess, message: ToTileProcess): void {
    if (child.connected)
      child.send(message, (error) => error && this.options.log.warn(`tile process: ${error.message}`));
  }

  /** The child's tile counters, or null (no child ready, or no answer within a second). */
  private readMetrics(): Promise<TileMetricsSnapshot | null> {
    const child = this.child;
    if (!child || !this.ready || !child.connected) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.metricsAsked.delete(id);
        resolve(null);
      }, METRICS_WAIT_MS);
      this.metricsAsked.set(id, (snapshot) => {
        clearTimeout(timer);
        resolve(snapshot);
      });
      this.send(child, { t: 'metrics', id });
    });
  }

  /** A connection that did not reach the child: answered here, or closed if its descriptor went. */
  private rescue(socket: Socket, unread: string): void {
    if (socketDescriptor(socket) >= 0) this.options.fastPath.adopt(socket, unread);
    else socket.destroy();
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child !== this.child) return;
    const { log, metrics } = this.options;
    this.child = null;
    this.ready = false;
    metrics.tileProcess.serving = 0;
    for (const [socket, unread] of [...this.inTransit]) {
      this.inTransit.delete(socket);
      this.rescue(socket, unread);
    }
    for (const answer of this.metricsAsked.values()) answer(null);
    this.metricsAsked.clear();
    if (this.stopping || this.unavailable) {
      for (const exited of this.exitWaiters.splice(0)) exited();
      return;
    }
    if (Date.now() - this.startedAt >= STEADY_MS) this.restartDelayMs = this.firstDelayMs;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(this.maxDelayMs, delay * 2);
    log.error(
      { code, signal },
      `tile process ended (${signal ?? `exit code ${String(code)}`}); tiles are answered in this process, and it starts again in ${delay} ms`,
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      metrics.tileProcess.restarts += 1;
      this.spawn();
    }, delay);
    this.restartTimer.unref();
  }
}
