#!/usr/bin/env node
// `npm start`: installs dependencies on first run, builds the web app when its sources changed,
// then starts the server (migrations, demo data and all roles on embedded defaults).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`\n${cmd} ${args.join(' ')} failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

function newestMtime(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

// 1. Dependencies: install when missing or when the lockfile changed since the last install.
const marker = path.join(root, 'node_modules', '.package-lock.json');
const lock = path.join(root, 'package-lock.json');
if (!existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs + 1000)) {
  console.log('Installing dependencies (first run) …');
  run(npm, existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']);
}

// The native sendfile module of the tile server (built after every install; here when the source
// changed since). Without it tiles take the slower JavaScript path.
run(process.execPath, [path.join(root, 'scripts', 'build-native.mjs')]);

// 2. Web app: build when dist is missing or older than its sources (web or domain).
const webDir = path.join(root, 'packages', 'web');
const index = path.join(webDir, 'dist', 'index.html');
const sources = Math.max(
  newestMtime(path.join(webDir, 'src')),
  newestMtime(path.join(root, 'packages', 'domain', 'src')),
  statSync(path.join(webDir, 'index.html')).mtimeMs,
);
if (!existsSync(index) || statSync(index).mtimeMs < sources) {
  console.log('Building the web app …');
  run(npm, ['run', 'build', '-w', '@lamina/web']);
}

// 3. The server, in this terminal; Ctrl-C stops it.
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
const server = spawn(tsx, [path.join(root, 'packages', 'server', 'src', 'main.ts')], {
  cwd: root,
  stdio: 'inherit',
  // Two malloc arenas: libvips' threads otherwise leave glibc's heap fragmented, and the worker's
  // resident memory on a 2 GB slide doubles (docs/BENCHMARKS.md, "Pyramid build").
  env: { WEB_DIST: path.join(webDir, 'dist'), MALLOC_ARENA_MAX: '2', ...process.env },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
