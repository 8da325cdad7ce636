import type { ObjectStorage } from './storage.js';

/**
 * URLs for the other requests of the S3 multipart protocol, so that a browser S3 client (Uppy's
 * @uppy/aws-s3 with `signRequest`) can drive the whole upload itself: on S3 they are presigned S3
 * requests, on the local folder the server's own signed URLs, which answer the same XML.
 */
export interface UploadUrlSigner {
  /** POST → `<InitiateMultipartUploadResult>` with the UploadId. */
  signedCreateMultipartUrl(key: string, expiresInSeconds: number): Promise<string>;
  /** GET → `<ListPartsResult>`. */
  signedListPartsUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string>;
  /** POST with `<CompleteMultipartUpload>` → `<CompleteMultipartUploadResult>`. */
  signedCompleteMultipartUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string>;
  /** DELETE → 204. */
  signedAbortMultipartUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string>;
}

/** What createStorage() returns: the shared interface plus the upload URL signer. */
export type AppStorage = ObjectStorage & UploadUrlSigner;

/** A multipart upload that does not exist (or belongs to another key). */
export class NoSuchUploadError extends Error {
  override readonly name = 'NoSuchUploadError';
}

/** Completion refused: a part is missing, its ETag differs, or the sizes do not add up. */
export class InvalidPartError extends Error {
  override readonly name = 'InvalidPartError';
}
