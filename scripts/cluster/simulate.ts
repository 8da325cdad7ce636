/**
 * `npm run test:cluster`: the scale-out simulation (docs/DEPLOYMENT.md, "Cluster simulation").
 *
 * A fresh PostgreSQL database, s3rver, 2 api + 2 tiles + 2 worker processes behind nginx. The
 * user path through nginx as the browser takes it (login with CSRF, signed-URL upload straight to
 * the bucket, registration, processing by a worker, tiles, a case, an annotation, a query); then
 * one process of each role is killed with SIGKILL mid-run — a worker while it builds a second
 * slide's pyramid, an api process while requests flow, a tiles process while tiles are fetched —
 * and the run shows no failed user action (retries counted), no job lost (the second slide is
 * finished by the other worker), the stored objects and the audit chain verifying. Exit 1 on any
 * failure; every process started is stopped in any case.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { ImageView } from '@lamina/domain';
import { Client, getBytes, newCounters } from './client.js';
import { NGINX, ROOT, SERVER_MAIN, sleep, startCluster, WEB_DIST, type Cluster, type ServerNode } from './cluster.js';
import { checkCompose } from './composeCheck.js';
import { COMPOSE_NGINX_CONF, COMPOSE_UPSTREAMS, renderLaminaConf } from './nginx.js';
import { tilePaths, uploadSlide, waitProcessed, type Study } from './userPath.js';
import { CHROMIUM, viewerPageLoad } from './viewerPage.js';

const PASSWORD = 'cluster-demo-password';
const SLIDES = path.resolve(ROOT, '..', 'shared', 'testdata', 'wsi');
/** The user path's slide: the smallest real slide with a pyramid worth tiling (1.9 MB, 2220 x 2967). */
const FIRST_SLIDE = path.join(SLIDES, 'CMU-1-Small-Region.svs');
/** The slide processed while its worker is killed: a JPEG 2000 Aperio slide (3.9 MB), slower to build. */
const SECOND_SLIDE = path.join(SLIDES, 'tcga-cr-7395-01a-01-ts1.svs');

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
function log(message: string): void {
  console.log(`[cluster ${elapsed().padStart(7)}] ${message}`);
}

class Check {
  readonly lines: string[] = [];
  failed = false;
  ok(what: string, pass: boolean, detail = ''): void {
    const line = `${pass ? 'PASS' : 'FAIL'}  ${what}${detail ? ` — ${detail}` : ''}`;
    this.lines.push(line);
    if (!pass) this.failed = true;
    log(line);
  }
}

function postgresUrl(): string {
  const base =
    process.env.CLUSTER_POSTGRES_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const url = new URL(base);
  url.pathname = '/postgres';
  return url.toString();
}

async function workerOfImage(db: pg.Client, imageId: number): Promise<string | null> {
  const { rows } = await db.query<{ worker: string }>(
    `select h.worker from job_heartbeats h join pgboss.job j on j.id = h.job_id where j.data->>'imageId' = $1`,
    [String(imageId)],
  );
  return rows[0]?.worker ?? null;
}

/**
 * A CLI of the server (npm run audit:verify, storage:verify) against the cluster's database and
 * bucket. Asynchronous: s3rver answers from this process's event loop.
 */
function runCli(script: string, env: Record<string, string>): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'packages/server/src/cli', script)], {
      cwd: ROOT,
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ ok: code === 0, output: output.trim() });
    });
  });
}

/** The CLI's own verdict: its last line that is not a Node warning. */
function verdict(output: string): string {
  const lines = output
    .split('\n')
    .filter((l) => l.trim() && !/Warning|node --trace-warnings|^\s|AWS SDK|node >=22|a\.co\//.test(l));
  return lines.at(-1) ?? output.slice(-300);
}

/** A process's resident memory (VmRSS), MiB. */
function rssMb(pid: number | undefined): string {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8'))?.[1];
    return kb ? (Number(kb) / 1024).toFixed(0) : '?';
  } catch {
    return '?';
  }
}

function nginxRetries(accessLog: string): number {
  if (!existsSync(accessLog)) return 0;
  return readFileSync(accessLog, 'utf8')
    .split('\n')
    .filter((line) => /statuses=\S*, /.test(line) || /statuses=\S+ : /.test(line)).length;
}

async function main(): Promise<number> {
  const check = new Check();
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install -y nginx-light`);
  for (const file of [FIRST_SLIDE, SECOND_SLIDE]) if (!existsSync(file)) throw new Error(`missing test slide ${file}`);

  let cluster: Cluster | null = null;
  try {
    cluster = await startCluster({
      postgresUrl: postgresUrl(),
      database: 'lamina_cluster',
      api: 2,
      tiles: 2,
      worker: 2,
      demoPassword: PASSWORD,
      log,
    });
    const compose = checkCompose(Object.keys(cluster.sharedEnv));
    check.ok(
      'compose.yaml and deploy/nginx/lamina.conf match the simulation',
      compose.problems.length === 0,
      compose.problems.join('; ') || compose.summary,
    );
    const { url } = cluster;
    const c = cluster;
    const node = (name: string): ServerNode => {
      const found = c.nodes.find((n) => n.name === name);
      if (!found) throw new Error(`no process ${name}`);
      return found;
    };
    const jobsDb = new pg.Client({ connectionString: cluster.databaseUrl });
    await jobsDb.connect();
    try {
      const counters = newCounters();

      // ── 1. The user path through nginx ─────────────────────────────────────────────────────
      if (existsSync(path.join(WEB_DIST, 'index.html'))) {
        const page = await fetch(`${url}/studies`);
        const html = await page.text();
        check.ok(
          'the app page through nginx',
          page.status === 200 && html.includes('<div id="root"'),
          `GET /studies ${page.status}`,
        );
      } else {
        log(`no built web app in ${WEB_DIST}: the app page is not checked (npm run build)`);
      }
      const ownId = 'sim-request-id-0001';
      const health = await fetch(`${url}/api/health`, { headers: { 'x-request-id': ownId } });
      check.ok('X-Request-Id passes nginx both ways', health.headers.get('x-request-id') === ownId);

      const uploader = new Client(url, 'uploader', counters);
      await uploader.login(PASSWORD);
      const { studies } = await uploader.expect<{ studies: Study[] }>(
        200,
        'GET',
        '/api/studies/list?page=1&pageSize=100',
      );
      const study = studies.find((s) => s.name.startsWith('DEMO-UC-001'));
      if (!study) throw new Error('the demo study is not visible to uploader');
      const t1 = Date.now();
      const firstId = await uploadSlide(uploader, study.id, FIRST_SLIDE);
      const first = await waitProcessed(uploader, firstId, 180);
      check.ok(
        'signed-URL upload to the bucket, registered, processed by a worker',
        first.processingStatus === 'SUCCESS',
        `image ${firstId} ${first.width} x ${first.height} in ${((Date.now() - t1) / 1000).toFixed(1)} s`,
      );
      const tiles = await tilePaths(first, counters, url);
      check.ok(
        'tiles through /tiles',
        tiles.length >= 3,
        `${tiles.length} tiles at ${(first.maxTmsZoom ?? 0) + 1} levels`,
      );

      if (existsSync(CHROMIUM) && existsSync(path.join(WEB_DIST, 'index.html'))) {
        const view = await viewerPageLoad(url, 'isc', PASSWORD, `/studies/${study.id}/images/${firstId}`);
        check.ok(
          'Chromium: login page and the image viewer through nginx',
          view.tiles >= 4 && view.failedTiles === 0 && view.cspErrors.length === 0,
          `${view.tiles} tiles shown, ${view.failedTiles} refused, ${view.cspErrors.length} CSP errors, ${(view.ms / 1000).toFixed(1)} s${view.cspErrors.length ? `: ${view.cspErrors.join(' | ').slice(0, 300)}` : ''}`,
        );
      } else {
        log(`no Chromium at ${CHROMIUM} or no built web app: the viewer page is not loaded`);
      }

      const labtech = new Client(url, 'labtech', counters);
      await labtech.login(PASSWORD);
      const made = await labtech.expect<{ case: { id: number } }>(201, 'POST', '/api/cases', {
        studyId: study.id,
        procId: `CLUSTER-${Date.now()}`,
        subjectId: 'S-CLUSTER',
        images: [firstId],
      });
      // The Data Manager assigns the reader (manual reader assignment).
      const dm = new Client(url, 'dm', counters);
      await dm.login(PASSWORD);
      const readers = await dm.expect<{ readers: { id: number; username: string }[] }>(
        200,
        'GET',
        `/api/studies/${study.id}/users`,
      );
      const reader1Id = readers.readers.find((r) => r.username === 'reader1')?.id;
      if (reader1Id === undefined) throw new Error('reader1 is not a reader of the demo study');
      await dm.expect(200, 'PATCH', `/api/cases/${made.case.id}`, {
        readers: { ids: [reader1Id], reasonForChange: 'Assigned for the cluster simulation' },
      });
      check.ok('a case with the slide, assigned to reader1', made.case.id > 0, `case ${made.case.id}`);

      const reader1 = new Client(url, 'reader1', counters);
      await reader1.login(PASSWORD);
      const annotate = async (x: number) =>
        reader1.expect<{ annotation: { id: number } }>(200, 'POST', '/api/annotations', {
          imageId: firstId,
          annotationType: 'POINT',
          geometry: { type: 'Point', coordinates: [x, 500] },
        });
      const annotation = await annotate(400);
      check.ok('reader1 annotates the slide', annotation.annotation.id > 0, `annotation ${annotation.annotation.id}`);

      const metadata = await reader1.expect<{
        roles: { id: number; name: string }[];
        imageReasons: { withRoleId: number; values: { reasonOptionId: number; children: { id: number }[] }[] }[];
      }>(200, 'GET', `/api/queries/metadata?studyId=${study.id}`);
      const labTechRole = metadata.roles.find((r) => r.name === 'LabTech')?.id;
      const reason = metadata.imageReasons
        .find((r) => r.withRoleId === labTechRole)
        ?.values.find((v) => v.children.length > 0);
      if (labTechRole === undefined || !reason) throw new Error('no image query reason to the Lab Technician');
      const raiseQuery = (text: string) =>
        reader1.expect<{ query: { id: number } }>(201, 'POST', '/api/queries/new', {
          queryObjectType: 'IMAGE',
          objectId: firstId,
          studyId: study.id,
          caseId: null,
          organizationId: null,
          category: 'OTHER',
          categoryOtherText: '',
          followUpInDays: 14,
          withRoleId: labTechRole,
          responseOptionId: reason.reasonOptionId,
          childResponseOptionId: reason.children[0]?.id,
          commentText: text,
        });
      const query = await raiseQuery('Out of focus (cluster simulation)');
      check.ok('reader1 raises a query to the Lab Technician', query.query.id > 0, `query ${query.query.id}`);

      // ── 2. One process of each role killed mid-run ─────────────────────────────────────────
      const died = c.nodes.filter((n) => !n.alive);
      check.ok(
        'every process still up before the kills',
        died.length === 0,
        died
          .map((n) => `${n.name} exited ${String(n.child.exitCode ?? n.child.signalCode)}: see ${n.logFile}`)
          .join('; '),
      );
      if (died.length > 0) throw new Error('a process died before the kills');
      log(`resident memory: ${c.nodes.map((n) => `${n.name} ${rssMb(n.child.pid)} MB`).join(', ')}`);
      // Background traffic as readers and viewers make it: list calls and image views through
      // the api processes, tile fetches through the tiles processes.
      let flowing = true;
      const load = { api: 0, tiles: 0 };
      const apiLoop = (async () => {
        while (flowing) {
          // A failure is recorded in counters.failures (the loop goes on).
          await uploader.expect(200, 'GET', '/api/studies/list?page=1&pageSize=20').catch(() => undefined);
          await uploader.expect(200, 'GET', `/api/images/${firstId}`).catch(() => undefined);
          load.api += 2;
        }
      })();
      const tileLoop = (async () => {
        for (let i = 0; flowing; i++) {
          const tile = tiles[i % tiles.length] ?? '';
          const r = await getBytes(tile, counters, 'viewer').catch(() => null);
          if (r && r.status !== 200) counters.failures.push(`viewer tile ${r.status}`);
          load.tiles++;
        }
      })();

      const secondId = await uploadSlide(uploader, study.id, SECOND_SLIDE);
      // The worker that took the job: its heartbeat names it (host:pid:…).
      let victimWorker: ServerNode | null = null;
      const claimDeadline = Date.now() + 120_000;
      while (!victimWorker) {
        const worker = await workerOfImage(jobsDb, secondId);
        const pid = worker ? Number(worker.split(':')[1]) : NaN;
        victimWorker = c.nodes.find((n) => n.role === 'worker' && n.child.pid === pid) ?? null;
        if (Date.now() > claimDeadline) throw new Error('no worker took the second slide');
        if (!victimWorker) await sleep(100);
      }
      const beforeKill = await uploader.expect<ImageView>(200, 'GET', `/api/images/${secondId}`);
      await cluster.kill(victimWorker);
      log(`SIGKILL ${victimWorker.name} while it processed image ${secondId} (status ${beforeKill.processingStatus})`);

      await sleep(1000);
      const api1 = node('api-1');
      await cluster.kill(api1);
      log(`SIGKILL api-1 while requests flow (${load.api} API requests so far)`);
      // Writes right after: they reach api-2 (nginx skips the dead process).
      const afterKill = await annotate(600);
      check.ok('a user action right after api-1 died', afterKill.annotation.id > 0);

      await sleep(1000);
      const tiles1 = node('tiles-1');
      await cluster.kill(tiles1);
      log(`SIGKILL tiles-1 while tiles are fetched (${load.tiles} tiles so far)`);
      await sleep(2000);
      const secondQuery = await raiseQuery('Second look (after the kills)');
      check.ok('a query raised after the kills', secondQuery.query.id > 0);

      const t2 = Date.now();
      const second = await waitProcessed(uploader, secondId, 120);
      const jobs = await jobsDb.query<{ state: string; retry_count: number }>(
        `select state, retry_count from pgboss.job where data->>'imageId' = $1`,
        [String(secondId)],
      );
      check.ok(
        'the killed worker’s slide is finished by the other worker',
        second.processingStatus === 'SUCCESS' && !victimWorker.alive,
        `image ${secondId} SUCCESS ${((Date.now() - t2) / 1000).toFixed(1)} s after the kill; job ${jobs.rows.map((j) => `${j.state}, retries ${j.retry_count}`).join('; ')}`,
      );
      const killed = new Set([victimWorker, api1, tiles1]);
      const lost = c.nodes.filter((n) => !killed.has(n) && !n.alive);
      check.ok(
        'no other process died',
        lost.length === 0,
        lost
          .map((n) => `${n.name} exited ${String(n.child.exitCode ?? n.child.signalCode)}: see ${n.logFile}`)
          .join('; '),
      );
      const secondTiles = await tilePaths(second, counters, url);
      check.ok('its tiles through /tiles', secondTiles.length >= 3, `${secondTiles.length} tiles`);
      flowing = false;
      await Promise.all([apiLoop, tileLoop]);

      // A job is marked completed just after its image's SUCCESS, and the demo slides' jobs may
      // still run on a loaded machine: look for up to 60 s.
      const unfinishedWork = async () => ({
        pending: await jobsDb.query<{ name: string; state: string; n: string }>(
          `select name, state, count(*)::text as n from pgboss.job
            where name in ('image-processing', 'image-processing-large') and state <> 'completed'
            group by name, state`,
        ),
        unfinished: await jobsDb.query<{ id: number; name: string; processing_status: string }>(
          `select id, name, processing_status from images where processing_status <> 'SUCCESS'`,
        ),
      });
      let { pending, unfinished } = await unfinishedWork();
      for (let i = 0; i < 120 && pending.rows.length + unfinished.rows.length > 0; i++) {
        await sleep(500);
        ({ pending, unfinished } = await unfinishedWork());
      }
      check.ok(
        'no job lost: every processing job completed, every image SUCCESS',
        pending.rows.length === 0 && unfinished.rows.length === 0,
        pending.rows.length + unfinished.rows.length === 0
          ? `${(await jobsDb.query('select 1 from images')).rowCount ?? 0} images`
          : `${JSON.stringify(pending.rows)} ${JSON.stringify(unfinished.rows)}`,
      );

      const retriesByCause = new Map<string, number>();
      for (const r of counters.retries) {
        const key = `${r.method} ${r.route.replace(/\/\d+/g, '/:id').replace(/^\/tiles\/.*/, '/tiles/…')} (${r.cause})`;
        retriesByCause.set(key, (retriesByCause.get(key) ?? 0) + 1);
      }
      check.ok(
        'no failed user action',
        counters.failures.length === 0,
        counters.failures.length === 0
          ? `${counters.requests} requests (${load.api} API and ${load.tiles} tile requests during the kills), ${counters.retries.length} retried by the client, ${nginxRetries(cluster.nginxAccessLog)} passed on to another process by nginx${counters.retries.length ? `: ${[...retriesByCause].map(([k, n]) => `${n} × ${k}`).join(', ')}` : ''}`
          : counters.failures.join('; '),
      );

      const storage = await runCli('storage-verify.ts', cluster.sharedEnv);
      check.ok('stored objects verify (npm run storage:verify)', storage.ok, verdict(storage.output));
    } finally {
      await jobsDb.end().catch(() => undefined);
    }
    // A graceful stop of the rest: the surviving api process writes its last anchor.
    const shared = cluster.sharedEnv;
    await cluster.stop();
    cluster = null;
    const audit = await runCli('audit-verify.ts', shared);
    check.ok('the audit chain verifies (npm run audit:verify)', audit.ok, verdict(audit.output));
  } catch (error) {
    check.ok('the simulation ran to its end', false, (error as Error).stack ?? String(error));
    if (cluster) {
      for (const n of cluster.nodes) {
        const tail = existsSync(n.logFile) ? readFileSync(n.logFile, 'utf8').slice(-1500) : '';
        if (tail.trim()) console.log(`--- ${n.name} (${n.logFile}) ---\n${tail}`);
      }
    }
  } finally {
    await cluster?.stop();
  }

  console.log(`\n━━━ Cluster simulation (${SERVER_MAIN.replace(`${ROOT}/`, '')} × 6 behind nginx) ━━━`);
  for (const line of check.lines) console.log(line);
  console.log(`${check.failed ? 'FAILED' : 'PASSED'} in ${elapsed()}`);
  return check.failed ? 1 : 0;
}

if (process.argv.includes('--write-nginx')) {
  writeFileSync(COMPOSE_NGINX_CONF, renderLaminaConf(COMPOSE_UPSTREAMS));
  console.log(`wrote ${COMPOSE_NGINX_CONF}`);
} else {
  process.exitCode = await main();
}
