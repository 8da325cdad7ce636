#!/usr/bin/env node
// `npm run check:cycles` (part of `npm run check`): modules import only downward. Fails when the
// value imports (type-only imports are erased and do not count) of a package form a cycle between
// files, or between the folders a layer is made of: the server's `src/<folder>` and
// `src/modules/<module>`, the web's `src/<folder>` and `src/features/<feature>`. Prints each cycle
// with one import that closes it, so the fix is where to look.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each package: its source root and how a file maps to the folder (unit) whose cycles are refused. */
const PACKAGES = [
  { name: 'server', src: 'packages/server/src', units: (rel) => unitOf(rel, 'modules') },
  { name: 'web', src: 'packages/web/src', units: (rel) => unitOf(rel, 'features') },
  { name: 'domain', src: 'packages/domain/src', units: () => null },
];

/** `modules/cases/x.ts` → `modules/cases`; `platform/db/x.ts` → `platform`; a root file → none. */
function unitOf(rel, layered) {
  const parts = rel.split('/');
  if (parts.length === 1) return null;
  return parts[0] === layered && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
      out.push(full);
  }
  return out;
}

const IMPORT = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The files `file` imports by value (relative specifiers), resolved to paths. */
function valueImports(file) {
  const text = readFileSync(file, 'utf8');
  const out = [];
  for (const m of text.matchAll(IMPORT)) {
    if (m[1]) continue; // import type … / export type …
    const statement = m[0];
    // `import { type A, type B } from` imports nothing at run time either.
    const named = /\{([^}]*)\}/.exec(statement);
    if (
      named &&
      !/\*|^\s*import\s+\w/.test(statement.replace(/\{[^}]*\}/, '')) &&
      named[1].split(',').every((n) => n.trim() === '' || n.trim().startsWith('type '))
    )
      continue;
    const base = path.resolve(path.dirname(file), m[2]).replace(/\.js$/, '');
    const target = [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')].find((p) =>
      existsSync(p),
    );
    if (target) out.push(target);
  }
  return out;
}

/** Strongly connected components with more than one node (Tarjan). */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const indexes = new Map();
  const low = new Map();
  const found = [];
  const visit = (v) => {
    indexes.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!indexes.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), indexes.get(w)));
    }
    if (low.get(v) === indexes.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indexes.has(v)) visit(v);
  return found;
}

let failed = false;
for (const pkg of PACKAGES) {
  const src = path.join(root, pkg.src);
  const files = sourceFiles(src);
  const fileGraph = new Map();
  const unitGraph = new Map();
  for (const file of files) {
    const rel = path.relative(src, file);
    const from = pkg.units(rel);
    const edges = new Map();
    for (const target of valueImports(file)) {
      const relTarget = path.relative(src, target);
      edges.set(relTarget, relTarget);
      const to = pkg.units(relTarget);
      if (from && to && from !== to) {
        if (!unitGraph.has(from)) unitGraph.set(from, new Map());
        if (!unitGraph.get(from).has(to)) unitGraph.get(from).set(to, `${rel} → ${relTarget}`);
      }
    }
    fileGraph.set(rel, edges);
  }
  for (const [what, graph] of [
    ['files', fileGraph],
    ['folders', unitGraph],
  ]) {
    for (const component of cycles(graph)) {
      failed = true;
      console.error(`${pkg.name}: an import cycle between ${what}: ${component.join(', ')}`);
      const members = new Set(component);
      for (const from of component)
        for (const [to, via] of graph.get(from) ?? [])
          if (members.has(to)) console.error(`  ${from} → ${to}${what === 'folders' ? ` (${via})` : ''}`);
    }
  }
}
if (failed) {
  console.error(
    'Modules import only downward (docs/ARCHITECTURE.md): move the shared rule down, or the work that spans them up.',
  );
  process.exit(1);
}
console.log('No import cycles (server, web, domain).');
