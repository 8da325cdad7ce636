/**
 * npm run bench:im-data — Image Management's data in and out at trial size (issue 12):
 * - the CSV export of both lists (`?reportFormat=csv`, every column the study admin may view, no
 *   filter), streamed from a database cursor: rows, megabytes, seconds, and the server's highest
 *   resident memory while it streams (the goal: 1 000 000 rows under 300 MB RSS);
 * - a sample-data import of BENCH_IMPORT_ROWS rows (50 000 by default; the goal: under a minute),
 *   built from file names of the export, each row setting QA Comments and Protocol ID, with the
 *   progress the dialog polls.
 *
 * Needs DATABASE_URL at a database filled by `npm run seed:scale`. Starts the real server
 * (ROLES=api) on a loopback port with a temporary DATA_DIR. The import changes the QA comments and
 * protocol IDs of those images in that database (a bench database, not a test one).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { csvLine, IM_CASE_COLUMNS, IM_IMAGE_COLUMNS } from '@lamina/domain';
import { api, cpuInfo, log, login, memoryOf, sampleMemory, startServer, type Session } from './lib.js';

const PASSWORD = process.env.SCALE_PASSWORD || 'scale-bench-password';
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 50_000);

interface ExportFigures {
  rows: number;
  mb: number;
  seconds: number;
  maxRssMb: number;
  names: string[];
}

/** Streams an export, counting lines; keeps the first `keep` values of the File Name column. */
async function exportList(url: string, session: Session, pid: number, tab: 'images' | 'cases', keep: number) {
  const memory = sampleMemory(pid, 50);
  const started = performance.now();
  const response = await fetch(`${url}/api/imageManagement/${tab}?reportFormat=csv`, {
    method: 'POST',
    headers: { Cookie: session.cookie, 'x-csrf-token': session.csrf, 'Content-Type': 'application/json' },
    // Every column the user may view (the server keeps only those).
    body: JSON.stringify({ columns: [...IM_IMAGE_COLUMNS, ...IM_CASE_COLUMNS].map((c) => c.key) }),
  });
  if (!response.ok || !response.body) throw new Error(`export ${tab}: ${response.status} ${await response.text()}`);
  const decoder = new TextDecoder();
  let bytes = 0;
  let lines = 0;
  let partial = '';
  const names: string[] = [];
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    const text = partial + decoder.decode(chunk, { stream: true });
    const parts = text.split('\r\n');
    partial = parts.pop() ?? '';
    lines += parts.length;
    // File Name is the first column of the images export; names have no commas in the seed.
    if (tab === 'images' && names.length < keep)
      for (const line of parts) if (names.length < keep && lines > 1) names.push(line.split(',')[0] ?? '');
  }
  const seconds = (performance.now() - started) / 1000;
  const { maxRss } = memory.stop();
  return { rows: lines - 1, mb: bytes / 1e6, seconds, maxRssMb: maxRss, names } satisfies ExportFigures;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required (a database filled by npm run seed:scale)');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lamina-bench-im-'));
  const server = await startServer({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ROLES: 'api',
    DEMO: 'false',
    SESSION_SECRET: 'bench-session-secret',
    LOG_LEVEL: 'warn',
  });
  try {
    log(`machine: ${cpuInfo()}`);
    const session = await login(server.url, 'scale-studyadmin', PASSWORD);
    // The server's own footprint before any export (what the export adds is the difference).
    await api(server.url, session, 'POST', '/api/imageManagement/images', { pageSize: 20 });
    log(`server RSS before the exports: ${(memoryOf(server.pid)?.rss ?? 0).toFixed(0)} MB`);
    const images = await exportList(server.url, session, server.pid, 'images', namesToKeep(IMPORT_ROWS));
    log(
      `export images: ${images.rows.toLocaleString('en-US')} rows, ${images.mb.toFixed(1)} MB in ${images.seconds.toFixed(1)} s; server max RSS ${images.maxRssMb.toFixed(0)} MB`,
    );
    const cases = await exportList(server.url, session, server.pid, 'cases', 0);
    log(
      `export cases: ${cases.rows.toLocaleString('en-US')} rows, ${cases.mb.toFixed(1)} MB in ${cases.seconds.toFixed(1)} s; server max RSS ${cases.maxRssMb.toFixed(0)} MB`,
    );

    const unique = [...new Set(images.names)].slice(0, IMPORT_ROWS);
    const stamp = new Date().toISOString();
    const file =
      csvLine(['File Name', 'QA Comments', 'Protocol ID']) +
      unique.map((name, i) => csvLine([name, `bench ${stamp} #${i}`, `BENCH-${i % 7}`])).join('');
    const { putSignedUrl, sampleDataRequest } = await api<{
      putSignedUrl: string;
      sampleDataRequest: { s3SampleDataKey: string };
    }>(server.url, session, 'POST', '/api/samples/upload', { fileName: 'bench-samples.csv' });
    const put = await fetch(new URL(putSignedUrl, server.url), { method: 'PUT', body: file });
    if (!put.ok) throw new Error(`PUT sample file: ${put.status}`);
    const memory = sampleMemory(server.pid, 100);
    const started = performance.now();
    const progress = setInterval(() => {
      void api<{ doneRows: number; totalRows: number }>(
        server.url,
        session,
        'GET',
        `/api/samples/progress?s3SampleDataKey=${encodeURIComponent(sampleDataRequest.s3SampleDataKey)}`,
      )
        .then((p) => log(`  import: ${p.doneRows} of ${p.totalRows} rows`))
        .catch(() => undefined);
    }, 5000);
    const result = await api<{ numRowsUpdated: number; numFieldsUpdated: number; numRowsFailed: number }>(
      server.url,
      session,
      'POST',
      '/api/samples/process',
      sampleDataRequest,
    );
    clearInterval(progress);
    const seconds = (performance.now() - started) / 1000;
    const { maxRss } = memory.stop();
    log(
      `import: ${unique.length.toLocaleString('en-US')} rows (${(file.length / 1e6).toFixed(1)} MB) in ${seconds.toFixed(1)} s — ${result.numRowsUpdated} updated, ${result.numFieldsUpdated} fields, ${result.numRowsFailed} failed; server max RSS ${maxRss.toFixed(0)} MB`,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** How many file names to keep from the export: the import's rows, with room for repeats. */
function namesToKeep(rows: number): number {
  return Math.ceil(rows * 1.2);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
