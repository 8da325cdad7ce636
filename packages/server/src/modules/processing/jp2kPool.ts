import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  jp2kCodecPath,
  jp2kWorkerMain,
  type DecodeRequest,
  type DecodeResponse,
  type Jp2kWorkerData,
} from './jp2kWorker.js';

/** The decoder thread's program: its function's source (the `__name` helper a transpiler may add). */
const WORKER_SOURCE = `const __name = (f) => f;\n(${jp2kWorkerMain.toString()})();\n`;

/** Threads that die before answering once, in a row, before the pool gives up (the codec cannot load). */
const MAX_START_FAILURES = 3;

/** Seconds one tile may take to decode (a 256-px tile takes ~6 ms here): past it the worker is ended. */
export const DEFAULT_TILE_TIME_LIMIT_SECONDS = 30;

/** A tile the decoder refused, failed on, or did not finish in time: names the tile. */
export class Jp2kTileError extends Error {
  override readonly name = 'Jp2kTileError';
  constructor(
    readonly label: string,
    readonly reason: string,
  ) {
    super(`${label}: ${reason}`);
  }
}

export interface TileJob {
  data: Uint8Array;
  width: number;
  height: number;
  ycbcr: boolean;
  /** How the tile is named in an error ('tile 37 (column 1, row 2)'). */
  label: string;
}

interface Pending {
  job: TileJob;
  resolve: (pixels: Uint8Array) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: (Pending & { id: number; timer: NodeJS.Timeout }) | null;
  /** The thread answered at least once (it loaded the codec). */
  answered: boolean;
}

/**
 * Decodes JPEG 2000 tiles in worker threads (jp2kWorker.ts), one tile at a time per thread, as many
 * threads as cores by default. Each tile has a time limit: a thread that passes it (a codestream
 * that makes OpenJPEG loop) or dies (a WebAssembly trap) is ended and replaced, and only that
 * tile's promise is rejected, with a {@link Jp2kTileError} naming it. Tiles are queued, never all
 * handed over at once: the caller bounds how many it has in flight (jp2kPyramid.ts decodes one
 * block of the slide at a time), so memory stays bounded.
 */
export class Jp2kDecoderPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private startFailures = 0;

  constructor(
    readonly threads = Math.max(1, availableParallelism()),
    private readonly tileTimeLimitMs = DEFAULT_TILE_TIME_LIMIT_SECONDS * 1000,
  ) {
    for (let i = 0; i < threads; i++) this.slots.push({ worker: this.spawn(), busy: null, answered: false });
  }

  decode(job: TileJob): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new Error('The JPEG 2000 decoder pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.pump();
    });
  }

  /** Ends every thread; queued and running tiles are rejected. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new Error('The JPEG 2000 decoder pool was closed');
    for (const pending of this.queue.splice(0)) pending.reject(error);
    await Promise.all(
      this.slots.map(async (slot) => {
        if (slot.busy) {
          clearTimeout(slot.busy.timer);
          slot.busy.reject(error);
          slot.busy = null;
        }
        await slot.worker.terminate();
      }),
    );
  }

  private spawn(): Worker {
    const workerData: Jp2kWorkerData = { codecPath: jp2kCodecPath() };
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData,
      // Only the decoder's own WebAssembly memory is large; its JavaScript heap stays small.
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    worker.unref();
    worker.on('message', (response: DecodeResponse) => this.answered(worker, response));
    worker.on('error', (error) => this.died(worker, `the decoder failed (${error.message})`));
    worker.on('exit', (code) => {
      if (!this.closed) this.died(worker, `the decoder thread ended (code ${code})`);
    });
    return worker;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy || this.queue.length === 0) continue;
      const pending = this.queue.shift() as Pending;
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.replace(slot, `it took longer than ${this.tileTimeLimitMs / 1000} s to decode`);
      }, this.tileTimeLimitMs);
      slot.busy = { ...pending, id, timer };
      const { data, width, height, ycbcr } = pending.job;
      const request: DecodeRequest = { id, data, width, height, ycbcr };
      // The tile's bytes are its own buffer (jp2kPyramid.ts reads each into one): moved, not copied.
      slot.worker.postMessage(request, [data.buffer as ArrayBuffer]);
    }
  }

  private answered(worker: Worker, response: DecodeResponse): void {
    const slot = this.slots.find((s) => s.worker === worker);
    const busy = slot?.busy;
    if (!slot || !busy || busy.id !== response.id) return;
    clearTimeout(busy.timer);
    slot.busy = null;
    slot.answered = true;
    this.startFailures = 0;
    if ('pixels' in response) busy.resolve(response.pixels);
    else busy.reject(new Jp2kTileError(busy.job.label, response.error));
    this.pump();
  }

  private died(worker: Worker, reason: string): void {
    const slot = this.slots.find((s) => s.worker === worker);
    if (slot) this.replace(slot, reason);
  }

  /** Ends a slot's thread (hung or dead), fails its tile, and starts a new thread in its place. */
  private replace(slot: Slot, reason: string): void {
    const old = slot.worker;
    const busy = slot.busy;
    slot.busy = null;
    if (busy) {
      clearTimeout(busy.timer);
      busy.reject(new Jp2kTileError(busy.job.label, reason));
    }
    old.removeAllListeners();
    old.on('error', () => undefined);
    void old.terminate();
    if (this.closed) return;
    if (!slot.answered && ++this.startFailures >= MAX_START_FAILURES) {
      // The codec does not load here: fail everything rather than start threads forever.
      const error = new Error(`The JPEG 2000 decoder could not be started (${reason})`);
      for (const pending of this.queue.splice(0)) pending.reject(error);
      void this.close();
      return;
    }
    slot.worker = this.spawn();
    slot.answered = false;
    this.pump();
  }
}
