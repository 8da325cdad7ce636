#!/usr/bin/env node
// `npm test`: every tier, in order — domain unit tests, server tests on embedded PGlite (and, when
// TEST_DATABASE_URL is set, the server test files tagged `// engine: postgres` on PostgreSQL), web
// component tests, the web build, and the end-to-end tests in Chromium. Prints each tier's files,
// tests and time, then one closing line with the totals.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const reports = path.join(root, '.tmp', 'test-reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

if (!existsSync(path.join(root, 'node_modules', '.package-lock.json'))) {
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (install.status !== 0) process.exit(install.status ?? 1);
}

// The tile server's native sendfile module, when its source changed since the install built it.
spawnSync(process.execPath, [path.join(root, 'scripts', 'build-native.mjs')], { cwd: root, stdio: 'inherit' });

const vitest = path.join(root, 'node_modules', '.bin', 'vitest');
const only = process.argv.slice(2); // e.g. `npm test -- server web`

/**
 * The server test files whose behaviour depends on the database engine, by the tag on one of their
 * first lines: `// engine: postgres — <why>` (docs/ARCHITECTURE.md, Tests, says when to tag). The
 * PostgreSQL tier runs these; TEST_POSTGRES_FILES=all runs every server file there.
 */
const serverDir = path.join(root, 'packages', 'server');
function serverTestFiles(dir = path.join(serverDir, 'test')) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return serverTestFiles(file);
    return entry.name.endsWith('.test.ts') ? [path.relative(serverDir, file)] : [];
  });
}
const ENGINE_TAG = /^\/\/ engine: postgres\b/;
const tagged = serverTestFiles()
  .filter((file) =>
    readFileSync(path.join(serverDir, file), 'utf8')
      .split('\n', 5)
      .some((line) => ENGINE_TAG.test(line)),
  )
  .sort();
const allOnPostgres = process.env.TEST_POSTGRES_FILES === 'all';

const tiers = [
  { name: 'domain', dir: 'packages/domain' },
  { name: 'server (embedded PGlite)', dir: 'packages/server', env: { TEST_DATABASE_URL: '' } },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: 'server (PostgreSQL)',
          dir: 'packages/server',
          env: { TEST_DATABASE_URL: process.env.TEST_DATABASE_URL },
          files: allOnPostgres ? [] : tagged,
        },
      ]
    : []),
  // Two files at a time (vitest's default on 2 cores is one): jsdom tests are CPU-bound, one core each.
  { name: 'web', dir: 'packages/web', args: ['--maxWorkers=2'] },
  { name: 'web build', dir: 'packages/web', command: ['npm', ['run', 'build']] },
  { name: 'e2e (Chromium)', dir: 'packages/e2e' },
].filter((t) => only.length === 0 || only.some((o) => t.name.startsWith(o)));

let passed = 0;
let failed = 0;
/** Each failed test (tier: file > name), printed with the summary. */
const failedTests = [];
let skipped = 0;
const failures = [];
const summary = [];
/** Server files with tests skipped on PGlite: those tests run only where the PostgreSQL tier runs them. */
let skippedOnPGlite = [];
for (const [i, tier] of tiers.entries()) {
  console.log(`\n━━━ ${tier.name} ━━━`);
  const started = Date.now();
  const env = { ...process.env, ...tier.env };
  if (tier.command) {
    const [cmd, args] = tier.command;
    const r = spawnSync(cmd, args, { cwd: path.join(root, tier.dir), stdio: 'inherit', env });
    if (r.status !== 0) failures.push(tier.name);
    summary.push({ name: tier.name, time: Date.now() - started });
    continue;
  }
  if (tier.files?.length) {
    console.log(
      `The ${tier.files.length} of ${serverTestFiles().length} server test files tagged \`// engine: postgres\` (TEST_POSTGRES_FILES=all for every file):\n  ${tier.files.join('\n  ')}\n`,
    );
  }
  const out = path.join(reports, `${i}.json`);
  const r = spawnSync(
    vitest,
    [
      'run',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${out}`,
      ...(tier.args ?? []),
      ...(tier.files ?? []),
    ],
    { cwd: path.join(root, tier.dir), stdio: 'inherit', env },
  );
  const line = { name: tier.name, time: Date.now() - started };
  if (existsSync(out)) {
    const report = JSON.parse(readFileSync(out, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += report.numPendingTests + report.numTodoTests;
    Object.assign(line, {
      files: report.testResults.length,
      passed: report.numPassedTests,
      failed: report.numFailedTests,
      skipped: report.numPendingTests + report.numTodoTests,
    });
    if (report.numTotalTests === 0) failures.push(`${tier.name} (ran no test)`);
    // Named again in the summary: CI keeps only the end of the output.
    for (const file of report.testResults) {
      for (const a of file.assertionResults) {
        if (a.status === 'failed') failedTests.push(`${tier.name}: ${path.relative(root, file.name)} > ${a.fullName}`);
      }
      if (file.status === 'failed' && file.assertionResults.every((a) => a.status !== 'failed')) {
        failedTests.push(
          `${tier.name}: ${path.relative(root, file.name)} (${(file.message ?? 'failed').split('\n')[0]})`,
        );
      }
    }
    if (tier.name === 'server (embedded PGlite)') {
      skippedOnPGlite = report.testResults
        .filter((file) => file.assertionResults.some((a) => a.status === 'pending' || a.status === 'skipped'))
        .map((file) => path.relative(serverDir, file.name));
    }
  }
  if (r.status !== 0) failures.push(tier.name);
  summary.push(line);
}

// A test skipped on PGlite (it needs PostgreSQL) in a file without the tag would run nowhere.
const untagged = skippedOnPGlite.filter((file) => !tagged.includes(file));
if (untagged.length > 0) {
  const message = `Tests skipped on PGlite in files not tagged \`// engine: postgres\`, so the PostgreSQL tier does not run them either: ${untagged.join(', ')}`;
  console.log(`\n${message}`);
  if (process.env.TEST_DATABASE_URL && !allOnPostgres) failures.push('untagged PostgreSQL-only tests');
}

console.log('');
for (const s of summary) {
  const counts =
    s.files === undefined
      ? ''
      : `${s.files} files, ${s.passed} passed${s.failed ? `, ${s.failed} failed` : ''}${s.skipped ? `, ${s.skipped} skipped` : ''}`;
  console.log(`  ${s.name.padEnd(26)} ${`${(s.time / 1000).toFixed(0)} s`.padStart(6)}  ${counts}`);
}
for (const t of failedTests) console.log(`  FAILED ${t}`);
if (failures.length > 0) console.log(`Failed tiers: ${[...new Set(failures)].join(', ')}`);
console.log(`Total: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failures.length > 0 || failed > 0 ? 1 : 0);
