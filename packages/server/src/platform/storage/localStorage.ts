import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { constants as fsConstants, createReadStream, createWriteStream } from 'node:fs';
import {
  access,
  copyFile,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ObjectExistsError, type ObjectStorage } from './storage.js';
import { assertValidKey, encodeKey, UrlSigner, type SignedOp } from './keys.js';
import { InvalidPartError, NoSuchUploadError, type UploadUrlSigner } from './uploadSigning.js';

export interface LocalStorageOptions {
  /** The folder of the objects (DATA_DIR/storage). */
  root: string;
  /** SESSION_SECRET: the signing key of the URLs is derived from it. */
  secret: string;
  /** Prefix of the signed URLs (root-relative by default: the API serves them). */
  baseUrl?: string;
}

const UPLOAD_ID = /^[a-f0-9]{32}$/;

/**
 * Objects as files under one folder. Writes go to `.tmp/` and are linked into place when complete,
 * so a reader never sees half an object, and never over an existing one (objects are immutable). Multipart uploads keep their parts in
 * `.multipart/{uploadId}/` until completion concatenates them.
 */
export class LocalStorage implements ObjectStorage, UploadUrlSigner {
  readonly kind = 'local' as const;
  readonly signer: UrlSigner;
  private readonly root: string;
  private readonly baseUrl: string;

  constructor(options: LocalStorageOptions) {
    this.root = path.resolve(options.root);
    this.signer = new UrlSigner(options.secret);
    this.baseUrl = options.baseUrl ?? '/api/storage';
  }

  private ready: Promise<void> | null = null;

  /** Creates the folders (once; every write waits for it). */
  init(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(path.join(this.root, '.tmp'), { recursive: true });
      await mkdir(path.join(this.root, '.multipart'), { recursive: true });
    })();
    return this.ready;
  }

  async ping(): Promise<void> {
    await mkdir(path.join(this.root, '.tmp'), { recursive: true });
    await access(this.root, fsConstants.R_OK | fsConstants.W_OK);
  }

  localPath(key: string): string {
    assertValidKey(key);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error('key escapes the storage root');
    return full;
  }

  private async tempPath(): Promise<string> {
    await this.init();
    return path.join(this.root, '.tmp', `${randomUUID()}.part`);
  }

  /**
   * Puts a complete file in place under `key` unless an object is already there: a hard link fails
   * with EEXIST where a rename would replace (If-None-Match: * semantics, atomically).
   */
  private async placeNew(file: string, key: string): Promise<void> {
    const target = this.localPath(key);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await link(file, target);
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') throw new ObjectExistsError(key);
      throw error;
    }
    await unlink(file);
  }

  private uploadDir(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new NoSuchUploadError('No such upload');
    return path.join(this.root, '.multipart', uploadId);
  }

  // --- signed URLs -------------------------------------------------------------------------

  signedUrl(
    op: SignedOp,
    key: string,
    expiresInSeconds: number,
    extra: { uploadId?: string; partNumber?: number; downloadName?: string } = {},
  ): string {
    assertValidKey(key);
    const expires = Math.floor(Date.now() / 1000) + expiresInSeconds;
    return `${this.baseUrl}/${encodeKey(key)}?${this.signer.sign({ op, key, expires, ...extra })}`;
  }

  async signedPutUrl(key: string, expiresInSeconds: number): Promise<string> {
    return this.signedUrl('put', key, expiresInSeconds);
  }

  async signedGetUrl(key: string, expiresInSeconds: number, downloadName?: string): Promise<string> {
    return this.signedUrl('get', key, expiresInSeconds, downloadName === undefined ? {} : { downloadName });
  }

  async signedPartUrl(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    return this.signedUrl('part', key, expiresInSeconds, { uploadId, partNumber });
  }

  async signedCreateMultipartUrl(key: string, expiresInSeconds: number): Promise<string> {
    return this.signedUrl('create', key, expiresInSeconds);
  }

  async signedListPartsUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string> {
    return this.signedUrl('list', key, expiresInSeconds, { uploadId });
  }

  async signedCompleteMultipartUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string> {
    return this.signedUrl('complete', key, expiresInSeconds, { uploadId });
  }

  async signedAbortMultipartUrl(key: string, uploadId: string, expiresInSeconds: number): Promise<string> {
    return this.signedUrl('abort', key, expiresInSeconds, { uploadId });
  }

  // --- objects -------------------------------------------------------------------------------

  async head(key: string): Promise<{ size: number; version: string } | null> {
    const file = this.localPath(key);
    try {
      const s = await stat(file, { bigint: true });
      return s.isFile() ? { size: Number(s.size), version: `${s.ino}-${s.size}-${s.mtimeNs}` } : null;
    } catch {
      return null;
    }
  }

  async readRange(key: string, offset: number, length: number): Promise<Buffer> {
    const handle = await open(this.localPath(key), 'r');
    try {
      const buffer = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return done === length ? buffer : buffer.subarray(0, done);
    } finally {
      await handle.close();
    }
  }

  async createReadStream(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const file = this.localPath(key);
    await stat(file); // ENOENT now rather than on the stream
    return createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async write(key: string, body: Readable | Buffer | { filePath: string }): Promise<void> {
    this.localPath(key);
    const temp = await this.tempPath();
    try {
      if (Buffer.isBuffer(body)) await writeFile(temp, body);
      else if (body instanceof Readable) await pipeline(body, createWriteStream(temp));
      else await copyFile(body.filePath, temp);
      await this.placeNew(temp, key);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async move(from: string, to: string): Promise<void> {
    const source = this.localPath(from);
    await this.placeNew(source, to);
    await rmdir(path.dirname(source)).catch(() => undefined); // the upload's own folder, when now empty
  }

  /**
   * Streams a request body into `key`, atomically; with `expectedSize` a short or long body is
   * refused (a dropped connection never leaves a truncated object). Returns size and MD5 (the ETag).
   */
  async writeStream(key: string, body: Readable, expectedSize?: number): Promise<{ size: number; etag: string }> {
    if (await this.head(key)) throw new ObjectExistsError(key); // before reading a body that cannot be kept
    const temp = await this.tempPath();
    try {
      const result = await streamToFile(body, temp, expectedSize);
      await this.placeNew(temp, key);
      return result;
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.localPath(key), { force: true });
  }

  // --- multipart -----------------------------------------------------------------------------

  async createMultipartUpload(key: string): Promise<{ uploadId: string }> {
    assertValidKey(key);
    await this.init();
    const uploadId = randomBytes(16).toString('hex');
    const dir = this.uploadDir(uploadId);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'upload.json'), JSON.stringify({ key, createdAt: new Date().toISOString() }));
    return { uploadId };
  }

  private async checkUpload(key: string, uploadId: string): Promise<string> {
    const dir = this.uploadDir(uploadId);
    let meta: { key?: unknown };
    try {
      meta = JSON.parse(await readFile(path.join(dir, 'upload.json'), 'utf8')) as { key?: unknown };
    } catch {
      throw new NoSuchUploadError('No such upload');
    }
    if (meta.key !== key) throw new NoSuchUploadError('No such upload');
    return dir;
  }

  /** Stores one part (replacing an earlier one of the same number); returns its ETag (MD5 hex). */
  async writePart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: Readable,
    expectedSize?: number,
  ): Promise<{ size: number; etag: string }> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000)
      throw new InvalidPartError('Part numbers run from 1 to 10000');
    const dir = await this.checkUpload(key, uploadId);
    const temp = await this.tempPath();
    try {
      const result = await streamToFile(body, temp, expectedSize);
      const name = String(partNumber).padStart(5, '0');
      await rename(temp, path.join(dir, `${name}.part`));
      await writeFile(path.join(dir, `${name}.etag`), result.etag);
      return result;
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async listParts(key: string, uploadId: string): Promise<{ partNumber: number; size: number; etag: string }[]> {
    const dir = await this.checkUpload(key, uploadId);
    const parts: { partNumber: number; size: number; etag: string }[] = [];
    for (const name of (await readdir(dir)).filter((n) => n.endsWith('.part')).sort()) {
      const base = name.slice(0, -5);
      try {
        const etag = (await readFile(path.join(dir, `${base}.etag`), 'utf8')).trim();
        const { size } = await stat(path.join(dir, name));
        parts.push({ partNumber: Number(base), size, etag });
      } catch {
        // a part whose ETag is not written yet is still being stored: not listed
      }
    }
    return parts;
  }

  async completeMultipartUpload(
    key: string,
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
  ): Promise<void> {
    const dir = await this.checkUpload(key, uploadId);
    const stored = new Map((await this.listParts(key, uploadId)).map((p) => [p.partNumber, p]));
    let previous = 0;
    let expected = 0;
    for (const part of parts) {
      if (part.partNumber <= previous)
        throw new InvalidPartError('Parts must be listed in ascending order without repeats');
      previous = part.partNumber;
      const have = stored.get(part.partNumber);
      if (!have) throw new InvalidPartError(`Part ${part.partNumber} was not uploaded`);
      if (have.etag !== part.etag.replace(/"/g, ''))
        throw new InvalidPartError(`Part ${part.partNumber} has a different ETag`);
      expected += have.size;
    }
    if (await this.head(key)) throw new ObjectExistsError(key);
    const temp = await this.tempPath();
    try {
      const out = createWriteStream(temp);
      await pipeline(async function* () {
        for (const part of parts) {
          yield* createReadStream(path.join(dir, `${String(part.partNumber).padStart(5, '0')}.part`));
        }
      }, out);
      const { size } = await stat(temp);
      if (size !== expected) throw new InvalidPartError(`Assembled ${size} bytes, expected ${expected}`);
      await this.placeNew(temp, key);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await rm(dir, { recursive: true, force: true });
  }

  /**
   * Housekeeping: removes temporary files of interrupted writes older than `tmpMaxAgeMs` and
   * multipart uploads nobody completed within `uploadMaxAgeMs`. Returns how many were removed.
   */
  async removeStale(tmpMaxAgeMs = 24 * 3600_000, uploadMaxAgeMs = 7 * 24 * 3600_000): Promise<number> {
    await this.init();
    let removed = 0;
    const now = Date.now();
    for (const [folder, maxAge] of [
      ['.tmp', tmpMaxAgeMs],
      ['.multipart', uploadMaxAgeMs],
    ] as const) {
      const dir = path.join(this.root, folder);
      for (const name of await readdir(dir)) {
        const entry = path.join(dir, name);
        const { mtimeMs } = await stat(entry).catch(() => ({ mtimeMs: now }));
        if (now - mtimeMs > maxAge) {
          await rm(entry, { recursive: true, force: true });
          removed++;
        }
      }
    }
    return removed;
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    const dir = await this.checkUpload(key, uploadId);
    await rm(dir, { recursive: true, force: true });
  }
}

export class SizeMismatchError extends Error {
  override readonly name = 'SizeMismatchError';
}

/** Streams into a file, counting bytes and computing MD5; refuses a body of the wrong length. */
async function streamToFile(
  body: Readable,
  file: string,
  expectedSize?: number,
): Promise<{ size: number; etag: string }> {
  const md5 = createHash('md5');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (expectedSize !== undefined && size > expectedSize) {
        callback(new SizeMismatchError(`Received more than the announced ${expectedSize} bytes`));
        return;
      }
      md5.update(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(body, meter, createWriteStream(file));
  if (expectedSize !== undefined && size !== expectedSize)
    throw new SizeMismatchError(`Received ${size} of ${expectedSize} bytes`);
  return { size, etag: md5.digest('hex') };
}
