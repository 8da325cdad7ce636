import fs from 'node:fs';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { assembleJpeg, startsWithSoi } from './jpegTile.js';
import { TILE_START_OTHER, TILE_START_SOI, type TileLocation } from './pyramidIndex.js';
import type { RangeReader } from './tiffDirectory.js';

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

/** A pyramid in object storage (S3): every read is one ranged GET. */
export class StoragePyramidFile implements PyramidFile {
  constructor(
    private readonly storage: ObjectStorage,
    private readonly key: string,
    readonly size: number,
  ) {}

  static async open(storage: ObjectStorage, key: string): Promise<StoragePyramidFile | null> {
    const head = await storage.head(key);
    return head ? new StoragePyramidFile(storage, key, head.size) : null;
  }

  readRange: RangeReader = async (offset, length) => {
    const want = Math.max(0, Math.min(length, this.size - offset));
    if (want === 0) return Buffer.alloc(0);
    return this.storage.readRange(this.key, offset, want);
  };

  async readTile(location: TileLocation): Promise<Buffer> {
    const data = await this.storage.readRange(this.key, location.offset, location.length);
    if (data.length !== location.length) throw new TruncatedTileError(`Tile at ${location.offset} is truncated`);
    return assembleJpeg(location.prefix, data);
  }

  retire(): void {}
}
