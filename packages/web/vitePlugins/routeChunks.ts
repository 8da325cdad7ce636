/// <reference types="node" />
import path from 'node:path';
import type { Plugin, Rolldown } from 'vite';

type ModuleInfo = Rolldown.ModuleInfo;

/** A code-splitting group (rolldown's `output.codeSplitting.groups`), as far as this plugin fills it. */
export interface ChunkGroup {
  name: string;
  test: (id: string) => boolean;
  priority: number;
}

/**
 * Chunks by route rather than by share count (issue 28). Rolldown's own splitting put every module
 * the shell shares with a lazy page in a chunk of its own: the shell waited on 19 of them and a
 * viewer on 20 more, over the six connections HTTP/1.1 allows. Here:
 * - `shell`: every module the entry (`main.tsx`) imports statically, in one chunk;
 * - `viewer`: every module the viewer pages import statically that the shell does not and no other
 *   page does, in one chunk both viewer routes load (OpenLayers, the viewer, the annotations);
 * - `viewerShared`: what the viewer pages import that another page (or a part loaded on demand)
 *   imports too — the case and query dialogs, the shared components — in one chunk the viewers
 *   load beside theirs: before it was split off, every other page imported the viewer chunk for
 *   these, and a first visit to the studies list loaded OpenLayers;
 * - the other pages keep rolldown's splitting (their own chunk and what they share).
 * The groups are filled from the module graph at the end of the build, before chunking. A module
 * that only re-exports others (a barrel: the domain package's index) counts for what its importer
 * takes from it: the shell holds the domain modules whose names the shell's own code imports, not
 * the whole package, so the schemas only other pages use are not built before the first render
 * (the domain package declares no side effects, so a barrel's other modules need not run with it).
 */
export function routeChunks(root: string, entries: { shell: string; viewer: readonly string[] }) {
  const shell = new Set<string>();
  const viewer = new Set<string>();
  const viewerShared = new Set<string>();
  const plugin: Plugin = {
    name: 'lamina:route-chunks',
    apply: 'build',
    async buildEnd() {
      const moduleInfo = (id: string) => this.getModuleInfo(id);
      // A package's name resolves alike from every importer: once each (a relative path per importer).
      const resolved = new Map<string, Promise<string | undefined>>();
      const resolve = (specifier: string, importer: string) => {
        const key = specifier.startsWith('.') ? `${importer}\0${specifier}` : specifier;
        let id = resolved.get(key);
        if (!id) {
          id = this.resolve(specifier, importer).then((r) => r?.id);
          resolved.set(key, id);
        }
        return id;
      };
      // Whether a module is a barrel, once each: the same modules are imported by many.
      const barrels = new Map<string, ModuleInfo | null>();
      const barrelOf = (id: string) => {
        if (!barrels.has(id)) {
          const info = moduleInfo(id);
          barrels.set(id, info && isBarrel(info) ? info : null);
        }
        return barrels.get(id) ?? null;
      };
      const walk = async (start: string, into: Set<string>, skip: Set<string>) => {
        const stack = [start];
        while (stack.length > 0) {
          const id = stack.pop() as string;
          if (into.has(id) || skip.has(id)) continue;
          const info = moduleInfo(id);
          // A module something loads with import() keeps a chunk of its own (Blueprint's full icon
          // sets, which its loader fetches only for an icon outside the app's own set).
          if (!info || (id !== start && info.dynamicImporters.length > 0)) continue;
          into.add(id);
          for (const imported of info.importedIds) {
            const barrel = barrelOf(imported);
            if (!barrel) stack.push(imported);
            else stack.push(...(await modulesBehind(barrel, id, info.code ?? '', moduleInfo, resolve)));
          }
        }
      };
      shell.clear();
      viewer.clear();
      viewerShared.clear();
      await walk(path.resolve(root, entries.shell), shell, new Set());
      const viewerPages = new Set(entries.viewer.map((page) => path.resolve(root, page)));
      for (const page of viewerPages) await walk(page, viewer, shell);
      if (shell.size === 0 || viewer.size === 0)
        throw new Error('routeChunks: an entry was not found in the module graph; were the pages moved?');
      // What the other pages and the parts loaded on demand import, beyond the shell.
      const elsewhere = new Set<string>();
      for (const id of this.getModuleIds()) {
        if (viewerPages.has(id) || shell.has(id) || (moduleInfo(id)?.dynamicImporters.length ?? 0) === 0) continue;
        await walk(id, elsewhere, shell);
      }
      for (const id of viewer) if (elsewhere.has(id)) viewerShared.add(id);
      for (const id of viewerShared) viewer.delete(id);
    },
  };
  const groups: ChunkGroup[] = [
    { name: 'shell', test: (id) => shell.has(id), priority: 20 },
    // Before `viewer`: a group also takes what its modules import, and the viewers' modules import these.
    { name: 'viewerShared', test: (id) => viewerShared.has(id), priority: 15 },
    { name: 'viewer', test: (id) => viewer.has(id), priority: 10 },
  ];
  return { plugin, groups };
}

type ModuleInfoOf = (id: string) => ModuleInfo | null;

/** A line of a barrel: `export * from '…'` or `export {…} from '…'`, a comment, or nothing. */
const RE_EXPORT_LINE = /^\s*(?:export\s*(?:\*|\{[^}]*\})\s*from\s*(['"])[^'"]+\1\s*;?|\/\/.*)?\s*$/;

/** A module that is nothing but `export … from` lines (one statement a line, as the domain's index is written). */
export function isBarrel(info: Pick<ModuleInfo, 'code' | 'importedIds'>): boolean {
  return (
    info.code !== null &&
    info.importedIds.length > 0 &&
    info.code.split('\n').every((line) => RE_EXPORT_LINE.test(line))
  );
}

/** `import {…} from '…'`, `import * as x from '…'`, `export {…} from '…'` and the like, in transformed code. */
const IMPORT_FROM =
  /\b(?:import|export)\s*([\w$]+\s*,\s*)?(\{[^}]*\}|\*\s*as\s+[\w$]+|\*|[\w$]+)\s*from\s*(['"])([^'"\n]+)\3/g;

/**
 * The names `code` imports from each module specifier it names: a set, or `all` (a namespace or
 * default import, or `export *`).
 */
export function importedNames(code: string): Map<string, Set<string> | 'all'> {
  const names = new Map<string, Set<string> | 'all'>();
  for (const [, defaultName, clause = '', , specifier = ''] of code.matchAll(IMPORT_FROM)) {
    const known = names.get(specifier);
    if (known === 'all') continue;
    if (defaultName || !clause.startsWith('{')) {
      names.set(specifier, 'all');
      continue;
    }
    const set = known ?? new Set<string>();
    for (const part of clause.slice(1, -1).split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]
        ?.trim();
      if (name) set.add(name);
    }
    names.set(specifier, set);
  }
  return names;
}

/** The modules behind the names `importer` (its `code`) takes from `barrel`; every one of them if it cannot tell. */
async function modulesBehind(
  barrel: ModuleInfo,
  importer: string,
  code: string,
  moduleInfo: ModuleInfoOf,
  resolve: (specifier: string, importer: string) => Promise<string | undefined>,
): Promise<string[]> {
  const wanted = new Set<string>();
  for (const [specifier, names] of importedNames(code)) {
    if ((await resolve(specifier, importer)) !== barrel.id) continue;
    if (names === 'all') return barrel.importedIds;
    for (const name of names) wanted.add(name);
  }
  return barrel.importedIds.filter(
    (id: string) => moduleInfo(id)?.exports.some((name: string) => wanted.has(name)) ?? true,
  );
}
