#!/usr/bin/env node
// `npm test`: every tier, in order — domain unit tests, server tests on embedded PGlite (and on
// PostgreSQL when TEST_DATABASE_URL is set), web component tests, the web build, and the
// end-to-end tests in Chromium. Prints one closing line with the totals.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
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

const tiers = [
  { name: 'domain', dir: 'packages/domain' },
  { name: 'server (embedded PGlite)', dir: 'packages/server', env: { TEST_DATABASE_URL: '' } },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: 'server (PostgreSQL)',
          dir: 'packages/server',
          env: { TEST_DATABASE_URL: process.env.TEST_DATABASE_URL },
        },
      ]
    : []),
  { name: 'web', dir: 'packages/web' },
  { name: 'web build', dir: 'packages/web', command: ['npm', ['run', 'build']] },
  { name: 'e2e (Chromium)', dir: 'packages/e2e' },
].filter((t) => only.length === 0 || only.some((o) => t.name.startsWith(o)));

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
for (const [i, tier] of tiers.entries()) {
  console.log(`\n━━━ ${tier.name} ━━━`);
  const env = { ...process.env, ...tier.env };
  if (tier.command) {
    const [cmd, args] = tier.command;
    const r = spawnSync(cmd, args, { cwd: path.join(root, tier.dir), stdio: 'inherit', env });
    if (r.status !== 0) failures.push(tier.name);
    continue;
  }
  const out = path.join(reports, `${i}.json`);
  const r = spawnSync(vitest, ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`], {
    cwd: path.join(root, tier.dir),
    stdio: 'inherit',
    env,
  });
  if (existsSync(out)) {
    const report = JSON.parse(readFileSync(out, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += report.numPendingTests + report.numTodoTests;
    if (report.numTotalTests === 0) failures.push(`${tier.name} (ran no test)`);
  }
  if (r.status !== 0) failures.push(tier.name);
}

console.log('');
if (failures.length > 0) console.log(`Failed tiers: ${[...new Set(failures)].join(', ')}`);
console.log(`Total: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failures.length > 0 || failed > 0 ? 1 : 0);
