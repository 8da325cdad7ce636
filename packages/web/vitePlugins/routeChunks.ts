/// <reference types="node" />
import path from 'node:path';
import type { Plugin } from 'vite';

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
 * - `viewer`: every module the viewer pages import statically that the shell does not, in one chunk
 *   both viewer routes load (OpenLayers, the viewer, the annotations, the dialogs they open);
 * - the other pages keep rolldown's splitting (their own chunk and what they share).
 * The groups are filled from the module graph at the end of the build, before chunking.
 */
export function routeChunks(root: string, entries: { shell: string; viewer: readonly string[] }) {
  const shell = new Set<string>();
  const viewer = new Set<string>();
  const plugin: Plugin = {
    name: 'lamina:route-chunks',
    apply: 'build',
    buildEnd() {
      const walk = (start: string, into: Set<string>, skip: Set<string>) => {
        const stack = [start];
        while (stack.length > 0) {
          const id = stack.pop() as string;
          if (into.has(id) || skip.has(id)) continue;
          const info = this.getModuleInfo(id);
          // A module something loads with import() keeps a chunk of its own (Blueprint's full icon
          // sets, which its loader fetches only for an icon outside the app's own set).
          if (!info || (id !== start && info.dynamicImporters.length > 0)) continue;
          into.add(id);
          stack.push(...info.importedIds);
        }
      };
      shell.clear();
      viewer.clear();
      walk(path.resolve(root, entries.shell), shell, new Set());
      for (const page of entries.viewer) walk(path.resolve(root, page), viewer, shell);
      if (shell.size === 0 || viewer.size === 0)
        throw new Error('routeChunks: an entry was not found in the module graph; were the pages moved?');
    },
  };
  const groups: ChunkGroup[] = [
    { name: 'shell', test: (id) => shell.has(id), priority: 20 },
    { name: 'viewer', test: (id) => viewer.has(id), priority: 10 },
  ];
  return { plugin, groups };
}
