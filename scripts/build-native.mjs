#!/usr/bin/env node
// Builds the server's native sendfile module (packages/server/native/sendfile) with node-gyp when
// it is missing or older than its source. Run after every install (postinstall) and by `npm start`
// and `npm test`. Never fails the caller: without the module (no compiler, not Linux) the tile
// server sends tiles through its JavaScript write path, which is correct, only slower.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'packages', 'server', 'native', 'sendfile');
const output = path.join(dir, 'build', 'Release', 'lamina_sendfile.node');
const sources = ['lamina_sendfile.c', 'binding.gyp'].map((f) => path.join(dir, f));

function upToDate() {
  if (!existsSync(output)) return false;
  const built = statSync(output).mtimeMs;
  return sources.every((s) => statSync(s).mtimeMs <= built);
}

if (process.platform !== 'linux') {
  console.log('Native sendfile: Linux only; tiles are sent through the JavaScript write path.');
  process.exit(0);
}
if (upToDate()) process.exit(0);

// node-gyp as npm ships it (npm tells scripts where), else beside this Node's npm.
const prefix = path.resolve(path.dirname(process.execPath), '..');
const gyp = [
  process.env.npm_config_node_gyp,
  path.join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
].find((candidate) => candidate && existsSync(candidate));
const args = ['rebuild', '--directory', dir, '--loglevel', 'warn'];
// This Node's own headers when it has them (no download; this machine's network is closed).
if (!process.env.npm_config_nodedir && existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
const result = gyp
  ? spawnSync(process.execPath, [gyp, ...args], { cwd: dir, encoding: 'utf8' })
  : { status: null, stdout: '', stderr: 'node-gyp not found' };
if (result.status === 0 && existsSync(output)) {
  console.log('Native sendfile module built.');
} else {
  const why = `${result.stderr ?? ''}${result.stdout ?? ''}`.trim().split('\n').slice(-3).join(' | ');
  console.warn(
    `Native sendfile module not built (${why || 'node-gyp failed'}); tiles are sent through the JavaScript write path.`,
  );
}
