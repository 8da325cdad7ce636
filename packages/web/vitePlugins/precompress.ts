/// <reference types="node" />
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'vite';

/** The files worth compressing: the app's code, styles, documents, source maps and WebAssembly. */
const COMPRESSIBLE = /\.(?:html|js|mjs|css|svg|json|map|wasm|txt|xml|webmanifest)$/;

/** Below this size a compressed copy saves less than a packet; the file is sent as it is. */
export const MIN_PRECOMPRESS_BYTES = 1024;

/**
 * Brotli's quality: the best (11) for what browsers load. Source maps, which only developer tools
 * fetch, get 5: 11 took 11 s of a 2-core build for their 9 MB, 5 takes 0.2 s for 14 % more bytes.
 */
function brotliQuality(file: string): number {
  return file.endsWith('.map') ? 5 : constants.BROTLI_MAX_QUALITY;
}

/** The variants written beside a file, as the server looks for them (@fastify/static `preCompressed`). */
const VARIANTS = [
  {
    suffix: '.br',
    compress: (bytes: Buffer, file: string) =>
      promisify(brotliCompress)(bytes, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: brotliQuality(file),
          [constants.BROTLI_PARAM_MODE]: file.endsWith('.wasm')
            ? constants.BROTLI_MODE_GENERIC
            : constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        },
      }),
  },
  { suffix: '.gz', compress: (bytes: Buffer) => promisify(gzip)(bytes, { level: constants.Z_BEST_COMPRESSION }) },
] as const;

/** One compressed file: its path under the folder, its size, and each variant's size (null: not written). */
export interface PrecompressedFile {
  file: string;
  bytes: number;
  br: number | null;
  gz: number | null;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/**
 * Writes `<file>.br` (brotli, quality 11; source maps 5) and `<file>.gz` (gzip, level 9) beside every compressible
 * file of `dir` of at least MIN_PRECOMPRESS_BYTES, a variant only where it is smaller than the file
 * (a stale variant is removed then). The same files give the same bytes. Returns the files it
 * wrote a variant of, by path.
 */
export async function precompressDirectory(dir: string): Promise<PrecompressedFile[]> {
  const files = (await filesUnder(dir)).filter((file) => COMPRESSIBLE.test(file)).sort();
  const done = await Promise.all(
    files.map(async (file): Promise<PrecompressedFile | null> => {
      const bytes = await readFile(file);
      if (bytes.length < MIN_PRECOMPRESS_BYTES) return null;
      const [br, gz] = await Promise.all(
        VARIANTS.map(async ({ suffix, compress }) => {
          const compressed = await compress(bytes, file);
          if (compressed.length >= bytes.length) {
            await rm(file + suffix, { force: true });
            return null;
          }
          await writeFile(file + suffix, compressed);
          return compressed.length;
        }),
      );
      if (br == null && gz == null) return null;
      return { file: path.relative(dir, file), bytes: bytes.length, br: br ?? null, gz: gz ?? null };
    }),
  );
  return done.filter((entry): entry is PrecompressedFile => entry !== null);
}

const kB = (bytes: number): string => `${(bytes / 1000).toFixed(1)} kB`;

/**
 * Precompresses the build's output once it is written (docs/ARCHITECTURE.md, "The web app"): the
 * server sends `.br` or `.gz` to a browser that accepts it, with the original's type.
 */
export function precompress(): Plugin {
  return {
    name: 'lamina:precompress',
    apply: 'build',
    enforce: 'post',
    async writeBundle(options) {
      const dir = options.dir ?? (options.file ? path.dirname(options.file) : null);
      if (!dir) return;
      const files = await precompressDirectory(dir);
      // What browsers load, source maps aside (developer tools alone fetch them).
      const loaded = files.filter((f) => !f.file.endsWith('.map'));
      const sum = (pick: (f: PrecompressedFile) => number | null): string =>
        kB(loaded.reduce((total, f) => total + (pick(f) ?? f.bytes), 0));
      this.info(
        `precompressed ${files.length} files; source maps aside, ${sum((f) => f.bytes)} → brotli ${sum((f) => f.br)}, gzip ${sum((f) => f.gz)}`,
      );
    },
  };
}
