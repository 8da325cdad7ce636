import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStorage } from '../src/platform/storage/localStorage.js';
import { S3Storage } from '../src/platform/storage/s3Storage.js';
import { isValidKey, safeFileName, studyIdOfUploadKey, uploadKey, UrlSigner } from '../src/platform/storage/keys.js';
import { InvalidPartError, NoSuchUploadError } from '../src/platform/storage/uploadSigning.js';
import type { ObjectStorage } from '../src/platform/storage/storage.js';
import { startS3Server } from './factories.js';

let dir: string;
let local: LocalStorage;
let s3: S3Storage;
let s3server: Awaited<ReturnType<typeof startS3Server>>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lamina-storage-'));
  local = new LocalStorage({ root: path.join(dir, 'storage'), secret: 'test-secret' });
  s3server = await startS3Server();
  s3 = new S3Storage(s3server.options);
});

afterAll(async () => {
  s3.client.destroy();
  await s3server.close();
  await rm(dir, { recursive: true, force: true });
});

const bytes = (n: number, seed = 1) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 0xff));

describe('keys', () => {
  it('accepts relative keys of safe segments only', () => {
    expect(isValidKey('uploads/1/abc/slide.svs')).toBe(true);
    expect(isValidKey('images/2/pyramid.tif')).toBe(true);
    for (const bad of [
      '',
      '/etc/passwd',
      '../x',
      'a/../b',
      'a/./b',
      'a//b',
      '.tmp/x',
      'a/.multipart',
      'a\\b',
      'a/b c',
      'a/%2e%2e',
      'x\u0000y',
    ]) {
      expect(isValidKey(bad), bad).toBe(false);
    }
  });

  it('makes file names safe and keeps uploads under the study prefix', () => {
    expect(safeFileName('../../evil name (1).SVS')).toBe('evil_name_1.SVS');
    expect(safeFileName('...')).toBe('file');
    const key = uploadKey(12, 'My Slide.svs');
    expect(key).toMatch(/^uploads\/12\/[0-9a-f-]{36}\/My_Slide\.svs$/);
    expect(studyIdOfUploadKey(key)).toBe(12);
    expect(studyIdOfUploadKey('images/12/pyramid.tif')).toBeNull();
    expect(studyIdOfUploadKey('uploads/12/short/x.svs')).toBeNull();
  });

  it('signed URL claims: forged, tampered or expired signatures are refused', () => {
    const signer = new UrlSigner('secret-a');
    const now = Date.now();
    const query = Object.fromEntries(
      new URLSearchParams(signer.sign({ op: 'put', key: 'uploads/1/x/a.svs', expires: Math.floor(now / 1000) + 60 })),
    );
    expect(signer.verify('uploads/1/x/a.svs', query, now)).toMatchObject({ op: 'put' });
    expect(signer.verify('uploads/1/x/b.svs', query, now)).toBeNull(); // another key
    expect(signer.verify('uploads/1/x/a.svs', { ...query, op: 'get' }, now)).toBeNull(); // another operation
    expect(
      signer.verify('uploads/1/x/a.svs', { ...query, expires: String(Number(query.expires) + 3600) }, now),
    ).toBeNull();
    expect(signer.verify('uploads/1/x/a.svs', query, now + 61_000)).toBeNull(); // expired
    expect(new UrlSigner('secret-b').verify('uploads/1/x/a.svs', query, now)).toBeNull(); // other secret
  });
});

describe.each([
  ['local', () => local as ObjectStorage],
  ['s3 (s3rver)', () => s3 as ObjectStorage],
])('%s storage', (_name, storage) => {
  it('writes from a buffer, a stream and a file; heads, reads ranges and streams; deletes', async () => {
    const s = storage();
    const data = bytes(100_000);
    await s.write('t/buffer.bin', data);
    await s.write('t/stream.bin', Readable.from([data.subarray(0, 50_000), data.subarray(50_000)]));
    const file = path.join(dir, 'source.bin');
    await writeFile(file, data);
    await s.write('t/file.bin', { filePath: file });
    for (const key of ['t/buffer.bin', 't/stream.bin', 't/file.bin']) {
      expect(await s.head(key)).toMatchObject({ size: 100_000 });
      expect(await s.readRange(key, 1234, 100)).toEqual(data.subarray(1234, 1334));
    }
    const chunks: Buffer[] = [];
    for await (const c of await s.createReadStream('t/file.bin', { start: 10, end: 19 })) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks)).toEqual(data.subarray(10, 20));
    await s.delete('t/buffer.bin');
    expect(await s.head('t/buffer.bin')).toBeNull();
    expect(await s.head('t/never.bin')).toBeNull();
  });

  it('refuses keys that could escape the storage', async () => {
    const s = storage();
    await expect(s.write('../escape.bin', Buffer.from('x'))).rejects.toThrow(/Invalid object key/);
    await expect(s.head('../../etc/passwd')).rejects.toThrow(/Invalid object key/);
  });

  it('presigned PUT and GET URLs work over HTTP', async () => {
    const s = storage();
    if (s.kind === 'local') return; // the local URLs are served by the API: tested in uploads.test.ts
    const data = bytes(2048, 3);
    const put = await fetch(await s.signedPutUrl('t/presigned.bin', 60), { method: 'PUT', body: data });
    expect(put.status).toBe(200);
    const get = await fetch(await s.signedGetUrl('t/presigned.bin', 60, 'my slide.svs'));
    expect(Buffer.from(await get.arrayBuffer())).toEqual(data);
    expect(get.headers.get('content-disposition')).toContain("filename*=UTF-8''my%20slide.svs");
  });

  it('multipart: parts in, completed in order into one object', async () => {
    const s = storage();
    const key = 't/multipart.bin';
    const { uploadId } = await s.createMultipartUpload(key);
    const part1 = bytes(5 * 1024 * 1024, 1); // S3 needs 5 MiB parts except the last
    const part2 = bytes(1000, 2);
    const etags: string[] = [];
    for (const [n, part] of [part1, part2].entries()) {
      const response = await uploadPart(s, key, uploadId, n + 1, part);
      expect(response.status).toBe(200);
      etags.push((response.headers.get('etag') ?? '').replace(/"/g, ''));
    }
    await s.completeMultipartUpload(
      key,
      uploadId,
      etags.map((etag, i) => ({ partNumber: i + 1, etag })),
    );
    expect(await s.head(key)).toMatchObject({ size: part1.length + part2.length });
    expect(await s.readRange(key, part1.length - 2, 4)).toEqual(
      Buffer.concat([part1.subarray(-2), part2.subarray(0, 2)]),
    );
  });
});

/** PUT of a part to its signed URL: over HTTP for S3; straight into the local store otherwise. */
async function uploadPart(
  s: ObjectStorage,
  key: string,
  uploadId: string,
  partNumber: number,
  data: Buffer,
): Promise<Response> {
  if (s instanceof LocalStorage) {
    const { etag } = await s.writePart(key, uploadId, partNumber, Readable.from([data]), data.length);
    return new Response(null, { status: 200, headers: { etag: `"${etag}"` } });
  }
  return fetch(await s.signedPartUrl(key, uploadId, partNumber, 60), { method: 'PUT', body: data });
}

describe('local storage specifics', () => {
  it('multipart: lists stored parts, checks ETags and order, and cleans up', async () => {
    const key = 'uploads/1/aaaaaaaa-0000-0000-0000-000000000000/x.svs';
    const { uploadId } = await local.createMultipartUpload(key);
    const a = await local.writePart(key, uploadId, 1, Readable.from([bytes(10, 1)]), 10);
    await local.writePart(key, uploadId, 2, Readable.from([bytes(20, 2)]), 20);
    expect(await local.listParts(key, uploadId)).toEqual([
      { partNumber: 1, size: 10, etag: a.etag },
      { partNumber: 2, size: 20, etag: expect.stringMatching(/^[0-9a-f]{32}$/) as unknown },
    ]);
    await expect(local.listParts('uploads/1/other/x.svs', uploadId)).rejects.toBeInstanceOf(NoSuchUploadError);
    await expect(
      local.completeMultipartUpload(key, uploadId, [{ partNumber: 1, etag: 'wrong' }]),
    ).rejects.toBeInstanceOf(InvalidPartError);
    await expect(local.completeMultipartUpload(key, uploadId, [{ partNumber: 3, etag: a.etag }])).rejects.toThrow(
      /Part 3 was not uploaded/,
    );
    const parts = await local.listParts(key, uploadId);
    await expect(local.completeMultipartUpload(key, uploadId, [...parts].reverse())).rejects.toThrow(/ascending/);
    await local.completeMultipartUpload(key, uploadId, parts);
    expect(await readFile(local.localPath(key))).toEqual(Buffer.concat([bytes(10, 1), bytes(20, 2)]));
    expect(await readdir(path.join(dir, 'storage', '.multipart'))).toEqual([]);
    expect(await readdir(path.join(dir, 'storage', '.tmp'))).toEqual([]);
  });

  it('housekeeping removes stale temporary files and abandoned multipart uploads only', async () => {
    const old = new Date(Date.now() - 8 * 24 * 3600_000);
    const staleTmp = path.join(dir, 'storage', '.tmp', 'stale.part');
    await writeFile(staleTmp, 'x');
    await utimes(staleTmp, old, old);
    const abandoned = await local.createMultipartUpload('t/abandoned.bin');
    await utimes(path.join(dir, 'storage', '.multipart', abandoned.uploadId), old, old);
    const fresh = await local.createMultipartUpload('t/fresh.bin');
    expect(await local.removeStale()).toBe(2);
    expect(await readdir(path.join(dir, 'storage', '.tmp'))).toEqual([]);
    expect(await readdir(path.join(dir, 'storage', '.multipart'))).toEqual([fresh.uploadId]);
    await local.abortMultipartUpload('t/fresh.bin', fresh.uploadId);
  });

  it('a short body never becomes an object (temporary file removed)', async () => {
    await expect(local.writeStream('t/short.bin', Readable.from([bytes(10)]), 11)).rejects.toThrow(
      /Received 10 of 11 bytes/,
    );
    await expect(local.writeStream('t/long.bin', Readable.from([bytes(12)]), 11)).rejects.toThrow(/more than/);
    expect(await local.head('t/short.bin')).toBeNull();
    expect(await local.head('t/long.bin')).toBeNull();
    expect(await readdir(path.join(dir, 'storage', '.tmp'))).toEqual([]);
  });
});
