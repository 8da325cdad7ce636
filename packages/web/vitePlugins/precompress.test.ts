// @vitest-environment node
/// <reference types="node" />
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_PRECOMPRESS_BYTES, precompressDirectory } from './precompress';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A built folder: an index page, code, a style, a map, an image, a tiny file and noise named .js. */
function builtFolder(): { dir: string; script: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), 'lamina-precompress-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'assets'));
  const script = Buffer.from(
    Array.from({ length: 400 }, (_, i) => `export function step${i}(x) { return x * ${i} + 1; }\n`).join(''),
  );
  writeFileSync(path.join(dir, 'index.html'), `<!doctype html><html>${'<link rel="modulepreload">'.repeat(80)}</html>`);
  writeFileSync(path.join(dir, 'assets/index-AbCd1234.js'), script);
  writeFileSync(path.join(dir, 'assets/index-AbCd1234.js.map'), JSON.stringify({ mappings: 'AAAA;'.repeat(500) }));
  writeFileSync(path.join(dir, 'assets/style-EfGh5678.css'), '.a { color: red; }\n'.repeat(200));
  writeFileSync(path.join(dir, 'assets/tiny-IjKl9012.js'), 'export const a = 1;\n');
  writeFileSync(path.join(dir, 'assets/noise-MnOp3456.js'), randomBytes(4096));
  writeFileSync(path.join(dir, 'assets/photo-QrSt7890.png'), Buffer.alloc(8192));
  return { dir, script };
}

describe('precompressDirectory (issue 28, part 2)', () => {
  it('writes .br and .gz beside each compressible file that shrinks, which decompress to it', async () => {
    const { dir, script } = builtFolder();
    const done = await precompressDirectory(dir);

    expect(done.map((f) => f.file)).toEqual([
      'assets/index-AbCd1234.js',
      'assets/index-AbCd1234.js.map',
      'assets/style-EfGh5678.css',
      'index.html',
    ]);
    for (const { file, bytes, br, gz } of done) {
      const original = readFileSync(path.join(dir, file));
      expect(bytes).toBe(original.length);
      const brotli = readFileSync(path.join(dir, `${file}.br`));
      const gzip = readFileSync(path.join(dir, `${file}.gz`));
      expect([br, gz]).toEqual([brotli.length, gzip.length]);
      expect(brotli.length).toBeLessThan(original.length);
      expect(brotliDecompressSync(brotli)).toEqual(original);
      expect(gunzipSync(gzip)).toEqual(original);
    }
    const js = done.find((f) => f.file === 'assets/index-AbCd1234.js');
    expect(js?.bytes).toBe(script.length);
    // Quality 11 brotli beats level 9 gzip on code.
    expect(js?.br).toBeLessThan(js?.gz ?? 0);
  });

  it('skips small files, files compression does not shrink, and other types', async () => {
    const { dir } = builtFolder();
    await precompressDirectory(dir);
    expect(readFileSync(path.join(dir, 'assets/tiny-IjKl9012.js')).length).toBeLessThan(MIN_PRECOMPRESS_BYTES);
    for (const file of ['assets/tiny-IjKl9012.js', 'assets/noise-MnOp3456.js', 'assets/photo-QrSt7890.png'])
      for (const suffix of ['.br', '.gz']) expect(existsSync(path.join(dir, file + suffix)), file + suffix).toBe(false);
  });

  it('gives the same bytes on every run, and removes a variant that no longer shrinks the file', async () => {
    const { dir } = builtFolder();
    await precompressDirectory(dir);
    const first = readFileSync(path.join(dir, 'assets/index-AbCd1234.js.br'));
    const firstGzip = readFileSync(path.join(dir, 'assets/index-AbCd1234.js.gz'));
    // A stale variant of a file that is now noise.
    writeFileSync(path.join(dir, 'assets/noise-MnOp3456.js.br'), 'stale');
    await precompressDirectory(dir);
    expect(readFileSync(path.join(dir, 'assets/index-AbCd1234.js.br'))).toEqual(first);
    expect(readFileSync(path.join(dir, 'assets/index-AbCd1234.js.gz'))).toEqual(firstGzip);
    expect(existsSync(path.join(dir, 'assets/noise-MnOp3456.js.br'))).toBe(false);
    // Its own variants are not compressed again.
    expect(existsSync(path.join(dir, 'assets/index-AbCd1234.js.br.gz'))).toBe(false);
  });
});
