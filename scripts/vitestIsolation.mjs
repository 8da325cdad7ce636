// The test files of a package that replace a module for their own run (vi.mock, vi.doMock) or
// spy on a shared object (vi.spyOn), found by reading them. The packages' vitest configs run these
// files isolated (a fresh module graph each) and every other file with `isolate: false` (the
// worker's module graph is imported once and shared by the files it runs): a module already
// imported by an earlier file would not be replaced by a later file's vi.mock.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const REPLACES = /\bvi\.(mock|doMock|spyOn)\(/;

/**
 * @param {string} packageDir the package's directory (the config's `import.meta.dirname`)
 * @param {string[]} dirs folders under it holding test files
 * @param {RegExp} testFile which file names are test files
 * @returns {string[]} those files' paths relative to packageDir, sorted
 */
export function filesNeedingIsolation(packageDir, dirs, testFile) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(packageDir, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (testFile.test(entry.name) && REPLACES.test(readFileSync(path.join(packageDir, rel), 'utf8'))) {
        found.push(rel.split(path.sep).join('/'));
      }
    }
  };
  for (const dir of dirs) walk(dir);
  return found.sort();
}
