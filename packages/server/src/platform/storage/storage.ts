import type { Readable } from 'node:stream';

/**
 * Object storage: the one interface the product uses for slide files, pyramids, label/macro images
 * and other blobs. Two implementations: the local folder (DATA_DIR/storage, the server's own
 * HMAC-signed expiring URLs) and S3 (presigned URLs from the AWS SDK).
 * Keys are relative paths such as `uploads/{studyId}/{uuid}/{fileName}` or `images/{id}/pyramid.tif`.
 */
export interface ObjectStorage {
  readonly kind: 'local' | 's3';

  /**
   * Proves the storage answers (readiness, GET /api/ready): local, the folder is there, readable
   * and writable; S3, the bucket answers a HeadBucket with these credentials. Rejects otherwise.
   */
  ping(): Promise<void>;

  /** A URL the browser PUTs the bytes of `key` to, valid for `expiresInSeconds`. */
  signedPutUrl(key: string, expiresInSeconds: number): Promise<string>;
  /** A URL to download `key`, valid for `expiresInSeconds`; `downloadName` sets Content-Disposition. */
  signedGetUrl(key: string, expiresInSeconds: number, downloadName?: string): Promise<string>;

  /**
   * Size of the object and its version, or null when it does not exist. The version changes
   * whenever the object is written again (local: inode, size and modification time; S3: ETag), so
   * a checksum recorded with it need not be recomputed while it stays the same.
   */
  head(key: string): Promise<{ size: number; version: string } | null>;
  /** Reads `length` bytes at `offset` (one ranged read). */
  readRange(key: string, offset: number, length: number): Promise<Buffer>;
  /**
   * readRange that also tells the object's size and version (as head() does) from the same request:
   * S3, one ranged GET whose Content-Range carries the size; null when the object does not exist.
   * Optional: the tile server opens a pyramid with it in one request instead of a HEAD and a GET.
   */
  readRangeOf?(key: string, offset: number, length: number): Promise<RangeOf | null>;
  /** Streams the whole object (or a range). */
  createReadStream(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /**
   * Writes a new object from a stream, a buffer or a local file path, atomically (visible only when
   * complete). Objects are never replaced: an existing key is refused with ObjectExistsError (a
   * caller that must replace one deletes it first).
   */
  write(key: string, body: Readable | Buffer | { filePath: string }, contentType?: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Moves an object to a key that must not exist yet (ObjectExistsError): afterwards `from` is gone.
   * Used to seal a registered upload under a key no signed URL was ever issued for.
   */
  move(from: string, to: string): Promise<void>;
  /**
   * For the local implementation, the file on disk (sharp and the tile server read it directly);
   * undefined for S3, where callers download to a temporary file or use ranged reads.
   */
  localPath?(key: string): string;

  /** Resumable multipart upload (S3 multipart on S3; the same protocol over the local folder). */
  createMultipartUpload(key: string): Promise<{ uploadId: string }>;
  signedPartUrl(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string>;
  listParts(key: string, uploadId: string): Promise<{ partNumber: number; size: number; etag: string }[]>;
  completeMultipartUpload(key: string, uploadId: string, parts: { partNumber: number; etag: string }[]): Promise<void>;
  abortMultipartUpload(key: string, uploadId: string): Promise<void>;
}

/** Bytes read from an object with its size and version (ObjectStorage.readRangeOf). */
export interface RangeOf {
  data: Buffer;
  size: number;
  version: string;
}

/** A write to a key that already holds an object: objects are immutable (If-None-Match: *). */
export class ObjectExistsError extends Error {
  override readonly name = 'ObjectExistsError';
  constructor(readonly key: string) {
    super(`The object ${key} already exists and cannot be replaced`);
  }
}
