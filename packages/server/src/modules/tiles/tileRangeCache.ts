import type { TileRangeCacheCounters, TileRangeCacheStats } from '../../platform/metrics/tileMetrics.js';

/**
 * A bounded in-memory cache of tiles read from object storage: the complete JPEG of each tile (the
 * stored bytes with the JPEG tables spliced in), keyed by the object, its version and the tile's
 * byte range. Least recently used first out, bounded by the bytes held (`maxBytes`; 0 turns it
 * off: every tile is one ranged GET). Concurrent requests for a range not in memory share one read
 * (single-flight); a failed read is not remembered. Objects are immutable (a write never replaces
 * one, and the key carries the object's version), so nothing is invalidated: entries only age out.
 *
 * It sits below the tile token and access checks (tileHandler.ts checks both before it looks up the
 * pyramid), so a cached tile is still refused to a revoked token.
 */
export class TileRangeCache implements TileRangeCacheStats {
  private readonly entries = new Map<string, Buffer>();
  private readonly pending = new Map<string, Promise<Buffer>>();
  private held = 0;
  readonly counters: TileRangeCacheCounters;

  constructor(
    readonly maxBytes: number,
    counters?: TileRangeCacheCounters,
  ) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`Bad cache size ${maxBytes}`);
    this.counters = counters ?? { hits: 0, misses: 0, joined: 0, failures: 0, evictions: 0 };
  }

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** Bytes of tile data held (never above maxBytes). */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether a range is held (does not count as a use). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The held tile, made the most recently used; undefined when it is not held (nothing counted). */
  take(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    this.counters.hits++;
    return hit;
  }

  /**
   * The tile under `key`: from memory, or from `fetch` (one call however many requests wait for
   * it), then kept if it fits. The returned buffer is shared: callers must not write into it.
   */
  read(key: string, fetch: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.take(key);
    if (hit !== undefined) return Promise.resolve(hit);
    this.counters.misses++;
    if (!this.enabled) return this.fetchCounted(fetch);
    const pending = this.pending.get(key);
    if (pending) {
      this.counters.joined++;
      return pending;
    }
    const started = this.fetchCounted(fetch).then(
      (data) => {
        this.pending.delete(key);
        this.put(key, data);
        return data;
      },
      (error: unknown) => {
        this.pending.delete(key);
        throw error;
      },
    );
    this.pending.set(key, started);
    return started;
  }

  /** Drops everything (the process is closing). */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  private fetchCounted(fetch: () => Promise<Buffer>): Promise<Buffer> {
    return fetch().catch((error: unknown) => {
      this.counters.failures++;
      throw error;
    });
  }

  private put(key: string, data: Buffer): void {
    if (data.length > this.maxBytes || this.entries.has(key)) return;
    // Keep only memory of its own: a view into a larger allocation (Node's 8 KiB pool, a response
    // slab) would hold all of it while counting a part.
    let own = data;
    if (data.byteOffset !== 0 || data.byteLength !== data.buffer.byteLength) {
      own = Buffer.allocUnsafeSlow(data.length);
      data.copy(own);
    }
    this.entries.set(key, own);
    this.held += own.length;
    for (const [oldKey, oldest] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldKey);
      this.held -= oldest.length;
      this.counters.evictions++;
    }
  }
}
