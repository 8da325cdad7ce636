#!/usr/bin/env node
// `npm run check`: the npm scripts named on the command line (package.json's "check" lists them),
// all at once. Each one's output is held and printed whole when it ends, under its name, so the
// outputs do not interleave; then one summary line. Exits 1 when any of them failed.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/check.mjs <npm script>…');
  process.exit(2);
}

const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Runs `npm run <name>`; resolves with its exit code and its output (stdout and stderr as they came). */
function run(name) {
  return new Promise((resolve) => {
    const since = Date.now();
    const child = spawn('npm', ['run', name], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? (process.stdout.isTTY ? '1' : '0') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    const done = (code, error) => {
      const output = Buffer.concat(chunks).toString('utf8') + (error ? `${error.message}\n` : '');
      const result = { name, code, output, time: seconds(since) };
      const head = `━━━ ${name}: ${code === 0 ? 'passed' : `FAILED (exit ${String(code)})`} in ${result.time} ━━━`;
      console.log(`\n${head}${output.trim() ? `\n${output.trimEnd()}` : ''}`);
      resolve(result);
    };
    child.on('error', (error) => done(1, error));
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

console.log(`check: ${names.join(', ')} — at once`);
const results = await Promise.all(names.map(run));
const failed = results.filter((r) => r.code !== 0);
console.log(
  `\ncheck: ${results.length - failed.length} passed, ${failed.length} failed in ${seconds(started)} (${results
    .map((r) => `${r.name} ${r.code === 0 ? 'ok' : 'FAILED'} ${r.time}`)
    .join(', ')})`,
);
process.exit(failed.length > 0 ? 1 : 0);
