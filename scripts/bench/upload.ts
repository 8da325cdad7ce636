/**
 * npm run bench:upload — a large file (2 GiB by default; BENCH_UPLOAD_MB) through the local
 * storage's signed URLs on loopback, against the real server (ROLES=api) on a fresh DATA_DIR:
 *   1. one signed PUT (POST /api/signed-urls, then PUT the bytes), as the dialog sends small files;
 *   2. the resumable multipart upload, as Uppy sends large files: parts of MULTIPART_PART_BYTES
 *      one after the other, each signed by POST /api/uploads/sign, then CompleteMultipartUpload.
 * Prints throughput and the server's memory (resident set before, highest during, peak), and checks
 * the stored object's SHA-256 against the file's.
 */
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, existsSync, openSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { MULTIPART_PART_BYTES } from '@lamina/domain';
import {
  api,
  BENCH_DIR,
  cpuInfo,
  log,
  login,
  memoryOf,
  sampleMemory,
  sleep,
  startServer,
  type RunningServer,
  type Session,
} from './lib.js';

const MB = 1024 * 1024;
const SIZE_MB = Number(process.env.BENCH_UPLOAD_MB ?? 2048);
const PASSWORD = 'bench-password';

function makeFile(file: string, bytes: number): void {
  if (existsSync(file) && statSync(file).size === bytes) return;
  log(`writing ${(bytes / MB).toFixed(0)} MiB of random bytes to ${path.basename(file)}`);
  const fd = openSync(file, 'w');
  const chunk = Buffer.allocUnsafe(64 * MB);
  for (let done = 0; done < bytes;) {
    const n = Math.min(chunk.length, bytes - done);
    randomFillSync(chunk, 0, n);
    writeSync(fd, chunk, 0, n);
    done += n;
  }
  closeSync(fd);
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * MB })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** PUTs a byte range of a file, streamed; resolves with the response's ETag and body. */
function put(url: string, file: string, start: number, end: number): Promise<{ etag: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(url),
      { method: 'PUT', headers: { 'Content-Length': end - start + 1, 'Content-Type': 'application/octet-stream' } },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () =>
          (res.statusCode ?? 500) < 300
            ? resolve({ etag: res.headers.etag ?? '', body })
            : reject(new Error(`PUT ${res.statusCode}: ${body}`)),
        );
      },
    );
    req.on('error', reject);
    createReadStream(file, { start, end, highWaterMark: MB }).pipe(req);
  });
}

async function send(method: string, url: string, body?: string): Promise<string> {
  const response = await fetch(url, {
    method,
    body: body ?? null,
    headers: body ? { 'Content-Type': 'application/xml' } : {},
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url.split('?')[0] ?? ''}: ${response.status} ${text}`);
  return text;
}

/** Waits until the server has been nearly idle for 2 s (the demo slide is made at start). */
async function settle(pid: number): Promise<void> {
  const ticks = async () => {
    const { readFileSync } = await import('node:fs');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(stat[11] ?? 0) + Number(stat[12] ?? 0);
  };
  let quiet = 0;
  for (let i = 0; i < 120 && quiet < 2; i++) {
    const a = await ticks();
    await sleep(1000);
    quiet = (await ticks()) - a < 5 ? quiet + 1 : 0;
  }
}

interface Measured {
  seconds: number;
  before: number;
  maxRss: number;
  peak: number;
  key: string;
}

async function measure(server: RunningServer, work: () => Promise<string>): Promise<Measured> {
  await settle(server.pid);
  const before = memoryOf(server.pid)?.rss ?? 0;
  const memory = sampleMemory(server.pid, 50);
  const started = performance.now();
  const key = await work();
  const seconds = (performance.now() - started) / 1000;
  const { maxRss, peak } = memory.stop();
  return { seconds, before, maxRss, peak, key };
}

async function main(): Promise<void> {
  log(cpuInfo());
  const file = path.join(BENCH_DIR, `upload-${SIZE_MB}m.bin`);
  const bytes = SIZE_MB * MB;
  makeFile(file, bytes);
  const expected = await sha256(file);
  const dataDir = path.join(BENCH_DIR, 'upload-data');
  rmSync(dataDir, { recursive: true, force: true });
  log('starting the server (ROLES=api, local storage) on a fresh data folder');
  const server = await startServer({
    DATA_DIR: dataDir,
    SESSION_SECRET: 'bench',
    DEMO: 'true',
    DEMO_PASSWORD: PASSWORD,
    ROLES: 'api',
    LOG_LEVEL: 'warn',
  });
  try {
    const session: Session = await login(server.url, 'uploader', PASSWORD);
    const { studies } = await api<{ studies: { id: number; name: string }[] }>(
      server.url,
      session,
      'GET',
      '/api/studies/list?page=1&pageSize=100',
    );
    const studyId = (studies.find((s) => s.name.startsWith('DEMO-')) ?? studies[0])?.id;
    if (!studyId) throw new Error('no study visible to uploader');

    const single = await measure(server, async () => {
      const signed = await api<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>(
        server.url,
        session,
        'POST',
        '/api/signed-urls',
        {
          studyId,
          fileNames: ['bench-upload.svs'],
        },
      );
      const target = signed.data.urls[0];
      if (!target) throw new Error('no signed URL');
      await put(new URL(target.signedUrl, server.url).toString(), file, 0, bytes - 1);
      return target.s3Key;
    });

    const multipart = await measure(server, async () => {
      const sign = (body: Record<string, unknown>) =>
        api<{ url: string; key?: string }>(server.url, session, 'POST', '/api/uploads/sign', {
          studyId,
          fileName: 'bench-multipart.svs',
          ...body,
        });
      const created = await sign({ method: 'POST', key: 'bench-multipart.svs' });
      const key = created.key ?? '';
      const xml = await send('POST', new URL(created.url, server.url).toString());
      const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(xml)?.[1];
      if (!uploadId) throw new Error(`no UploadId in ${xml}`);
      const parts: string[] = [];
      for (let n = 1, start = 0; start < bytes; n++, start += MULTIPART_PART_BYTES) {
        const { url } = await sign({ method: 'PUT', key, uploadId, partNumber: n });
        const { etag } = await put(
          new URL(url, server.url).toString(),
          file,
          start,
          Math.min(bytes, start + MULTIPART_PART_BYTES) - 1,
        );
        parts.push(`<Part><PartNumber>${n}</PartNumber><ETag>${etag}</ETag></Part>`);
      }
      const { url } = await sign({ method: 'POST', key, uploadId });
      await send(
        'POST',
        new URL(url, server.url).toString(),
        `<CompleteMultipartUpload>${parts.join('')}</CompleteMultipartUpload>`,
      );
      return key;
    });

    console.log('');
    console.log(
      `Upload of ${(bytes / MB).toFixed(0)} MiB on loopback to the local storage (server: real process, ROLES=api)`,
    );
    for (const [name, m] of [
      ['signed PUT', single],
      [`multipart (${MULTIPART_PART_BYTES / MB} MiB parts)`, multipart],
    ] as const) {
      const stored = path.join(dataDir, 'storage', m.key);
      const intact = statSync(stored).size === bytes && (await sha256(stored)) === expected;
      console.log(
        `${name.padEnd(26)} ${m.seconds.toFixed(1).padStart(6)} s  ${(bytes / MB / m.seconds).toFixed(0).padStart(5)} MiB/s  server RSS ${m.before.toFixed(0)} MiB before, ${m.maxRss.toFixed(0)} MiB max during (peak since start ${m.peak.toFixed(0)} MiB)  SHA-256 ${intact ? 'identical' : 'DIFFERENT'}`,
      );
    }
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
