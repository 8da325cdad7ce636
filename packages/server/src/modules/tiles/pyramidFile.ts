import fs from 'node:fs';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { assembleJpeg, startsWithSoi } from './jpegTile.js';
import { TILE_START_OTHER, TILE_START_SOI, type TileLocation } from './pyramidIndex.js';
import type { RangeReader } from './tiffDirectory.js';
import type { TileRangeCache } from './tileRangeCache.js';

/**
 * An open stored pyramid: ranged reads for the directory parser, and `readTile`, which answers a
 * complete JPEG with one read of the tile's bytes. Held by the pyramid cache and retired on
 * eviction; a local file's descriptor closes only once no read is in flight, so a descriptor
 * number is never reused under a pending read.
 */
export interface PyramidFile {
  readonly size: number;
  readRange: RangeReader;
  readTile(location: TileLocation): Promise<Buffer>;
  /**
   * The same as readTile, answered at once with a blocking read; present only on files read that
   * way (a local pyramid with TILE_READS=sync), so the tile handler needs no promise per tile.
   */
  readonly readTileSync?: ((location: TileLocation) => Buffer) | undefined;
  /**
   * Where the complete JPEG lies in the file, for sending it without reading it (sendfile): null
   * until the tile has been read once and seen to start with SOI. Present only on files read with
   * blocking reads: the descriptor stays valid while the caller sends in the same tick.
   */
  readonly tileInFile?: ((location: TileLocation) => TileInFile | null) | undefined;
  /**
   * The tile's complete JPEG when it is held in memory (object storage with the tile range cache
   * on), answered at once; undefined otherwise (then readTile).
   */
  readonly cachedTile?: ((location: TileLocation) => Buffer | undefined) | undefined;
  /** Called once the pyramid's index is built: what was read for the structure can go. */
  opened?(): void;
  /** No new reads will start; release resources once the current ones finish. */
  retire(): void;
}

function readFd(fd: number, buffer: Buffer, at: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buffer, at, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

async function readFully(fd: number, buffer: Buffer, at: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await readFd(fd, buffer, at + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * Response buffers carved out of 1 MiB slabs: one allocation per ~100 tiles instead of one
 * (external, GC-tracked) allocation per tile. A slab is only ever handed out forward, never
 * reused, so a buffer still being written to a socket cannot be overwritten; a slab is freed once
 * all its tiles are.
 */
export class TileBuffers {
  private slab: Buffer;
  private used = 0;

  constructor(private readonly slabBytes = 1024 * 1024) {
    this.slab = Buffer.allocUnsafeSlow(slabBytes);
  }

  take(size: number): Buffer {
    if (size > this.slabBytes / 8) return Buffer.allocUnsafeSlow(size);
    if (this.used + size > this.slabBytes) {
      this.slab = Buffer.allocUnsafeSlow(this.slabBytes);
      this.used = 0;
    }
    const buffer = this.slab.subarray(this.used, this.used + size);
    this.used += (size + 7) & ~7;
    return buffer;
  }
}

const tileBuffers = new TileBuffers();

/** A tile's complete JPEG as it lies in a local pyramid: `prefix`, then `length` bytes from `offset`. */
export interface TileInFile {
  fd: number;
  offset: number;
  length: number;
  prefix: Buffer;
}

/**
 * Reads the tile's file range from byte `from` of the range on into `into` at `at`; false when the
 * file ended before the range did.
 */
export function readTileRange(tile: TileInFile, from: number, into: Buffer, at: number): boolean {
  const want = tile.length - from;
  return want <= 0 || fs.readSync(tile.fd, into, at, want, tile.offset + from) === want;
}

/** The tile's complete JPEG in one buffer (for the callers that cannot send from the file). */
export function readTileInFile(tile: TileInFile): Buffer {
  const buffer = tileBuffers.take(tile.prefix.length + tile.length);
  tile.prefix.copy(buffer, 0);
  if (!readTileRange(tile, 0, buffer, tile.prefix.length))
    throw new TruncatedTileError(`Tile at ${tile.offset} is truncated`);
  return buffer;
}

/**
 * How a local pyramid is read. 'sync': a blocking pread on the event loop, as nginx reads files
 * without aio: a tile comes from the page cache in microseconds, and only a cold read waits for
 * the disk. 'async': through libuv's thread pool (never blocks the loop; costs a thread hand-off
 * per tile) — for pyramids on network or spinning disks.
 */
export type LocalReadMode = 'sync' | 'async';

export class TruncatedTileError extends Error {
  override readonly name = 'TruncatedTileError';
}

/** A pyramid on the local disk, read through one descriptor kept open while the image is cached. */
export class LocalPyramidFile implements PyramidFile {
  private inFlight = 0;
  private retired = false;
  private closed = false;

  readonly readTileSync: ((location: TileLocation) => Buffer) | undefined;
  readonly tileInFile: ((location: TileLocation) => TileInFile | null) | undefined;

  private constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly mode: LocalReadMode,
  ) {
    this.readTileSync = mode === 'sync' ? (location) => this.readTileBlocking(location) : undefined;
    this.tileInFile = mode === 'sync' ? (location) => this.locateInFile(location) : undefined;
  }

  static async open(filePath: string, mode: LocalReadMode = 'sync'): Promise<LocalPyramidFile> {
    const fd = await new Promise<number>((resolve, reject) => {
      fs.open(filePath, 'r', (error, descriptor) => (error ? reject(error) : resolve(descriptor)));
    });
    try {
      const stat = await new Promise<fs.Stats>((resolve, reject) => {
        fs.fstat(fd, (error, s) => (error ? reject(error) : resolve(s)));
      });
      return new LocalPyramidFile(fd, stat.size, mode);
    } catch (error) {
      fs.close(fd, () => {});
      throw error;
    }
  }

  private async withFd<T>(work: (fd: number) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('Pyramid file is closed');
    this.inFlight++;
    try {
      return await work(this.fd);
    } finally {
      this.inFlight--;
      this.closeIfIdle();
    }
  }

  readRange: RangeReader = (offset, length) =>
    this.withFd(async (fd) => {
      const want = Math.max(0, Math.min(length, this.size - offset));
      const buffer = Buffer.allocUnsafe(want);
      const n = await readFully(fd, buffer, 0, want, offset);
      return n === want ? buffer : buffer.subarray(0, n);
    });

  /**
   * Reads the tile's stream straight into the response buffer, just after the prefix, so its SOI
   * lands on the prefix's last two bytes; then the prefix is written over them. One read (a
   * regular file returns the whole range unless it ends first), no second copy.
   */
  async readTile(location: TileLocation): Promise<Buffer> {
    if (this.mode === 'sync') return this.readTileBlocking(location);
    if (this.closed) throw new Error('Pyramid file is closed');
    const { prefix, offset, length } = location;
    const start = prefix.length - 2;
    const buffer = tileBuffers.take(start + length);
    const n = await new Promise<number>((resolve, reject) => {
      this.inFlight++;
      fs.read(this.fd, buffer, start, length, offset, (error, bytesRead) => {
        this.inFlight--;
        this.closeIfIdle();
        if (error) reject(error);
        else resolve(bytesRead);
      });
    });
    return this.complete(location, buffer, n);
  }

  private readTileBlocking(location: TileLocation): Buffer {
    if (this.closed) throw new Error('Pyramid file is closed');
    const { prefix, offset, length } = location;
    const start = prefix.length - 2;
    const buffer = tileBuffers.take(start + length);
    return this.complete(location, buffer, fs.readSync(this.fd, buffer, start, length, offset));
  }

  private locateInFile({ prefix, offset, length, starts, tile }: TileLocation): TileInFile | null {
    if (this.closed || starts[tile] !== TILE_START_SOI) return null;
    return { fd: this.fd, offset: offset + 2, length: length - 2, prefix };
  }

  private complete({ prefix, offset, length, starts, tile }: TileLocation, buffer: Buffer, n: number): Buffer {
    const start = prefix.length - 2;
    if (n !== length) throw new TruncatedTileError(`Tile at ${offset} is truncated (${n} of ${length} bytes)`);
    if (!startsWithSoi(buffer, start)) {
      starts[tile] = TILE_START_OTHER;
      return assembleJpeg(prefix, buffer.subarray(start));
    }
    starts[tile] = TILE_START_SOI;
    prefix.copy(buffer, 0);
    return buffer;
  }

  retire(): void {
    this.retired = true;
    this.closeIfIdle();
  }

  private closeIfIdle(): void {
    if (this.retired && !this.closed && this.inFlight === 0) {
      this.closed = true;
      fs.close(this.fd, () => {});
    }
  }
}

/** The first read of a pyramid in object storage: the TIFF header, and a first IFD placed right after it. */
export const STRUCTURE_START_BYTES = 16 * 1024;
/**
 * A read of the structure this close to the end of the object takes the rest of it at once. libvips
 * (tiffsave, most pyramids) writes each level's directory after the level's tiles, so from level 1's
 * directory on the rest is a quarter of the file or less (6.5 MB of a 73 MB pyramid); the block
 * writer of larger slides (processing/tiledTiff.ts) puts every directory after all the tiles (8 bytes
 * a tile, 16 in BigTIFF: 8 MiB is half a million tiles).
 */
export const STRUCTURE_TAIL_BYTES = 8 * 1024 * 1024;
/** Otherwise this much is read ahead: a directory with its tile offsets, byte counts and tables. */
export const STRUCTURE_READ_AHEAD = 256 * 1024;
/** What the structure reads of one open may hold at most; past it, older blocks are dropped. */
const STRUCTURE_MAX_HELD = 64 * 1024 * 1024;

/**
 * The ranged reads of a pyramid's structure while it is opened: each read that misses what is held
 * fetches a large block (the rest of the object near its end, else STRUCTURE_READ_AHEAD), so the
 * directory parser's many small reads (header, each IFD, its tile offsets, byte counts and JPEG
 * tables) cost one or a few GETs. Concurrent reads inside a block being fetched wait for it.
 */
class StructureReads {
  private readonly blocks: { start: number; data: Buffer }[] = [];
  private readonly inFlight: { start: number; end: number; done: Promise<Buffer> }[] = [];
  private held = 0;

  constructor(
    private readonly fetch: (offset: number, length: number) => Promise<Buffer>,
    private readonly size: number,
    first: Buffer | null,
  ) {
    if (first) this.keep(0, first);
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const end = Math.min(this.size, offset + length);
    if (end <= offset) return Buffer.alloc(0);
    for (;;) {
      const block = this.blocks.find((b) => b.start <= offset && end <= b.start + b.data.length);
      if (block) return block.data.subarray(offset - block.start, end - block.start);
      const coming = this.inFlight.find((f) => f.start <= offset && end <= f.end);
      if (!coming) break;
      const data = await coming.done;
      if (coming.start + data.length < end) return data.subarray(offset - coming.start); // the object ended
    }
    const rest = this.size - offset;
    const fetchLength = rest <= STRUCTURE_TAIL_BYTES ? rest : Math.max(end - offset, STRUCTURE_READ_AHEAD);
    const flight = { start: offset, end: offset + fetchLength, done: this.fetch(offset, fetchLength) };
    this.inFlight.push(flight);
    try {
      const data = await flight.done;
      this.keep(offset, data);
      return data.subarray(0, end - offset);
    } finally {
      this.inFlight.splice(this.inFlight.indexOf(flight), 1);
    }
  }

  private keep(start: number, data: Buffer): void {
    while (this.blocks.length > 0 && this.held + data.length > STRUCTURE_MAX_HELD)
      this.held -= this.blocks.shift()?.data.length ?? 0;
    this.blocks.push({ start, data });
    this.held += data.length;
  }
}

/**
 * A pyramid in object storage (S3). Opening it reads its structure in a few large ranged GETs
 * (StructureReads: two or three for Lamina's pyramids, e.g. the header, level 0's directory, then
 * the rest from level 1's directory on); then every tile not in the tile range cache is one ranged
 * GET, and kept there (tileRangeCache.ts).
 */
export class StoragePyramidFile implements PyramidFile {
  private structure: StructureReads | null;
  /** The cache key of this object's tiles up to the range: the key and its version. */
  private readonly cacheKey: string;
  readonly cachedTile: ((location: TileLocation) => Buffer | undefined) | undefined;

  private constructor(
    private readonly storage: ObjectStorage,
    private readonly key: string,
    readonly size: number,
    version: string,
    first: Buffer | null,
    private readonly cache: TileRangeCache | null,
  ) {
    this.structure = new StructureReads(
      (offset, length) => this.storage.readRange(this.key, offset, length),
      size,
      first,
    );
    this.cacheKey = `${key}\u0000${version}\u0000`;
    this.cachedTile = cache?.enabled ? (location) => cache.take(this.tileKey(location)) : undefined;
  }

  /**
   * Opens the object: one ranged GET of its first STRUCTURE_START_BYTES that also tells its size and
   * version (ObjectStorage.readRangeOf), or a HEAD where the storage has no such read. Null when
   * the object does not exist.
   */
  static async open(
    storage: ObjectStorage,
    key: string,
    cache: TileRangeCache | null = null,
  ): Promise<StoragePyramidFile | null> {
    if (storage.readRangeOf) {
      const start = await storage.readRangeOf(key, 0, STRUCTURE_START_BYTES);
      return start ? new StoragePyramidFile(storage, key, start.size, start.version, start.data, cache) : null;
    }
    const head = await storage.head(key);
    return head ? new StoragePyramidFile(storage, key, head.size, head.version, null, cache) : null;
  }

  readRange: RangeReader = async (offset, length) => {
    if (this.structure) return this.structure.read(offset, length);
    const want = Math.max(0, Math.min(length, this.size - offset));
    if (want === 0) return Buffer.alloc(0);
    return this.storage.readRange(this.key, offset, want);
  };

  /** The index is built: the structure's blocks are let go (later reads go to storage). */
  opened(): void {
    this.structure = null;
  }

  private tileKey(location: TileLocation): string {
    return `${this.cacheKey}${location.offset}:${location.length}`;
  }

  private async fetchTile(location: TileLocation): Promise<Buffer> {
    const data = await this.storage.readRange(this.key, location.offset, location.length);
    if (data.length !== location.length) throw new TruncatedTileError(`Tile at ${location.offset} is truncated`);
    return assembleJpeg(location.prefix, data);
  }

  /** The tile's complete JPEG; shared with the cache when it is on (never written into). */
  readTile(location: TileLocation): Promise<Buffer> {
    if (!this.cache) return this.fetchTile(location);
    return this.cache.read(this.tileKey(location), () => this.fetchTile(location));
  }

  retire(): void {
    this.structure = null;
  }
}
