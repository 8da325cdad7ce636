import type { Readable } from 'node:stream';

/**
 * Object storage: the one interface the product uses for slide files, pyramids, label/macro images
 * and other blobs. Two implementations: the local folder (DATA_DIR/storage, the server's own
 * HMAC-signed expiring URLs) and S3 (presigned URLs from the AWS SDK).
 * Keys are relative paths such as `uploads/{studyId}/{uuid}/{fileName}` or `images/{id}/pyramid.tif`.
 */
export interface ObjectStorage {
  readonly kind: 'local' | 's3';

  /** A URL the browser PUTs the bytes of `key` to, valid for `expiresInSeconds`. */
  signedPutUrl(key: string, expiresInSeconds: number): Promise<string>;
  /** A URL to download `key`, valid for `expiresInSeconds`; `downloadName` sets Content-Disposition. */
  signedGetUrl(key: string, expiresInSeconds: number, downloadName?: string): Promise<string>;

  /** Size of the object, or null when it does not exist. */
  head(key: string): Promise<{ size: number } | null>;
  /** Reads `length` bytes at `offset` (one ranged read). */
  readRange(key: string, offset: number, length: number): Promise<Buffer>;
  /** Streams the whole object (or a range). */
  createReadStream(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Writes an object from a stream, a buffer or a local file path, atomically (visible only when complete). */
  write(key: string, body: Readable | Buffer | { filePath: string }, contentType?: string): Promise<void>;
  delete(key: string): Promise<void>;
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
