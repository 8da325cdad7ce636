import type { FastifyBaseLogger } from 'fastify';
import type { TileRows } from '../../platform/tiles/tileRows.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { LocalPyramidFile, StoragePyramidFile, type LocalReadMode, type PyramidFile } from './pyramidFile.js';
import { buildPyramidIndex, type PyramidIndex } from './pyramidIndex.js';
import { readTiffDirectories } from './tiffDirectory.js';
import type { TileRangeCache } from './tileRangeCache.js';

/** A cached, open pyramid: its serving index and the file the tiles are read from. */
export interface OpenPyramid {
  imageId: number;
  cogKey: string;
  index: PyramidIndex;
  file: PyramidFile;
}

interface Entry {
  pyramid: OpenPyramid | null;
  loadedAt: number;
  bytes: number;
}

export interface PyramidCacheOptions {
  /** Most images kept open (each a descriptor for local storage). Default 512. */
  maxImages?: number;
  /** Bound on the memory of all cached indexes (tile offsets dominate). Default 256 MiB. */
  maxBytes?: number;
  /**
   * After this long, the image row is read again (in the background, the old entry keeps
   * serving) so a re-processed or archived image is noticed. Default 10 minutes.
   */
  refreshAfterMs?: number;
  /** How long "no such image / no pyramid" is remembered. Default 5 s. */
  missingTtlMs?: number;
  /** How local pyramid files are read (see LocalReadMode). Default 'sync'. */
  localReads?: LocalReadMode;
  /** Where tiles read from object storage are kept (TILE_CACHE_MB); none → every tile one GET. */
  rangeCache?: TileRangeCache | null;
  now?: () => number;
}

export interface PyramidSource {
  /** Where an image's pyramid row is read (the database, or the process that owns it). */
  rows: Pick<TileRows, 'image'>;
  storage: ObjectStorage;
  log?: FastifyBaseLogger | undefined;
}

/**
 * Per-image cache of parsed pyramid indexes with open files: an LRU bounded by count and bytes.
 * The image row (cog_key, width, height) is read from the database once per image and load
 * (single-flight: concurrent first requests share one load), so tiles cost no database round trip.
 */
export class PyramidCache {
  private readonly entries = new Map<number, Entry>();
  private readonly loading = new Map<number, Promise<Entry>>();
  private totalBytes = 0;
  private readonly maxImages: number;
  private readonly maxBytes: number;
  private readonly refreshAfterMs: number;
  private readonly missingTtlMs: number;
  private readonly localReads: LocalReadMode;
  private readonly rangeCache: TileRangeCache | null;
  private readonly now: () => number;
  /** Loads started (for tests and metrics). */
  loads = 0;

  constructor(
    private readonly source: PyramidSource,
    options: PyramidCacheOptions = {},
  ) {
    this.maxImages = options.maxImages ?? 512;
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.refreshAfterMs = options.refreshAfterMs ?? 10 * 60 * 1000;
    this.missingTtlMs = options.missingTtlMs ?? 5000;
    this.localReads = options.localReads ?? 'sync';
    this.rangeCache = options.rangeCache ?? null;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached pyramid of an image without waiting: the pyramid, null when the image is known to
   * have none, undefined when it must be loaded (then call `get`).
   */
  peek(imageId: number): OpenPyramid | null | undefined {
    const entry = this.entries.get(imageId);
    if (!entry) return undefined;
    const age = this.now() - entry.loadedAt;
    if (entry.pyramid === null) return age < this.missingTtlMs ? null : undefined;
    // LRU: move to the most recent end.
    this.entries.delete(imageId);
    this.entries.set(imageId, entry);
    if (age >= this.refreshAfterMs) this.refreshInBackground(imageId);
    return entry.pyramid;
  }

  /** The open pyramid of an image, or null when it has none (not processed, missing file). */
  async get(imageId: number): Promise<OpenPyramid | null> {
    const cached = this.peek(imageId);
    if (cached !== undefined) return cached;
    return (await this.load(imageId)).pyramid;
  }

  /** Forgets an image (e.g. after it was re-processed in this process). */
  invalidate(imageId: number): void {
    const entry = this.entries.get(imageId);
    if (entry) this.remove(imageId, entry);
  }

  /** Closes every open file. */
  clear(): void {
    for (const [id, entry] of [...this.entries]) this.remove(id, entry);
  }

  private refreshInBackground(imageId: number): void {
    if (this.loading.has(imageId)) return;
    this.load(imageId).catch((error: unknown) => {
      this.source.log?.warn({ err: error, imageId }, 'tile index refresh failed');
    });
  }

  private load(imageId: number): Promise<Entry> {
    let pending = this.loading.get(imageId);
    if (!pending) {
      pending = this.open(imageId)
        .then((pyramid) => {
          const entry: Entry = { pyramid, loadedAt: this.now(), bytes: pyramid?.index.bytes ?? 64 };
          this.put(imageId, entry);
          return entry;
        })
        .finally(() => this.loading.delete(imageId));
      this.loading.set(imageId, pending);
    }
    return pending;
  }

  private async open(imageId: number): Promise<OpenPyramid | null> {
    this.loads++;
    const row = await this.source.rows.image(imageId);
    if (!row?.cog_key) return null;
    const cogKey = row.cog_key;
    const { storage, log } = this.source;
    let file: PyramidFile | null;
    try {
      file = storage.localPath
        ? await LocalPyramidFile.open(storage.localPath(cogKey), this.localReads)
        : await StoragePyramidFile.open(storage, cogKey, this.rangeCache);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') file = null;
      else throw error;
    }
    if (!file) {
      log?.warn({ imageId, cogKey }, 'image pyramid missing from storage');
      return null;
    }
    try {
      const index = buildPyramidIndex(await readTiffDirectories(file.readRange), cogKey);
      file.opened?.();
      if (row.width !== null && row.height !== null && (row.width !== index.width || row.height !== index.height)) {
        log?.warn(
          { imageId, row: [row.width, row.height], pyramid: [index.width, index.height] },
          'pyramid size differs from the image row',
        );
      }
      const unservable = index.levels.find((l) => l.unservable !== null);
      if (unservable)
        log?.warn({ imageId, reason: unservable.unservable }, 'pyramid level cannot be served as raw tiles');
      return { imageId, cogKey, index, file };
    } catch (error) {
      file.retire();
      throw error;
    }
  }

  private put(imageId: number, entry: Entry): void {
    const previous = this.entries.get(imageId);
    if (previous) this.remove(imageId, previous, entry.pyramid?.file);
    this.entries.set(imageId, entry);
    this.totalBytes += entry.bytes;
    for (const [id, oldest] of this.entries) {
      if (this.entries.size <= this.maxImages && this.totalBytes <= this.maxBytes) break;
      if (id === imageId) continue;
      this.remove(id, oldest);
    }
  }

  private remove(imageId: number, entry: Entry, keep?: PyramidFile): void {
    this.entries.delete(imageId);
    this.totalBytes -= entry.bytes;
    if (entry.pyramid && entry.pyramid.file !== keep) entry.pyramid.file.retire();
  }
}
