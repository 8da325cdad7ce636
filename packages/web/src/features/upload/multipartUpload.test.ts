import { describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { mockFetch } from '../../test/mockFetch';
import { fakeXhr, type FakeReply, type FakeRequest } from './fakeXhr';
import { uploadMultipart } from './multipartUpload';
import { UploadAbortedError } from './putWithProgress';

const MB = 1024 * 1024;
const KEY = 'uploads/3/0b9e/big.svs';

/** POST /api/uploads/sign as the server answers it: a signed URL per S3 request; a key for the new object. */
function signer() {
  setCsrfToken('csrf');
  return mockFetch({
    'POST /api/uploads/sign': (call) => {
      const r = call.body as { method: string; key: string; uploadId?: string; partNumber?: number; fileName?: string };
      const base = `/api/storage/${KEY}`;
      if (!r.uploadId) return { body: { url: `${base}?op=create&sig=s`, key: KEY } };
      const id = `uploadId=${r.uploadId}`;
      if (r.method === 'PUT') return { body: { url: `${base}?op=part&${id}&partNumber=${r.partNumber}&sig=s` } };
      if (r.method === 'GET') return { body: { url: `${base}?op=list&${id}&sig=s` } };
      if (r.method === 'POST') return { body: { url: `${base}?op=complete&${id}&sig=s` } };
      return { body: { url: `${base}?op=abort&${id}&sig=s` } };
    },
  });
}

/** An S3 multipart server in memory (the XML of the S3 API), with a hook to drop requests. */
function fakeS3(drop: (request: FakeRequest, op: string, part: number) => FakeReply | null = () => null) {
  const parts = new Map<number, number>();
  const log: string[] = [];
  const server = fakeXhr((request) => {
    const url = new URL(request.url, 'http://localhost');
    const op = url.searchParams.get('op') ?? '';
    const part = Number(url.searchParams.get('partNumber') ?? 0);
    log.push(part ? `${op} ${part}` : op);
    const dropped = drop(request, op, part);
    if (dropped) return dropped;
    switch (op) {
      case 'create':
        return {
          status: 200,
          body: '<InitiateMultipartUploadResult><UploadId>up-1</UploadId></InitiateMultipartUploadResult>',
        };
      case 'part':
        parts.set(part, request.size);
        return { status: 200, headers: { ETag: `"etag-${part}"` } };
      case 'list':
        return {
          status: 200,
          body: `<ListPartsResult>${[...parts.keys()]
            .map(
              (n) => `<Part><PartNumber>${n}</PartNumber><ETag>"etag-${n}"</ETag><Size>${parts.get(n)}</Size></Part>`,
            )
            .join('')}</ListPartsResult>`,
        };
      case 'complete':
        return {
          status: 200,
          body: `<CompleteMultipartUploadResult><Location>/api/storage/${KEY}</Location><Key>${KEY}</Key></CompleteMultipartUploadResult>`,
        };
      case 'abort':
        return { status: 204 };
      default:
        return { status: 400 };
    }
  });
  return { parts, log, requests: server.requests };
}

const bigFile = () => new File([new Uint8Array(11 * MB)], 'big.svs', { type: 'image/tiff' });

describe('uploadMultipart (Uppy @uppy/aws-s3, server-signed)', () => {
  it('uploads in 5 MiB parts and completes, the key chosen by the server', async () => {
    const { calls } = signer();
    const s3 = fakeS3();
    const progress: number[] = [];
    const result = await uploadMultipart(bigFile(), {
      studyId: 3,
      onProgress: (loaded) => progress.push(loaded),
      partBytes: 5 * MB,
    });
    expect(result).toEqual({ key: KEY, url: `/api/storage/${KEY}` });
    expect([...s3.parts.entries()]).toEqual([
      [1, 5 * MB],
      [2, 5 * MB],
      [3, 1 * MB],
    ]);
    expect(s3.log).toEqual(['create', 'part 1', 'part 2', 'part 3', 'complete']);
    expect(progress.at(-1)).toBe(11 * MB);
    const first = calls[0]?.body as Record<string, unknown>;
    expect(first).toMatchObject({ studyId: 3, method: 'POST', fileName: 'big.svs' });
    // Every later request names the server's key.
    expect(calls.slice(1).every((c) => (c.body as { key: string }).key === KEY)).toBe(true);
  });

  it('resumes after a dropped connection without re-sending the parts already stored', async () => {
    signer();
    let failures = 0;
    // Part 2 fails 4 times: Uppy's own 3 retries are exhausted and the upload errors; the resume
    // lists the stored parts and sends only 2 and 3.
    const s3 = fakeS3((_request, op, part) => (op === 'part' && part === 2 && failures++ < 4 ? 'network-error' : null));
    const result = await uploadMultipart(bigFile(), {
      studyId: 3,
      onProgress: () => {},
      partBytes: 5 * MB,
      resumeDelayMs: () => 0,
    });
    expect(result.key).toBe(KEY);
    expect(s3.log.filter((l) => l === 'part 1')).toHaveLength(1);
    expect(s3.log.filter((l) => l === 'part 2')).toHaveLength(5);
    expect(s3.log.filter((l) => l === 'list')).toHaveLength(1);
    expect(s3.log.at(-1)).toBe('complete');
    expect(s3.log.indexOf('list')).toBeLessThan(s3.log.lastIndexOf('part 2'));
    const complete = s3.requests.find((r) => r.url.includes('op=complete'));
    expect(String(complete?.body)).toContain('<PartNumber>1</PartNumber><ETag>"etag-1"</ETag>');
    expect(String(complete?.body)).toContain('<PartNumber>3</PartNumber>');
  }, 20_000);

  it('gives up with the storage URL after the resumes are used up', async () => {
    signer();
    fakeS3((_r, op) => (op === 'part' ? 'network-error' : null));
    await expect(
      uploadMultipart(bigFile(), { studyId: 3, onProgress: () => {}, partBytes: 5 * MB, maxResumes: 0 }),
    ).rejects.toMatchObject({ name: 'MultipartUploadError', url: `/api/storage/${KEY}` });
  }, 20_000);

  it('stops on abort and aborts the multipart upload in storage', async () => {
    signer();
    const s3 = fakeS3((_r, op) => (op === 'part' ? 'hang' : null));
    const controller = new AbortController();
    const upload = uploadMultipart(bigFile(), {
      studyId: 3,
      onProgress: () => {},
      partBytes: 5 * MB,
      signal: controller.signal,
    });
    await vi.waitFor(() => expect(s3.log).toContain('part 1'));
    controller.abort();
    await expect(upload).rejects.toBeInstanceOf(UploadAbortedError);
    await vi.waitFor(() => expect(s3.log).toContain('abort'));
  });
});
