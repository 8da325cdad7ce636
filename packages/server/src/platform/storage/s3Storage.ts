import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ObjectExistsError, type ObjectStorage, type RangeOf } from './storage.js';
import { attachmentDisposition, encodeKey } from './keys.js';
import { assertValidKey } from './keys.js';
import { NoSuchUploadError, type UploadUrlSigner } from './uploadSigning.js';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  endpoint?: string | undefined;
  forcePathStyle?: boolean;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
}

/** Objects above this size are written with a multipart upload (S3 caps one PUT at 5 GB). */
const SINGLE_PUT_MAX = 64 * 1024 * 1024;
const PART_SIZE = 64 * 1024 * 1024;

/** The largest object one CopyObject copies (S3's limit); larger ones are streamed through. */
const COPY_MAX = 5 * 1024 ** 3;

function isPreconditionFailed(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'PreconditionFailed' || e.$metadata?.httpStatusCode === 412;
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

/** S3 (or any S3-compatible store): presigned URLs from the AWS SDK, the SDK for everything else. */
export class S3Storage implements ObjectStorage, UploadUrlSigner {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly bucket: string;

  constructor(options: S3StorageOptions) {
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? false,
      // Checksums only when an operation requires them: presigned browser PUTs carry none.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.accessKeyId && options.secretAccessKey) {
      config.credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey };
    }
    this.client = new S3Client(config);
    this.bucket = options.bucket;
  }

  async signedPutUrl(key: string, expiresInSeconds: number): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: expiresInSeconds,
    });
  }

  async signedGetUrl(key: string, expiresInSeconds: number, downloadName?: string): Promise<string> {
    assertValidKey(key);
    const disposition = downloadName === undefined ? undefined : attachmentDisposition(downloadName);
    return getSignedUrl(
      this.client,
      new GetObjectCommand({ Bucket: this.bucket, Key: key, ResponseContentDisposition: disposition }),
      { expiresIn: expiresInSeconds },
    );
  }

  async signedPartUrl(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(
      this.client,
      new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber }),
      { expiresIn: expiresInSeconds },
    );
  }

  async signedCreateMultipartUrl(key: string, expiresInSeconds: number): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(this.client, new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: expiresInSeconds,
    });
  }

  async signedListPartsUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(this.client, new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }), {
      expiresIn: expiresInSeconds,
    });
  }

  async signedCompleteMultipartUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(
      this.client,
      new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }),
      { expiresIn: expiresInSeconds },
    );
  }

  async signedAbortMultipartUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(
      this.client,
      new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }),
      { expiresIn: expiresInSeconds },
    );
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async head(key: string): Promise<{ size: number; version: string } | null> {
    assertValidKey(key);
    try {
      const result = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: result.ContentLength ?? 0, version: `${result.ETag ?? ''}${result.VersionId ?? ''}` };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async readRange(key: string, offset: number, length: number): Promise<Buffer> {
    assertValidKey(key);
    if (length <= 0) return Buffer.alloc(0);
    const result = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }),
    );
    if (!result.Body) return Buffer.alloc(0);
    return Buffer.from(await result.Body.transformToByteArray());
  }

  /**
   * One ranged GET that also gives the object's size (Content-Range: `bytes 0-16383/SIZE`) and
   * version (ETag, as head() reports it): a pyramid is opened without a HEAD first. (An empty object
   * has no range to read: S3 answers 416, an error here; pyramids are never empty.)
   */
  async readRangeOf(key: string, offset: number, length: number): Promise<RangeOf | null> {
    assertValidKey(key);
    if (length <= 0) throw new RangeError('readRangeOf needs a length');
    try {
      const result = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }),
      );
      let data = result.Body ? Buffer.from(await result.Body.transformToByteArray()) : Buffer.alloc(0);
      const total = /\/(\d+)\s*$/.exec(result.ContentRange ?? '')?.[1];
      // No Content-Range: a store that ignored the range sent the whole object.
      const size = total === undefined ? data.length : Number(total);
      if (total === undefined) data = data.subarray(offset, offset + length);
      return { data, size, version: `${result.ETag ?? ''}${result.VersionId ?? ''}` };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async createReadStream(key: string, range?: { start: number; end: number }): Promise<Readable> {
    assertValidKey(key);
    const result = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }),
    );
    if (!(result.Body instanceof Readable)) throw new Error('S3 returned no stream body');
    return result.Body;
  }

  /**
   * Writes are conditional (`If-None-Match: *`, which S3 and current S3-compatible stores honour),
   * and checked first for stores that ignore the condition: an existing key is ObjectExistsError.
   */
  async write(key: string, body: Readable | Buffer | { filePath: string }, contentType?: string): Promise<void> {
    assertValidKey(key);
    if (await this.head(key)) throw new ObjectExistsError(key);
    try {
      await this.writeNew(key, body, contentType);
    } catch (error) {
      if (isPreconditionFailed(error)) throw new ObjectExistsError(key);
      throw error;
    }
  }

  async move(from: string, to: string): Promise<void> {
    assertValidKey(from);
    assertValidKey(to);
    const source = await this.head(from);
    if (!source) throw Object.assign(new Error(`No object ${from}`), { code: 'ENOENT' });
    if (await this.head(to)) throw new ObjectExistsError(to);
    if (source.size <= COPY_MAX) {
      await this.client.send(
        new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: `${this.bucket}/${encodeKey(from)}` }),
      );
    } else {
      await this.write(to, await this.createReadStream(from)); // beyond CopyObject: through this process
    }
    await this.delete(from);
  }

  private async writeNew(key: string, body: Readable | Buffer | { filePath: string }, contentType?: string) {
    if (Buffer.isBuffer(body)) {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, IfNoneMatch: '*' }),
      );
      return;
    }
    if (body instanceof Readable) {
      await this.writeUnknownLength(key, body, contentType);
      return;
    }
    const { size } = await stat(body.filePath);
    if (size <= SINGLE_PUT_MAX) {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: createReadStream(body.filePath),
          ContentLength: size,
          ContentType: contentType,
          IfNoneMatch: '*',
        }),
      );
      return;
    }
    await this.multipart(key, contentType, async (uploadPart) => {
      let partNumber = 1;
      for (let start = 0; start < size; start += PART_SIZE, partNumber++) {
        const end = Math.min(size, start + PART_SIZE) - 1;
        await uploadPart(partNumber, createReadStream(body.filePath, { start, end }), end - start + 1);
      }
    });
  }

  /** A stream of unknown length: buffered into parts of PART_SIZE (bounded memory). */
  private async writeUnknownLength(key: string, body: Readable, contentType?: string): Promise<void> {
    let pending: Buffer[] = [];
    let pendingSize = 0;
    let multipartDone = false;
    const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    // Read up to one part; if the stream ends inside it, one PUT suffices.
    for (;;) {
      const next = await chunks.next();
      if (next.done) break;
      pending.push(next.value);
      pendingSize += next.value.length;
      if (pendingSize >= PART_SIZE) break;
    }
    if (pendingSize < PART_SIZE) {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: Buffer.concat(pending),
          ContentType: contentType,
          IfNoneMatch: '*',
        }),
      );
      return;
    }
    await this.multipart(key, contentType, async (uploadPart) => {
      let partNumber = 1;
      for (;;) {
        if (pendingSize >= PART_SIZE || multipartDone) {
          const data = Buffer.concat(pending);
          pending = [];
          pendingSize = 0;
          if (data.length > 0) await uploadPart(partNumber++, data, data.length);
          if (multipartDone) return;
        }
        const next = await chunks.next();
        if (next.done) multipartDone = true;
        else {
          pending.push(next.value);
          pendingSize += next.value.length;
        }
      }
    });
  }

  private async multipart(
    key: string,
    contentType: string | undefined,
    send: (uploadPart: (partNumber: number, body: Readable | Buffer, length: number) => Promise<void>) => Promise<void>,
  ): Promise<void> {
    const { UploadId } = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }),
    );
    if (!UploadId) throw new Error('S3 returned no upload id');
    const parts: { PartNumber: number; ETag: string }[] = [];
    try {
      await send(async (partNumber, partBody, length) => {
        const result = await this.client.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: key,
            UploadId,
            PartNumber: partNumber,
            Body: partBody,
            ContentLength: length,
          }),
        );
        parts.push({ PartNumber: partNumber, ETag: result.ETag ?? '' });
      });
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId,
          MultipartUpload: { Parts: parts },
          IfNoneMatch: '*',
        }),
      );
    } catch (error) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId }))
        .catch(() => undefined);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async createMultipartUpload(key: string): Promise<{ uploadId: string }> {
    assertValidKey(key);
    const result = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }));
    if (!result.UploadId) throw new Error('S3 returned no upload id');
    return { uploadId: result.UploadId };
  }

  async listParts(key: string, uploadId: string): Promise<{ partNumber: number; size: number; etag: string }[]> {
    assertValidKey(key);
    const parts: { partNumber: number; size: number; etag: string }[] = [];
    let marker: string | undefined;
    try {
      for (;;) {
        const page = await this.client.send(
          new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
        );
        for (const p of page.Parts ?? []) {
          parts.push({ partNumber: p.PartNumber ?? 0, size: p.Size ?? 0, etag: (p.ETag ?? '').replace(/"/g, '') });
        }
        if (!page.IsTruncated || !page.NextPartNumberMarker) break;
        marker = page.NextPartNumberMarker;
      }
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchUpload') throw new NoSuchUploadError('No such upload');
      throw error;
    }
    return parts;
  }

  async completeMultipartUpload(
    key: string,
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
  ): Promise<void> {
    assertValidKey(key);
    if (await this.head(key)) throw new ObjectExistsError(key);
    try {
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          IfNoneMatch: '*',
          UploadId: uploadId,
          MultipartUpload: {
            Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: `"${p.etag.replace(/"/g, '')}"` })),
          },
        }),
      );
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchUpload') throw new NoSuchUploadError('No such upload');
      if (isPreconditionFailed(error)) throw new ObjectExistsError(key);
      throw error;
    }
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    assertValidKey(key);
    await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
  }
}
